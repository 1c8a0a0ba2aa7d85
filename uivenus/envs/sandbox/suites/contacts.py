"""Contacts tasks: add (the form validates: a phone number is required), edit, favourite and delete.

Each checker compares every contact with the setup, so a wrong edit, a duplicate or a collateral
deletion fails as surely as doing nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from uivenus.actions.space import Action, Finished
from uivenus.envs.sandbox.solving import fill, records_task, tap, tid
from uivenus.envs.sandbox.tasks import DomQuery, register


def _contact(cid: str, name: str, phone: str, email: str = "", favorite: bool = False) -> dict[str, Any]:
    return {"id": cid, "name": name, "phone": phone, "email": email, "favorite": favorite}


#: A short address book and a long one (its later letters lie below the fold on both layouts).
SHORT = (
    _contact("c1", "Bruno Costa", "555-0102", "bruno@example.com"),
    _contact("c2", "Carla Mendes", "555-0103", favorite=True),
    _contact("c3", "Diego Alves", "555-0104", "diego.alves@example.org"),
    _contact("c4", "Elena Petrova", "+44 20 7946 0958", "elena@example.co.uk", favorite=True),
    _contact("c5", "Farah Haddad", "555-0188", "farah.h@example.net"),
)
LONG = (
    _contact("c1", "Aiko Tanaka", "555-0111", "aiko@example.jp", favorite=True),
    _contact("c2", "Bruno Costa", "555-0102", "bruno@example.com"),
    _contact("c3", "Carla Mendes", "555-0103"),
    _contact("c4", "Diego Alves", "555-0104", "diego.alves@example.org"),
    _contact("c5", "Elena Petrova", "+44 20 7946 0958", "elena@example.co.uk"),
    _contact("c6", "Farah Haddad", "555-0188", "farah.h@example.net"),
    _contact("c7", "Gustavo Reis", "555-0121"),
    _contact("c8", "Hannah Becker", "555-0122", "hannah.becker@example.de"),
    _contact("c9", "Ivan Horvat", "555-0123"),
    _contact("c10", "Julia Nowak", "555-0124", "julia@example.pl"),
    _contact("c11", "Kwame Mensah", "555-0125"),
    _contact("c12", "Lucia Romano", "555-0126", "lucia.romano@example.it"),
    _contact("c13", "Mateo Garcia", "555-0127"),
    _contact("c14", "Nadia Rahman", "555-0128"),
    _contact("c15", "Oscar Lindqvist", "555-0129", "oscar@example.se"),
    _contact("c16", "Priya Nair", "555-0130"),
    _contact("c17", "Tomás Ruiz", "555-0131", "tomas.ruiz@example.es"),
    _contact("c18", "Wen Zhao", "555-0132"),
)


def row(name: str) -> str:
    return tid("contact-row", name=name)


_task = functools.partial(records_task, app="contacts", key="contacts", what="contact")


def add_contact(q: DomQuery, name: str, phone: str, email: str | None = None) -> Iterator[Action]:
    """Open the form, fill it in, save (Save stays disabled until name and phone are valid)."""
    yield from tap(q, tid("add-contact"))
    yield from fill(q, tid("contact-name"), name)
    yield from fill(q, tid("contact-phone"), phone)
    if email:
        yield from fill(q, tid("contact-email"), email)
    yield from tap(q, tid("save-contact"))


def solve_add(q: DomQuery) -> Iterator[Action]:
    yield from add_contact(q, "Ana Lima", "555-0101")
    yield Finished()


def solve_add_with_email(q: DomQuery) -> Iterator[Action]:
    yield from add_contact(q, "Rafael Souza", "+1 (555) 014-7788", "rafael.souza@example.com")
    yield Finished()


def solve_edit_phone(q: DomQuery) -> Iterator[Action]:
    yield from fill(q, tid("search"), "Diego")
    yield from tap(q, row("Diego Alves"))
    yield from tap(q, tid("edit-contact"))
    yield from fill(q, tid("contact-phone"), "555-0199")
    yield from tap(q, tid("save-contact"))
    yield Finished()


def solve_favorite(q: DomQuery) -> Iterator[Action]:
    yield from tap(q, row("Tomás Ruiz"))  # near the end of the list: scrolled into view first
    yield from tap(q, tid("favorite-toggle"))
    yield Finished()


def solve_delete(q: DomQuery) -> Iterator[Action]:
    yield from tap(q, row("Bruno Costa"))
    yield from tap(q, tid("delete-contact"))
    yield from tap(q, tid("confirm-ok"))  # consequential: the contact is removed for good
    yield Finished()


register(
    _task(
        "add_contact",
        ("Add a contact named Ana Lima with the number 555-0101.",
         "Create a new contact: Ana Lima, phone 555-0101.",
         "Save Ana Lima's number, 555-0101, to my contacts."),
        SHORT, solve_add,
        added=[{"name": "Ana Lima", "phone": "555-0101", "email": "", "favorite": False}],
    ),
    _task(
        "add_contact_with_email",
        ("Add Rafael Souza to my contacts with phone +1 (555) 014-7788 and email rafael.souza@example.com.",
         "New contact: Rafael Souza, +1 (555) 014-7788, rafael.souza@example.com.",
         "Create a contact for Rafael Souza (phone +1 (555) 014-7788, email rafael.souza@example.com)."),
        SHORT, solve_add_with_email,
        added=[{"name": "Rafael Souza", "phone": "+1 (555) 014-7788", "email": "rafael.souza@example.com",
                "favorite": False}],
    ),
    _task(
        "edit_phone",
        ("Change Diego Alves's phone number to 555-0199.",
         "Diego Alves has a new number, 555-0199; update his contact.",
         "Update the phone number of the contact Diego Alves to 555-0199."),
        LONG, solve_edit_phone,
        changed={"c4": {"phone": "555-0199"}},
    ),
    _task(
        "favorite_contact",
        ("Mark Tomás Ruiz as a favourite.",
         "Add Tomás Ruiz to my favourite contacts.",
         "Star the contact Tomás Ruiz so he shows up under Favorites."),
        LONG, solve_favorite,
        changed={"c17": {"favorite": True}},
    ),
    _task(
        "delete_contact",
        ("Delete Bruno Costa from my contacts.",
         "Remove the contact Bruno Costa; keep everyone else.",
         "I no longer need Bruno Costa's number, delete his contact."),
        SHORT, solve_delete,
        removed=["c1"],
    ),
)
