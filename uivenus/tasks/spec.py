"""Task records of the task pipeline: the shared `TaskSpec`, and `SynthTask` — a TaskSpec together with the
catalog functions it exercises, its phrasings and where it came from — with a JSONL round trip, and the two
identities duplicates are judged by (normalised instruction text; calls with their values and setup).

Desktop tasks add a materialization plan (`MaterializePlan`, applied by the desktop env before an episode and
undone after) and hierarchical segments (`SegmentedTask`, each `Segment` with its own check); they are
re-exported here so every task record is found in one place.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from uivenus.envs.desktop_checks import CHECK_KINDS, CheckError, evaluate
from uivenus.envs.materialize import FileSpec, MaterializeError, MaterializePlan, Settings
from uivenus.files import write_jsonl
from uivenus.records import RecordError, TaskSpec, read_jsonl
from uivenus.tasks.catalog import FunctionCall
from uivenus.tasks.desktop import Segment, SegmentedTask

__all__ = [
    "CHECK_KINDS", "CheckError", "FileSpec", "MaterializeError", "MaterializePlan", "Segment", "SegmentedTask",
    "Settings", "evaluate", "FunctionCall", "SynthTask", "TaskKind", "TaskSpec", "calls_signature", "normalize_text",
    "read_tasks", "task_digest", "write_tasks",
]


class TaskKind(StrEnum):
    SINGLE = "single"  # one function
    MULTI = "multi"  # several functions of one app
    LONG_HORIZON = "long_horizon"  # spans apps, carrying something remembered from one to the next


_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                      "ninety": 90, "hundred": 100, "a pair of": 2, "a couple of": 2})


def normalize_text(text: str) -> str:
    """Lower case, number words as digits ("two" -> 2, "1,000" -> 1000), "%" as "percent", punctuation as
    space, one space between words: instructions equal after this ask for the same thing."""
    text = text.lower().replace("%", " percent ").replace("per cent", "percent")
    text = re.sub(r"(?<=\d)[,.](?=\d{3}\b)", "", text)
    for phrase in sorted((w for w in _NUMBER_WORDS if " " in w), key=len, reverse=True):
        text = text.replace(phrase, str(_NUMBER_WORDS[phrase]))
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(str(_NUMBER_WORDS.get(word, word)) for word in text.split())


def calls_signature(calls: Iterable[FunctionCall]) -> str:
    """Canonical text of a sequence of calls: equal for the same functions with the same values, in order."""
    return json.dumps([[c.key, dict(sorted(c.params.items()))] for c in calls], sort_keys=True, ensure_ascii=False)


def task_digest(calls: Iterable[FunctionCall], setup: Mapping[str, Any]) -> str:
    """A short hash of what a task asks (its calls and its starting state), for ids."""
    text = calls_signature(calls) + json.dumps(setup, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:10]


@dataclass(frozen=True)
class SynthTask:
    """A task made from the catalog: the TaskSpec an agent runs, the calls it exercises, every phrasing of its
    instruction (the spec's instruction is the first) and its provenance (synthesizer, seed, catalog version)."""

    spec: TaskSpec
    calls: tuple[FunctionCall, ...]
    phrasings: tuple[str, ...]
    kind: TaskKind = TaskKind.SINGLE
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "calls", tuple(self.calls))
        object.__setattr__(self, "phrasings", tuple(self.phrasings))
        object.__setattr__(self, "kind", TaskKind(self.kind))
        object.__setattr__(self, "provenance", MappingProxyType(dict(self.provenance)))
        if not self.calls:
            raise RecordError(f"SynthTask {self.spec.id} exercises no function")
        if not self.phrasings or self.phrasings[0] != self.spec.instruction:
            raise RecordError(f"SynthTask {self.spec.id}: the first phrasing must be the spec's instruction")

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def functions(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.calls)

    def to_dict(self) -> dict[str, Any]:
        return {"spec": self.spec.to_dict(), "calls": [c.to_dict() for c in self.calls],
                "phrasings": list(self.phrasings), "kind": self.kind.value, "provenance": json.loads(
                    json.dumps(dict(self.provenance)))}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SynthTask:
        try:
            return cls(spec=TaskSpec.from_dict(data["spec"]),
                       calls=tuple(FunctionCall.from_dict(c) for c in data["calls"]),
                       phrasings=tuple(data["phrasings"]), kind=data.get("kind", TaskKind.SINGLE),
                       provenance=data.get("provenance") or {})
        except (KeyError, TypeError) as exc:
            raise RecordError(f"malformed SynthTask: {exc!r}") from None


def write_tasks(path: Path | str, tasks: Iterable[SynthTask]) -> int:
    """Write tasks as JSON lines (replacing the file); returns how many."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_jsonl(path, (task.to_dict() for task in tasks), sort_keys=True)


def read_tasks(path: Path | str) -> list[SynthTask]:
    """Tasks from a JSONL file written by `write_tasks` (blank lines skipped; a bad line names its number)."""
    tasks = []
    for number, data in read_jsonl(path, RecordError):
        try:
            tasks.append(SynthTask.from_dict(data))
        except RecordError as exc:
            raise RecordError(f"{path}:{number}: {exc}") from None
    return tasks
