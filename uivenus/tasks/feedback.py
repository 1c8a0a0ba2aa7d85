"""Feedback: why a collected episode failed — the task was invalid, or the agent erred — and what the catalog learns.

Everything is read from the stored episode, so feedback runs the same on a fresh, a resumed or an old run:

- `metadata["reference"]`: how the task's reference solution fared on the same task in the same worker
  (`reference_record`: passed, reason, outcome, error, what the page showed when it ended, and whether the episode
  itself was that run — an `oracle` episode is). A gate `Execution` of the task stands in when the episode has none;
- `metadata["page"]`: what the page showed when the episode ended (field error messages, controls left disabled);
- the verdict (the trace verdict, else the loop's checker) and the verifier's step labels (`labels.jsonl`).

The rules (`FAILURE_RULES`, first match wins):

    environment        the episode (or its reference run) died of the environment  -> ENVIRONMENT
    reference_failed   the reference solution fails this task                      -> TASK_INVALID
    page_refused       no reference known, and the page refused input
                       (a validation message, a control left disabled)              -> TASK_INVALID
    agent_steps        the reference passes, and the verifier labelled agent steps
                       incorrect or ineffective                                     -> AGENT_ERROR
    reference_passed   the reference passes (the task is doable)                    -> AGENT_ERROR
    labelled_steps     no reference known, agent steps labelled incorrect/ineffective -> AGENT_ERROR
    undetermined       nothing tells                                                -> UNDETERMINED

A TASK_INVALID failure of a synthesised task teaches constraints (`learn_constraints` of the gate reads the
page's messages: "A phone number has 7 to 15 digits" becomes `phone: digits_between 7..15`; a single-call task the
page does not explain forbids exactly its values), which go into the catalog so the sampler never proposes such a
task again. Agent errors teach the catalog nothing: they are what training is for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from uivenus.records import Outcome, RecordError, Trajectory
from uivenus.tasks.catalog import Catalog, Constraint
from uivenus.tasks.gate import Execution, learn_constraints, unexplained_constraint
from uivenus.tasks.spec import SynthTask

__all__ = [
    "BAD_STEP_LABELS", "FAILURE_RULES", "PAGE_KEY", "REFERENCE_KEY", "SYNTH_TASK_KEY", "Failure", "FailureEvidence",
    "FailureKind", "FailureRule", "checker_verdict", "classify", "environment_failed", "episode_passed",
    "failure_evidence", "feedback", "learn", "reference_from_execution", "reference_record", "synth_task",
]

#: Where a collected episode's metadata keeps the reference run, the page's end state and the synthesised task.
REFERENCE_KEY = "reference"
PAGE_KEY = "page"
SYNTH_TASK_KEY = "synth_task"
#: Step labels that count against the agent.
BAD_STEP_LABELS = frozenset({"incorrect", "ineffective"})
#: What the loop writes before a policy's own failure (not the environment's).
_POLICY_ERROR = "PolicyError"


class FailureKind(StrEnum):
    TASK_INVALID = "task_invalid"  # the task cannot be done as asked (the app refuses it)
    AGENT_ERROR = "agent_error"  # the task is doable; the agent did not do it
    ENVIRONMENT = "environment"  # the environment failed (a crashed browser, a reset that did not load)
    UNDETERMINED = "undetermined"  # nothing tells which


# --- evidence ----------------------------------------------------------------------------------------------

def checker_verdict(trajectory: Trajectory) -> Mapping[str, Any] | None:
    """The verdict the agent loop's checker wrote for the task's check kind (None: no checker ran)."""
    kind = (trajectory.task.check or {}).get("kind")
    verdict = trajectory.verdicts.get(kind) if kind else None
    return verdict if isinstance(verdict, Mapping) else None


def episode_passed(trajectory: Trajectory) -> bool | None:
    """Whether the episode succeeded: the trace verdict when it decided, else the loop's checker; None: unknown.

    A trace verdict is undecided when no judge could tell (e.g. the program judge has no checker for the task's
    check kind): the loop's checker, which read the live environment, then decides."""
    trace = trajectory.verdicts.get("trace")
    if isinstance(trace, Mapping) and trace.get("outcome") not in (None, "unknown"):
        return trace["outcome"] == "success"
    verdict = checker_verdict(trajectory)
    return bool(verdict.get("passed")) if verdict is not None else None


def environment_failed(outcome: Outcome | str | None, error: str | None) -> bool:
    """Whether a run ended in ERROR for a reason other than its policy (a crashed browser, a failed reset, a bug in
    the harness): the run says nothing about the task or the agent."""
    return outcome == Outcome.ERROR and not str(error or "").startswith(_POLICY_ERROR)


def reference_record(run: Trajectory, diagnostics: Mapping[str, Any], *, same_run: bool) -> dict[str, Any]:
    """What `metadata["reference"]` holds about a reference run (`run`: its trajectory; `same_run`: the episode
    itself was the reference run)."""
    verdict = checker_verdict(run) or {}
    error = run.metadata.get("error")
    return {"passed": bool(verdict.get("passed")) and run.outcome is not Outcome.ERROR,
            "reason": verdict.get("reason") or error or f"ended {run.outcome.value} without a verdict",
            "outcome": run.outcome.value, "error": error, "diagnostics": dict(diagnostics), "same_run": same_run}


def reference_from_execution(execution: Execution) -> dict[str, Any]:
    """A gate execution of the task (its reference solution, or an expert policy) as a reference record."""
    return {"passed": execution.passed, "reason": execution.reason, "outcome": None, "error": execution.error,
            "diagnostics": dict(execution.diagnostics), "same_run": False}


@dataclass(frozen=True)
class FailureEvidence:
    """What the rules read about one failed episode."""

    outcome: Outcome
    error: str | None  # the episode's fatal error
    reference: Mapping[str, Any] | None  # see `reference_record`; None: no reference known
    page: Mapping[str, Any]  # {"errors": {testid: text}, "disabled": [testid]} when the episode ended
    labels: tuple[str | None, ...]  # the verifier's step label of each step (None: not labelled)

    @property
    def bad_steps(self) -> tuple[int, ...]:
        """Steps labelled incorrect or ineffective."""
        return tuple(i for i, label in enumerate(self.labels) if label in BAD_STEP_LABELS)

    @property
    def refused(self) -> bool:
        return bool(self.page.get("errors") or self.page.get("disabled"))


def failure_evidence(trajectory: Trajectory, execution: Execution | None = None) -> FailureEvidence:
    """The evidence of a stored episode (`execution`: the gate's run of its task, used when no reference was run)."""
    reference = trajectory.metadata.get(REFERENCE_KEY)
    if not isinstance(reference, Mapping):
        reference = reference_from_execution(execution) if execution is not None else None
    page = trajectory.metadata.get(PAGE_KEY)
    return FailureEvidence(
        outcome=trajectory.outcome, error=trajectory.metadata.get("error"), reference=reference,
        page=page if isinstance(page, Mapping) else {},
        labels=tuple(step.labels.get("step_label") for step in trajectory.steps))


# --- rules ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FailureRule:
    name: str
    kind: FailureKind
    applies: Callable[[FailureEvidence], bool]
    why: Callable[[FailureEvidence], str]


def _environment(e: FailureEvidence) -> bool:
    ref = e.reference or {}
    return environment_failed(e.outcome, e.error) or environment_failed(ref.get("outcome"), ref.get("error"))


def _ref(e: FailureEvidence, passed: bool) -> bool:
    return e.reference is not None and bool(e.reference.get("passed")) is passed


def _page_text(e: FailureEvidence) -> str:
    parts = [f"{k}: {v!r}" for k, v in (e.page.get("errors") or {}).items()]
    if e.page.get("disabled"):
        parts.append(f"left disabled: {', '.join(e.page['disabled'])}")
    return "; ".join(parts)


def _steps_text(e: FailureEvidence) -> str:
    return ", ".join(f"{i} ({e.labels[i]})" for i in e.bad_steps)


#: How a failed episode is classified; the first rule that applies decides.
FAILURE_RULES: tuple[FailureRule, ...] = (
    FailureRule("environment", FailureKind.ENVIRONMENT, _environment,
                lambda e: f"the environment failed: {e.error or (e.reference or {}).get('error')}"),
    FailureRule("reference_failed", FailureKind.TASK_INVALID, lambda e: _ref(e, False),
                lambda e: f"the reference solution fails it: {e.reference['reason']}"  # type: ignore[index]
                          + (f" ({_page_text(e)})" if _page_text(e) else "")),
    FailureRule("page_refused", FailureKind.TASK_INVALID, lambda e: e.reference is None and e.refused,
                lambda e: f"the app refused the input: {_page_text(e)}"),
    FailureRule("agent_steps", FailureKind.AGENT_ERROR, lambda e: _ref(e, True) and bool(e.bad_steps),
                lambda e: f"the reference passes; the verifier labelled step(s) {_steps_text(e)}"),
    FailureRule("reference_passed", FailureKind.AGENT_ERROR, lambda e: _ref(e, True),
                lambda e: "the reference passes, so the task is doable"),
    FailureRule("labelled_steps", FailureKind.AGENT_ERROR, lambda e: bool(e.bad_steps),
                lambda e: f"no reference known; the verifier labelled step(s) {_steps_text(e)}"),
    FailureRule("undetermined", FailureKind.UNDETERMINED, lambda e: True,
                lambda e: "no reference run, no page message and no bad step label tell why"),
)


@dataclass(frozen=True)
class Failure:
    """One failed episode, why it failed, and the constraints it taught."""

    episode_id: str
    task_id: str
    kind: FailureKind
    rule: str
    reason: str
    bad_steps: tuple[int, ...] = ()
    learned: tuple[Constraint, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "task_id": self.task_id, "kind": self.kind.value, "rule": self.rule,
                "reason": self.reason, "bad_steps": list(self.bad_steps),
                "learned": [c.to_dict() for c in self.learned]}


def classify(trajectory: Trajectory, execution: Execution | None = None,
             rules: Sequence[FailureRule] = FAILURE_RULES) -> Failure | None:
    """Why a stored episode failed (None when it passed); `execution`: the gate's run of its task, if any."""
    if episode_passed(trajectory):
        return None
    evidence = failure_evidence(trajectory, execution)
    rule = next(r for r in rules if r.applies(evidence))
    return Failure(episode_id=str(trajectory.metadata.get("episode_id", trajectory.task.id)),
                   task_id=trajectory.task.id, kind=rule.kind, rule=rule.name, reason=rule.why(evidence),
                   bad_steps=evidence.bad_steps)


# --- learning -------------------------------------------------------------------------------------------------

def synth_task(trajectory: Trajectory) -> SynthTask | None:
    """The synthesised task an episode ran (None for tasks that were not synthesised from a catalog)."""
    data = trajectory.metadata.get(SYNTH_TASK_KEY)
    if not isinstance(data, Mapping):
        return None
    try:
        return SynthTask.from_dict(data)
    except RecordError:
        return None


def learn(catalog: Catalog, trajectory: Trajectory, failure: Failure, execution: Execution | None = None
          ) -> tuple[Constraint, ...]:
    """Add to `catalog` the constraints a TASK_INVALID failure of a synthesised task teaches; the ones new to it."""
    task = synth_task(trajectory)
    if failure.kind is not FailureKind.TASK_INVALID or task is None:
        return ()
    evidence = failure_evidence(trajectory, execution)
    reference = evidence.reference or {}
    diagnostics = reference.get("diagnostics") if reference.get("diagnostics") else evidence.page
    run = Execution(task.id, False, failure.reason, reference.get("error"), len(trajectory.steps), diagnostics)
    taught = learn_constraints(task, run)
    if not taught and (unexplained := unexplained_constraint(task, failure.reason)) is not None:
        taught = [unexplained]
    return tuple(c for c in taught if catalog.has(c.key) and catalog.add_constraint(c))


def feedback(catalog: Catalog | None, trajectories: Iterable[Trajectory],
             executions: Mapping[str, Execution] | None = None) -> list[Failure]:
    """Classify every failed episode and, with a `catalog`, add what the invalid tasks teach to it.

    `executions` maps task ids to the gate's runs of those tasks (the reference when an episode has none)."""
    out = []
    for trajectory in trajectories:
        execution = (executions or {}).get(trajectory.task.id)
        failure = classify(trajectory, execution)
        if failure is None:
            continue
        if catalog is not None:
            failure = replace(failure, learned=learn(catalog, trajectory, failure, execution))
        out.append(failure)
    return out
