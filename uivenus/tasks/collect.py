"""Collection: tasks run through a policy in parallel environments, each episode stored, verified and its failure
classified.

One job: turn a list of tasks into verified episodes in the trajectory store. `Collector` turns tasks into plain
picklable `Job`s (the task as a dict, the policy SPEC, the store's paths), runs them on an `Executor`'s workers —
each worker keeps its own environment (a browser with its sandbox server, or a desktop with its own Xvfb display)
and writes its episodes to the store itself (`collect_episode`, through a writer that also records the final state
and the reference run feedback reads) — verifies them (the trace verdict and step labels of `verify.trace`, written
next to the episode) and classifies the failures (`feedback`). The rounds of the closed loop around it
(synthesize, gate, collect, learn) are `tasks.rounds`; `uivenus tasks run` calls a `Collector` on its own.

Episode ids are a stable hash of the task and the policy, so the same task lands in the same directory every
time. Resuming is by the store: before dispatch, tasks whose `episode.json` exists are skipped; an episode without
it (its process was killed mid-way) is deleted by the worker that reruns it and collected from the start — its
environment's state died with the process, so its recorded steps cannot be continued.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from uivenus.actions.space import Platform
from uivenus.agent.element_listing import MAX_ELEMENTS, ObservationType
from uivenus.agent.policies.base import Policy
from uivenus.envs.base import Env, EnvError
from uivenus.envs.desktop_checks import CHECK_KINDS as DESKTOP_CHECK_KINDS
from uivenus.records import Outcome, RecordError, TaskSpec, Trajectory, read_jsonl
from uivenus.store import EPISODE_FILE, StoreError, TrajectoryStore, read_episode
from uivenus.tasks.catalog import Catalog
from uivenus.tasks.executors import Executor, WorkerContext
from uivenus.tasks.feedback import (
    PAGE_KEY, REFERENCE_KEY, SYNTH_TASK_KEY, Failure, FailureKind, environment_failed, episode_passed, feedback,
    reference_record,
)
from uivenus.tasks.gate import Execution
from uivenus.tasks.spec import SynthTask

__all__ = [
    "ENV_FOR_LAYOUT", "ENV_FOR_PLATFORM", "REFERENCES", "Collection", "Collector", "EpisodeResult", "Job",
    "PipelineError", "Reference", "collect_episode", "env_spec", "episode_id", "load_tasks", "verify_stored",
]


class PipelineError(RuntimeError):
    """The pipeline cannot run as asked (no environment for a task, a malformed task file); the message says why."""


# --- tasks and where they run ------------------------------------------------------------------------------

#: The environment SPEC (`envs.registry`) a sandbox task runs in, by its layout; one launcher serves every app.
ENV_FOR_LAYOUT: dict[str, str] = {"web": "sandbox:launcher", "phone": "sandbox-phone:launcher"}
#: The environment SPEC of other tasks by platform (desktop tasks materialize their own files and apps).
ENV_FOR_PLATFORM: dict[Platform, str] = {Platform.DESKTOP: "desktop"}


def env_spec(task: TaskSpec) -> str:
    """The environment a worker needs for `task`."""
    if (task.check or {}).get("kind") == "sandbox":
        layout = str(task.metadata.get("layout", "web"))
        if layout not in ENV_FOR_LAYOUT:
            raise PipelineError(f"task {task.id}: unknown sandbox layout {layout!r}; use {', '.join(ENV_FOR_LAYOUT)}")
        return ENV_FOR_LAYOUT[layout]
    if task.platform in ENV_FOR_PLATFORM:
        return ENV_FOR_PLATFORM[task.platform]
    raise PipelineError(f"no environment for task {task.id} ({task.platform.value}, check "
                        f"{(task.check or {}).get('kind')!r}); the pipeline runs sandbox and desktop tasks")


AnyTask = SynthTask | TaskSpec


def _spec(task: AnyTask) -> TaskSpec:
    return task.spec if isinstance(task, SynthTask) else task


def _task_from_dict(data: Mapping[str, Any]) -> AnyTask:
    """A SynthTask (a dict with a `spec`) or a plain TaskSpec."""
    return SynthTask.from_dict(data) if "spec" in data else TaskSpec.from_dict(data)


def load_tasks(path: str | Path) -> list[AnyTask]:
    """Tasks from a JSONL file (synthesised tasks from `tasks synth`/`gate`, or plain TaskSpec lines), or from
    OSWorld-format task files (a directory of them, an index like `test_all.json`, or one `.json` task)."""
    if Path(path).is_dir() or Path(path).suffix == ".json":
        return list(_osworld_tasks(Path(path)))
    out = []
    for number, data in read_jsonl(path, PipelineError, "a line is a synthesised task or a TaskSpec"):
        try:
            if not isinstance(data, dict):
                raise RecordError(f"a task is a JSON object, got {type(data).__name__}")
            out.append(_task_from_dict(data))
        except (ValueError, TypeError) as exc:  # RecordError
            raise PipelineError(f"{path}:{number} is neither a synthesised task nor a TaskSpec: {exc}") from None
    return out


def _osworld_tasks(path: Path) -> list[TaskSpec]:
    """OSWorld-format tasks as TaskSpecs; a task that cannot run here stops the load, naming it and why (`eval
    osworld` is the runner that records such tasks as errors and goes on)."""
    from uivenus.tasks.osworld import OSWorldError, load_osworld

    try:
        loaded = load_osworld(path)
    except OSWorldError as exc:
        raise PipelineError(str(exc)) from None
    bad = [*(f"{e.id} ({e.reason})" for e in loaded.errors),
           *(f"{t.id} (unsupported: {'; '.join(t.missing)})" for t in loaded.tasks if not t.supported)]
    if bad:
        raise PipelineError(f"{len(bad)} OSWorld task(s) in {path} cannot run: {', '.join(bad[:5])}"
                            f"{' …' if len(bad) > 5 else ''}; `uivenus eval osworld --plan-only` lists them all")
    return [task.to_taskspec() for task in loaded.tasks]


def episode_id(task: TaskSpec, policy: str) -> str:
    """A stable, readable episode id: the task id made safe, and a hash of the whole task and the policy."""
    text = json.dumps({"task": task.to_dict(), "policy": policy}, sort_keys=True, ensure_ascii=False)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", task.id).strip("-.")[:80] or "task"
    return f"{stem}-{hashlib.sha1(text.encode()).hexdigest()[:10]}"


# --- the worker's side -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Reference:
    """How the reference solution of a task kind is played, and what the page says when a run fails."""

    policy: Callable[[], Policy]
    same_as: str | None  # the policy SPEC whose episodes are reference runs themselves (no second run needed)
    diagnostics: Callable[[Env], Mapping[str, Any]]


def _oracle() -> Policy:
    from uivenus.agent.policies.oracle import OraclePolicy

    return OraclePolicy()


def _page_facts(env: Env) -> Mapping[str, Any]:
    from uivenus.tasks.explore_page import page_facts

    return page_facts(env)


#: Reference solutions by the task's check kind; a kind without one gets no reference run.
REFERENCES: dict[str, Reference] = {
    "sandbox": Reference(_oracle, "oracle", _page_facts),
    **{kind: Reference(_oracle, "oracle", lambda env: {}) for kind in DESKTOP_CHECK_KINDS},
}


@dataclass(frozen=True)
class Job:
    """One task for one worker: plain data, so any executor can ship it."""

    task: dict[str, Any]  # SynthTask.to_dict() or TaskSpec.to_dict()
    policy: str
    store_root: str
    run_id: str
    episode_id: str
    env: str
    judges: tuple[str, ...] = ("program",)
    max_steps: int | None = None
    guard: str = "allow"
    metadata: dict[str, Any] = field(default_factory=dict)
    time_limit_s: float | None = None  # the episode's wall-clock budget (`LoopConfig.time_limit_s`)
    observation: str = ObservationType.SCREENSHOT.value  # what the policy is shown (`LoopConfig.observation`)
    a11y_limit: int = MAX_ELEMENTS  # most elements listed with screenshot_a11y_tree (`LoopConfig.a11y_limit`)


@dataclass(frozen=True)
class EpisodeResult:
    """What a worker reports back (the episode itself is in the store)."""

    episode_id: str
    task_id: str
    worker: str
    seconds: float
    outcome: str | None = None
    passed: bool | None = None
    error: str | None = None  # the job failed; the next run redoes the episode (or verifies it, if it finished)


class _Recorder:
    """The episode's writer, which also records at the end what verification and feedback read later: the final
    environment state (for the program judge), what the page showed, and — when the episode failed and was not
    itself a reference run — how the task's reference solution fares from a fresh reset."""

    def __init__(self, writer: Any, env: Env, task: TaskSpec, policy: str) -> None:
        self._writer, self.env, self.task, self.policy = writer, env, task, policy
        self.directory = writer.directory

    def append(self, *args: Any, **kwargs: Any) -> Any:
        return self._writer.append(*args, **kwargs)

    def finish(self, outcome: Outcome, answer: str | None = None, verdicts: Mapping[str, Any] | None = None,
               metadata: Mapping[str, Any] | None = None, task: TaskSpec | None = None) -> Trajectory:
        from uivenus.verify.trace import FINAL_STATE_KEY

        extra: dict[str, Any] = {FINAL_STATE_KEY: self._state()}
        kind = (self.task.check or {}).get("kind")
        reference = REFERENCES.get(kind or "")
        if reference is not None:
            extra[PAGE_KEY] = self._diagnostics(reference)
            own = Trajectory(task=task or self.task, outcome=outcome, verdicts=verdicts or {}, metadata=metadata or {})
            if reference.same_as == self.policy:
                extra[REFERENCE_KEY] = reference_record(own, extra[PAGE_KEY], same_run=True)
            elif not episode_passed(own):
                extra[REFERENCE_KEY] = self._reference_run(reference)
        return self._writer.finish(outcome, answer, verdicts, {**(metadata or {}), **extra}, task)

    def _state(self) -> Mapping[str, Any] | None:
        try:
            return dict(self.env.state())
        except EnvError:
            return None

    def _diagnostics(self, reference: Reference) -> Mapping[str, Any]:
        try:
            return dict(reference.diagnostics(self.env))
        except EnvError:
            return {}

    def _reference_run(self, reference: Reference) -> dict[str, Any]:
        from uivenus.agent.loop import LoopConfig, run_episode
        from uivenus.agent.safety import Guard, GuardMode

        run = run_episode(self.env, reference.policy(), self.task, config=LoopConfig(guard=GuardMode.ALLOW),
                          guard=Guard(GuardMode.ALLOW, ocr=False))
        return reference_record(run, self._diagnostics(reference), same_run=False)

    def __enter__(self) -> _Recorder:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._writer.__exit__(*exc)


def verify_stored(directory: str | Path, judges: Sequence[Any]) -> Trajectory:
    """Judge a finished episode (trace verdict and step labels, OCR only if a judge reads pixels) and store it."""
    from uivenus.verify.trace import verify_trace, write_trace

    trajectory = read_episode(directory)
    return write_trace(directory, verify_trace(trajectory, directory, judges, ocr=False))


def _judges(specs: Sequence[str]) -> tuple[Any, ...]:
    from uivenus.verify.judges import judge_from_spec

    return tuple(judge_from_spec(spec) for spec in specs)


def _prepare(task: AnyTask) -> TaskSpec:
    """Make a synthesised task runnable in this process (its checker and solver are registered by id)."""
    if isinstance(task, SynthTask):
        from uivenus.tasks.functions import sandbox_task

        sandbox_task(task)
    return _spec(task)


def collect_episode(context: WorkerContext, job: Job) -> EpisodeResult:
    """Run one job on this worker's environment: record the episode, verify it, report back (never raises)."""
    from uivenus.agent.loop import LoopConfig, run_episode
    from uivenus.agent.policies.base import policy_from_spec
    from uivenus.agent.safety import Guard
    from uivenus.envs.registry import make_env

    started = time.perf_counter()
    task_id = str(job.task.get("id") or job.task.get("spec", {}).get("id"))
    try:
        task = _task_from_dict(job.task)
        spec = _prepare(task)
        store = TrajectoryStore(job.store_root)
        directory = store.episode_dir(job.run_id, job.episode_id)
        if not (directory / EPISODE_FILE).exists():
            if directory.exists():  # left unfinished by a killed run: start it again from a fresh reset
                shutil.rmtree(directory)
            env = context.get(f"env:{job.env}", lambda: make_env(job.env))
            policy = context.get(f"policy:{job.policy}", lambda: policy_from_spec(job.policy))
            metadata = {"policy_spec": job.policy, "worker": context.worker, **job.metadata}
            if isinstance(task, SynthTask):
                metadata[SYNTH_TASK_KEY] = job.task
            writer = store.episode(job.run_id, job.episode_id, spec, metadata)
            loop = LoopConfig(max_steps=job.max_steps, guard=job.guard, time_limit_s=job.time_limit_s,
                              observation=job.observation, a11y_limit=job.a11y_limit)
            trajectory = run_episode(env, policy, spec, config=loop,
                                     writer=_Recorder(writer, env, spec, job.policy), guard=Guard(job.guard, ocr=False))
            if environment_failed(trajectory.outcome, trajectory.metadata.get("error")):
                with contextlib.suppress(EnvError):  # the environment failed: the next job gets a fresh one
                    context.discard(f"env:{job.env}")
        judges = context.get("judges:" + ",".join(job.judges), lambda: _judges(job.judges))
        trajectory = verify_stored(directory, judges)
        return EpisodeResult(job.episode_id, task_id, context.worker, time.perf_counter() - started,
                             trajectory.outcome.value, episode_passed(trajectory))
    except Exception as exc:  # noqa: BLE001 - one broken job must not end the round; it is reported and redone
        return EpisodeResult(job.episode_id, task_id, context.worker, time.perf_counter() - started,
                             error=f"{type(exc).__name__}: {exc}")


# --- collecting ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Collection:
    """What a collection produced: every task's episode (in task order), this call's share of the work, and the
    failures with their kinds."""

    episode_ids: tuple[str, ...]
    ran: tuple[EpisodeResult, ...]  # episodes collected by this call
    skipped: int  # tasks whose episode was already finished
    seconds: float
    passed: int  # episodes verified successful, skipped ones included
    failures: tuple[Failure, ...]
    errors: tuple[str, ...] = ()  # jobs that failed, episodes that could not be verified (the next run retries)

    @property
    def episodes(self) -> int:
        return sum(1 for r in self.ran if r.error is None)

    @property
    def episodes_per_min(self) -> float:
        return 60.0 * self.episodes / self.seconds if self.seconds > 0 else 0.0

    def count(self, kind: FailureKind) -> int:
        return sum(1 for f in self.failures if f.kind is kind)


class Collector:
    """Runs tasks through `policy` on `executor`'s workers into run `run_id` of the store at `store_root`.

    The guard runs in `allow` mode by default, as in the gate's own runs: whether a consequential task may be
    collected at all was the gate's question (it rejects them unless asked to keep them); the guard still records
    what it would have stopped. `judges` are judge SPECs for the trace verdict (`program`, `ocr`, `vlm:...`).
    `env` is the environment SPEC every task runs in (None: each task's own, `env_spec`); `time_limit_s` each
    episode's wall-clock budget (past it the episode ends as an ERROR); `observation` and `a11y_limit` what the
    policy is shown (`LoopConfig`), recorded in the run's metadata, so a resumed run cannot mix two.
    """

    def __init__(self, executor: Executor, policy: str, store_root: str | Path, run_id: str, *,
                 judges: Sequence[str] = ("program",), max_steps: int | None = None, guard: str = "allow",
                 console: Console | None = None, progress: bool = True, env: str | None = None,
                 time_limit_s: float | None = None, observation: str = ObservationType.SCREENSHOT.value,
                 a11y_limit: int = MAX_ELEMENTS) -> None:
        from uivenus.agent.loop import LoopConfig

        # the loop's options are checked here, once, rather than failing every job on its worker
        loop = LoopConfig(max_steps=max_steps, guard=guard, time_limit_s=time_limit_s, observation=observation,
                          a11y_limit=a11y_limit)
        self.executor, self.policy, self.run_id, self.env = executor, policy, run_id, env
        self.time_limit_s, self.observation, self.a11y_limit = time_limit_s, loop.observation.value, a11y_limit
        self.store = TrajectoryStore(store_root)
        self.judges, self.max_steps, self.guard = tuple(judges), max_steps, guard
        self.console, self.progress = console or Console(stderr=True), progress
        self.run_dir = self.store.start_run(run_id, {"policy": policy, **self.shown})
        self._driver_judges: tuple[Any, ...] | None = None

    @property
    def shown(self) -> dict[str, Any]:
        """What the policy is shown, as the run's metadata records it (the listing's bound only where it lists)."""
        listing = self.observation == ObservationType.SCREENSHOT_A11Y_TREE
        return {"observation": self.observation, **({"a11y_limit": self.a11y_limit} if listing else {})}

    def job(self, task: AnyTask, metadata: Mapping[str, Any] | None = None) -> Job:
        spec = _spec(task)
        return Job(task=task.to_dict(), policy=self.policy, store_root=str(self.store.root), run_id=self.run_id,
                   episode_id=episode_id(spec, self.policy), env=self.env or env_spec(spec), judges=self.judges,
                   max_steps=self.max_steps, guard=self.guard, metadata=dict(metadata or {}),
                   time_limit_s=self.time_limit_s, observation=self.observation, a11y_limit=self.a11y_limit)

    def finished(self, episode: str) -> bool:
        return (self.store.episode_dir(self.run_id, episode) / EPISODE_FILE).exists()

    def collect(self, tasks: Sequence[AnyTask], *, catalog: Catalog | None = None,
                executions: Mapping[str, Execution] | None = None, metadata: Mapping[str, Any] | None = None
                ) -> Collection:
        """Collect an episode per task (skipping finished ones), verify, and classify the failures; with a
        `catalog`, invalid tasks teach it constraints (`executions`: the gate's runs, by task id)."""
        started = time.perf_counter()
        jobs = [self.job(task, metadata) for task in tasks]
        todo = [job for job in jobs if not self.finished(job.episode_id)]
        ran = self._dispatch(todo)
        trajectories, errors = self._settle(jobs, ran)
        failures = feedback(catalog, trajectories, executions)
        passed = sum(1 for t in trajectories if episode_passed(t))
        return Collection(tuple(j.episode_id for j in jobs), tuple(ran), len(jobs) - len(todo),
                          time.perf_counter() - started, passed, tuple(failures), tuple(errors))

    def _dispatch(self, jobs: Sequence[Job]) -> list[EpisodeResult]:
        results: list[EpisodeResult] = []
        if not jobs:  # nothing to do: do not start any worker
            return results
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.fields[passed]} passed"))
        with Progress(*columns, console=self.console, disable=not self.progress, transient=True) as bar:
            task = bar.add_task(f"collecting ({self.executor.name} × {self.executor.workers})", total=len(jobs),
                                passed=0)
            for result in self.executor.map(collect_episode, jobs):
                results.append(result)
                bar.update(task, advance=1, passed=sum(1 for r in results if r.passed))
                if result.error:
                    self.console.print(f"[red]job {result.episode_id} failed on {result.worker}:[/red] {result.error}")
        return results

    def _settle(self, jobs: Sequence[Job], ran: Sequence[EpisodeResult]) -> tuple[list[Trajectory], list[str]]:
        """Every finished episode of `jobs`, verified (those a killed run left unverified are verified here)."""
        errors = [f"{r.episode_id}: {r.error}" for r in ran if r.error]
        trajectories = []
        for job in jobs:
            directory = self.store.episode_dir(self.run_id, job.episode_id)
            if not (directory / EPISODE_FILE).exists():
                continue
            trajectory = read_episode(directory)
            if "trace" not in trajectory.verdicts:
                try:
                    _prepare(_task_from_dict(job.task))  # its checker, for the program judge
                    trajectory = verify_stored(directory, self._judges())
                except (StoreError, ValueError, RuntimeError) as exc:
                    errors.append(f"{job.episode_id}: verification failed: {type(exc).__name__}: {exc}")
                    self.console.print(f"[red]could not verify {job.episode_id}:[/red] {type(exc).__name__}: {exc}")
            trajectories.append(trajectory)
        return trajectories, errors

    def _judges(self) -> tuple[Any, ...]:
        if self._driver_judges is None:
            self._driver_judges = _judges(self.judges)
        return self._driver_judges
