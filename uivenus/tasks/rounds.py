"""The closed loop over rounds: synthesize → gate → collect → verify → feedback into the catalog.

One round of the closed loop (SYSTEM.md)::

    synthesize from the catalog -> gate -> dispatch (one env per worker) -> verify -> feedback -> catalog

One job: plan each round and keep its record. `Pipeline` asks the synthesizer for tasks, lets the gate accept
them, has a `tasks.collect.Collector` collect and verify their episodes, adds what the failures teach to the
catalog (so the next round's sampler avoids them) and sums the round up in `RoundStats`. Running the episodes
is the collector's job, kept apart so `uivenus tasks run` can collect a task file without any rounds.

A round's plan (the tasks the gate accepted) is saved before dispatch, so a restarted round dispatches the same
tasks instead of proposing new ones; finished episodes are skipped by the collector. One pipeline per run
directory at a time.

Files under the store's run directory::

    <run>/<episode-id>/...                      one episode per task (the store's layout)
    <run>/pipeline/catalog.json                 the catalog as of the latest planned or finished round
    <run>/pipeline/round-NNN/plan.json          what was proposed, the gate's results, the tasks to dispatch
    <run>/pipeline/round-NNN/feedback.jsonl     each failed episode: its kind, why, what it taught the catalog
    <run>/pipeline/round-NNN/stats.json         the round's `RoundStats` (written last: the round is complete)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from rich.console import Console

from uivenus.files import write_json, write_jsonl
from uivenus.tasks.catalog import Catalog
from uivenus.tasks.collect import Collector
from uivenus.tasks.executors import Executor
from uivenus.tasks.feedback import FailureKind
from uivenus.tasks.gate import Execution, Gate, GateResult, Reason, RejectionCode
from uivenus.tasks.spec import SynthTask
from uivenus.tasks.synthesis import Synthesizer

__all__ = ["CATALOG_FILE", "FEEDBACK_FILE", "PIPELINE_DIR", "PLAN_FILE", "STATS_FILE", "Pipeline", "RoundStats"]

PIPELINE_DIR = "pipeline"
CATALOG_FILE = "catalog.json"
PLAN_FILE = "plan.json"
STATS_FILE = "stats.json"
FEEDBACK_FILE = "feedback.jsonl"


@dataclass(frozen=True)
class RoundStats:
    """One round of the closed loop in numbers.

    `executable`: accepted tasks not found invalid by their runs; `acceptance_rate`: executable / proposed — the
    share of proposals that end up as valid tasks (equal to the gate's own rate when the gate executes tasks);
    `episodes`/`episodes_per_min`: episodes collected by this call (a resumed round does not count those finished
    before the restart, `skipped`) over the collection's time (`dispatch_seconds`: dispatch, verification and
    feedback); `learned`: constraints the catalog gained this round (from the gate and from feedback).
    """

    round: int
    proposed: int
    accepted: int
    executable: int
    verified_success: int
    failed_invalid: int
    failed_agent: int
    failed_other: int
    episodes: int
    skipped: int
    seconds: float
    dispatch_seconds: float
    episodes_per_min: float
    acceptance_rate: float
    learned: int
    catalog_version: int
    errors: int  # jobs that failed and episodes that could not be verified (the next run retries them)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RoundStats:
        return cls(**{f.name: data[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class _Plan:
    """A round's proposals and gate results, saved before dispatch so a restarted round dispatches the same tasks."""

    index: int
    proposed: int
    gate: tuple[dict[str, Any], ...]  # GateResult.to_dict() of every checked task
    tasks: tuple[SynthTask, ...]  # accepted
    executions: Mapping[str, Execution]  # the gate's runs of accepted tasks, by task id

    @property
    def learned(self) -> int:
        return sum(len(g.get("learned") or ()) for g in self.gate)

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.index, "proposed": self.proposed, "gate": list(self.gate),
                "tasks": [t.to_dict() for t in self.tasks],
                "executions": {k: e.to_dict() for k, e in self.executions.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> _Plan:
        return cls(data["round"], data["proposed"], tuple(data["gate"]),
                   tuple(SynthTask.from_dict(t) for t in data["tasks"]),
                   {k: Execution(**e) for k, e in data["executions"].items()})


SynthesizerSource = Synthesizer | Callable[[int], Synthesizer]


class Pipeline:
    """The closed loop over rounds: synthesize → gate → collect → verify → feedback into `catalog`.

    `synthesizer` is a Synthesizer, or a function of the round number (1, 2, …) giving one (e.g. a template
    synthesizer reseeded each round, so rounds do not propose the same tasks). `gate` checks proposals against
    the same `catalog` (with an executor of its own it also runs them; by default executability shows in the
    collected episodes). A restarted pipeline picks up where the run stopped: finished rounds are read back, the
    round in progress dispatches its saved plan and skips finished episodes, and the catalog gets back what the
    run had learned.
    """

    def __init__(self, catalog: Catalog, synthesizer: SynthesizerSource, gate: Gate, executor: Executor,
                 policy_spec: str, store_root: str | Path, run_id: str, *, judges: Sequence[str] = ("program",),
                 max_steps: int | None = None, guard: str = "allow", console: Console | None = None,
                 progress: bool = True) -> None:
        self.catalog, self.synthesizer, self.gate = catalog, synthesizer, gate
        self.console = console or Console(stderr=True)
        self.collector = Collector(executor, policy_spec, store_root, run_id, judges=judges, max_steps=max_steps,
                                   guard=guard, console=self.console, progress=progress)
        self.state_dir = self.collector.run_dir / PIPELINE_DIR
        saved = self.state_dir / CATALOG_FILE
        if saved.exists():
            self.catalog.merge(Catalog.load(saved))
        self._seen = {g["task"] for plan in self._plans() for g in plan.gate}  # proposals of earlier invocations

    def round_dir(self, index: int) -> Path:
        return self.state_dir / f"round-{index:03d}"

    def _plans(self) -> list[_Plan]:
        paths = sorted(self.state_dir.glob(f"round-*/{PLAN_FILE}"))
        return [_Plan.from_dict(json.loads(p.read_text(encoding="utf-8"))) for p in paths]

    def completed(self) -> list[RoundStats]:
        """The stats of the rounds finished so far, in order."""
        paths = sorted(self.state_dir.glob(f"round-*/{STATS_FILE}"))
        return [RoundStats.from_dict(json.loads(p.read_text(encoding="utf-8"))) for p in paths]

    def loop(self, rounds: int, n: int) -> list[RoundStats]:
        """Run rounds of `n` proposals until `rounds` rounds are complete (finished ones are not run again)."""
        out = self.completed()[:rounds]
        while len(out) < rounds:
            out.append(self.round(n))
        return out

    def round(self, n_tasks: int) -> RoundStats:
        """Run the next round (or finish the one a killed run left) and return its stats."""
        started = time.perf_counter()
        index = len(self.completed()) + 1
        directory = self.round_dir(index)
        plan_path = directory / PLAN_FILE
        if plan_path.exists():
            plan = _Plan.from_dict(json.loads(plan_path.read_text(encoding="utf-8")))
            self.console.print(f"round {index}: resuming its saved plan ({len(plan.tasks)} tasks)")
        else:
            plan = self._plan(index, n_tasks)
            self.catalog.save(self.state_dir / CATALOG_FILE)  # first: what the gate learned is never lost
            directory.mkdir(parents=True, exist_ok=True)
            write_json(plan_path, plan.to_dict(), sort_keys=True)
        collection = self.collector.collect(plan.tasks, catalog=self.catalog, executions=plan.executions,
                                            metadata={"round": index})
        write_jsonl(directory / FEEDBACK_FILE, (failure.to_dict() for failure in collection.failures), sort_keys=True)
        self.catalog.save(self.state_dir / CATALOG_FILE)
        invalid = collection.count(FailureKind.TASK_INVALID)
        executable = len(plan.tasks) - invalid
        stats = RoundStats(
            round=index, proposed=plan.proposed, accepted=len(plan.tasks), executable=executable,
            verified_success=collection.passed, failed_invalid=invalid,
            failed_agent=collection.count(FailureKind.AGENT_ERROR),
            failed_other=len(collection.failures) - invalid - collection.count(FailureKind.AGENT_ERROR),
            episodes=collection.episodes, skipped=collection.skipped,
            seconds=round(time.perf_counter() - started, 3),
            dispatch_seconds=round(collection.seconds, 3), episodes_per_min=round(collection.episodes_per_min, 2),
            acceptance_rate=round(executable / plan.proposed, 4) if plan.proposed else 0.0,
            learned=plan.learned + sum(len(f.learned) for f in collection.failures),
            catalog_version=self.catalog.version, errors=len(collection.errors))
        write_json(directory / STATS_FILE, stats.to_dict(), sort_keys=True)
        return stats

    def _synthesizer(self, index: int) -> Synthesizer:
        return self.synthesizer if isinstance(self.synthesizer, Synthesizer) else self.synthesizer(index)

    def _plan(self, index: int, n: int) -> _Plan:
        proposed = self._synthesizer(index).synthesize(self.catalog, n).tasks
        earlier = [GateResult(t, False, (Reason(RejectionCode.DUPLICATE, "proposed in an earlier round of this run"),))
                   for t in proposed if t.id in self._seen]
        results = earlier + self.gate.check_all([t for t in proposed if t.id not in self._seen])
        accepted = tuple(r.task for r in results if r.accepted)
        executions = {r.task.id: r.execution for r in results if r.accepted and r.execution is not None}
        return _Plan(index, len(proposed), tuple(r.to_dict() for r in results), accepted, executions)
