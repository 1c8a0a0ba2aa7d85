"""Reference solvers and state models of catalog functions, so synthesised tasks run and are checked exactly.

Each implemented function has a *move* — the unified actions that do it on the live page, built from the
bundled suites' moves (`tap`, `fill`, `set_switch`, …) — and a *model*: the app state it leaves, computed
from the state before. A synthesised task's checker folds its calls' models over the task's starting state
and compares the app's final state with the result (record ids and dates the app picks match anything);
its solver chains the moves. Models also tell a sampler when a call makes no sense from a state (pinning a
pinned note, or a call that changes nothing), by raising `Infeasible`.

Cross-app tasks: the apps keep their state per app (sessionStorage of one browser context) and a checker
reads only the page it ends on, so a task that starts in one app and ends in another is checked on the last
app's state, starting from that app's own defaults (it is first opened mid-task, in a fresh context). The
first app's part (reading a code in mail) shows in the result only through the value carried over.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from uivenus.actions.space import Action, Finished, Platform, PressHome, TakeNote
from uivenus.envs.sandbox.solving import SolverError, choose, failed, fill, passed, set_switch, slide, tap, tid
from uivenus.envs.sandbox.suites import contacts as contacts_suite
from uivenus.envs.sandbox.suites import mail as mail_suite
from uivenus.envs.sandbox.suites import notes as notes_suite
from uivenus.envs.sandbox.suites import settings as settings_suite
from uivenus.envs.sandbox.suites import shop as shop_suite
from uivenus.envs.sandbox.tasks import CheckResult, DomQuery, SandboxTask, register_dynamic
from uivenus.tasks.catalog import FunctionCall
from uivenus.tasks.spec import SynthTask


class Infeasible(ValueError):
    """A call makes no sense from this state (no such record, already pinned, changes nothing)."""


class NotImplementedFunctionError(LookupError):
    """A catalog function has no reference move and model, so tasks using it cannot be run or checked."""


class _Any:
    """Matches any value in an expected record (ids and dates the app assigns)."""

    def __repr__(self) -> str:
        return "ANY"

    def __deepcopy__(self, memo: dict[int, Any]) -> _Any:  # models copy states: ANY must stay the one ANY
        return self


ANY: Any = _Any()

Params = Mapping[str, Any]
Move = Callable[[DomQuery, Params], Iterator[Action]]
Model = Callable[[dict[str, Any], Params], None]  # mutates a copy of the state; raises Infeasible


@dataclass(frozen=True)
class AppModel:
    """What synthesised tasks of one app start from and what their checkers compare."""

    setup: Mapping[str, Any]  # the state a task that starts in this app is set up with
    compared: tuple[str, ...]  # the state keys a checker compares (the rest: search boxes, counters)
    labels: Mapping[str, str] = field(default_factory=dict)  # record list -> the field that names a record
    defaults: Mapping[str, Any] | None = None  # the app's own defaults (a task opening it mid-way sees them)
    home: str | None = None  # an element only the app's main screen shows: where every move starts
    back: tuple[str, ...] = ()  # what to tap to get back there (a phone shows one screen at a time)


@dataclass(frozen=True)
class Implementation:
    move: Move
    model: Model


def _find(state: Mapping[str, Any], key: str, field_name: str, label: Any) -> dict[str, Any]:
    for record in state[key]:
        if record.get(field_name) == label:
            return record
    raise Infeasible(f"no record in {key} has {field_name} {label!r}")


# --- settings ----------------------------------------------------------------------------------------

SWITCH_SECTIONS: Mapping[str, str] = MappingProxyType({
    "wifi": "connections", "bluetooth": "connections", "airplane": "connections",
    "notifications": "notifications", "dark_mode": "display",
})


def _switch(which: str) -> str:
    return tid("toggle-" + which.replace("_", "-"))


def _toggle_move(q: DomQuery, p: Params) -> Iterator[Action]:
    if p["which"] not in SWITCH_SECTIONS:
        raise SolverError(f"settings has no switch {p['which']!r}")
    yield from settings_suite.open_section(q, SWITCH_SECTIONS[p["which"]])
    yield from set_switch(q, _switch(p["which"]), p["value"] == "on")


def _toggle_model(state: dict[str, Any], p: Params) -> None:
    if p["which"] not in SWITCH_SECTIONS:
        raise Infeasible(f"settings has no switch {p['which']!r}")
    on = p["value"] == "on"
    state[p["which"]] = on
    if p["which"] == "airplane" and on:  # the app switches the radios off with it
        state["wifi"] = state["bluetooth"] = False


def _brightness_move(q: DomQuery, p: Params) -> Iterator[Action]:
    yield from settings_suite.open_section(q, "display")
    yield from slide(q, tid("brightness"), int(p["brightness"]), lo=(tid("brightness-tick-0"), 0),
                     hi=(tid("brightness-tick-100"), 100), readout=tid("brightness-value"))


def _language_move(q: DomQuery, p: Params) -> Iterator[Action]:
    yield from settings_suite.open_section(q, "language")
    if q.platform is Platform.WEB:
        yield from choose(q, tid("language-select"), p["language"])
    else:
        yield from tap(q, tid(f"lang-{p['language']}"))


def _device_name_move(q: DomQuery, p: Params) -> Iterator[Action]:
    yield from settings_suite.open_section(q, "about")
    yield from fill(q, tid("device-name"), p["device_name"])
    yield from tap(q, tid("save-device-name"))


def _reset_move(q: DomQuery, p: Params) -> Iterator[Action]:
    yield from settings_suite.open_section(q, "system")
    yield from tap(q, tid("reset-settings"))
    yield from tap(q, tid("confirm-ok"))


def _setter(key: str, convert: Callable[[Any], Any] = lambda v: v) -> Model:
    def model(state: dict[str, Any], p: Params) -> None:
        state[key] = convert(p[key])
    return model


def _reset_model(state: dict[str, Any], p: Params) -> None:
    state.update(copy.deepcopy(dict(settings_suite.DEFAULTS)))


# --- notes -------------------------------------------------------------------------------------------

def _create_note_move(q: DomQuery, p: Params) -> Iterator[Action]:
    yield from tap(q, tid("new-note"))
    yield from fill(q, tid("note-title"), p["title"])
    yield from fill(q, tid("note-body"), p["body"])
    yield from tap(q, tid("save-note"))


def _create_note_model(state: dict[str, Any], p: Params) -> None:
    state["notes"].insert(0, {"id": ANY, "title": p["title"].strip(), "body": p["body"].strip(), "pinned": False})


def _edit_note_move(q: DomQuery, p: Params) -> Iterator[Action]:
    yield from tap(q, notes_suite.row(p["note"]))
    yield from fill(q, tid("note-title"), p["title"])
    yield from fill(q, tid("note-body"), p["body"])
    yield from tap(q, tid("save-note"))


def _edit_note_model(state: dict[str, Any], p: Params) -> None:
    _find(state, "notes", "title", p["note"]).update(title=p["title"].strip(), body=p["body"].strip())


def _row_then(row: Callable[[str], str], param: str, *buttons: str) -> Move:
    """Open the list row that `param` names, then tap `buttons` (test ids) in turn."""
    def move(q: DomQuery, p: Params) -> Iterator[Action]:
        yield from tap(q, row(p[param]))
        for button in buttons:
            yield from tap(q, tid(button))
    return move


def _flag_setter(key: str, field_name: str, param: str, flag: str, already: str) -> Model:
    """Set `flag` on the item of `state[key]` that `param` names; Infeasible (`already`) when it is set."""
    def model(state: dict[str, Any], p: Params) -> None:
        item = _find(state, key, field_name, p[param])
        if item[flag]:
            raise Infeasible(already.format(p[param]))
        item[flag] = True
    return model


def _remover(key: str, field_name: str, param: str) -> Model:
    def model(state: dict[str, Any], p: Params) -> None:
        state[key].remove(_find(state, key, field_name, p[param]))
    return model


# --- contacts ----------------------------------------------------------------------------------------

def _add_contact_move(q: DomQuery, p: Params) -> Iterator[Action]:
    yield from contacts_suite.add_contact(q, p["name"], p["phone"], p.get("email") or None)


def _add_contact_model(state: dict[str, Any], p: Params) -> None:
    state["contacts"].append({"id": ANY, "name": " ".join(p["name"].split()), "phone": p["phone"].strip(),
                              "email": (p.get("email") or "").strip(), "favorite": False})


# --- mail --------------------------------------------------------------------------------------------

def _send_move(q: DomQuery, p: Params) -> Iterator[Action]:
    yield from mail_suite.compose(q, p["to"], p["subject"], p["body"])


def _send_model(state: dict[str, Any], p: Params) -> None:
    state["messages"].append({
        "id": ANY, "folder": "sent", "fromName": "Alex Morgan", "from": mail_suite.ME, "to": p["to"].strip(),
        "subject": p["subject"].strip(), "body": p["body"], "date": ANY, "unread": False, "inReplyTo": None,
        "forwardOf": None,
    })


def _open_move(q: DomQuery, p: Params) -> Iterator[Action]:
    yield from mail_suite.open_message(q, subject=p["message"], folder="inbox")


def _mover(folder: str | None) -> Model:
    """Opening an inbox message marks it read; then it moves to `folder` (None: it stays)."""
    def model(state: dict[str, Any], p: Params) -> None:
        message = _find(state, "messages", "subject", p["message"])
        if message["folder"] != "inbox":
            raise Infeasible(f"the message {p['message']!r} is in {message['folder']}, not the inbox")
        message["unread"] = False
        if folder is not None:
            message["folder"] = folder
    return model


def _then_tap(move: Move, testid: str) -> Move:
    def moved(q: DomQuery, p: Params) -> Iterator[Action]:
        yield from move(q, p)
        yield from tap(q, tid(testid))
    return moved


# --- shop --------------------------------------------------------------------------------------------

def _add_to_cart_move(q: DomQuery, p: Params) -> Iterator[Action]:
    yield from shop_suite.search(q, p["product"])
    yield from shop_suite.add_to_cart(q, shop_suite.product_id(q, p["product"]), int(p["quantity"]))


def _add_to_cart_model(state: dict[str, Any], p: Params) -> None:
    product = _find(state, "products", "name", p["product"])
    line = next((c for c in state["cart"] if c["productId"] == product["id"]), None)
    if line is None:
        state["cart"].append({"productId": product["id"], "qty": int(p["quantity"])})
    else:
        line["qty"] += int(p["quantity"])


# --- registries --------------------------------------------------------------------------------------

#: Every implemented function by catalog key ("app.function"). Not here: shop.checkout (it pays: a task for
#: it is refused as unsafe before it could run) and contacts.edit_contact.
IMPLEMENTATIONS: dict[str, Implementation] = {
    "settings.set_toggle": Implementation(_toggle_move, _toggle_model),
    "settings.set_brightness": Implementation(_brightness_move, _setter("brightness", int)),
    "settings.set_language": Implementation(_language_move, _setter("language")),
    "settings.set_device_name": Implementation(_device_name_move, _setter("device_name", str.strip)),
    "settings.reset_settings": Implementation(_reset_move, _reset_model),
    "notes.create_note": Implementation(_create_note_move, _create_note_model),
    "notes.edit_note": Implementation(_edit_note_move, _edit_note_model),
    "notes.pin_note": Implementation(
        _row_then(notes_suite.row, "note", "pin-note"),
        _flag_setter("notes", "title", "note", "pinned", "the note {!r} is pinned already")),
    "notes.delete_note": Implementation(_row_then(notes_suite.row, "note", "delete-note", "confirm-ok"),
                                        _remover("notes", "title", "note")),
    "contacts.add_contact": Implementation(_add_contact_move, _add_contact_model),
    "contacts.favorite_contact": Implementation(
        _row_then(contacts_suite.row, "contact", "favorite-toggle"),
        _flag_setter("contacts", "name", "contact", "favorite", "{} is a favourite already")),
    "contacts.delete_contact": Implementation(_row_then(contacts_suite.row, "contact", "delete-contact", "confirm-ok"),
                                              _remover("contacts", "name", "contact")),
    "mail.send_message": Implementation(_send_move, _send_model),
    "mail.read_message": Implementation(_open_move, _mover(None)),
    "mail.archive_message": Implementation(_then_tap(_open_move, "archive"), _mover("archive")),
    "mail.delete_message": Implementation(_then_tap(_open_move, "delete"), _mover("trash")),
    "shop.add_to_cart": Implementation(_add_to_cart_move, _add_to_cart_model),
}

_SETTINGS_START = {**settings_suite.DEFAULTS, "bluetooth": True, "brightness": 55, "dark_mode": True,
                   "language": "fr", "device_name": "Ana's Phone"}

#: How synthesised tasks of each app start and are checked. Settings starts away from its defaults, so that
#: a reset has something to do.
APP_MODELS: dict[str, AppModel] = {
    "settings": AppModel(_SETTINGS_START, tuple(settings_suite.DEFAULTS), defaults=settings_suite.DEFAULTS),
    "notes": AppModel({"notes": list(notes_suite.SHORT)}, ("notes",), {"notes": "title"},
                      home=tid("new-note"), back=(tid("back"),)),
    "contacts": AppModel({"contacts": list(contacts_suite.SHORT)}, ("contacts",), {"contacts": "name"},
                         home=tid("add-contact"), back=(tid("back"), tid("cancel-edit"))),
    "mail": AppModel({"messages": mail_suite.inbox(), "nextId": 100}, ("messages",), {"messages": "subject"},
                     home=tid("compose"), back=(tid("back"),)),
    "shop": AppModel({"products": list(shop_suite.CATALOGUE), "cart": [], "orders": [], "lastSearch": "",
                      "nextOrder": 1001}, ("cart", "orders"), {"products": "name"},
                     home=tid("search"), back=("#home-link",)),
}

#: Functions that show a value a long-horizon task asks the agent to remember: where the page shows it.
MEMORY_SOURCES: Mapping[str, str] = MappingProxyType({"mail.read_message": tid("msg-body")})


def implementation(key: str) -> Implementation:
    try:
        return IMPLEMENTATIONS[key]
    except KeyError:
        raise NotImplementedFunctionError(
            f"{key} has no reference move and model, so its tasks cannot be run or checked; "
            f"implemented: {', '.join(sorted(IMPLEMENTATIONS))}") from None


def app_model(app: str) -> AppModel:
    try:
        return APP_MODELS[app]
    except KeyError:
        raise NotImplementedFunctionError(f"no state model for app {app!r}; "
                                          f"apps: {', '.join(sorted(APP_MODELS))}") from None


def record_labels(app: str, state: Mapping[str, Any], key: str) -> list[str]:
    """The labels of the records under `key` (note titles, contact names) that name exactly one record."""
    label = app_model(app).labels.get(key)
    if label is None or key not in state:
        return []
    names = [r.get(label) for r in state[key]]
    return [n for n in names if isinstance(n, str) and names.count(n) == 1]


def apply_call(app_state: Mapping[str, Any], call: FunctionCall) -> dict[str, Any]:
    """The state `call` leaves (a new dict); `Infeasible` when it makes no sense or changes nothing."""
    model = app_model(call.app)
    before = copy.deepcopy(dict(app_state))
    after = copy.deepcopy(before)
    implementation(call.key).model(after, call.params)
    if all(after.get(k) == before.get(k) for k in model.compared):
        raise Infeasible(f"{call.key} with {dict(call.params)} changes nothing from this state")
    for key, label in model.labels.items():
        names = [r.get(label) for r in after.get(key, [])]
        if len(names) != len(set(names)):
            raise Infeasible(f"{call.key} would leave two {key} named alike, which no instruction can tell apart")
    return after


# --- checking ----------------------------------------------------------------------------------------

def _matches(want: Any, have: Any) -> bool:
    if want is ANY:
        return True
    if isinstance(want, Mapping):
        return isinstance(have, Mapping) and set(want) == set(have) and all(_matches(want[k], have[k]) for k in want)
    return want == have


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(r, Mapping) and "id" in r for r in value) and bool(value)


def _compare_records(key: str, want: Sequence[Mapping[str, Any]], have: Any) -> CheckResult | None:
    if not isinstance(have, list):
        return failed(f"{key} is {type(have).__name__}, expected a list (is the right app open?)")
    left = list(have)
    for record in sorted(want, key=lambda r: r.get("id") is ANY):  # exact ids first, then new records
        match = next((r for r in left if _matches(record, r)), None)
        if match is None:
            shown = {k: v for k, v in record.items() if v is not ANY}
            return failed(f"no record in {key} matches {shown}; unmatched: {left}")
        left.remove(match)
    return failed(f"{key} holds records no call explains: {left}") if left else None


def compare_state(expected: Mapping[str, Any], actual: Mapping[str, Any], keys: Sequence[str]) -> CheckResult:
    """Pass when the `keys` of `actual` hold what `expected` says (record lists in any order)."""
    for key in keys:
        if key not in actual:
            return failed(f"the state has no {key!r} (is the right app open?)")
        want, have = expected[key], actual[key]
        problem = _compare_records(key, want, have) if _is_records(want) else (
            None if _matches(want, have) else failed(f"{key} is {have!r}, expected {want!r}"))
        if problem is not None:
            return problem
    return passed(f"{', '.join(keys)} as expected")


# --- runnable tasks ----------------------------------------------------------------------------------

def main_screen(q: DomQuery, app: str) -> Iterator[Action]:
    """Back to the app's main screen, where the next call's move starts (a no-op on the web's split views)."""
    model = app_model(app)
    for _ in range(4):
        if model.home is None or q.center(model.home) is not None:
            return
        way = next((selector for selector in model.back if q.center(selector) is not None), None)
        if way is None:
            return
        yield from tap(q, way)


def switch_app(q: DomQuery, app: str) -> Iterator[Action]:
    """Go home and open `app` from the launcher."""
    yield PressHome()
    yield from tap(q, tid(f"app-{app}"))


def _remember(q: DomQuery, source: str, memory: Mapping[str, Any]) -> Iterator[Action]:
    shown = q.text(MEMORY_SOURCES[source]) or ""
    if str(memory["value"]) not in shown:
        raise SolverError(f"the page does not show the {memory['what']} {memory['value']!r} to remember")
    yield TakeNote(content=f"{memory['what']}: {memory['value']}")


def expected_state(task: SynthTask) -> tuple[str, dict[str, Any]]:
    """The app a task ends in and the state its checker expects there."""
    calls = task.calls
    final = calls[-1].app
    if all(c.app == final for c in calls):
        state = dict(task.spec.setup.get("app_state") or {})
    else:
        defaults = app_model(final).defaults
        if defaults is None:
            raise NotImplementedFunctionError(f"a task cannot end in {final}: its defaults are not modelled")
        state = dict(defaults)
    for call in calls:
        if call.app == final:
            state = apply_call(state, call)
    return final, state


def sandbox_task(task: SynthTask) -> SandboxTask:
    """The runnable sandbox task of a synthesised task, registered so `check_spec` finds it by id."""
    moves = [(call, implementation(call.key).move) for call in task.calls]
    final, expected = expected_state(task)
    compared = app_model(final).compared
    memory = task.spec.metadata.get("memory")

    def check(app_state: Mapping[str, Any]) -> CheckResult:
        return compare_state(expected, app_state, compared)

    def solve(q: DomQuery) -> Iterator[Action]:
        app = task.calls[0].app
        for call, move in moves:
            if call.app != app:
                yield from switch_app(q, call.app)
                app = call.app
            yield from main_screen(q, app)
            yield from move(q, call.params)
            if memory and call.key == memory["source"]:
                yield from _remember(q, call.key, memory)
        yield Finished()

    app, _, name = task.id.partition("/")
    runnable = SandboxTask(app=app, name=name, instructions=task.phrasings, check=check, solve=solve,
                           setup=dict(task.spec.setup.get("app_state") or {}), max_steps=task.spec.max_steps)
    register_dynamic(runnable)
    return runnable
