"""Segmented desktop workflows: a long task split into segments, each with its own instruction, check and launch.

A long workflow is a `SegmentedTask`: the whole task plus `Segment`s, each with its own instruction, check and
launch and the segments it depends on, so collection and verification can run per segment and a run can
resume at the first segment whose check does not pass yet (`uivenus.tasks.segments`). Workflows are built from
instances of the desktop task families (`uivenus.envs.desktop_tasks`, which also holds their reference solvers);
their checks are the desktop file checks (`uivenus.envs.desktop_checks`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from uivenus.actions.space import Platform
from uivenus.envs.desktop_checks import CHECK_KINDS
from uivenus.envs.desktop_tasks import FAMILIES, family_params
from uivenus.envs.materialize import MaterializePlan
from uivenus.records import RecordError, TaskSpec

__all__ = ["Segment", "SegmentedTask", "project_workflow", "workflow_task"]


@dataclass(frozen=True)
class Segment:
    """One subtask of a long workflow: its own instruction, check and launch; it starts after `depends_on`."""

    id: str
    instruction: str
    check: Mapping[str, Any]
    depends_on: tuple[str, ...] = ()
    launch: tuple[tuple[str, ...], ...] | None = None  # None: the whole task's launches
    max_steps: int | None = None  # None: the whole task's budget
    metadata: Mapping[str, Any] = field(default_factory=dict)  # e.g. the family and params of its reference solver

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", self.id):
            raise RecordError(f"Segment.id must be letters, digits, '_' or '-', got {self.id!r}")
        if not isinstance(self.check, Mapping) or self.check.get("kind") not in CHECK_KINDS:
            raise RecordError(f"segment {self.id}: check must be a mapping with a kind in {sorted(CHECK_KINDS)}")
        object.__setattr__(self, "depends_on", tuple(self.depends_on))
        if self.launch is not None:
            object.__setattr__(self, "launch", tuple(tuple(argv) for argv in self.launch))
        object.__setattr__(self, "check", MappingProxyType(dict(self.check)))
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "instruction": self.instruction, "check": dict(self.check),
                "depends_on": list(self.depends_on),
                "launch": None if self.launch is None else [list(a) for a in self.launch],
                "max_steps": self.max_steps, "metadata": dict(self.metadata)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Segment:
        return cls(**dict(data))


@dataclass(frozen=True)
class SegmentedTask:
    """A long desktop task and its segments, listed after the segments they depend on (so there are no cycles)."""

    task: TaskSpec
    segments: tuple[Segment, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "segments", tuple(self.segments))
        ids = [s.id for s in self.segments]
        if not ids or len(set(ids)) != len(ids):
            raise RecordError(f"task {self.task.id}: segments need distinct ids, got {ids}")
        MaterializePlan.from_dict(self.task.setup.get("materialize", {}))
        seen: set[str] = set()
        for segment in self.segments:
            unknown = [d for d in segment.depends_on if d not in seen]
            if unknown:
                raise RecordError(f"segment {segment.id} depends on {unknown}, which are not earlier segments "
                                  "(list segments after what they depend on; cycles are impossible then)")
            seen.add(segment.id)

    @property
    def plan(self) -> MaterializePlan:
        return MaterializePlan.from_dict(self.task.setup.get("materialize", {}))

    def initial_plan(self) -> MaterializePlan:
        """The files and folders the workflow starts from (no launches, no settings): written once into its
        workspace."""
        plan = self.plan
        return MaterializePlan(files=plan.files, folders=plan.folders)

    def segment_task(self, segment: Segment, workspace: str) -> TaskSpec:
        """The episode of one segment: the shared `workspace` as root, the segment's launches, check and budget."""
        plan = self.plan
        launch = plan.launch if segment.launch is None else segment.launch
        materialize = MaterializePlan(launch=launch, settings=plan.settings).to_dict()
        return TaskSpec(
            id=f"{self.task.id}/{segment.id}", instruction=segment.instruction, platform=self.task.platform,
            app=self.task.app, setup={"workspace": workspace, "materialize": materialize}, check=segment.check,
            max_steps=segment.max_steps or self.task.max_steps,
            metadata={**segment.metadata, "parent": self.task.id, "segment": segment.id},
        )

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task.to_dict(), "segments": [s.to_dict() for s in self.segments]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SegmentedTask:
        return cls(TaskSpec.from_dict(data["task"]), tuple(Segment.from_dict(s) for s in data["segments"]))


# --- workflows of family instances ---------------------------------------------------------------------

def workflow_task(task_id: str, steps: Sequence[tuple[str, str, Mapping[str, Any], Sequence[str]]], *,
                  max_steps: int = 20) -> SegmentedTask:
    """A segmented task from family instances: `steps` are (segment id, family, params, depends_on).

    The whole task starts from every segment's files, launches every app the segments use, and passes
    when all segment checks do; each segment keeps its own instruction, check, launch and solver.
    """
    segments, files, launches = [], [], []
    for segment_id, name, overrides, depends_on in steps:
        params = family_params(name, overrides)
        piece = FAMILIES[name].build(params)
        files += piece.files
        launches += [argv for argv in piece.launch if argv not in launches]
        segments.append(Segment(segment_id, piece.instruction, piece.check, tuple(depends_on), piece.launch,
                                max_steps=max_steps, metadata={"family": name, "params": params}))
    instruction = "Do these in order: " + " ".join(f"({i}) {s.instruction}" for i, s in enumerate(segments, 1))
    task = TaskSpec(
        id=task_id, instruction=instruction, platform=Platform.DESKTOP,
        setup={"materialize": MaterializePlan(files=tuple(files), launch=tuple(launches)).to_dict()},
        check={"kind": "all", "checks": [dict(s.check) for s in segments]}, max_steps=max_steps * len(segments),
        metadata={"segments": [s.id for s in segments]},
    )
    return SegmentedTask(task, tuple(segments))


def project_workflow(task_id: str = "desktop/project_report") -> SegmentedTask:
    """The bundled long workflow: make a folder in the file manager, write a summary into it, finalize the notes."""
    return workflow_task(task_id, [
        ("make_folder", "make_folder", {"folder": "reports"}, ()),
        ("write_summary", "create_lines", {"file": "reports/summary.txt",
                                           "lines": ("Q1 summary", "revenue up", "costs flat")}, ("make_folder",)),
        ("finalize_notes", "replace_word", {"file": "draft.txt", "text": "Plan: draft\nReview the draft today.\n"}, ()),
    ])
