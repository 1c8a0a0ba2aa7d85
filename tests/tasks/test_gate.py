"""The validity gate: duplicates, infeasible and unsafe tasks are rejected with their reasons; executability is
checked by running tasks in real Chromium; a failing task teaches a constraint that the sampler then keeps."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from uivenus.cli.tasks import app as tasks_cli
from uivenus.envs.registry import make_env
from uivenus.tasks.catalog import Catalog, Constraint, ConstraintKind, FunctionCall
from uivenus.tasks.catalog_docs import bundled_docs, catalog_from_docs
from uivenus.tasks.functions import app_model
from uivenus.tasks.gate import (
    Execution, Executor, Gate, PolicyExecutor, ReferenceExecutor, RejectionCode, learn_constraints,
)
from uivenus.tasks.phrasing import compose, phrase_call
from uivenus.tasks.spec import SynthTask, TaskKind, normalize_text, read_tasks, write_tasks
from uivenus.tasks.synthesis import TemplateSynthesizer, build_task

PHONE_RULE = {"op": "digits_between", "min": 7, "max": 15}


def _catalog(*apps: str) -> Catalog:
    catalog = Catalog()
    for app in apps:
        catalog.merge(catalog_from_docs(bundled_docs(app)))
    return catalog


def make(catalog: Catalog, key: str, instruction: str | None = None, **params: object) -> SynthTask:
    """A single-call task of `key` with `params`, phrased from the templates unless `instruction` is given."""
    app, name = key.split(".")
    call = FunctionCall(app, name, params)
    phrasings = (instruction,) if instruction else compose([phrase_call(catalog.function(key), call)])
    return build_task([call], phrasings, TaskKind.SINGLE, app_model(app).setup, {"synthesizer": "test"})


def _digits(phone: str) -> int:
    return len(re.sub(r"\D", "", phone))


def test_normalized_instructions_compare_what_is_asked() -> None:
    assert normalize_text("Set the brightness to thirty percent!") == normalize_text("set the  BRIGHTNESS to 30%")
    assert normalize_text("Add two mugs, please.") == "add 2 mugs please"
    assert normalize_text("Order a pair of mugs for 1,000 coins") == "order 2 mugs for 1000 coins"
    assert normalize_text("Turn Wi-Fi off") != normalize_text("Turn Wi-Fi on")


def test_gate_rejects_duplicates_infeasible_and_unsafe_tasks_with_reasons(tmp_path) -> None:
    catalog = _catalog("settings", "notes", "contacts", "mail")
    catalog.add_constraint(Constraint("contacts", "add_contact", ConstraintKind.INVALID_VALUE, PHONE_RULE,
                                      "A phone number has 7 to 15 digits", "phone", "contacts/synth-earlier"))
    log = tmp_path / "rejected.jsonl"
    gate = Gate(catalog, log=log)
    toggle = make(catalog, "settings.set_toggle", which="bluetooth", value="off")
    tasks = {
        "toggle": toggle,
        "same calls": make(catalog, "settings.set_toggle", "Bluetooth off, please.", which="bluetooth", value="off"),
        "note": make(catalog, "notes.create_note", 'Create a note titled "Pay rent" with the text "due on the 1st"',
                     title="Pay rent", body="due on the 1st"),
        "same text": make(catalog, "notes.create_note", "create a note titled PAY RENT with the text: due on the 1st!",
                          title="pay rent", body="Due on the 1st"),
        "bad phone": make(catalog, "contacts.add_contact", name="Sam Lee", phone="12-34"),
        "unknown": build_task([FunctionCall("notes", "share_note", {"note": "Groceries"})],
                              ["Share my Groceries note."], TaskKind.SINGLE, {}, {}),
        "sends": make(catalog, "mail.send_message", to="sam.lee@example.com", subject="Lunch", body="Noon?"),
        "deletes": make(catalog, "notes.delete_note", note="Groceries"),
        "says reset": make(catalog, "settings.set_toggle", "Turn Wi-Fi on, then factory reset the phone.",
                           which="wifi", value="on"),
    }
    results = dict(zip(tasks, gate.check_all(tasks.values()), strict=True))
    assert results["toggle"].accepted and results["note"].accepted  # "Pay rent" is a title, not a payment
    codes = {name: [r.code for r in result.reasons] for name, result in results.items()}
    assert codes["same calls"] == [RejectionCode.DUPLICATE]
    assert "same calls and values as " + toggle.id in results["same calls"].reasons[0].message
    assert codes["same text"] == [RejectionCode.DUPLICATE]
    assert "same instruction as " + tasks["note"].id in results["same text"].reasons[0].message
    assert codes["bad phone"] == [RejectionCode.INFEASIBLE]
    assert "phone='12-34'" in results["bad phone"].reasons[0].message
    assert "7 to 15 digits (learned from contacts/synth-earlier)" in results["bad phone"].reasons[0].message
    assert codes["unknown"] == [RejectionCode.INFEASIBLE]
    assert "notes.share_note is not in the catalog" in results["unknown"].reasons[0].message
    assert codes["sends"] == [RejectionCode.UNSAFE] and "sending" in results["sends"].reasons[0].message
    assert codes["deletes"] == [RejectionCode.UNSAFE] and "deletion" in results["deletes"].reasons[0].message
    assert codes["says reset"] == [RejectionCode.UNSAFE]
    assert "instruction says 'factory reset'" in results["says reset"].reasons[0].message
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [entry["task"] for entry in logged] == [tasks[n].id for n in results if not results[n].accepted]
    assert all(entry["reasons"] and not entry["accepted"] for entry in logged)
    # asked for explicitly, consequential tasks pass the gate (a fresh gate: nothing seen yet)
    assert Gate(catalog, allow_unsafe=True).check(tasks["sends"]).accepted


def test_learned_constraints_come_from_what_the_failing_page_says() -> None:
    catalog = _catalog("contacts", "notes")
    contact = make(catalog, "contacts.add_contact", name="Sam Lee", phone="555-CALL", email="sam@")

    def failed(**diagnostics: object) -> Execution:
        return Execution(contact.id, False, "no new contact", diagnostics=diagnostics)

    (email,) = learn_constraints(contact, failed(errors={"email-error": "Enter a valid email address"}))
    assert (email.param, email.kind, email.condition["op"]) == ("email", ConstraintKind.INVALID_VALUE, "matches")
    assert not email.allows(contact.calls[0])
    assert email.allows(FunctionCall("contacts", "add_contact", {"email": "sam@example.com"}))
    (chars,) = learn_constraints(contact, failed(errors={"phone-error": "Use digits, spaces, ( ) + - only"},
                                                 disabled=["save-contact"]))
    assert not chars.allows(contact.calls[0])
    assert chars.allows(FunctionCall("contacts", "add_contact", {"phone": "(555) 010-2030"}))
    assert "save-contact stayed disabled" in chars.reason and chars.source == contact.id
    # a message that does not rule out the value refused: only that value is ruled out
    odd = make(catalog, "contacts.add_contact", name="Sam Lee", phone="555-0142")
    digits = {"errors": {"phone-error": "A phone number has 7 to 15 digits"}}
    (exact,) = learn_constraints(odd, Execution(odd.id, False, "no new contact", diagnostics=digits))
    assert dict(exact.condition) == {"op": "not_in", "values": ["555-0142"]}
    blank = make(catalog, "notes.create_note", "Create an empty note.", title=" ", body=" ")
    (disabled,) = learn_constraints(blank, Execution(blank.id, False, "no new note",
                                                     diagnostics={"disabled": ["save-note"]}))
    assert disabled.kind is ConstraintKind.DISABLED and not disabled.allows(blank.calls[0])
    passed = Execution(contact.id, True, "ok", diagnostics={"errors": {"phone-error": "x"}})
    assert learn_constraints(contact, passed) == []
    # about no parameter of the task
    assert learn_constraints(contact, failed(errors={"zip-error": "Unknown zip"})) == []


@pytest.fixture(scope="module")
def sandbox() -> Iterator:
    with make_env("sandbox:contacts") as env:
        yield env


@pytest.mark.parametrize("make_executor", [lambda env: ReferenceExecutor(env=env),
                                           lambda env: PolicyExecutor("oracle", env=env)], ids=["reference", "oracle"])
def test_every_executor_runs_tasks_and_says_which_pass(sandbox, make_executor) -> None:
    catalog = _catalog("settings", "contacts")
    good = make(catalog, "settings.set_toggle", which="dark_mode", value="off")
    bad = make(catalog, "contacts.add_contact", name="Sam Lee", phone="555-01")
    executor = make_executor(sandbox)
    assert isinstance(executor, Executor)
    passed, failed = executor.execute([good, bad])
    assert (passed.task_id, passed.passed, failed.task_id, failed.passed) == (good.id, True, bad.id, False)
    assert "as expected" in passed.reason and "no record in contacts" in failed.reason
    assert failed.diagnostics["errors"] == {"phone-error": "A phone number has 7 to 15 digits"}
    assert "save-contact" in failed.diagnostics["disabled"]
    executor.close()
    assert sandbox.app_state() is not None  # a borrowed env stays open


def test_a_constraint_learned_from_a_failing_task_stops_the_sampler_proposing_it(sandbox) -> None:
    catalog = _catalog("contacts")
    synthesizer = TemplateSynthesizer(seed=3, kinds=["single"], functions=["contacts.add_contact"])
    before = synthesizer.synthesize(catalog, 12).tasks
    invalid = [t for t in before if not 7 <= _digits(t.calls[0].params["phone"]) <= 15]
    valid = [t for t in before if t not in invalid]
    assert invalid and valid  # the vocabulary holds numbers this app refuses: nothing says so yet
    gate, version = Gate(catalog, executor=ReferenceExecutor(env=sandbox)), catalog.version
    bad, good = gate.check_all([invalid[0], valid[0]])
    assert good.accepted and good.execution.passed
    assert not bad.accepted and [r.code for r in bad.reasons] == [RejectionCode.NOT_EXECUTABLE]
    (learned,) = bad.learned
    assert (learned.param, learned.kind, dict(learned.condition)) == ("phone", ConstraintKind.INVALID_VALUE, PHONE_RULE)
    assert learned.source == invalid[0].id and "7 to 15 digits" in learned.reason
    assert catalog.version == version + 1 and catalog.constraints("contacts.add_contact") == [learned]
    after = synthesizer.synthesize(catalog, 12).tasks
    assert len(after) == 12 and all(7 <= _digits(t.calls[0].params["phone"]) <= 15 for t in after)
    again = Gate(catalog).check(invalid[0])
    assert [r.code for r in again.reasons] == [RejectionCode.INFEASIBLE]


def test_cli_gate_writes_accepted_tasks_logs_rejections_and_saves_what_it_learned(tmp_path) -> None:
    catalog = _catalog("settings", "notes", "contacts")
    path, tasks_file, out = tmp_path / "catalog.json", tmp_path / "tasks.jsonl", tmp_path / "accepted.jsonl"
    catalog.save(path)
    toggle = make(catalog, "settings.set_toggle", which="wifi", value="off")
    write_tasks(tasks_file, [toggle, toggle, make(catalog, "notes.delete_note", note="Gift ideas"),
                             make(catalog, "contacts.add_contact", name="Ana Lima", phone="+1 555 0100 2233 4455 66")])
    result = CliRunner().invoke(tasks_cli, ["gate", "--catalog", str(path), "--tasks", str(tasks_file),
                                            "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert [t.id for t in read_tasks(out)] == [toggle.id]
    logged = [json.loads(line) for line in (tmp_path / "accepted.rejected.jsonl").read_text().splitlines()]
    assert sorted(r["code"] for entry in logged for r in entry["reasons"]) == ["duplicate", "not_executable", "unsafe"]
    saved = Catalog.load(path)
    assert saved.version == catalog.version + 1
    assert [dict(c.condition) for c in saved.constraints()] == [PHONE_RULE]
    assert "accepted 1 of 4" in result.output and "+ contacts constraint add_contact.phone" in result.output
