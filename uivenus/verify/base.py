"""The verification records and the judge plug point.

A judge looks at evidence about one episode (or one step) and votes success or failure with a
confidence and the evidence it used — or abstains. Abstention is a first-class answer: a judge that
cannot read the screen or whose answer cannot be parsed abstains; it never guesses "success".
Judges are named by SPEC strings (`program`, `ocr`, `vlm:<policy spec>`): a judge module registers its factory
here with `register_judge`, and `uivenus.verify.judges.judge_from_spec` (where the built-in judges register)
builds one. This module imports no other module of `verify`, so every one of them can depend on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from PIL import Image

from uivenus.records import TaskSpec


class VerifyError(RuntimeError):
    """Verification could not run (bad spec, missing trajectory data); the message says what to supply."""


class Vote(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    ABSTAIN = "abstain"


class StepLabel(StrEnum):
    """Sample-level labels of one step (UI-Venus-2 §verification)."""

    CORRECT = "correct"  # advances the goal
    EXPLORATORY = "exploratory"  # reasonable look-around that does not advance the goal yet
    INEFFECTIVE = "ineffective"  # executed but changed nothing (missed target, repeated loop)
    INCORRECT = "incorrect"  # works against the goal or is invalid


class TraceOutcome(StrEnum):
    SUCCESS = "success"
    PARTIAL = "partial"
    FAILED = "failed"
    UNKNOWN = "unknown"  # no judge could decide: never counted as success


@dataclass(frozen=True)
class Verdict:
    """One judge's answer; `confidence` in [0, 1] is the judge's belief in its own vote."""

    judge: str
    vote: Vote
    confidence: float = 1.0
    reason: str = ""
    evidence: tuple[str, ...] = ()
    exact: bool = False  # from an exact check (the task's own checker): voting defers to it where it votes

    def __post_init__(self) -> None:
        object.__setattr__(self, "vote", Vote(self.vote))
        if not 0.0 <= float(self.confidence) <= 1.0:
            raise VerifyError(f"confidence must be in [0, 1], got {self.confidence!r} from {self.judge}")
        object.__setattr__(self, "evidence", tuple(self.evidence))

    @property
    def abstained(self) -> bool:
        return self.vote is Vote.ABSTAIN

    def to_dict(self) -> dict[str, Any]:
        out = {"judge": self.judge, "vote": self.vote.value, "confidence": self.confidence,
               "reason": self.reason, "evidence": list(self.evidence)}
        return {**out, "exact": True} if self.exact else out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        return cls(**{**data, "evidence": tuple(data.get("evidence", ()))})


@dataclass(frozen=True)
class Target:
    """The element an action acted on, as the environment saw it (its DOM/accessibility record, or OCR around the
    point when there is none): facts, never the agent's words."""

    text: str = ""
    role: str | None = None  # button, link, tab, field, checkbox, option (from the role attribute or the tag)
    tag: str | None = None
    label: str = ""  # the text of its labels (a checkbox's name lives there)
    names: str = ""  # id, name, placeholder, aria-label: what else identifies a field
    nth: int | None = None  # its place among the elements of its kind, 1-based
    interactive: bool | None = None
    source: str = "dom"  # "dom" | "ocr"


@dataclass(frozen=True)
class ActRecord:
    """What one step did, from the environment's record: the action type, whether it ran, what its point hit (None:
    not known) and what it typed or selected."""

    index: int
    type: str
    executed: bool
    terminal: bool = False
    point: tuple[float, float] | None = None
    target: Target | None = None
    typed: str | None = None  # a Type's text
    selected: str | None = None  # the option text a SelectOption picked, when the env recorded it
    keys: tuple[str, ...] = ()  # a Hotkey's keys


@dataclass(frozen=True)
class Evidence:
    """What a trace-level judge may look at: never the agent's own claim of success as fact."""

    task: TaskSpec
    key_points: tuple[str, ...]
    history: tuple[str, ...]  # factual action history ("Click at (412, 88) on 'Save' -> executed")
    screenshots: tuple[Image.Image, ...]  # the kept key screenshots, the final screen last
    final_state: Mapping[str, Any] | None = None  # env.state() after the last step, for programmatic checks
    screen_texts: tuple[str, ...] = ()  # DOM/OCR text of the kept screenshots, when known
    extra: Mapping[str, Any] = field(default_factory=dict)
    acts: tuple[ActRecord, ...] = ()  # every step's action record, in order (what each action acted on)

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))
        object.__setattr__(self, "acts", tuple(self.acts))


@dataclass(frozen=True)
class StepEvidence:
    """What a step-level judge may look at: the screen before a proposed action, the action, why the agent says
    it takes it, and (when the action was tried) the screen after."""

    task: TaskSpec
    before: Image.Image
    action: str  # the proposed action as the grammar writes it, e.g. "Click(point=(412, 88))"
    intent: str | None = None  # the agent's declared intent (its think text): a claim, not a fact
    after: Image.Image | None = None
    history: tuple[str, ...] = ()  # factual history of the earlier steps
    key_points: tuple[str, ...] = ()


@runtime_checkable
class Judge(Protocol):
    name: str

    def judge(self, evidence: Evidence) -> Verdict: ...


#: Judge factories by SPEC prefix; each takes the text after `prefix:` ("" when there is none). Looked up only
#: through `uivenus.verify.judges.judge_from_spec`.
JUDGE_FACTORIES: dict[str, Callable[[str], Judge]] = {}


def register_judge(prefix: str) -> Callable[[Callable[[str], Judge]], Callable[[str], Judge]]:
    def decorate(factory: Callable[[str], Judge]) -> Callable[[str], Judge]:
        JUDGE_FACTORIES[prefix] = factory
        return factory

    return decorate
