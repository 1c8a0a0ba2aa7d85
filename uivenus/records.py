"""The records every part shares: TaskSpec, Step and Trajectory (one definition each).

They sit beside `actions` at the bottom of the layers because environments take a TaskSpec and the
store, the agent, verification and training all read Steps and Trajectories. Each has a JSON round
trip so the store can append it line by line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from uivenus.actions.space import Action, Platform, action_from_dict


class RecordError(ValueError):
    """A record (task, step, trajectory) is malformed; the message names the field."""


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


def read_jsonl(path: Path | str, error: type[Exception], hint: str = "") -> Iterator[tuple[int, Any]]:
    """(line number, value) of every non-blank line of a JSONL file; a line that is not JSON raises `error`
    naming the file and line (and `hint`, what to do about it)."""
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{number} is not JSON ({exc.msg}){'; ' + hint if hint else ''}") from None


def read_json_list(path: Path | str, error: type[Exception], what: str = "records") -> list[Any]:
    """The list a JSON file holds; a file that is not JSON, or holds anything but a list, raises `error` naming the
    file (and `what` the list should hold)."""
    try:
        values = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise error(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(values, list):
        raise error(f"{path} must hold a JSON list of {what}")
    return values


def plain(value: Any) -> Any:
    """JSON-ready copy of nested mappings/sequences (MappingProxy and tuples included)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, StrEnum):
        return value.value
    return value


@dataclass(frozen=True)
class TaskSpec:
    """What to do, where, how to set it up and how to check it.

    `setup` and `check` are JSON data (never code): the environment or checker registry that owns the
    task interprets them, e.g. `check={"kind": "sandbox", "app": "contacts", "task": "add_contact"}`.
    """

    id: str
    instruction: str
    platform: Platform
    app: str | None = None
    url: str | None = None
    setup: Mapping[str, Any] = field(default_factory=dict)
    check: Mapping[str, Any] | None = None
    max_steps: int = 30
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.id or not isinstance(self.id, str):
            raise RecordError(f"TaskSpec.id must be a non-empty string, got {self.id!r}")
        if not isinstance(self.instruction, str):
            raise RecordError(f"TaskSpec.instruction must be a string, got {self.instruction!r}")
        try:
            object.__setattr__(self, "platform", Platform(self.platform))
        except ValueError:
            raise RecordError(f"TaskSpec.platform must be one of {[p.value for p in Platform]}, "
                              f"got {self.platform!r}") from None
        if not isinstance(self.max_steps, int) or self.max_steps < 1:
            raise RecordError(f"TaskSpec.max_steps must be a positive integer, got {self.max_steps!r}")
        object.__setattr__(self, "setup", _frozen(self.setup))
        object.__setattr__(self, "metadata", _frozen(self.metadata))
        if self.check is not None:
            object.__setattr__(self, "check", _frozen(self.check))

    def with_instruction(self, instruction: str) -> TaskSpec:
        return replace(self, instruction=instruction)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskSpec:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise RecordError(f"TaskSpec: unknown field(s) {sorted(unknown)}")
        return cls(**dict(data))


class Outcome(StrEnum):
    """How an episode ended."""

    FINISHED = "finished"
    ANSWERED = "answered"
    CALLED_USER = "called_user"
    ENDED_BY_ENV = "ended_by_env"  # the environment itself ended the episode (e.g. a MiniWoB page graded it)
    MAX_STEPS = "max_steps"
    ERROR = "error"
    INCOMPLETE = "incomplete"  # the process stopped before the episode ended (read back from a killed run)


@dataclass(frozen=True)
class Step:
    """One turn: what was seen, what the model said, what was done and what came of it."""

    index: int
    screen: str | None = None  # path of the screenshot seen before acting, relative to the episode dir
    response: str | None = None  # the model's raw text, reasoning included
    action: Action | None = None  # parsed action in logical screen pixels
    error: str | None = None  # parse, guard or execution error
    executed: bool = False
    timings: Mapping[str, float] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)  # url, guard decision, flags, …
    labels: Mapping[str, Any] = field(default_factory=dict)  # step labels written by verification

    def __post_init__(self) -> None:
        if not isinstance(self.index, int) or self.index < 0:
            raise RecordError(f"Step.index must be a non-negative integer, got {self.index!r}")
        for name in ("timings", "info", "labels"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: plain(getattr(self, f.name)) for f in fields(self) if f.name != "action"}
        out["action"] = self.action.to_dict() if self.action is not None else None
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Step:
        data = dict(data)
        action = data.pop("action", None)
        return cls(action=action_from_dict(action) if action else None, **data)


@dataclass(frozen=True)
class Trajectory:
    """A whole episode: the task, its steps in order, and how it ended."""

    task: TaskSpec
    steps: tuple[Step, ...] = ()
    outcome: Outcome = Outcome.INCOMPLETE
    answer: str | None = None
    verdicts: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)  # model, seed, run/episode ids, timings

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcome", Outcome(self.outcome))
        object.__setattr__(self, "steps", tuple(self.steps))
        for name in ("verdicts", "metadata"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    @property
    def complete(self) -> bool:
        return self.outcome is not Outcome.INCOMPLETE

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(s.action for s in self.steps if s.action is not None)

    def summary_dict(self) -> dict[str, Any]:
        """Everything but the steps (what `episode.json` holds)."""
        return {
            "task": self.task.to_dict(),
            "outcome": self.outcome.value,
            "answer": self.answer,
            "n_steps": len(self.steps),
            "verdicts": plain(self.verdicts),
            "metadata": plain(self.metadata),
        }
