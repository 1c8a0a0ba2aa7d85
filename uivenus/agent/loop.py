"""The agent loop: observe → build messages → call the policy → parse (re-asking) → guard → execute → record.

One episode runs until a terminal action (Finished → FINISHED, Answer → ANSWERED, CallUser → CALLED_USER), the
step budget (MAX_STEPS) or a fatal error (a policy that fails, an environment that dies: ERROR). Each step is
appended to the trajectory store as soon as it is over — screenshot seen, every raw reply, parsed action in
screen pixels, error, guard decision, injection flags, timings — so a killed run keeps every completed step.

Choices worth knowing:

- A reply that does not parse (leniently) is answered with the parse error and asked again, at most
  `max_reasks` times; every attempt's raw text is kept in `info["attempts"]`. A step still without an action
  counts against the budget and the error is fed back on the next step.
- Rejected or failed actions (off-screen point, wrong platform, an executor error) are recorded and fed back to
  the model at the start of the next turn's text; the episode goes on.
- A consequential action the guard stops (declined in confirm mode, blocked in block mode) is not executed and
  ends the episode as CALLED_USER, with an answer saying what was stopped and why: the task now needs the user,
  and letting the agent look for another way to do the same thing would defeat the guard.
- Terminal actions are carried out by the loop itself (they end the episode), so they count as executed;
  TakeNote goes to memory and then to the env like any other action.
- A step cannot time its own write, so `timings["record_s"]` is the time spent storing the *previous* step
  (0 for the first; the last step's goes to the trajectory metadata as `last_record_s`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uivenus.actions.calls import format_action
from uivenus.actions.coords import QWEN2_FACTOR, CoordinateError, Frame, FrameKind, frame_from_options
from uivenus.actions.grammar import parse_response
from uivenus.actions.points import iter_points
from uivenus.actions.space import Action, ActionSequence, Answer, CallUser, Finished, TakeNote
from uivenus.actions.syntax import ParseError
from uivenus.actions.values import ActionError
from uivenus.agent.conversation import Turn, build_messages
from uivenus.agent.memory import Memory
from uivenus.agent.policies.base import (
    PRESETS, AnswerKey, Message, Mode, Policy, PolicyError, PolicyRequest, Sampling, with_answers,
)
from uivenus.agent.prompts import navigation_prompt
from uivenus.agent.safety import Guard, GuardDecision, GuardMode
from uivenus.envs.base import Env, EnvError, Observation, OffScreenError, PlatformMismatchError, StepResult
from uivenus.records import Outcome, Step, TaskSpec, Trajectory
from uivenus.store import EpisodeWriter

__all__ = ["CHECKERS", "SOLVERS", "LoopConfig", "LoopError", "reask_message", "run_episode"]

#: Frame kinds as the CLI spells them.
FRAME_KINDS = tuple(kind.value for kind in FrameKind)


class LoopError(ValueError):
    """The loop was configured wrongly; the message names the setting."""


@dataclass(frozen=True)
class LoopConfig:
    """How one episode is run; everything a policy-independent harness needs to reproduce it."""

    max_steps: int | None = None  # None: the task's own max_steps
    frame: str = FrameKind.RELATIVE.value  # the model's coordinate frame: rel / abs / smart
    divisor: int = 1000  # relative frame divisor
    factor: int = QWEN2_FACTOR  # smart-resize factor (28 Qwen2/2.5-VL, 32 Qwen3-VL)
    images_in_history: int = 3
    max_reasks: int = 2
    guard: GuardMode = GuardMode.CONFIRM
    thinking: bool = True
    sampling: Sampling | None = None  # None: the agentic preset (thinking as set above)
    max_pixels: int | None = None  # cap on screenshot pixels sent in the relative frame
    prompt_template: Path | None = None  # a navigation template file reproducing a release's wording

    def __post_init__(self) -> None:
        if self.max_steps is not None and (not isinstance(self.max_steps, int) or self.max_steps < 1):
            raise LoopError(f"max_steps must be a positive integer or None, got {self.max_steps!r}")
        if self.max_reasks < 0 or self.images_in_history < 0:
            raise LoopError("max_reasks and images_in_history must be >= 0")
        if self.frame not in FRAME_KINDS:
            raise LoopError(f"unknown frame {self.frame!r}; use one of {', '.join(FRAME_KINDS)}")
        object.__setattr__(self, "guard", GuardMode(self.guard))

    def frame_for(self, size: tuple[int, int]) -> Frame:
        return frame_from_options(self.frame, size[0], size[1], divisor=self.divisor, factor=self.factor)

    @property
    def agentic_sampling(self) -> Sampling:
        return self.sampling or dataclasses.replace(PRESETS[Mode.AGENTIC], thinking=self.thinking)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["guard"] = self.guard.value
        out["sampling"] = dataclasses.asdict(self.sampling) if self.sampling else None
        out["prompt_template"] = str(self.prompt_template) if self.prompt_template else None
        return out


def reask_message(error: Exception) -> Message:
    """What the model hears after a reply without a usable action."""
    return Message("user", (
        f"Your reply could not be used: {error}. Reply again with exactly one action inside <action></action>, "
        "written as a call with keyword arguments, e.g. <action>Click(point=(x, y))</action>.",
    ))


# --- checkers run when the episode ends -----------------------------------------------------------

def _sandbox_verdict(env: Env, task: TaskSpec) -> Mapping[str, Any]:
    from uivenus.envs.sandbox.tasks import check_spec

    try:
        state = env.app_state()  # type: ignore[attr-defined]
    except (EnvError, AttributeError) as exc:
        return {"passed": False, "reason": f"no app state to check ({exc})"}
    result = check_spec(task, state)
    return {"passed": result.passed, "reason": result.reason}


def _page_verdict(env: Env, task: TaskSpec) -> Mapping[str, Any]:
    """The grade a self-grading page (MiniWoB++) gave the episode: done with a positive raw reward passes."""
    state = dict(env.state())
    return {**state, "passed": bool(state.get("done")) and float(state.get("raw_reward", 0)) > 0}


#: Task check kind -> how the final state is judged (stored as the trajectory's verdict under that kind).
CHECKERS: dict[str, Callable[[Env, TaskSpec], Mapping[str, Any]]] = {
    "sandbox": _sandbox_verdict,
    "miniwob": _page_verdict,
}


# --- answers, told only to policies that take them --------------------------------------------------

_DOM_QUERY = ("center", "exists", "text", "app_state")

SolverFactory = Callable[[Env, TaskSpec], Iterator[Action]]


def _sandbox_solver(env: Env, task: TaskSpec) -> Iterator[Action]:
    """A sandbox task's reference solution, live on `env`; it reads the page through the env's DOM queries."""
    from uivenus.envs.sandbox.solving import SolverError
    from uivenus.envs.sandbox.tasks import get_task

    if not all(callable(getattr(env, name, None)) for name in _DOM_QUERY):
        raise SolverError(f"{type(env).__name__} cannot query the page's DOM, which the sandbox solutions read")
    return get_task(task.check["task"]).solve(env)  # type: ignore[arg-type, index]


#: Task check kind -> the task's reference solution on the live env (an `AnswerKey.solver` for the oracle).
SOLVERS: dict[str, SolverFactory] = {"sandbox": _sandbox_solver}


def _started(make: SolverFactory, env: Env, task: TaskSpec) -> Iterator[Action]:
    """`make(env, task)`, built at the first action asked of it: only a policy that plays it pays for it (or fails
    on a task without one)."""
    yield from make(env, task)


def _answer_key(env: Env, task: TaskSpec) -> AnswerKey:
    """What the loop tells answer-keyed policies about an episode of `task` just reset on `env`."""
    make = SOLVERS.get((task.check or {}).get("kind", ""))
    return AnswerKey(solver=_started(make, env, task) if make is not None else None)


# --- one step --------------------------------------------------------------------------------------

@dataclass
class _StepOutcome:
    """What a step decided about the episode: go on with `observation`, or end with `outcome`."""

    observation: Observation
    outcome: Outcome | None = None
    answer: str | None = None
    fatal: str | None = None


@dataclass
class _Draft:
    """A step being assembled before it is recorded."""

    response: str | None = None
    action: Action | None = None
    error: str | None = None
    executed: bool = False
    timings: dict[str, float] = field(default_factory=lambda: dict.fromkeys(
        ("policy_s", "parse_s", "guard_s", "env_s", "record_s"), 0.0))
    info: dict[str, Any] = field(default_factory=dict)


_TERMINAL_OUTCOMES: Mapping[type, Outcome] = {
    Finished: Outcome.FINISHED, Answer: Outcome.ANSWERED, CallUser: Outcome.CALLED_USER,
}


def _one_action(actions: tuple[Action, ...]) -> Action:
    """Several comma-separated actions (a CAPTCHA answer) are one Sequence step."""
    return actions[0] if len(actions) == 1 else ActionSequence(actions=actions)


class _Episode:
    def __init__(self, env: Env, policy: Policy, task: TaskSpec, config: LoopConfig, writer: EpisodeWriter | None,
                 guard: Guard, memory: Memory) -> None:
        self.env, self.policy, self.task, self.config = env, policy, task, config
        self.writer, self.guard, self.memory = writer, guard, memory
        self.steps: list[Step] = []
        self.history: list[Turn] = []
        self.feedback: str | None = None  # what the model should hear about its previous action
        self.focus: tuple[float, float] | None = None  # where the pointer last acted (the field a Type goes into)
        self.last_record_s = 0.0
        self.prompts: dict[Frame, str] = {}
        self.answering = policy  # the policy as it faces this episode (told its answers when it takes them)

    # -- the episode -------------------------------------------------------------------------------

    def run(self) -> Trajectory:
        try:
            observation = self.env.reset(self.task)
        except EnvError as exc:
            return self.finish(Outcome.ERROR, error=f"reset failed: {type(exc).__name__}: {exc}")
        if not self.task.instruction and observation.info.get("instruction"):  # known only once the page is up
            self.task = self.task.with_instruction(str(observation.info["instruction"]))
        self.answering = with_answers(self.policy, _answer_key(self.env, self.task))
        budget = self.config.max_steps or self.task.max_steps
        for _ in range(budget):
            result = self.step(observation)
            if result.fatal is not None:
                return self.finish(Outcome.ERROR, error=result.fatal)
            if result.outcome is not None:
                return self.finish(result.outcome, answer=result.answer)
            observation = result.observation
        return self.finish(Outcome.MAX_STEPS)

    def step(self, observation: Observation) -> _StepOutcome:
        draft = _Draft(info={"url": observation.url, "app": observation.app})
        started = time.perf_counter()
        draft.info["injection"] = [flag.to_dict() for flag in self.guard.scan(observation)]
        draft.timings["guard_s"] += time.perf_counter() - started
        frame = self.config.frame_for(observation.size)
        messages = self.messages(observation, frame)
        try:
            model_action = self.ask(messages, observation, frame, draft)
        except PolicyError as exc:
            draft.error = f"PolicyError: {exc}"
            self.record(draft, observation)
            return _StepOutcome(observation, fatal=draft.error)
        if model_action is None:
            self.feedback = f"Your previous reply had no usable action: {draft.error}"
            return self.record(draft, observation, _StepOutcome(observation))
        return self.act(model_action, observation, frame, draft)

    # -- asking ------------------------------------------------------------------------------------

    def messages(self, observation: Observation, frame: Frame) -> tuple[Message, ...]:
        if frame not in self.prompts:
            self.prompts[frame] = navigation_prompt(observation.platform, frame, thinking=self.config.thinking,
                                                    template=self.config.prompt_template)
        return build_messages(self.prompts[frame], self.task.instruction, self.history, observation.screenshot,
                              frame=frame, images_in_history=self.config.images_in_history,
                              notes=self.memory.notes, max_pixels=self.config.max_pixels, feedback=self.feedback)

    def context(self, observation: Observation, frame: Frame) -> dict[str, Any]:
        """The observation facts non-model policies read; never an answer or the env (`PolicyRequest`)."""
        return {"instruction": self.task.instruction, "screen_size": observation.size,
                "platform": observation.platform, "frame": frame}

    def ask(self, messages: tuple[Message, ...], observation: Observation, frame: Frame, draft: _Draft
            ) -> Action | None:
        """The policy's action in the model frame, re-asking after unparseable replies; None if none came."""
        draft.info["feedback"] = self.feedback
        attempts: list[dict[str, Any]] = []
        draft.info["attempts"] = attempts
        context = self.context(observation, frame)
        for _ in range(1 + self.config.max_reasks):
            started = time.perf_counter()
            try:
                reply = self.answering.act(PolicyRequest(messages, mode=Mode.AGENTIC,
                                                         sampling=self.config.agentic_sampling, context=context))
            finally:
                draft.timings["policy_s"] += time.perf_counter() - started
            draft.response = reply.text
            started = time.perf_counter()
            attempt: dict[str, Any] = {"response": reply.text, "error": None, "usage": dict(reply.usage)}
            attempts.append(attempt)
            try:
                parsed = parse_response(reply.text, lenient=True)
                action = _one_action(parsed.actions)
            except (ParseError, ActionError) as exc:
                attempt["error"] = draft.error = f"{type(exc).__name__}: {exc}"
                messages = (*messages, Message("assistant", (reply.text,)), reask_message(exc))
                continue
            finally:
                draft.timings["parse_s"] += time.perf_counter() - started
            if parsed.recovered:
                attempt["recovered"] = list(parsed.notes)
            draft.error = None
            return action
        return None

    # -- acting ------------------------------------------------------------------------------------

    def act(self, model_action: Action, observation: Observation, frame: Frame, draft: _Draft) -> _StepOutcome:
        draft.info["model_action"] = model_action.to_dict()
        started = time.perf_counter()
        try:
            action = frame.action_to_screen(model_action)
        except CoordinateError as exc:
            draft.error = f"CoordinateError: {exc}"
            self.feedback = f"{format_action(model_action)} was not executed: {exc}"
            return self.record(draft, observation, _StepOutcome(observation))
        finally:
            draft.timings["parse_s"] += time.perf_counter() - started
        draft.action = action
        started = time.perf_counter()
        decision = self.guard.review(action, observation, self.task, env=self.env, focus=self.focus)
        draft.timings["guard_s"] += time.perf_counter() - started
        draft.info["guard"] = decision.to_dict()
        if not decision.runs:
            return self.stopped(decision, model_action, observation, draft)
        terminal = _TERMINAL_OUTCOMES.get(type(action))
        if terminal is not None:
            draft.executed = True
            return self.record(draft, observation, _StepOutcome(observation, terminal, getattr(action, "content", None)))
        if isinstance(action, TakeNote):
            self.memory.take(action.content)
        return self.execute(action, model_action, observation, draft)

    def stopped(self, decision: GuardDecision, model_action: Action, observation: Observation, draft: _Draft
                ) -> _StepOutcome:
        draft.error = f"guard {decision.verdict.value}: {decision.reason}"
        answer = (f"I stopped before {format_action(model_action)} because it is consequential "
                  f"({decision.category.value if decision.category else 'unknown'}): {decision.reason}. "
                  "Please do this step yourself, or run me again with permission.")
        return self.record(draft, observation, _StepOutcome(observation, Outcome.CALLED_USER, answer))

    def execute(self, action: Action, model_action: Action, observation: Observation, draft: _Draft) -> _StepOutcome:
        started = time.perf_counter()
        try:
            result: StepResult = self.env.step(action)
        except (OffScreenError, PlatformMismatchError) as exc:
            draft.timings["env_s"] += time.perf_counter() - started
            draft.error = f"{type(exc).__name__}: {exc}"
            self.feedback = f"{format_action(model_action)} was rejected: {exc}"
            return self.record(draft, observation, _StepOutcome(observation))
        except EnvError as exc:
            draft.timings["env_s"] += time.perf_counter() - started
            draft.error = f"{type(exc).__name__}: {exc}"
            self.record(draft, observation)
            return _StepOutcome(observation, fatal=draft.error)
        draft.timings["env_s"] += time.perf_counter() - started
        draft.executed, draft.error = result.executed, result.error
        draft.info["env"] = {"timings": dict(result.timings), **dict(result.info)}
        self.focus = next((p for _, p in iter_points(action)), self.focus)
        if result.info.get("done"):  # the environment ended the episode (a self-grading page)
            return self.record(draft, observation, _StepOutcome(result.observation, Outcome.ENDED_BY_ENV))
        if not result.executed:
            self.feedback = f"{format_action(model_action)} failed: {result.error}"
        elif "url" in result.info:
            self.feedback = f"the current URL is {result.info['url']}"
        else:
            self.feedback = None
        return self.record(draft, observation, _StepOutcome(result.observation))

    # -- recording ---------------------------------------------------------------------------------

    def record(self, draft: _Draft, observation: Observation, outcome: _StepOutcome | None = None) -> _StepOutcome:
        draft.timings["record_s"] = self.last_record_s
        step = Step(index=len(self.steps), response=draft.response, action=draft.action, error=draft.error,
                    executed=draft.executed, timings=draft.timings, info=draft.info)
        started = time.perf_counter()
        if self.writer is not None:
            step = self.writer.append(step, observation.screenshot)
        self.steps.append(step)
        self.history.append(Turn(observation.screenshot, draft.response or ""))
        self.last_record_s = time.perf_counter() - started
        return outcome or _StepOutcome(observation)

    def finish(self, outcome: Outcome, *, answer: str | None = None, error: str | None = None) -> Trajectory:
        verdicts = {}
        check = self.task.check or {}
        checker = CHECKERS.get(check.get("kind", ""))
        if checker is not None and outcome is not Outcome.ERROR:
            verdicts[check["kind"]] = dict(checker(self.env, self.task))
        metadata: dict[str, Any] = {
            "policy": getattr(self.policy, "name", type(self.policy).__name__),
            "config": self.config.to_dict(),
            "guard_mode": self.guard.mode.value,
            "injection_steps": [s.index for s in self.steps if s.info.get("injection")],
            "guard_stops": [s.index for s in self.steps if not s.info.get("guard", {}).get("runs", True)],
            "notes": list(self.memory.notes),
            "last_record_s": self.last_record_s,
        }
        if error is not None:
            metadata["error"] = error
        if self.writer is not None:
            return self.writer.finish(outcome, answer=answer, verdicts=verdicts, metadata=metadata, task=self.task)
        return Trajectory(task=self.task, steps=tuple(self.steps), outcome=outcome, answer=answer, verdicts=verdicts,
                          metadata=metadata)


def run_episode(
    env: Env,
    policy: Policy,
    task: TaskSpec,
    *,
    config: LoopConfig | None = None,
    writer: EpisodeWriter | None = None,
    guard: Guard | None = None,
    memory: Memory | None = None,
) -> Trajectory:
    """Reset `env` to `task` and let `policy` act until the episode ends; steps go to `writer` as they happen.

    `guard` defaults to `Guard(config.guard)` (in confirm mode nobody is asked, so consequential actions are
    declined); `memory` defaults to an empty one. The writer is finished here. An exception that escapes the loop
    (a bug) finishes the episode as ERROR with its traceback, as `EpisodeWriter` does for any crash; Ctrl-C leaves
    it INCOMPLETE and resumable. Either way every completed step is on disk.
    """
    config = config or LoopConfig()
    episode = _Episode(env, policy, task, config, writer, guard or Guard(config.guard), memory or Memory())
    with writer if writer is not None else contextlib.nullcontext():
        return episode.run()
