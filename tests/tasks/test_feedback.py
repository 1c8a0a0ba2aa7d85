"""Feedback: failed episodes are classified (task invalid vs agent error, from the reference run, the page and the
verifier's step labels), invalid tasks teach the catalog constraints, and the next round's sampler keeps them —
checked on hand-made trajectories and on a real round in Chromium."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from uivenus.records import Outcome, Step, TaskSpec, Trajectory
from uivenus.tasks.catalog import Catalog, ConstraintKind, FunctionCall
from uivenus.tasks.catalog_docs import bundled_docs, catalog_from_docs
from uivenus.tasks.executors import SerialExecutor
from uivenus.tasks.feedback import (
    PAGE_KEY, REFERENCE_KEY, SYNTH_TASK_KEY, FailureKind, classify, episode_passed, feedback, learn,
)
from uivenus.tasks.functions import app_model
from uivenus.tasks.gate import Execution, Gate, RejectionCode
from uivenus.tasks.phrasing import compose, phrase_call
from uivenus.tasks.rounds import FEEDBACK_FILE, Pipeline
from uivenus.tasks.spec import SynthTask, TaskKind
from uivenus.tasks.synthesis import TemplateSynthesizer, build_task

REFUSED = {"errors": {"phone-error": "A phone number has 7 to 15 digits"}, "disabled": ["save-contact"]}


@pytest.fixture
def catalog() -> Catalog:
    catalog = Catalog()
    for app in ("contacts", "notes"):
        catalog.merge(catalog_from_docs(bundled_docs(app)))
    return catalog


def make(catalog: Catalog, key: str, **params: object) -> SynthTask:
    app, name = key.split(".")
    call = FunctionCall(app, name, params)
    return build_task([call], compose([phrase_call(catalog.function(key), call)]), TaskKind.SINGLE,
                      app_model(app).setup, {"synthesizer": "test"})


def episode(*, passed: bool = False, outcome: Outcome = Outcome.FINISHED, error: str | None = None,
            reference: Mapping[str, Any] | None = None, page: Mapping[str, Any] | None = None,
            labels: Sequence[str] = (), task: SynthTask | None = None, trace: str | None = None) -> Trajectory:
    """A stored episode as feedback reads it back."""
    spec = task.spec if task else TaskSpec(id="notes/x", instruction="Create a note", platform="web",
                                           check={"kind": "sandbox", "task": "notes/x"})
    verdicts: dict[str, Any] = {"sandbox": {"passed": passed, "reason": "done" if passed else "no such note"}}
    if trace:
        verdicts["trace"] = {"outcome": trace}
    metadata: dict[str, Any] = {"episode_id": "ep-1", PAGE_KEY: page or {"errors": {}, "disabled": []}}
    if error:
        metadata["error"] = error
    if reference is not None:
        metadata[REFERENCE_KEY] = {"diagnostics": {}, "outcome": "finished", "error": None, **reference}
    if task is not None:
        metadata[SYNTH_TASK_KEY] = task.to_dict()
    steps = tuple(Step(index=i, labels={"step_label": label}) for i, label in enumerate(labels))
    return Trajectory(task=spec, steps=steps, outcome=outcome, verdicts=verdicts, metadata=metadata)


def test_passed_episodes_are_no_failures_and_the_trace_verdict_decides() -> None:
    assert classify(episode(passed=True)) is None
    assert episode_passed(episode(passed=False, trace="success")) is True  # the trace verdict outranks the checker
    assert episode_passed(episode(passed=True, trace="partial")) is False
    assert episode_passed(episode(passed=True, trace="unknown")) is True  # no judge decided: the loop's checker does
    assert classify(episode(passed=True, trace="failed")) is not None


@pytest.mark.parametrize(("case", "kind", "rule"), [
    (dict(reference={"passed": False, "reason": "no new contact", "same_run": True}, page=REFUSED, labels=["correct"]),
     FailureKind.TASK_INVALID, "reference_failed"),
    (dict(reference={"passed": True, "reason": "ok"}, labels=["correct", "ineffective", "incorrect"]),
     FailureKind.AGENT_ERROR, "agent_steps"),
    (dict(reference={"passed": True, "reason": "ok"}, labels=["correct", "exploratory"]),
     FailureKind.AGENT_ERROR, "reference_passed"),
    (dict(page=REFUSED, labels=["incorrect"]), FailureKind.TASK_INVALID, "page_refused"),
    (dict(labels=["correct", "incorrect"]), FailureKind.AGENT_ERROR, "labelled_steps"),
    (dict(labels=["correct"]), FailureKind.UNDETERMINED, "undetermined"),
    (dict(outcome=Outcome.ERROR, error="EnvCrashedError: the browser died", reference={"passed": False, "reason": "x"}),
     FailureKind.ENVIRONMENT, "environment"),
    (dict(reference={"passed": True, "reason": "ok"}, page=REFUSED, labels=["incorrect"]),  # the agent typed it wrong
     FailureKind.AGENT_ERROR, "agent_steps"),
    (dict(outcome=Outcome.ERROR, error="PolicyError: the reference solution cannot go on from this page",
          reference={"passed": False, "reason": "stuck", "same_run": True}),
     FailureKind.TASK_INVALID, "reference_failed"),
])
def test_failures_are_classified_by_the_first_rule_that_applies(case: dict, kind: FailureKind, rule: str) -> None:
    failure = classify(episode(**case))
    assert failure is not None and (failure.kind, failure.rule) == (kind, rule), failure
    if rule == "agent_steps":
        assert failure.bad_steps == tuple(i for i, label in enumerate(case["labels"]) if label != "correct")
    if rule == "reference_failed" and "page" in case:
        assert "A phone number has 7 to 15 digits" in failure.reason


def test_a_gate_execution_stands_in_for_a_missing_reference(catalog: Catalog) -> None:
    task = make(catalog, "contacts.add_contact", name="Sam Lee", phone="12-34")
    failed_run = Execution(task.id, False, "no new contact", diagnostics=REFUSED)
    failure = classify(episode(task=task, labels=["correct"]), failed_run)
    assert failure is not None and failure.kind is FailureKind.TASK_INVALID and failure.rule == "reference_failed"
    passing_run = Execution(task.id, True, "contacts as expected")
    assert classify(episode(task=task, labels=["incorrect"]), passing_run).kind is FailureKind.AGENT_ERROR


def test_invalid_tasks_teach_the_catalog_and_agent_errors_do_not(catalog: Catalog) -> None:
    bad_phone = make(catalog, "contacts.add_contact", name="Sam Lee", phone="12-34")
    invalid = episode(task=bad_phone, reference={"passed": False, "reason": "no new contact", "same_run": True,
                                                 "diagnostics": REFUSED})
    failure = classify(invalid)
    learned = learn(catalog, invalid, failure)
    assert [(c.kind, c.param, dict(c.condition)) for c in learned] == [
        (ConstraintKind.INVALID_VALUE, "phone", {"op": "digits_between", "min": 7, "max": 15})]
    assert learn(catalog, invalid, failure) == ()  # already known: nothing new
    note = make(catalog, "notes.create_note", title="Packing list", body="Buy flour and yeast")
    agent = episode(task=note, reference={"passed": True, "reason": "ok"}, labels=["incorrect"])
    unexplained = episode(task=note, reference={"passed": False, "reason": "the note was not saved"})
    version = catalog.version
    failures = feedback(catalog, [agent, unexplained, episode(task=note, passed=True)])
    assert [f.kind for f in failures] == [FailureKind.AGENT_ERROR, FailureKind.TASK_INVALID]
    assert failures[0].learned == ()
    (forbidden,) = failures[1].learned  # nothing on the page explains it: exactly these values are ruled out
    assert forbidden.kind is ConstraintKind.PRECONDITION and dict(forbidden.condition)["op"] == "not_combination"
    assert not forbidden.allows(note.calls[0]) and catalog.version == version + 1


def _digits(phone: str) -> int:
    return len(re.sub(r"\D", "", phone))


def test_a_round_learns_from_an_invalid_task_and_the_next_sampler_avoids_it(catalog: Catalog, tmp_path: Path,
                                                                           fixed_synthesizer: type) -> None:
    bad_phone = make(catalog, "contacts.add_contact", name="Sam Lee", phone="12-34")
    note = make(catalog, "notes.create_note", title="Weekend plans", body="Water the basil every day")
    fresh = Catalog.from_dict(catalog.to_dict())
    sampler = TemplateSynthesizer(5, kinds=["single"], functions=["contacts.add_contact"])
    assert any(not 7 <= _digits(t.calls[0].params["phone"]) <= 15 for t in sampler.synthesize(fresh, 24).tasks)

    with SerialExecutor() as executor:  # a random agent fails both; the worker's reference runs tell them apart
        pipeline = Pipeline(catalog, fixed_synthesizer([bad_phone, note]), Gate(catalog), executor, "random:3",
                            tmp_path, "feedback", max_steps=3, progress=False)
        stats = pipeline.round(2)
    assert (stats.proposed, stats.accepted, stats.executable, stats.verified_success) == (2, 2, 1, 0)
    assert (stats.failed_invalid, stats.failed_agent, stats.learned) == (1, 1, 1)
    assert stats.acceptance_rate == 0.5
    lines = [json.loads(line) for line in (pipeline.round_dir(1) / FEEDBACK_FILE).read_text().splitlines()]
    kinds = {line["task_id"]: (line["kind"], line["rule"]) for line in lines}
    assert kinds[bad_phone.id] == ("task_invalid", "reference_failed")
    assert kinds[note.id][0] == "agent_error"
    (constraint,) = catalog.constraints("contacts.add_contact")
    assert dict(constraint.condition) == {"op": "digits_between", "min": 7, "max": 15}
    assert constraint.source == bad_phone.id

    proposed = sampler.synthesize(catalog, 24).tasks  # the next round's sampler keeps the constraint
    assert proposed and all(7 <= _digits(t.calls[0].params["phone"]) <= 15 for t in proposed)
    again = Gate(catalog).check(make(catalog, "contacts.add_contact", name="Ana Lima", phone="555-01"))
    assert not again.accepted and again.reasons[0].code is RejectionCode.INFEASIBLE
    saved = Catalog.load(tmp_path / "feedback" / "pipeline" / "catalog.json")
    assert saved.constraints() == catalog.constraints()  # a restarted pipeline gets back what the run learned
