"""Labelled trajectories for calibrating verifiers: episodes whose truth is known exactly, and hard negatives.

Every episode is recorded into the trajectory store with what a verifier may read — each step's screenshot, the
visible text of that screen (`info["screen_text"]`), what the action's point hit on the live page (`info["hit"]`),
a think text naming the intended target — plus, in its metadata, `truth` ("success"/"failure", from the task's own
checker or the MiniWoB page's raw reward), the `perturbation` kind and `final_state` (`env.state()` after the last
step, for programmatic judges offline). Every episode ends with a terminal step, so its last screenshot is the
final screen.

Kinds (UI-Genie's recipe for hard negatives, built from the project's own tools):

- `reference`: the sandbox task's reference solution (each phrasing of the instruction), the MiniWoB oracle (the
  correct actions read off the page's own element tree, for 16 tasks: `MINIWOB_SOLVERS`).
- `truncated`: the reference without its last effective step (the last one that changed the app's state).
- `last_replaced`: that step replaced by a plausible wrong one (the nearest other control — a sibling button,
  link, tab or checkbox — or a near-miss text).
- `task_swapped`: the reference trajectory stored under a similar task of the same app (judged by that task).
- `harmful_appended`: the reference followed by a destructive step (delete the item the task names, reset).
- `random_policy`: the seeded `random` policy for a few steps.

The build is resumable: finished episodes on disk are skipped, unfinished ones are recorded again.
The moves that drive the perturbed and MiniWoB episodes are `evals.verifier_moves`.
"""

from __future__ import annotations

import itertools
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from uivenus.actions.grammar import format_response
from uivenus.actions.space import Action, ActionType, Finished, Type
from uivenus.envs.base import Env, EnvError
from uivenus.envs.sandbox.solving import SolverError
from uivenus.envs.sandbox.tasks import SandboxTask, check_spec, get_task, tasks_of
from uivenus.evals.verifier_moves import (
    HARMFUL, MINIWOB_SOLVERS, first_point, random_moves, until_terminal, wrong_action,
)
from uivenus.records import Outcome, Step, TaskSpec
from uivenus.store import EPISODE_FILE, StoreError, TrajectoryStore, read_episode
from uivenus.verify.signals import HIT_KEY, SCREEN_TEXT_KEY, hit_test, read_screen_text, think_text
from uivenus.verify.trace import FINAL_STATE_KEY

__all__ = [
    "DataBuildError", "HARD_NEGATIVES", "MINIWOB_DEV_TASKS", "MINIWOB_HELD_OUT_TASKS", "MINIWOB_SPLITS",
    "MINIWOB_TASKS", "PERTURBATION_KEY", "SANDBOX_APPS", "SPLIT_KEY",
    "TRUTH_KEY", "BuildPlan", "BuildSummary", "Perturbation", "Recorded", "build_dataset", "build_miniwob",
    "build_sandbox", "record_episode",
]

TRUTH_KEY = "truth"
PERTURBATION_KEY = "perturbation"
SANDBOX_RUN = "sandbox-web"
MINIWOB_RUN = "miniwob"
#: Bundled apps whose tasks the default build uses (the launcher and shop tasks are long and cross apps).
SANDBOX_APPS = ("notes", "contacts", "settings", "files", "mail", "calendar")
#: MiniWoB++ tasks with an oracle here (`MINIWOB_SOLVERS`): the judges were developed on the first group; the
#: held-out group is for reporting only (episodes carry `metadata["split"]`, see `MINIWOB_SPLITS`).
MINIWOB_DEV_TASKS = ("click-test", "click-test-2", "click-button", "click-link", "focus-text", "enter-text",
                     "click-dialog-2", "click-checkboxes")
MINIWOB_HELD_OUT_TASKS = ("click-option", "click-tab", "enter-password", "login-user", "focus-text-2",
                          "click-button-sequence", "choose-list", "enter-text-2")
MINIWOB_TASKS = MINIWOB_DEV_TASKS + MINIWOB_HELD_OUT_TASKS
#: The split each MiniWoB task's episodes are labelled with.
MINIWOB_SPLITS: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys(MINIWOB_DEV_TASKS, "dev"), **dict.fromkeys(MINIWOB_HELD_OUT_TASKS, "held_out"),
})
SPLIT_KEY = "split"
#: MiniWoB episodes get this long before the page times them out (the truth must not depend on machine load).
MINIWOB_EPISODE_MS = 120_000


class Perturbation(StrEnum):
    REFERENCE = "reference"
    TRUNCATED = "truncated"
    LAST_REPLACED = "last_replaced"
    TASK_SWAPPED = "task_swapped"
    HARMFUL_APPENDED = "harmful_appended"
    RANDOM_POLICY = "random_policy"


#: Every kind but the reference runs, in a fixed order (the order episodes are recorded in).
HARD_NEGATIVES = tuple(kind for kind in Perturbation if kind is not Perturbation.REFERENCE)

#: A move: an action, or an action with the think text the agent states for it (a claim, e.g. a wrong click that
#: claims the intended target).
Move = Action | tuple[Action, str]


class DataBuildError(RuntimeError):
    """The labelled set cannot be built as asked (unknown task, an app without a harmful step); says what to pick."""


# --- recording ------------------------------------------------------------------------------------

_VERBS: Mapping[ActionType, str] = MappingProxyType({
    ActionType.CLICK: "click", ActionType.DOUBLE_CLICK: "double-click", ActionType.TRIPLE_CLICK: "triple-click",
    ActionType.LONG_PRESS: "long-press", ActionType.RIGHT_CLICK: "right-click",
    ActionType.SELECT_OPTION: "pick an option in",
})


def _think(action: Action, hit: Mapping[str, Any] | None) -> str:
    """The intent an agent would state for `action` on what it hits."""
    if isinstance(action, Type):
        return f"I type {action.content!r} into the focused field."
    verb = _VERBS.get(action.type)
    target = (hit or {}).get("text") or (hit or {}).get("testid")
    if verb and target:
        return f"Next I {verb} {str(target)[:50]!r}."
    return f"Next I use {action.type.value}."


@dataclass(frozen=True)
class Recorded:
    """One recorded episode: where it lies, the non-terminal actions it ran, and its truth."""

    directory: Path
    actions: tuple[Action, ...]
    effective: tuple[int, ...]  # indices (into `actions`) of the steps that changed the app's state
    truth: bool
    reason: str


def record_episode(
    store: TrajectoryStore, run_id: str, episode_id: str, env: Env, spec: TaskSpec, moves: Iterable[Move], *,
    truth: Callable[[Mapping[str, Any]], tuple[bool, str]], perturbation: Perturbation,
    metadata: Mapping[str, Any] | None = None, app_state: Callable[[], Any] | None = None,
    done: Callable[[], bool] | None = None, max_steps: int = 40,
) -> Recorded:
    """Drive `env` (already reset) with `moves` — an iterator that may read the live page between moves — and
    store the episode under `spec` (which may differ from the task `env` was reset to: a swapped task).

    `truth(final_state)` grades the end; `app_state()` (optional) reads the state whose changes mark effective
    steps; `done()` (optional) ends the episode early (a MiniWoB page that has graded itself). A terminal step is
    always recorded last.
    """
    observation = env.observe()
    actions: list[Action] = []
    effective: list[int] = []
    before = app_state() if app_state else None
    notes: list[str] = []
    with store.episode(run_id, episode_id, spec, {PERTURBATION_KEY: perturbation.value, **(metadata or {})}) as w:
        moves = iter(moves)
        terminal: Action | None = None
        while len(actions) < max_steps:
            text = read_screen_text(env)
            try:
                move = next(moves)
            except StopIteration:
                break
            except SolverError as exc:
                notes.append(f"the moves stopped: {exc}")
                break
            action, think = move if isinstance(move, tuple) else (move, None)
            point = first_point(action)
            hit = hit_test(env, point) if point is not None else None
            info = {"url": observation.url, SCREEN_TEXT_KEY: text, HIT_KEY: hit}
            response = format_response(action, think=think or _think(action, hit))
            if action.is_terminal:
                terminal = action
                w.append(Step(index=0, response=response, action=action, executed=True, info=info),
                         observation.screenshot)
                break
            result = env.step(action)
            w.append(Step(index=0, response=response, action=action, executed=result.executed, error=result.error,
                          info={**info, "env": dict(result.info)}), observation.screenshot)
            observation = result.observation
            actions.append(action)
            if app_state is not None:
                after = app_state()
                if after != before:
                    effective.append(len(actions) - 1)
                before = after
            if done is not None and done():
                break
        if terminal is None:
            finish = Finished()
            w.append(Step(index=0, response=format_response(finish, think="The task is complete."), action=finish,
                          executed=True, info={"url": observation.url, SCREEN_TEXT_KEY: read_screen_text(env)}),
                     observation.screenshot)
        final_state = dict(env.state())
        passed, reason = truth(final_state)
        claim = getattr(terminal, "content", None)
        w.finish(Outcome.FINISHED, answer=claim, metadata={
            TRUTH_KEY: "success" if passed else "failure", "truth_reason": reason, FINAL_STATE_KEY: final_state,
            "effective_steps": effective, **({"notes": notes} if notes else {}),
        })
    return Recorded(w.directory, tuple(actions), tuple(effective), passed, reason)


# --- the build ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BuildPlan:
    """What to record. `tasks` (sandbox task ids) overrides `apps`; MiniWoB tasks need an oracle."""

    apps: tuple[str, ...] = SANDBOX_APPS
    tasks: tuple[str, ...] | None = None
    phrasings: int = 3  # reference episodes per sandbox task, one per phrasing of its instruction
    perturbations: tuple[Perturbation, ...] = HARD_NEGATIVES
    random_steps: int = 5
    miniwob_tasks: tuple[str, ...] = MINIWOB_TASKS
    miniwob_seeds: int = 4
    miniwob_perturbations: tuple[Perturbation, ...] = (Perturbation.LAST_REPLACED, Perturbation.TRUNCATED,
                                                        Perturbation.RANDOM_POLICY)
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = [t for t in self.miniwob_tasks if t not in MINIWOB_SOLVERS]
        if unknown:
            raise DataBuildError(f"no MiniWoB oracle for {unknown}; pick from {', '.join(MINIWOB_SOLVERS)}")
        if self.phrasings < 1 or self.random_steps < 1 or self.miniwob_seeds < 0:
            raise DataBuildError("phrasings and random_steps must be >= 1 and miniwob_seeds >= 0")

    def sandbox_tasks(self) -> list[SandboxTask]:
        if self.tasks is not None:
            return [get_task(task_id) for task_id in self.tasks]
        return [task for app in self.apps for task in tasks_of(app)]

    def episodes(self, *, sandbox: bool = True, miniwob: bool = True) -> int:
        """How many episodes the plan records at most (fewer where a reference solution fails)."""
        count = 0
        if sandbox:
            for task in self.sandbox_tasks():
                count += min(self.phrasings, len(task.instructions))
                count += sum(kind is not Perturbation.HARMFUL_APPENDED or task.app in HARMFUL
                             for kind in self.perturbations)
        if miniwob:
            count += len(self.miniwob_tasks) * self.miniwob_seeds * (1 + len(self.miniwob_perturbations))
        return count


@dataclass
class BuildSummary:
    """What a build recorded, skipped (already on disk) and could not record."""

    data_dir: Path
    recorded: Counter[str] = field(default_factory=Counter)  # by "source/kind/truth"
    skipped: int = 0
    failed: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.recorded.values()) + self.skipped


def _swap_partner(task: SandboxTask) -> SandboxTask:
    """The next task of the same app (a similar task: same app, same screens, another goal)."""
    siblings = tasks_of(task.app)
    return siblings[(siblings.index(task) + 1) % len(siblings)]


class _Builder:
    def __init__(self, data_dir: Path, plan: BuildPlan, progress: Callable[[str], None]) -> None:
        self.store = TrajectoryStore(data_dir)
        self.plan = plan
        self.summary = BuildSummary(data_dir)
        self.progress = progress

    def pending(self, run_id: str, episode_id: str) -> bool:
        """Whether the episode still has to be recorded (an unfinished one is cleared first)."""
        directory = self.store.episode_dir(run_id, episode_id)
        if (directory / EPISODE_FILE).exists():
            self.summary.skipped += 1
            self.progress(f"{episode_id} (already recorded)")
            return False
        if directory.exists():
            shutil.rmtree(directory)
        return True

    def record(self, source: str, kind: Perturbation, run: Callable[[], Recorded], label: str) -> Recorded | None:
        self.progress(label)
        try:
            recorded = run()
        except (EnvError, SolverError, StoreError) as exc:
            self.summary.failed.append(f"{label}: {type(exc).__name__}: {exc}")
            return None
        self.summary.recorded[f"{source}/{kind.value}/{'success' if recorded.truth else 'failure'}"] += 1
        return recorded

    # -- sandbox ---------------------------------------------------------------------------------

    def sandbox(self, env: Any, base_url: str) -> None:
        self.store.start_run(SANDBOX_RUN, {"layout": "web"})
        for task in self.plan.sandbox_tasks():
            self.sandbox_task(env, base_url, task)

    def _sandbox_episode(self, env: Any, run_spec: TaskSpec, stored: TaskSpec, episode_id: str, kind: Perturbation,
                         moves: Callable[[], Iterable[Move]], metadata: Mapping[str, Any]) -> Recorded | None:
        def run() -> Recorded:
            env.reset(run_spec)

            def truth(state: Mapping[str, Any]) -> tuple[bool, str]:
                result = check_spec(stored, state.get("app_state") or {})
                return result.passed, result.reason

            return record_episode(self.store, SANDBOX_RUN, episode_id, env, stored, moves(), truth=truth,
                                  perturbation=kind, metadata={"source": "sandbox", **metadata},
                                  app_state=lambda: _app_state(env), max_steps=stored.max_steps + 10)

        if not self.pending(SANDBOX_RUN, episode_id):
            return None
        return self.record("sandbox", kind, run, f"sandbox {episode_id}")

    def sandbox_task(self, env: Any, base_url: str, task: SandboxTask) -> None:
        base = task.id.replace("/", ".")
        spec = task.spec(base_url)
        for phrasing in range(min(self.plan.phrasings, len(task.instructions))):
            spec_p = task.spec(base_url, phrasing=phrasing)
            self._sandbox_episode(env, spec_p, spec_p, f"{base}.reference.p{phrasing}", Perturbation.REFERENCE,
                                  lambda: task.solve(env), {"phrasing": phrasing})
        reference = self.store.episode_dir(SANDBOX_RUN, f"{base}.reference.p0")
        if not (reference / EPISODE_FILE).exists():
            return
        ref = read_episode(reference)
        if ref.metadata.get(TRUTH_KEY) != "success":
            self.summary.failed.append(f"sandbox {task.id}: the reference solution failed; no perturbations")
            return
        steps = [s for s in ref.steps if s.action is not None and not s.action.is_terminal]
        actions = [s.action for s in steps]
        effective = list(ref.metadata.get("effective_steps") or [len(actions) - 1])
        last = effective[-1]
        thinks = [think_text(s.response) for s in steps]
        kinds: dict[Perturbation, Callable[[], tuple[TaskSpec, Callable[[], Iterable[Move]], dict[str, Any]]]] = {
            Perturbation.TRUNCATED: lambda: (spec, lambda: iter(actions[:last]), {"dropped_step": last}),
            Perturbation.LAST_REPLACED: lambda: (spec, lambda: self._replaced(env, actions, thinks, last),
                                                 {"replaced_step": last}),
            Perturbation.TASK_SWAPPED: lambda: (_swap_partner(task).spec(base_url), lambda: task.solve(env),
                                                {"swapped_from": task.id}),
            Perturbation.HARMFUL_APPENDED: lambda: (spec, lambda: itertools.chain(
                until_terminal(task.solve(env)), HARMFUL[task.app](env, spec)), {}),
            Perturbation.RANDOM_POLICY: lambda: (spec, lambda: random_moves(
                env, self.plan.random_steps, self.plan.seed + len(base), spec.instruction), {"seed": self.plan.seed}),
        }
        for kind in self.plan.perturbations:
            if kind is Perturbation.HARMFUL_APPENDED and task.app not in HARMFUL:
                continue
            stored, moves, metadata = kinds[kind]()
            self._sandbox_episode(env, spec, stored, f"{base}.{kind.value}", kind, moves,
                                  {"phrasing": 0, "task": task.id, **metadata})

    @staticmethod
    def _replaced(env: Any, actions: Sequence[Action], thinks: Sequence[str | None], last: int) -> Iterator[Move]:
        yield from actions[:last]
        wrong = wrong_action(env, actions[last])
        yield (wrong, thinks[last]) if thinks[last] else wrong

    # -- MiniWoB ---------------------------------------------------------------------------------

    def miniwob(self, env: Any) -> None:
        from uivenus.envs.miniwob import miniwob_task

        self.store.start_run(MINIWOB_RUN, {"episode_max_ms": MINIWOB_EPISODE_MS})
        kinds = (Perturbation.REFERENCE, *self.plan.miniwob_perturbations)
        for name, offset, kind in itertools.product(self.plan.miniwob_tasks, range(self.plan.miniwob_seeds), kinds):
            seed = self.plan.seed + offset
            episode_id = f"{name}.s{seed}.{kind.value}"
            if not self.pending(MINIWOB_RUN, episode_id):
                continue
            task = miniwob_task(name, seed, episode_max_ms=MINIWOB_EPISODE_MS)

            def run(task: TaskSpec = task, kind: Perturbation = kind, name: str = name, seed: int = seed) -> Recorded:
                env.reset(task)
                spec = env.task
                oracle = list(MINIWOB_SOLVERS[name](env, spec.instruction))
                moves: Iterable[Move] = {
                    Perturbation.REFERENCE: lambda: iter(oracle),
                    Perturbation.LAST_REPLACED: lambda: self._replaced(env, oracle, [None] * len(oracle),
                                                                      len(oracle) - 1),
                    Perturbation.TRUNCATED: lambda: iter(oracle[:-1]),
                    Perturbation.RANDOM_POLICY: lambda: random_moves(env, self.plan.random_steps, seed,
                                                                      spec.instruction),
                }[kind]()
                return record_episode(self.store, MINIWOB_RUN, f"{name}.s{seed}.{kind.value}", env, spec, moves,
                                      truth=_miniwob_truth, perturbation=kind,
                                      metadata={"source": "miniwob", "task": name, "seed": seed,
                                                SPLIT_KEY: MINIWOB_SPLITS.get(name, "dev")},
                                      done=lambda: bool(env.state()["done"]))

            self.record("miniwob", kind, run, f"miniwob {episode_id}")


def _app_state(env: Any) -> Any:
    try:
        return env.app_state()
    except EnvError:
        return None


def _miniwob_truth(state: Mapping[str, Any]) -> tuple[bool, str]:
    passed = bool(state.get("done")) and float(state.get("raw_reward") or 0) > 0
    return passed, f"raw_reward {state.get('raw_reward')} ({state.get('reason') or 'no reason given'})"


def build_sandbox(data_dir: str | Path, env: Any, base_url: str, plan: BuildPlan = BuildPlan(), *,
                  progress: Callable[[str], None] = lambda label: None) -> BuildSummary:
    """Record the sandbox part of the labelled set with a running browser `env` (desktop web layout) and sandbox
    server at `base_url` (run `sandbox-web`)."""
    builder = _Builder(Path(data_dir), plan, progress)
    builder.sandbox(env, base_url)
    return builder.summary


def build_miniwob(data_dir: str | Path, env: Any, plan: BuildPlan = BuildPlan(), *,
                  progress: Callable[[str], None] = lambda label: None) -> BuildSummary:
    """Record the MiniWoB part of the labelled set with a running `MiniWoBEnv` (run `miniwob`)."""
    builder = _Builder(Path(data_dir), plan, progress)
    builder.miniwob(env)
    return builder.summary


def build_dataset(data_dir: str | Path, plan: BuildPlan = BuildPlan(), *, progress: bool = True,
                  sandbox: bool = True, miniwob: bool = True) -> BuildSummary:
    """Record the labelled set into the store at `data_dir` (runs `sandbox-web` and `miniwob`), skipping episodes
    already finished there; opens (and closes) its own server and browsers."""
    from contextlib import ExitStack

    summary = BuildSummary(Path(data_dir))
    with ExitStack() as stack:
        show = _progress(stack, plan.episodes(sandbox=sandbox, miniwob=miniwob), progress)
        parts: list[BuildSummary] = []
        if sandbox and (plan.tasks or (plan.tasks is None and plan.apps)):
            from uivenus.envs.browser import BrowserEnv
            from uivenus.envs.browser_config import BrowserConfig
            from uivenus.envs.sandbox import SandboxServer

            server = stack.enter_context(SandboxServer())
            env = stack.enter_context(BrowserEnv(BrowserConfig(mode="desktop")))
            parts.append(build_sandbox(data_dir, env, server.base_url, plan, progress=show))
        if miniwob and plan.miniwob_tasks and plan.miniwob_seeds:
            from uivenus.envs.miniwob import MiniWoBEnv

            parts.append(build_miniwob(data_dir, stack.enter_context(MiniWoBEnv()), plan, progress=show))
    for part in parts:
        summary.recorded.update(part.recorded)
        summary.skipped += part.skipped
        summary.failed.extend(part.failed)
    return summary


def _progress(stack: Any, total: int, show: bool) -> Callable[[str], None]:
    """Counts episodes toward `total`, each called as the next one starts (or is found already recorded); the
    tracker closes with `stack`, counting the last."""
    from uivenus.progress import Tracker

    tracker = stack.enter_context(Tracker("verifier build", total, unit="episodes", show=show))
    started = [False]

    def last_done() -> None:
        if started[0]:
            tracker.advance(1)

    stack.callback(last_done)  # runs before the tracker closes

    def step(label: str) -> None:
        tracker.advance(1 if started[0] else 0, note=label)
        started[0] = True

    return step
