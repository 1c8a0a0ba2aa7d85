"""The loop's precheck plug point: a step verifier asked about each proposed action before it runs.

Sample-level verification (UI-Venus-2: label each action before it executes) lives in `uivenus.verify.step`; the
loop knows it only through this `Precheck` protocol, so the agent layer imports nothing of verification. With
`LoopConfig.precheck` "flag" the decision is recorded in the step (`info["precheck"]`) and the action runs; with
"resend" a flagged action is first sent back to the model once, with the reason, and its new proposal (checked
again) is what runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from uivenus.actions.calls import format_action
from uivenus.actions.space import Action
from uivenus.agent.policies.base import Message
from uivenus.envs.base import Observation
from uivenus.records import Step, TaskSpec

__all__ = ["Precheck", "PrecheckDecision", "PrecheckMode", "Prechecked", "resend_message"]


class PrecheckMode(StrEnum):
    OFF = "off"  # no precheck
    FLAG = "flag"  # check each action before it runs and record the decision; the action runs
    RESEND = "resend"  # a flagged action goes back to the model once with the reason; its new proposal runs


@dataclass(frozen=True)
class PrecheckDecision:
    """The verifier's label for a proposed action, why, and whether it is flagged (should not run as is)."""

    label: str
    reason: str
    flagged: bool
    action: str = ""  # the action checked, as the grammar writes it

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "reason": self.reason, "flagged": self.flagged, "action": self.action}


@runtime_checkable
class Precheck(Protocol):
    """Checks proposed actions before they run (`before`) and hears what the executed ones did (`after`)."""

    def reset(self) -> None: ...

    def before(self, task: TaskSpec, observation: Observation, action: Action, response: str | None,
               steps: Sequence[Step]) -> PrecheckDecision: ...

    def after(self, observation: Observation) -> None: ...


@dataclass(frozen=True)
class Prechecked:
    """The precheck decisions of one step (the first proposal's, then the resent proposal's) and their time."""

    decisions: tuple[PrecheckDecision, ...]
    seconds: float


def resend_message(action: Action, decision: PrecheckDecision) -> Message:
    """What the model hears when its proposed action is sent back before running."""
    return Message("user", (
        f"Before it ran, your action {format_action(action)} was checked and flagged as {decision.label}: "
        f"{decision.reason}. Look at the screen again and reply with the action you mean, in the same format "
        "(the same action again if you are sure it is right).",
    ))
