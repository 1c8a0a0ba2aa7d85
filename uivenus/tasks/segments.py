"""Run a segmented desktop task segment by segment, each as its own stored episode, resuming where it stopped.

The workflow's files live in one workspace (a named workspace of the desktop env, `setup["workspace"]`)
that outlives the episodes: the first run writes the task's starting files into it, and every segment's
episode launches its own apps there. Before a segment runs, its check is evaluated on the workspace:
a segment that already passes is skipped, so a run that was stopped (or whose segment failed) resumes
at the first segment whose check does not pass yet. A segment whose dependency did not pass is blocked.
Each segment that runs is stored as an episode of `run_id` with its check's verdict, ready for
per-segment collection and verification.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from uivenus.agent.loop import LoopConfig, run_episode
from uivenus.agent.policies.base import Policy
from uivenus.agent.safety import Guard
from uivenus.envs.base import Env
from uivenus.envs.desktop_checks import evaluate
from uivenus.envs.materialize import Materialized, apply
from uivenus.records import Trajectory
from uivenus.store import TrajectoryStore
from uivenus.tasks.desktop import SegmentedTask


class WorkspaceEnv(Env, Protocol):
    """An env whose tasks can share a named, persistent sandbox root (DesktopEnv is one)."""

    def workspace(self, name: str) -> Path: ...


class SegmentStatus(StrEnum):
    SKIPPED = "skipped"  # its check already passed before the run: done earlier
    PASSED = "passed"
    FAILED = "failed"
    BLOCKED = "blocked"  # a segment it depends on did not pass; not run


@dataclass(frozen=True)
class SegmentResult:
    segment: str
    status: SegmentStatus
    episode: str | None = None  # the stored episode id of the segment's run
    verdict: Mapping[str, Any] = field(default_factory=dict)  # the check's verdict ({"passed", "reason"})
    trajectory: Trajectory | None = None


@dataclass(frozen=True)
class SegmentedRun:
    """How one run of a segmented task went, segment by segment, in its workspace."""

    task: str
    workspace: Path
    resumed: bool  # the workspace already existed, so the run continued from its files
    results: tuple[SegmentResult, ...]

    @property
    def passed(self) -> bool:
        return all(r.status in (SegmentStatus.SKIPPED, SegmentStatus.PASSED) for r in self.results)

    @property
    def resumed_at(self) -> str | None:
        """The first segment this run had to work on (None: everything had passed already)."""
        return next((r.segment for r in self.results if r.status is not SegmentStatus.SKIPPED), None)

    def status(self, segment: str) -> SegmentStatus:
        return next(r.status for r in self.results if r.segment == segment)


def workspace_name(task: SegmentedTask) -> str:
    """The default workspace of a task: its id as one plain directory name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", task.task.id).strip("._") or "workspace"


def prepare_workspace(task: SegmentedTask, root: Path) -> Materialized | None:
    """Write the task's starting files into a new workspace; None when `root` exists (a run to resume)."""
    if root.exists():
        return None
    return apply(task.initial_plan(), root)


def _episode_id(store: TrajectoryStore, run_id: str, base: str) -> str:
    """`base`, or `base.N` for the N-th retry of a segment in the same run."""
    n, candidate = 1, base
    while store.episode_dir(run_id, candidate).exists():
        n += 1
        candidate = f"{base}.{n}"
    return candidate


def run_segments(
    env: WorkspaceEnv,
    policy: Policy,
    task: SegmentedTask,
    *,
    store: TrajectoryStore,
    run_id: str,
    workspace: str | None = None,
    config: LoopConfig | None = None,
    guard: Guard | None = None,
) -> SegmentedRun:
    """Run every segment of `task` that does not pass yet, in order, each as an episode of `run_id` in `store`.

    The workspace (`workspace`, default `workspace_name(task)`) is created with the task's starting files
    on the first run and reused as it is afterwards, so calling this again resumes the task.
    """
    name = workspace or workspace_name(task)
    root = env.workspace(name)
    fresh = prepare_workspace(task, root)
    store.start_run(run_id)
    results: dict[str, SegmentResult] = {}
    for segment in task.segments:
        blocked = [d for d in segment.depends_on
                   if results[d].status not in (SegmentStatus.SKIPPED, SegmentStatus.PASSED)]
        if blocked:
            results[segment.id] = SegmentResult(segment.id, SegmentStatus.BLOCKED,
                                                verdict={"passed": False, "reason": f"waits for {blocked}"})
            continue
        before = evaluate(segment.check, root)
        if before.passed:
            results[segment.id] = SegmentResult(segment.id, SegmentStatus.SKIPPED,
                                                verdict={"passed": True, "reason": before.reason})
            continue
        spec = task.segment_task(segment, name)
        episode = _episode_id(store, run_id, f"{workspace_name(task)}.{segment.id}")
        writer = store.episode(run_id, episode, spec, metadata={"parent": task.task.id, "segment": segment.id,
                                                               "workspace": str(root)})
        trajectory = run_episode(env, policy, spec, config=config, writer=writer, guard=guard)
        verdict = dict(trajectory.verdicts.get(str(segment.check["kind"]), {}))
        if not verdict:
            verdict = {"passed": False, "reason": f"the episode ended as {trajectory.outcome.value} without a verdict"}
        status = SegmentStatus.PASSED if verdict.get("passed") else SegmentStatus.FAILED
        results[segment.id] = SegmentResult(segment.id, status, episode, verdict, trajectory)
    return SegmentedRun(task.task.id, root, fresh is None, tuple(results[s.id] for s in task.segments))
