"""Every sandbox task's checker on its own, without a browser: it accepts the task's expected final state and
rejects each one-field change of that state with a verdict that names the field.

The reference runs (test_apps_a/b) show that a checker passes the right work and fails doing nothing; neither
shows that it compares every field (an order checker that ignored the shipping speed passed them all). The
expected final states here are written from each task's instruction, apart from the checkers: the task's setup
plus the edits the instruction asks for. Each app's builder below also lists the one-field edits its checkers
must reject (`uivenus.envs.sandbox.mutations`); what it leaves out is deliberately unchecked (ids and dates the
app picks, the catalogue, the bodies of mail the task does not touch). A new task fails
`test_every_task_has_an_expected_final_state` until it has an entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from uivenus.envs.sandbox import SandboxTask, get_task
from uivenus.envs.sandbox.mutations import (
    Change, Drop, Edit, Insert, MutationError, elements, every_key, mutations, names_field, record_fields, unnoticed,
)
from uivenus.envs.sandbox.tasks import APP_NAMES, CheckResult, tasks_of

#: Every bundled task of every suite.
TASK_IDS = {task.id for app in APP_NAMES for task in tasks_of(app)}


@dataclass(frozen=True)
class Goal:
    """A final state the task's checker must accept, and the one-field edits of it the checker must reject."""

    state: dict[str, Any]
    edits: list[Edit]


Builder = Callable[[SandboxTask], Goal]


def edited(records: Sequence[Mapping[str, Any]], change: Mapping[str, Mapping[str, Any]] | None = None,
           remove: Iterable[str] = (), add: Iterable[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """`records` with the fields of `change` (by id) set, the ids of `remove` gone and `add` appended."""
    change, remove = change or {}, set(remove)
    return [{**r, **change.get(r["id"], {})} for r in records if r["id"] not in remove] + [dict(r) for r in add]


# --- settings: every setting is compared, asked for or not -----------------------------------------

def settings(**values: Any) -> Builder:
    def build(task: SandboxTask) -> Goal:
        state = {**task.setup, **values}
        return Goal(state, every_key(state))
    return build


# --- launcher: the list of apps opened, in order ---------------------------------------------------

def launcher(*opened: str, clear: bool = False) -> Builder:
    def build(task: SandboxTask) -> Goal:
        state = {"opened": [] if clear else [*task.setup["opened"], *opened]}
        edits = [Change(("opened", i)) for i in range(len(state["opened"]))]
        return Goal(state, [*edits, *elements(state, ("opened",), "mail")])
    return build


# --- notes and contacts: every field of every record ------------------------------------------------

def records(key: str, stray: Mapping[str, Any], **how: Any) -> Builder:
    """Every field of every record, the id of each record the setup had (a new one may get any id), the loss
    of each record and a `stray` extra one."""

    def build(task: SandboxTask) -> Goal:
        state = {key: edited(task.setup[key], **how)}
        kept = {r["id"] for r in task.setup[key]}
        keys = sorted({k for r in state[key] for k in r} - {"id"})
        edits = [*record_fields(state, (key,), ("id",), where=lambda r: r["id"] in kept),
                 *record_fields(state, (key,), keys), *elements(state, (key,), stray)]
        return Goal(state, edits)
    return build


def note(nid: str, title: str, body: str, pinned: bool = False) -> dict[str, Any]:
    return {"id": nid, "title": title, "body": body, "pinned": pinned}


def contact(cid: str, name: str, phone: str, email: str = "", favorite: bool = False) -> dict[str, Any]:
    return {"id": cid, "name": name, "phone": phone, "email": email, "favorite": favorite}


def notes(**how: Any) -> Builder:
    return records("notes", note("n99", "Stray", "a note nobody asked for"), **how)


def contacts(**how: Any) -> Builder:
    return records("contacts", contact("c99", "Stray Person", "555-9999"), **how)


# --- calendar: title, date, time and location of every event ----------------------------------------

def calendar(**how: Any) -> Builder:
    stray = {"id": "e99", "title": "Stray", "date": "2026-11-17", "time": "11:00", "location": ""}

    def build(task: SandboxTask) -> Goal:
        state = {**task.setup, "events": edited(task.setup["events"], **how)}
        edits = [*record_fields(state, ("events",), ("title", "date", "time", "location")),
                 *elements(state, ("events",), stray)]
        return Goal(state, edits)
    return build


def event(eid: str, title: str, date: str, time: str, location: str = "") -> dict[str, Any]:
    return {"id": eid, "title": title, "date": date, "time": time, "location": location}


# --- files: where every item is (its name, its folder, file or folder) ------------------------------

def where_is(items: Sequence[Mapping[str, Any]], index: int) -> str:
    """The full path of `items[index]` ("Documents/Contracts/lease.pdf"), the words the tree checker uses."""
    by_id = {i["id"]: i for i in items}
    item, parts = items[index], []
    while True:
        parts.append(item["name"])
        if item["parent"] == "root":
            return "/".join(reversed(parts))
        item = by_id[item["parent"]]


def files(**how: Any) -> Builder:
    stray = {"id": "n99", "name": "stray.txt", "type": "file", "parent": "docs", "size": 1, "modified": "2026-11-12"}

    def build(task: SandboxTask) -> Goal:
        items = edited(task.setup["items"], **how)
        state = {**task.setup, "items": items}
        edits: list[Edit] = []
        for i, item in enumerate(items):
            named = (where_is(items, i),)
            edits += [Change(("items", i, "name"), names=named), Change(("items", i, "parent"), names=named),
                      Change(("items", i, "type"), "file" if item["type"] == "folder" else "folder", names=named)]
        return Goal(state, [*edits, *elements(state, ("items",), stray)])
    return build


def folder(fid: str, name: str, parent: str) -> dict[str, Any]:
    return {"id": fid, "name": name, "type": "folder", "parent": parent, "size": 0, "modified": "2026-11-16"}


# --- mail: where every message is; the one sent message's address, subject and body -----------------

ME = "alex.morgan@uivenus.test"


def sent(to: str, subject: str, body: str, mid: str = "m100") -> dict[str, Any]:
    return {"id": mid, "folder": "sent", "fromName": "Alex Morgan", "from": ME, "to": to, "subject": subject,
            "body": body, "date": "2026-11-16T10:00", "unread": False}


def mail(*, send: Mapping[str, Any] | None = None, move: Mapping[str, str] | None = None,
         may_vanish: Iterable[str] = ()) -> Builder:
    """The mailbox after sending `send` and moving messages (`move`: id -> folder); `may_vanish` may also be
    deleted outright (the task accepts that as well as a move to trash)."""
    vanish = set(may_vanish)

    def build(task: SandboxTask) -> Goal:
        old = task.setup["messages"]
        messages = edited(old, change={mid: {"folder": f, "unread": False} for mid, f in (move or {}).items()},
                          add=[send] if send else [])
        state = {**task.setup, "messages": messages}
        kept = {m["id"] for m in old}
        another = sent("stray@example.com", "Stray", "a message nobody asked for", mid="m101")
        edits = [*record_fields(state, ("messages",), ("folder",)),
                 *record_fields(state, ("messages",), ("id",), where=lambda m: m["id"] in kept - vanish),
                 *record_fields(state, ("messages",), ("to", "subject", "body"), where=lambda m: m["id"] not in kept),
                 *elements(state, ("messages",), another, where=lambda m: m["id"] not in vanish)]
        return Goal(state, edits)
    return build


# --- shop: the cart's lines; the new order's items, card, name, address, speed and status ---------------

def shop(*, cart: Mapping[str, int], order: Mapping[str, Any] | None = None, search: str | None = None) -> Builder:
    """The shop with `cart` (product id -> quantity) and, when given, one new paid `order` (items, card, name,
    address, shipping); `search` is the last search, which the task checks."""

    def build(task: SandboxTask) -> Goal:
        setup = task.setup
        products = {p["id"]: p for p in setup["products"]}
        orders = [dict(o) for o in setup["orders"]]
        if order is not None:
            orders.append(_order(str(setup["nextOrder"]), products, **order))
        state = {**setup, "cart": [{"productId": pid, "qty": qty} for pid, qty in cart.items()], "orders": orders,
                 "nextOrder": setup["nextOrder"] + (order is not None)}
        if search is not None:
            state["lastSearch"] = search
        line = {"productId": "p5", "qty": 1}
        edits: list[Edit] = [*record_fields(state, ("cart",), ("productId", "qty"), names=("cart",)),
                             *elements(state, ("cart",), line)]
        another = {**(orders[-1] if order is not None else _order("1999", products, {"p5": 1}, "4242", "Stray",
                                                                   "1 Nowhere Lane", "standard")), "id": "1999"}
        if order is not None:
            new = len(orders) - 1
            items = ("orders", new, "items")
            edits += [Change(("orders", new, key)) for key in ("cardLast4", "name", "address", "shipping", "status")]
            edits += record_fields(state, items, ("productId", "qty"), names=("items",))
            edits += elements(state, items, {"productId": "p5", "name": products["p5"]["name"], "qty": 1,
                                             "price": products["p5"]["price"]})
            edits.append(Drop(("orders", new)))
        edits.append(Insert(("orders",), another))
        if search is not None:
            edits.append(Change(("lastSearch",)))
        return Goal(state, edits)
    return build


def _order(oid: str, products: Mapping[str, Mapping[str, Any]], items: Mapping[str, int], card: str, name: str,
           address: str, shipping: str) -> dict[str, Any]:
    lines = [{"productId": pid, "name": products[pid]["name"], "qty": qty, "price": products[pid]["price"]}
             for pid, qty in items.items()]
    subtotal, cost = sum(li["qty"] * li["price"] for li in lines), {"standard": 0, "express": 990}[shipping]
    return {"id": oid, "items": lines, "subtotal": subtotal, "shipping": shipping, "shippingCost": cost,
            "total": subtotal + cost, "name": name, "address": address, "cardLast4": card, "status": "paid",
            "placedAt": "2026-11-16T10:00"}


def paid(items: Mapping[str, int], card: str, name: str, address: str, shipping: str) -> dict[str, Any]:
    return {"items": items, "card": card, "name": name, "address": address, "shipping": shipping}


# --- the expected final state of every task, from its instruction ------------------------------------

GOALS: dict[str, Builder] = {
    "settings/wifi_off_bluetooth_on": settings(wifi=False, bluetooth=True),
    "settings/airplane_keep_bluetooth": settings(airplane=True, wifi=False, bluetooth=True),
    "settings/brightness_dark_mode": settings(brightness=30, dark_mode=True),
    "settings/notifications_off_german": settings(notifications=False, language="de"),
    "settings/rename_device": settings(device_name="Kitchen Tablet"),
    "settings/reset_all": settings(wifi=True, bluetooth=False, airplane=False, notifications=True, brightness=70,
                                   dark_mode=False, language="en", device_name="Venus Phone"),

    "launcher/open_notes": launcher("notes"),
    "launcher/open_two_apps": launcher("settings", "contacts"),
    "launcher/search_open_calendar": launcher("calendar"),
    "launcher/reopen_recent": launcher("settings"),
    "launcher/clear_recents": launcher(clear=True),

    "notes/create_note": notes(add=[note("n5", "Packing list", "passport, charger, sunscreen")]),
    "notes/edit_note": notes(change={"n2": {"body": "Meet Thursday at 7pm at Lena's"}}),
    "notes/pin_note": notes(change={"n13": {"pinned": True}}),
    "notes/find_and_rename": notes(change={"n7": {"title": "Gym locker"}}),
    "notes/delete_note": notes(remove=["n1"]),

    "contacts/add_contact": contacts(add=[contact("c6", "Ana Lima", "555-0101")]),
    "contacts/add_contact_with_email": contacts(
        add=[contact("c6", "Rafael Souza", "+1 (555) 014-7788", "rafael.souza@example.com")]),
    "contacts/edit_phone": contacts(change={"c4": {"phone": "555-0199"}}),
    "contacts/favorite_contact": contacts(change={"c17": {"favorite": True}}),
    "contacts/delete_contact": contacts(remove=["c1"]),

    "calendar/create_dentist": calendar(add=[event("e100", "Dentist", "2026-12-03", "09:30")]),
    "calendar/team_offsite": calendar(add=[event("e100", "Team offsite", "2026-11-20", "10:00", "Harbor Hall")]),
    "calendar/yoga_later": calendar(change={"e2": {"time": "19:15"}}),
    "calendar/delete_car_service": calendar(remove=["e4"]),
    "calendar/move_recital": calendar(change={"e7": {"date": "2026-12-14"}}),

    "files/rename_report": files(change={"f1": {"name": "final.txt"}}),
    "files/delete_old_invoice": files(remove=["f9"]),
    "files/new_folder_taxes": files(add=[folder("n100", "Taxes 2026", "docs")]),
    "files/move_sunset": files(change={"f12": {"parent": "photos"}}),
    "files/file_receipt": files(change={"f10": {"parent": "n100"}}, add=[folder("n100", "Receipts", "docs")]),

    "mail/send_lunch": mail(send=sent("ana@example.com", "Lunch", "Are you free at noon on Friday?")),
    "mail/reply_budget": mail(send=sent("marco.rossi@example.com", "Re: Quarterly budget",
                                        "Thanks, I will review it today.")),
    "mail/archive_newsletter": mail(move={"m3": "archive"}),
    "mail/delete_digest": mail(move={"m6": "trash"}, may_vanish=["m6"]),
    "mail/share_code": mail(send=sent("lee@example.com", "Code", "The code is 731846")),

    "shop/buy_blue_mugs": shop(cart={}, order=paid({"p1": 2}, "4242", "Ana Lima", "12 Harbor St, Lisbon", "standard")),
    "shop/cheapest_headphones": shop(cart={"p11": 1, "p4": 1}, search="headphones"),
    "shop/add_batteries": shop(cart={"p9": 1, "p7": 3}),
    "shop/tidy_cart": shop(cart={"p9": 1, "p10": 1}),
    "shop/express_checkout": shop(cart={}, order=paid({"p11": 1, "p12": 1}, "4444", "Sam Lee", "9 Elm Road, Porto",
                                                      "express")),
}


def _goal(task_id: str) -> Goal:
    return GOALS[task_id](get_task(task_id))


def test_every_task_has_an_expected_final_state() -> None:
    assert set(GOALS) == TASK_IDS, "give each new sandbox task its expected final state in GOALS"


@pytest.mark.parametrize("task_id", sorted(GOALS))
def test_the_checker_accepts_the_expected_final_state_and_rejects_the_setup(task_id: str) -> None:
    task, goal = get_task(task_id), _goal(task_id)
    result = task.check(goal.state)
    assert result.passed, result.reason
    assert not task.check(task.setup).passed


@pytest.mark.parametrize("task_id", sorted(GOALS))
def test_the_checker_rejects_every_one_field_change_and_names_the_field(task_id: str) -> None:
    goal = _goal(task_id)
    assert goal.edits
    findings = unnoticed(get_task(task_id).check, goal.state, goal.edits)
    assert not findings, "\n".join(map(str, findings))


# --- the helper itself ---------------------------------------------------------------------------------

ORDER = {"orders": [{"id": "7", "items": [{"productId": "p1", "qty": 2}], "shipping": "standard", "paid": True}]}


def test_mutations_change_one_field_of_a_copy_and_say_what_must_be_named() -> None:
    edits = [Change(("orders", 0, "shipping")), Change(("orders", 0, "paid")), Change(("orders", 0, "items", 0, "qty")),
             Change(("orders", 0, "shipping"), "express", names=("speed",)), Drop(("orders", 0, "items", 0)),
             Insert(("orders",), {"id": "8", "items": []}), Change(("orders", 0, "id"))]
    found = list(mutations(ORDER, edits))
    assert [m.after for m in found[:4]] == ["~dradnats", False, 3, "express"]
    assert found[0].state["orders"][0]["shipping"] == "~dradnats" and ORDER["orders"][0]["shipping"] == "standard"
    assert [m.names for m in found] == [("shipping",), ("paid",), ("qty",), ("speed",), ("items", "item"),
                                         ("orders", "order", "8"), ("id", "7")]
    assert str(found[0]) == "orders[0].shipping: 'standard' -> '~dradnats'"
    assert names_field("order #7 has card_last4 '1111'", ["cardLast4"]) and not names_field("wrong card", ["cardLast4"])


def test_edits_that_change_nothing_or_miss_are_errors() -> None:
    with pytest.raises(MutationError, match="changes nothing"):
        list(mutations(ORDER, [Change(("orders", 0, "shipping"), "standard")]))
    with pytest.raises(MutationError, match=r"nothing at orders\[3\]"):
        list(mutations(ORDER, [Drop(("orders", 3))]))
    with pytest.raises(MutationError, match="no generic change"):
        list(mutations({"a": None}, [Change(("a",))]))


def test_unnoticed_reports_a_lax_checker_a_mute_one_and_a_crash() -> None:
    def lax(state):  # compares the items but ignores the shipping speed, like the bug this guards against
        order = state["orders"][0]
        if order["items"] != ORDER["orders"][0]["items"]:
            return CheckResult(False, "wrong order")  # fails, but never says which field
        return CheckResult(int(order["paid"]) == 1, f"paid is {order['paid']}")

    edits = [Change(("orders", 0, "shipping")), Change(("orders", 0, "items", 0, "qty")), Change(("orders", 0, "paid")),
             Change(("orders", 0, "paid"), {"not": "a flag"})]
    problems = [f.problem.split(" ")[0] for f in unnoticed(lax, ORDER, edits)]
    assert problems == ["passed", "failed", "the"]  # shipping passed; qty unnamed; a dict for 'paid' crashed it
    assert "rejects the unmutated state" in str(unnoticed(lax, {"orders": [{**ORDER["orders"][0], "items": []}]},
                                                          edits)[0])
