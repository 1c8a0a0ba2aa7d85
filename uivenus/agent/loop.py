"""The agent loop: observe → build messages → call the policy → parse (re-asking) → guard → execute → record.

One episode runs until a terminal action (Finished → FINISHED, Answer → ANSWERED, CallUser → CALLED_USER), the
step budget (MAX_STEPS) or a fatal error (a policy that fails, an environment that dies, the time limit passed
between two steps: ERROR; a step in flight is not cut short). Each step is
appended to the trajectory store as soon as it is over — screenshot seen, every raw reply, parsed action in
screen pixels, error, guard decision, injection flags, timings — so a killed run keeps every completed step.

One step is a small pipeline whose stages each return a frozen record of what they decided: `scan` (injection
flags: `Scanned`), `ask` (the policy's action, re-asking after bad replies: `Asked`), `place` (model frame to
screen pixels: `Placed`), `prechecked` (the step verifier before the action runs, with `--precheck`: `Prechecked`),
`review` (the guard: `Reviewed`) and `execute` (the env: `Executed`); a stage runs only
while the ones before left an action to take. `Decided` holds them all, and the recorded `Step`, the feedback
the model hears on the next step and how the episode goes on (`StepEnd`) are each derived from it in one place
(`uivenus.agent.decisions`).

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
- The screenshot is recorded as the env encoded it (`Observation.png`); raw pixels start encoding in the
  background when the step begins (`encode_later`), and a step whose encoding is still running when it is
  recorded is written by the store's background writer, so recording never waits for an encoding.
- A step cannot time its own write, so `timings["record_s"]` is the time spent storing the *previous* step
  (0 for the first; the last step's goes to the trajectory metadata as `last_record_s`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from uivenus.actions.coords import QWEN2_FACTOR, CoordinateError, Frame, FrameKind, frame_from_options
from uivenus.actions.grammar import parse_response
from uivenus.actions.syntax import ParseError
from uivenus.actions.space import Action, ActionSequence, TakeNote
from uivenus.actions.values import ActionError
from uivenus.agent.conversation import Turn, build_messages
from uivenus.agent.element_listing import MAX_ELEMENTS, ElementListing, ObservationType, read_listing
from uivenus.agent.decisions import Asked, Decided, Executed, Placed, Reviewed, Scanned, StepEnd, error_text
from uivenus.agent.memory import Memory
from uivenus.agent.precheck import Precheck, PrecheckMode, Prechecked, resend_message
from uivenus.agent.observing import observation_facts
from uivenus.agent.policies.base import (
    PRESETS, AnswerKey, Message, Mode, Policy, PolicyError, PolicyRequest, Sampling, with_answers,
)
from uivenus.agent.prompts import navigation_prompt
from uivenus.agent.safety import Guard, GuardMode
from uivenus.envs.base import Env, EnvError, Observation, StepResult
from uivenus.envs.checks import Checker, SolverFactory, task_checker
from uivenus.records import Outcome, Step, TaskSpec, Trajectory
from uivenus.store import EpisodeWriter, Screenshot, encode_later

__all__ = ["A11Y_TREE_KEY", "LoopConfig", "LoopError", "reask_message", "run_episode"]

#: `Step.info` key of the accessibility listing the model was shown (screenshot_a11y_tree observations).
A11Y_TREE_KEY = "a11y_tree"

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
    text_key: str | None = None  # record each step's screen text (`Observation.text`) under this `Step.info` key
    precheck: PrecheckMode = PrecheckMode.OFF  # check each action before it runs (needs a `Precheck` plug)
    time_limit_s: float | None = None  # wall-clock budget from the first screen; past it the episode is an ERROR
    #: What the policy is shown: the screenshot, or the screenshot and the accessibility tree's listing (the model
    #: reads it in the prompt, non-model policies as `context["a11y_elements"]`); `a11y_limit` bounds the listing.
    observation: ObservationType = ObservationType.SCREENSHOT
    a11y_limit: int = MAX_ELEMENTS

    def __post_init__(self) -> None:
        if self.max_steps is not None and (not isinstance(self.max_steps, int) or self.max_steps < 1):
            raise LoopError(f"max_steps must be a positive integer or None, got {self.max_steps!r}")
        if self.time_limit_s is not None and not self.time_limit_s > 0:
            raise LoopError(f"time_limit_s must be a positive number of seconds or None, got {self.time_limit_s!r}")
        if self.max_reasks < 0 or self.images_in_history < 0:
            raise LoopError("max_reasks and images_in_history must be >= 0")
        if self.frame not in FRAME_KINDS:
            raise LoopError(f"unknown frame {self.frame!r}; use one of {', '.join(FRAME_KINDS)}")
        if self.observation not in {kind.value for kind in ObservationType}:
            raise LoopError(f"unknown observation {self.observation!r}; use one of "
                            f"{', '.join(kind.value for kind in ObservationType)}")
        if self.a11y_limit < 1:
            raise LoopError(f"a11y_limit must be >= 1, got {self.a11y_limit}")
        object.__setattr__(self, "observation", ObservationType(self.observation))
        object.__setattr__(self, "guard", GuardMode(self.guard))
        object.__setattr__(self, "precheck", PrecheckMode(self.precheck))

    def frame_for(self, size: tuple[int, int]) -> Frame:
        return frame_from_options(self.frame, size[0], size[1], divisor=self.divisor, factor=self.factor)

    @property
    def agentic_sampling(self) -> Sampling:
        return self.sampling or dataclasses.replace(PRESETS[Mode.AGENTIC], thinking=self.thinking)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["guard"] = self.guard.value
        out["observation"] = self.observation.value
        out["precheck"] = self.precheck.value
        out["sampling"] = dataclasses.asdict(self.sampling) if self.sampling else None
        out["prompt_template"] = str(self.prompt_template) if self.prompt_template else None
        return out


def reask_message(error: Exception) -> Message:
    """What the model hears after a reply without a usable action."""
    return Message("user", (
        f"Your reply could not be used: {error}. Reply again with exactly one action inside <action></action>, "
        "written as a call with keyword arguments, e.g. <action>Click(point=(x, y))</action>.",
    ))


# --- answers, told only to policies that take them --------------------------------------------------

def _started(make: SolverFactory, env: Env, task: TaskSpec) -> Iterator[Action]:
    """`make(env, task)`, built at the first action asked of it: only a policy that plays it pays for it (or fails
    on a task without one)."""
    yield from make(env, task)


def _answer_key(env: Env, task: TaskSpec, checker: Checker | None) -> AnswerKey:
    """What the loop tells answer-keyed policies about an episode of `task` just reset on `env`."""
    make = checker.solver if checker is not None else None
    return AnswerKey(solver=_started(make, env, task) if make is not None else None)


# --- one step ---------------------------------------------------------------------------------------

def _one_action(actions: tuple[Action, ...]) -> Action:
    """Several comma-separated actions (a CAPTCHA answer) are one ActionSequence step."""
    return actions[0] if len(actions) == 1 else ActionSequence(actions=actions)


class _Episode:
    def __init__(self, env: Env, policy: Policy, task: TaskSpec, config: LoopConfig, writer: EpisodeWriter | None,
                 guard: Guard, memory: Memory, checker: Checker | None, precheck: Precheck | None = None) -> None:
        self.env, self.policy, self.task, self.config, self.checker = env, policy, task, config, checker
        self.precheck = precheck if config.precheck is not PrecheckMode.OFF else None
        self.writer, self.guard, self.memory = writer, guard, memory
        self.steps: list[Step] = []
        self.history: list[Turn] = []
        self.feedback: str | None = None  # what the model should hear about its previous action
        self.focus: tuple[float, float] | None = None  # where the pointer last acted (the field a Type goes into)
        self.last_record_s = 0.0
        self.prompts: dict[Frame, str] = {}
        self.answering = policy  # the policy as it faces this episode (told its answers when it takes them)
        self.listed: ElementListing | None = None  # this step's accessibility listing (screenshot_a11y_tree only)

    # -- the episode -------------------------------------------------------------------------------

    def run(self) -> Trajectory:
        try:
            observation = self.env.reset(self.task)
        except EnvError as exc:
            return self.finish(Outcome.ERROR, error=f"reset failed: {type(exc).__name__}: {exc}")
        if not self.task.instruction and observation.info.get("instruction"):  # known only once the page is up
            self.task = self.task.with_instruction(str(observation.info["instruction"]))
        self.answering = with_answers(self.policy, _answer_key(self.env, self.task, self.checker))
        if self.precheck is not None:
            self.precheck.reset()
        budget = self.config.max_steps or self.task.max_steps
        limit = self.config.time_limit_s
        deadline = time.monotonic() + limit if limit is not None else None
        for _ in range(budget):
            if deadline is not None and time.monotonic() > deadline:
                return self.finish(Outcome.ERROR, error=f"time limit: the episode ran past {limit:g} s after "
                                                        f"{len(self.steps)} step(s); stopped unjudged")
            result = self.step(observation)
            if result.fatal is not None:
                return self.finish(Outcome.ERROR, error=result.fatal)
            if result.outcome is not None:
                return self.finish(result.outcome, answer=result.answer)
            observation = result.observation
        return self.finish(Outcome.MAX_STEPS)

    def step(self, observation: Observation) -> StepEnd:
        screen = self.screen(observation)
        decided = self.decide(observation)
        self.record(decided, screen)
        self.feedback = decided.next_feedback()
        self.focus = decided.focus(self.focus)
        return decided.end()

    def decide(self, observation: Observation) -> Decided:
        """Scan, ask, place, review, execute: each stage runs only while the ones before left an action to take."""
        scanned = self.scan(observation)
        frame = self.config.frame_for(observation.size)
        messages = self.messages(observation, frame)
        asked = self.ask(messages, observation, frame)
        decided = Decided(observation, self.feedback, scanned, asked)
        if asked.action is None:
            return decided
        decided = replace(decided, placed=self.place(asked.action, frame))
        action = decided.action
        if action is None:
            return decided
        if self.precheck is not None and not action.is_terminal:
            decided = self.prechecked(self.precheck, decided, action, messages, frame)
            action = decided.action
            if action is None:
                return decided
        decided = replace(decided, reviewed=self.review(action, observation))
        if decided.stopped or decided.terminal is not None:
            return decided
        executed = self.execute(action)
        if self.precheck is not None and executed.result is not None:
            self.precheck.after(executed.result.observation)
        return replace(decided, executed=executed)

    def prechecked(self, precheck: Precheck, decided: Decided, action: Action, messages: tuple[Message, ...],
                   frame: Frame) -> Decided:
        """Ask `precheck` about the placed `action`; in resend mode a flagged one goes back to the model once with
        the reason, and the new proposal (checked too) replaces it — unless the new reply has no usable action."""
        started = time.perf_counter()
        observation = decided.observation
        first = precheck.before(self.task, observation, action, decided.asked.response, tuple(self.steps))
        decisions = (first,)
        if first.flagged and self.config.precheck is PrecheckMode.RESEND:
            again = (*messages, Message("assistant", (decided.asked.response or "",)), resend_message(action, first))
            asked = self.ask(again, observation, frame)
            merged = replace(asked, attempts=decided.asked.attempts + asked.attempts,
                             policy_s=decided.asked.policy_s + asked.policy_s,
                             parse_s=decided.asked.parse_s + asked.parse_s)
            if asked.fatal:
                return replace(decided, asked=merged, placed=None,
                               prechecked=Prechecked(decisions, time.perf_counter() - started))
            placed = self.place(asked.action, frame) if asked.action is not None else None
            if placed is not None and placed.action is not None:
                decided = replace(decided, asked=merged, placed=placed)
                if not placed.action.is_terminal:
                    decisions += (precheck.before(self.task, observation, placed.action, asked.response,
                                                       tuple(self.steps)),)
        return replace(decided, prechecked=Prechecked(decisions, time.perf_counter() - started))

    def scan(self, observation: Observation) -> Scanned:
        started = time.perf_counter()
        flags = tuple(self.guard.scan(observation, env=self.env))
        return Scanned(flags, time.perf_counter() - started)

    # -- asking ------------------------------------------------------------------------------------

    def messages(self, observation: Observation, frame: Frame) -> tuple[Message, ...]:
        if frame not in self.prompts:
            self.prompts[frame] = navigation_prompt(observation.platform, frame, thinking=self.config.thinking,
                                                    template=self.config.prompt_template)
        self.listed = (read_listing(self.env, frame, self.config.a11y_limit)
                       if self.config.observation is ObservationType.SCREENSHOT_A11Y_TREE else None)
        return build_messages(self.prompts[frame], self.task.instruction, self.history, observation.screenshot,
                              frame=frame, images_in_history=self.config.images_in_history,
                              notes=self.memory.notes, max_pixels=self.config.max_pixels, feedback=self.feedback,
                              elements=self.listed.text if self.listed is not None else None)

    def context(self, observation: Observation, frame: Frame) -> dict[str, Any]:
        """The observation facts non-model policies read, plus those the policy declares it reads (`observes`:
        screen text, elements); never an answer or the env (`PolicyRequest`)."""
        facts = observation_facts(tuple(getattr(self.policy, "observes", ())), self.env, observation)
        if self.listed is not None:
            facts["a11y_elements"] = self.listed.elements
        return {"instruction": self.task.instruction, "screen_size": observation.size,
                "platform": observation.platform, "frame": frame, **facts}

    def ask(self, messages: tuple[Message, ...], observation: Observation, frame: Frame) -> Asked:
        """The policy's action in the model frame, re-asking after unparseable replies."""
        attempts: list[dict[str, Any]] = []
        context = self.context(observation, frame)
        response: str | None = None
        error: Exception | None = None
        policy_s = parse_s = 0.0
        for _ in range(1 + self.config.max_reasks):
            started = time.perf_counter()
            try:
                reply = self.answering.act(PolicyRequest(messages, mode=Mode.AGENTIC,
                                                         sampling=self.config.agentic_sampling, context=context))
            except PolicyError as exc:
                policy_s += time.perf_counter() - started
                return Asked(None, response, tuple(attempts), exc, policy_s, parse_s)
            policy_s += time.perf_counter() - started
            response = reply.text
            started = time.perf_counter()
            attempt: dict[str, Any] = {"response": reply.text, "error": None, "usage": dict(reply.usage)}
            attempts.append(attempt)
            try:
                parsed = parse_response(reply.text, lenient=True)
                action = _one_action(parsed.actions)
            except (ParseError, ActionError) as exc:
                error, attempt["error"] = exc, error_text(exc)
                messages = (*messages, Message("assistant", (reply.text,)), reask_message(exc))
                continue
            finally:
                parse_s += time.perf_counter() - started
            if parsed.recovered:
                attempt["recovered"] = list(parsed.notes)
            return Asked(action, response, tuple(attempts), None, policy_s, parse_s)
        return Asked(None, response, tuple(attempts), error, policy_s, parse_s)

    # -- acting ------------------------------------------------------------------------------------

    def place(self, model_action: Action, frame: Frame) -> Placed:
        started = time.perf_counter()
        try:
            return Placed(frame.action_to_screen(model_action), None, time.perf_counter() - started)
        except CoordinateError as exc:
            return Placed(None, exc, time.perf_counter() - started)

    def review(self, action: Action, observation: Observation) -> Reviewed:
        started = time.perf_counter()
        decision = self.guard.review(action, observation, self.task, env=self.env, focus=self.focus)
        return Reviewed(decision, time.perf_counter() - started)

    def execute(self, action: Action) -> Executed:
        """Hand the action to the env (a note goes to memory first, then to the env like any other action)."""
        if isinstance(action, TakeNote):
            self.memory.take(action.content)
        started = time.perf_counter()
        try:
            result: StepResult = self.env.step(action)
        except EnvError as exc:  # OffScreenError and PlatformMismatchError are EnvErrors the episode survives
            return Executed(None, exc, time.perf_counter() - started)
        return Executed(result, None, time.perf_counter() - started)

    # -- recording ---------------------------------------------------------------------------------

    def screen(self, observation: Observation) -> Screenshot | None:
        """The screenshot as the store will write it: the env's own PNG bytes, or an encoding started now, so that
        it runs while the model and the env work (the store writes the step in the background if it is not done)."""
        if self.writer is None:
            return None
        return observation.png if observation.png is not None else encode_later(observation.screenshot)

    def record(self, decided: Decided, screen: Screenshot | None) -> None:
        observation = decided.observation
        info = decided.info()
        if self.config.text_key is not None and observation.text is not None:
            info[self.config.text_key] = observation.text  # what text judges read offline
        if self.listed is not None:
            info[A11Y_TREE_KEY] = self.listed.text  # what the model read beside the screenshot
        step = Step(index=len(self.steps), response=decided.asked.response, action=decided.action,
                    error=decided.error, executed=decided.carried_out, timings=decided.timings(self.last_record_s),
                    info=info)
        started = time.perf_counter()
        if self.writer is not None:
            step = self.writer.append(step, screen)
        self.steps.append(step)
        self.history.append(Turn(observation.screenshot, decided.asked.response or ""))
        self.last_record_s = time.perf_counter() - started

    def finish(self, outcome: Outcome, *, answer: str | None = None, error: str | None = None) -> Trajectory:
        verdicts = {}
        if self.checker is not None and outcome is not Outcome.ERROR:
            if outcome in ENDED_BY_ACTION and self.checker.on_terminal is not None and self.steps[-1].action:
                self.checker.on_terminal(self.env, self.steps[-1].action)  # the env never ran it; the check needs it
            verdicts[self.checker.kind] = dict(self.checker.verdict(self.env, self.task))
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


#: Outcomes of an episode its last (terminal) action ended.
ENDED_BY_ACTION = frozenset({Outcome.FINISHED, Outcome.ANSWERED, Outcome.CALLED_USER})


def run_episode(
    env: Env,
    policy: Policy,
    task: TaskSpec,
    *,
    config: LoopConfig | None = None,
    writer: EpisodeWriter | None = None,
    guard: Guard | None = None,
    memory: Memory | None = None,
    precheck: Precheck | None = None,
) -> Trajectory:
    """Reset `env` to `task` and let `policy` act until the episode ends; steps go to `writer` as they happen.

    `guard` defaults to `Guard(config.guard)` (in confirm mode nobody is asked, so consequential actions are
    declined); `memory` defaults to an empty one; `precheck` is the step verifier asked about each action before it
    runs when `config.precheck` is not "off" (`uivenus.verify.step.StepPrecheck`). The task's checker comes from the
    one check registry (`uivenus.envs.checks`); a check kind without one raises `UnknownCheckKind` before the env is
    reset. The writer is finished here. An exception that escapes the loop (a bug) finishes the episode as ERROR with
    its traceback, as `EpisodeWriter` does for any crash; Ctrl-C leaves it INCOMPLETE and resumable. Either way every
    completed step is on disk.
    """
    config = config or LoopConfig()
    if config.precheck is not PrecheckMode.OFF and precheck is None:
        raise LoopError(f"LoopConfig.precheck={config.precheck.value!r} needs a precheck to ask, e.g. "
                        "run_episode(..., precheck=uivenus.verify.step.StepPrecheck(env))")
    with writer if writer is not None else contextlib.nullcontext():
        checker = task_checker(task)  # UnknownCheckKind before anything runs: a task must not lose its verdict
        episode = _Episode(env, policy, task, config, writer, guard or Guard(config.guard), memory or Memory(), checker,
                           precheck)
        return episode.run()
