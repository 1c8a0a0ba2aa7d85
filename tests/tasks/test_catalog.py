"""The capability catalog: built by exploring real sandbox apps in Chromium and from their written docs, stored
as versioned JSON that round-trips and diffs, with constraints whose conditions decide what is allowed."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from uivenus.cli.tasks import app as tasks_cli
from uivenus.envs.registry import make_env
from uivenus.tasks.catalog import Catalog, CatalogError, Constraint, ConstraintKind, Function, FunctionCall, Param
from uivenus.tasks.catalog_diff import Change, diff_catalogs
from uivenus.tasks.catalog_docs import bundled_docs, catalog_from_docs
from uivenus.tasks.explore import ExploreLimits, explore_app

SETTINGS_FUNCTIONS = {"set_toggle", "set_brightness", "set_language", "set_device_name", "reset_settings"}
NOTES_FUNCTIONS = {"create_note", "edit_note", "pin_note", "delete_note"}


@pytest.fixture(scope="module")
def sandbox() -> Iterator:
    with make_env("sandbox:settings") as env:
        yield env


@pytest.fixture(scope="module")
def explored(sandbox) -> dict[str, Catalog]:
    limits = ExploreLimits(max_actions=40)
    return {app: explore_app(sandbox, app, sandbox.base_url, limits=limits) for app in ("settings", "notes")}


def test_exploring_settings_finds_its_functions_with_parameter_domains(explored) -> None:
    settings = explored["settings"].apps["settings"]
    assert SETTINGS_FUNCTIONS <= set(settings.functions)
    toggle = settings.functions["set_toggle"]
    assert set(toggle.param("which").values) == {"wifi", "bluetooth", "airplane", "notifications", "dark_mode"}
    assert toggle.param("which").label("wifi") == "Wi-Fi"  # read from the switch's aria-label
    assert toggle.param("value").values == ("on", "off")
    brightness = settings.functions["set_brightness"].param("brightness")
    assert (brightness.domain, brightness.low, brightness.high) == ("int", 0, 100)
    assert "de" in settings.functions["set_language"].param("language").values
    assert settings.functions["set_device_name"].param("device_name").domain == "device_name"
    assert settings.functions["reset_settings"].unsafe == ("system",)
    assert {"wifi", "bluetooth"} <= set(settings.functions["set_toggle"].effects)
    assert all(fn.sources == ("exploration",) and fn.evidence for fn in settings.functions.values())


def test_exploring_notes_finds_its_functions_screens_and_transitions(explored) -> None:
    notes = explored["notes"].apps["notes"]
    assert NOTES_FUNCTIONS <= set(notes.functions)
    assert {p.name for p in notes.functions["create_note"].params} == {"title", "body"}
    assert notes.functions["create_note"].effects == ("notes[+]",)
    assert notes.functions["pin_note"].param("note").domain == "record:notes"
    assert notes.functions["delete_note"].unsafe == ("deletion",)
    assert "deletion" not in notes.functions["edit_note"].unsafe  # a delete cancelled before it is no evidence
    start = next(s for s in notes.states.values() if s.depth == 0)
    assert start.reached_by == () and "new-note" in start.elements
    assert {"#new", "#note/*"} <= {s.route for s in notes.states.values()}  # record ids generalised
    # the new-note editor shows Save disabled on arrival: a disabled state recorded for the catalog
    assert any("save-note" in s.disabled for s in notes.states.values())
    changing = [t for t in notes.transitions if t.effects]
    assert {"notes[+]", "notes[-]", "notes[].pinned"} <= {e for t in changing for e in t.effects}
    assert all(t.source in notes.states and (t.target in notes.states or t.target == "outside")
               for t in notes.transitions)


def test_docs_and_exploration_name_the_same_functions(explored) -> None:
    for app in ("settings", "notes"):
        docs = catalog_from_docs(bundled_docs(app))
        merged = Catalog.from_dict(explored[app].to_dict())
        assert set(docs.apps[app].functions) == set(merged.apps[app].functions)
        assert merged.merge(docs)
        assert set(merged.apps[app].functions) == set(docs.apps[app].functions)
        for fn in merged.apps[app].functions.values():
            assert fn.sources == ("docs", "exploration"), fn.key


def test_catalog_from_docs_follows_its_sentence_rules() -> None:
    text = """# Phone
- Turn a switch on or off: Wi-Fi (`wifi`), Bluetooth (`bluetooth`) or `nfc`.
- Set the volume to a value from 0 to 10.
- Change the ring tone to one of: Marimba (`marimba`), Chimes (`chimes`).
- Add a contact with a name, a phone number and an optional email address.
- Pin a note.
- `pay_bill`: Pay a bill with a card number and an amount (`10` or `20`).
"""
    catalog = catalog_from_docs(text)
    phone = catalog.apps["phone"].functions
    assert set(phone) == {"set_toggle", "set_volume", "set_tone", "add_contact", "pin_note", "pay_bill"}
    assert phone["set_toggle"].param("which").values == ("wifi", "bluetooth", "nfc")
    assert (phone["set_volume"].param("volume").low, phone["set_volume"].param("volume").high) == (0, 10)
    assert phone["set_tone"].param("tone").labels["chimes"] == "Chimes"
    assert [(p.name, p.domain, p.optional) for p in phone["add_contact"].params] == [
        ("name", "person_name", False), ("phone", "phone", False), ("email", "email", True)]
    assert phone["pin_note"].param("note").domain == "record:notes"
    assert set(phone["pay_bill"].unsafe) == {"payment", "credentials"}
    with pytest.raises(CatalogError, match="no docs rule understands 'Juggle wildly'"):
        catalog_from_docs("# x\n- Juggle wildly")


def test_catalog_json_is_versioned_stable_and_diffable(tmp_path) -> None:
    catalog = catalog_from_docs(bundled_docs("contacts"))
    assert catalog.version == 1
    path = tmp_path / "catalog.json"
    catalog.save(path)
    text = path.read_text()
    assert json.loads(text)["schema"] == "uivenus.catalog/1"
    assert Catalog.load(path).dumps() == text  # a round trip writes the same bytes
    before = Catalog.load(path)

    rule = Constraint("contacts", "add_contact", ConstraintKind.INVALID_VALUE,
                      {"op": "digits_between", "min": 7, "max": 15},
                      reason="A phone number has 7 to 15 digits", param="phone", source="contacts/synth-x")
    assert catalog.add_constraint(rule) and catalog.version == 2
    assert not catalog.add_constraint(rule) and catalog.version == 2  # nothing new: no new version
    assert catalog.add_function(Function("contacts", "call_contact", params=(Param("contact", "record:contacts"),)))
    assert catalog.version == 3
    diff = diff_catalogs(before, catalog)
    assert {(e.section, e.change) for e in diff.entries} == {("constraints", Change.ADDED), ("functions", Change.ADDED)}
    assert "+ contacts constraint add_contact.phone invalid_value" in str(diff)
    assert not diff_catalogs(catalog, Catalog.from_dict(catalog.to_dict()))
    with pytest.raises(CatalogError, match="no function 'contacts.teleport'"):
        catalog.add_constraint(Constraint("contacts", "teleport", "precondition",
                                          {"op": "not_with", "function": "x.y"}, "r"))


def test_constraints_decide_which_calls_are_allowed() -> None:
    def call(**params: object) -> FunctionCall:
        return FunctionCall("contacts", "add_contact", params)

    def invalid(condition: dict, param: str) -> Constraint:
        return Constraint("contacts", "add_contact", "invalid_value", condition, "r", param)

    digits = invalid({"op": "digits_between", "min": 7, "max": 15}, "phone")
    assert digits.allows(call(phone="555-0142")) and not digits.allows(call(phone="12-34"))
    assert digits.allows(call(name="no phone given"))  # the parameter is absent: nothing to judge
    assert digits.allows(FunctionCall("notes", "create_note", {"phone": "1"}))  # another function
    pattern = invalid({"op": "matches", "pattern": "[0-9 ()+-]+"}, "phone")
    assert not pattern.allows(call(phone="555-CALL"))
    assert not invalid({"op": "not_empty"}, "name").allows(call(name="  "))
    assert not invalid({"op": "max_length", "max": 3}, "name").allows(call(name="Anna"))
    combo = Constraint("contacts", "add_contact", "disabled",
                       {"op": "not_combination", "values": {"name": "A", "phone": "1"}}, "r")
    assert not combo.allows(call(name="A", phone="1")) and combo.allows(call(name="A", phone="2"))
    alone = Constraint("notes", "pin_note", "precondition", {"op": "not_with", "function": "notes.delete_note"}, "r")
    pin, delete = FunctionCall("notes", "pin_note", {"note": "x"}), FunctionCall("notes", "delete_note", {"note": "y"})
    assert alone.allows(pin, [pin]) and not alone.allows(pin, [delete, pin])
    with pytest.raises(CatalogError, match="op 'shorter_than' is unknown"):
        Constraint("notes", "pin_note", "invalid_value", {"op": "shorter_than"}, "r", "note")


def test_cli_explore_writes_a_catalog_with_docs_merged(tmp_path) -> None:
    out = tmp_path / "settings.json"
    result = CliRunner().invoke(tasks_cli, ["explore", "--env", "sandbox:settings", "--out", str(out),
                                            "--max-actions", "6"])
    assert result.exit_code == 0, result.output
    catalog = Catalog.load(out)
    functions = catalog.apps["settings"].functions
    assert SETTINGS_FUNCTIONS <= set(functions)  # the docs name what six taps could not reach
    assert any("exploration" in fn.sources for fn in functions.values())
    assert catalog.apps["settings"].states and "set_toggle" in result.output
    bad = CliRunner().invoke(tasks_cli, ["explore", "--env", "browser", "--out", str(out)])
    assert bad.exit_code != 0 and "needs a sandbox app" in bad.output
