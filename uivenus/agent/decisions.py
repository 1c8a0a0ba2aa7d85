"""What one step of the agent loop decided, stage by stage, and what follows from it.

Each stage of a step returns a frozen record: `Scanned` (the injection flags the guard found on the screen),
`Asked` (the policy's action in the model frame, or the error that left the step without one), `Placed` (the
action in screen pixels, or the CoordinateError), `Prechecked` (the step verifier's decisions before the action
runs, when the loop has a precheck), `Reviewed` (the guard's decision) and `Executed` (the env's result, or the
error it raised). `Decided` gathers them; the recorded `Step`'s fields, the feedback the model
hears on the next step and how the episode goes on (`StepEnd`) are each derived from it here, in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from uivenus.actions.coords import CoordinateError
from uivenus.actions.calls import format_action
from uivenus.actions.points import iter_points
from uivenus.actions.space import Action, Answer, CallUser, Finished
from uivenus.agent.policies.base import PolicyError
from uivenus.agent.injection import InjectionFlag
from uivenus.agent.precheck import Prechecked
from uivenus.agent.safety import GuardDecision
from uivenus.envs.base import EnvError, Observation, OffScreenError, PlatformMismatchError, StepResult
from uivenus.records import Outcome

__all__ = ["Asked", "Decided", "Executed", "Placed", "Reviewed", "Scanned", "StepEnd", "error_text"]


@dataclass(frozen=True)
class Scanned:
    """The instructions aimed at an agent that the guard found on the screen."""

    flags: tuple[InjectionFlag, ...]
    seconds: float


@dataclass(frozen=True)
class Asked:
    """The policy's action in the model's frame, or None and the error that left the step without one: the last
    reply's parse error (the episode goes on) or the policy's own failure (it ends the episode)."""

    action: Action | None
    response: str | None  # the last raw reply
    attempts: tuple[Mapping[str, Any], ...]  # every reply: its text, parse error, usage (and recovery notes)
    error: Exception | None
    policy_s: float
    parse_s: float

    @property
    def fatal(self) -> bool:
        return isinstance(self.error, PolicyError)


@dataclass(frozen=True)
class Placed:
    """The model's action in screen pixels, or the CoordinateError that kept it off the screen."""

    action: Action | None
    error: CoordinateError | None
    seconds: float


@dataclass(frozen=True)
class Reviewed:
    """The guard's decision on the action (whether it runs, and why)."""

    decision: GuardDecision
    seconds: float


@dataclass(frozen=True)
class Executed:
    """What the env made of the action: its result, or the error it raised instead (a rejection the episode
    survives: off screen, wrong platform; any other EnvError ends it)."""

    result: StepResult | None
    error: EnvError | None
    seconds: float

    @property
    def fatal(self) -> bool:
        return self.error is not None and not isinstance(self.error, (OffScreenError, PlatformMismatchError))


@dataclass(frozen=True)
class StepEnd:
    """How the episode goes on after a step: with `observation`, or it ends with `outcome` (or a fatal error)."""

    observation: Observation
    outcome: Outcome | None = None
    answer: str | None = None
    fatal: str | None = None


_TERMINAL_OUTCOMES: Mapping[type, Outcome] = {
    Finished: Outcome.FINISHED, Answer: Outcome.ANSWERED, CallUser: Outcome.CALLED_USER,
}


def error_text(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


@dataclass(frozen=True)
class Decided:
    """Everything one step decided, stage by stage (a stage that did not run is None). The recorded step, the
    feedback the model hears next and how the episode goes on are each read off it in one place."""

    observation: Observation
    feedback: str | None  # what the model was told about the previous step
    scanned: Scanned
    asked: Asked
    placed: Placed | None = None
    prechecked: Prechecked | None = None
    reviewed: Reviewed | None = None
    executed: Executed | None = None

    @property
    def action(self) -> Action | None:
        """The action in screen pixels, once it is placed on the screen."""
        return self.placed.action if self.placed is not None else None

    @property
    def stopped(self) -> bool:
        """The guard kept the action from running."""
        return self.reviewed is not None and not self.reviewed.decision.runs

    @property
    def terminal(self) -> Outcome | None:
        """The outcome a terminal action that the guard let through ends the episode with (the loop carries it out)."""
        if self.reviewed is None or self.stopped:
            return None
        return _TERMINAL_OUTCOMES.get(type(self.action))

    # -- the recorded step --------------------------------------------------------------------------

    @property
    def error(self) -> str | None:
        if self.asked.error is not None:
            return f"PolicyError: {self.asked.error}" if self.asked.fatal else error_text(self.asked.error)
        if self.placed is not None and self.placed.error is not None:
            return error_text(self.placed.error)
        if self.stopped:
            decision = self.reviewed.decision  # type: ignore[union-attr]
            return f"guard {decision.verdict.value}: {decision.reason}"
        if self.executed is not None:
            if self.executed.error is not None:
                return error_text(self.executed.error)
            return self.executed.result.error  # type: ignore[union-attr]
        return None

    @property
    def carried_out(self) -> bool:
        """The action ran: the env executed it, or it was a terminal action the loop carried out itself."""
        if self.executed is not None:
            return self.executed.result is not None and self.executed.result.executed
        return self.terminal is not None

    def timings(self, record_s: float) -> dict[str, float]:
        timings = {
            "policy_s": self.asked.policy_s,
            "parse_s": self.asked.parse_s + (self.placed.seconds if self.placed is not None else 0.0),
            "guard_s": self.scanned.seconds + (self.reviewed.seconds if self.reviewed is not None else 0.0),
            "env_s": self.executed.seconds if self.executed is not None else 0.0,
            "record_s": record_s,
        }
        if self.prechecked is not None:
            timings["precheck_s"] = self.prechecked.seconds
        return timings

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"url": self.observation.url, "app": self.observation.app,
                                "injection": [flag.to_dict() for flag in self.scanned.flags],
                                "feedback": self.feedback, "attempts": [dict(a) for a in self.asked.attempts]}
        if self.asked.action is not None:
            info["model_action"] = self.asked.action.to_dict()
        if self.prechecked is not None:
            info["precheck"] = [decision.to_dict() for decision in self.prechecked.decisions]
        if self.reviewed is not None:
            info["guard"] = self.reviewed.decision.to_dict()
        result = self.executed.result if self.executed is not None else None
        if result is not None:
            info["env"] = {"timings": dict(result.timings), **dict(result.info)}
        return info

    # -- what follows from it -----------------------------------------------------------------------

    def next_feedback(self) -> str | None:
        """What the model hears about this step at the start of the next one (None: nothing to say)."""
        if self.asked.action is None:
            return f"Your previous reply had no usable action: {self.error}"
        said = format_action(self.asked.action)
        if self.placed is not None and self.placed.error is not None:
            return f"{said} was not executed: {self.placed.error}"
        if self.executed is None:
            return None
        result = self.executed.result
        if result is None:
            return f"{said} was rejected: {self.executed.error}"
        if not result.executed:
            return f"{said} failed: {result.error}"
        return f"the current URL is {result.info['url']}" if "url" in result.info else None

    def focus(self, previous: tuple[float, float] | None) -> tuple[float, float] | None:
        """Where the pointer last acted: the action's first point once the env took it, else `previous`."""
        if self.executed is None or self.executed.result is None:
            return previous
        return next((p for _, p in iter_points(self.action)), previous)  # type: ignore[arg-type]

    def end(self) -> StepEnd:
        if self.asked.fatal or (self.executed is not None and self.executed.fatal):
            return StepEnd(self.observation, fatal=self.error)
        if self.stopped:
            decision, model_action = self.reviewed.decision, self.asked.action  # type: ignore[union-attr]
            action_text = format_action(model_action)  # type: ignore[arg-type]
            answer = (f"I stopped before {action_text} because it is consequential "
                      f"({decision.category.value if decision.category else 'unknown'}): {decision.reason}. "
                      "Please do this step yourself, or run me again with permission.")
            return StepEnd(self.observation, Outcome.CALLED_USER, answer)
        if self.terminal is not None:
            return StepEnd(self.observation, self.terminal, getattr(self.action, "content", None))
        result = self.executed.result if self.executed is not None else None
        if result is None:
            return StepEnd(self.observation)
        if result.info.get("done"):  # the environment ended the episode (a self-grading page)
            return StepEnd(result.observation, Outcome.ENDED_BY_ENV)
        return StepEnd(result.observation)
