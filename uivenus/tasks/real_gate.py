"""The validity gate on real apps: a task is kept only when its reference solution passes its checker and doing
nothing does not, each played from a fresh isolated task root.

`ReplayExecutor` is the gate's `Executor` plug for OSWorld-format tasks (`tasks.real_synthesis`): on the Xvfb
desktop env, every reset makes a new root, so the reference run and the no-op run share nothing. A reference that
fails is played once more: passing then marks it flaky (rejected, but its values teach nothing). The rest is
today's gate (`tasks.gate.Gate`: duplicates, learned constraints, unsafe functions, the rejection log), and what a
rejected single-function task teaches is the constraint feedback learns from an unexplained failure
(`teach_unexplained`, the gate's `unexplained` plug): never ask for exactly these values again. `gate_rounds` runs the
closed loop for a number of rounds — synthesize from the catalog with what was learned, gate — and keeps each round's
figures (`RealRound`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from uivenus.envs.base import EnvError
from uivenus.tasks.catalog import Catalog, Constraint
from uivenus.tasks.gate import Execution, Gate, GateResult, unexplained_constraint
from uivenus.tasks.spec import SynthTask
from uivenus.tasks.synthesis import Synthesizer

__all__ = ["FLAKY", "NOOP_POLICY", "REFERENCE_POLICY", "RealRound", "ReplayExecutor", "gate_rounds",
           "teach_unexplained"]

#: The policy that plays a task's reference solution, the one that does nothing, and the diagnostics key marking a
#: reference that failed once and passed once (no constraint is learned from it: the values are not at fault).
REFERENCE_POLICY, NOOP_POLICY, FLAKY = "oracle", "noop", "flaky"


def _verdict(trajectory: Any) -> dict[str, Any]:
    verdict = trajectory.verdicts.get("osworld") or {}
    error = verdict.get("error") or trajectory.metadata.get("error")
    return {"passed": verdict.get("passed") is True and not error, "reason": str(verdict.get("reason") or
            f"the episode ended {trajectory.outcome.value} without a verdict"), "error": error,
            "steps": len(trajectory.steps)}


class ReplayExecutor:
    """Plays each task's reference solution, then a no-op, on the desktop env (one fresh root per run); a task
    passes when the reference is accepted by its evaluator and the no-op is not."""

    def __init__(self, *, env: Any | None = None, unsafe_host: bool = False, progress: bool = False) -> None:
        self._env, self._owned, self.unsafe_host, self.progress = env, env is None, unsafe_host, progress

    @property
    def env(self) -> Any:
        if self._env is None:
            from uivenus.envs.registry import make_env

            self._env = make_env("desktop:unsafe-host" if self.unsafe_host else "desktop")
        return self._env

    def close(self) -> None:
        if self._owned and self._env is not None:
            self._env.close()
            self._env = None

    def __enter__(self) -> ReplayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, task: SynthTask, policy: str) -> dict[str, Any]:
        """One episode of `task` under `policy` from a fresh root: passed, the evaluator's reason, error, steps."""
        import uivenus.envs.osworld.checker  # noqa: F401 - registers check kind "osworld"
        from uivenus.agent.loop import LoopConfig, run_episode
        from uivenus.agent.policies.base import policy_from_spec
        from uivenus.agent.safety import Guard, GuardMode

        try:
            trajectory = run_episode(self.env, policy_from_spec(policy), task.spec,
                                     config=LoopConfig(guard=GuardMode.ALLOW), guard=Guard(GuardMode.ALLOW, ocr=False))
        except EnvError as exc:
            return {"passed": False, "reason": "the environment failed", "error": f"{type(exc).__name__}: {exc}",
                    "steps": 0}
        return _verdict(trajectory)

    def _one(self, task: SynthTask) -> Execution:
        """Reference first; a failed one is played once more from another fresh root (a pass then means a flaky
        reference, not invalid values); the no-op only when the reference passed."""
        reference = self.run(task, REFERENCE_POLICY)
        runs: dict[str, Any] = {"reference": reference}
        if not reference["passed"]:
            runs["reference_again"] = again = self.run(task, REFERENCE_POLICY)
            if again["passed"]:
                return Execution(task.id, False, "the reference solution is flaky: it failed once "
                                 f"({reference['reason']}) and passed from another fresh root", reference["error"],
                                 reference["steps"], {**runs, FLAKY: True})
            return Execution(task.id, False, f"the reference solution fails the checker: {reference['reason']}",
                             reference["error"] or again["error"], reference["steps"], runs)
        runs["noop"] = noop = self.run(task, NOOP_POLICY)
        if noop["passed"]:
            return Execution(task.id, False, f"doing nothing passes the checker too: {noop['reason']}", noop["error"],
                             reference["steps"], runs)
        return Execution(task.id, True, f"the reference passes ({reference['reason']}) and a no-op does not "
                         f"({noop['reason']})", None, reference["steps"], runs)

    def execute(self, tasks: Sequence[SynthTask]) -> list[Execution]:
        from rich.progress import Progress

        out = []
        with Progress(disable=not self.progress, transient=True) as bar:
            job = bar.add_task("gating tasks on real apps", total=len(tasks))
            for task in tasks:
                out.append(self._one(task))
                bar.advance(job)
        return out


def teach_unexplained(task: SynthTask, execution: Execution) -> Constraint | None:
    """The gate's `unexplained` plug on real apps (their screens show no field messages to learn a narrower rule
    from): a single-function task whose reference failed teaches "never these values again" — unless the
    reference was merely flaky, which says nothing about the values."""
    return None if execution.diagnostics.get(FLAKY) else unexplained_constraint(task, execution.reason)


@dataclass(frozen=True)
class RealRound:
    """One round in numbers: tasks proposed (and dropped before proposing), accepted, rejected by reason code,
    constraints learned, the catalog's version after it, and its seconds."""

    round: int
    proposed: int
    dropped: int
    accepted: int
    rejected: dict[str, int]
    learned: int
    catalog_version: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def gate_rounds(catalog: Catalog, synthesizer_for: Callable[[int], Synthesizer], gate: Gate, *, rounds: int,
                per_round: int) -> tuple[list[RealRound], list[SynthTask], list[GateResult]]:
    """`rounds` rounds of synthesize -> gate -> learn; each round's synthesizer (`synthesizer_for(round)`) sees the
    constraints learned before it. Returns the rounds' figures, the accepted tasks and every gate result."""
    figures, accepted, every = [], [], []
    for number in range(1, rounds + 1):
        started = time.perf_counter()
        synthesis = synthesizer_for(number).synthesize(catalog, per_round)
        results = gate.check_all(synthesis.tasks)
        every += results
        accepted += [r.task for r in results if r.accepted]
        codes = Counter(reason.code.value for r in results if not r.accepted for reason in r.reasons[:1])
        figures.append(RealRound(number, len(synthesis.tasks), len(synthesis.dropped), sum(r.accepted for r in results),
                                 dict(codes), sum(len(r.learned) for r in results), catalog.version,
                                 round(time.perf_counter() - started, 1)))
    return figures, accepted, every
