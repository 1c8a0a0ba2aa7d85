"""Notes tasks: create, edit, pin, find-and-rename and delete notes.

Each checker compares every note with the setup, so edits to the wrong note, duplicates and
collateral deletions fail as surely as doing nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from uivenus.actions.space import Action, Finished
from uivenus.envs.sandbox.solving import fill, records_task, tap, tid
from uivenus.envs.sandbox.tasks import DomQuery, register


def _note(nid: str, title: str, body: str, pinned: bool = False) -> dict[str, Any]:
    return {"id": nid, "title": title, "body": body, "pinned": pinned}


#: A short notebook (fits one screen) and a long one (the later notes lie below the fold on both layouts).
SHORT = (
    _note("n1", "Groceries", "Milk, eggs, spinach, coffee beans, rye bread"),
    _note("n2", "Book club", "Next meeting: The Remains of the Day. Bring snacks."),
    _note("n3", "Wi-Fi password", "Guest network HomeNet-Guest, password sunflower42", pinned=True),
    _note("n4", "Gift ideas", "Mum: pottery class. Leo: climbing shoes (size 42)."),
)
LONG = (
    _note("n1", "Weekly plan", "Mon gym, Tue Spanish, Wed late shift, Fri dinner with Priya", pinned=True),
    _note("n2", "Recipes to try", "Shakshuka, miso salmon, lemon risotto"),
    _note("n3", "Car service", "Oil change due at 45,000 km, garage on Elm Street"),
    _note("n4", "Podcast list", "Hardcore History, 99% Invisible, Radiolab"),
    _note("n5", "Birthday party", "Saturday 3pm, balloons, cake from Rosa's bakery"),
    _note("n6", "Garden", "Plant tomatoes after the last frost, water basil daily"),
    _note("n7", "Misc", "Gym locker code 4412, top row near the showers"),
    _note("n8", "Reading list", "Piranesi, The Overstory, Braiding Sweetgrass"),
    _note("n9", "Work ideas", "Automate the weekly report, ask about the design review"),
    _note("n10", "Travel Lisbon", "Tram 28 early morning, Time Out market, Belem tower"),
    _note("n11", "Bills", "Electricity on the 5th, internet on the 12th"),
    _note("n12", "Movie night", "Spirited Away or Paddington 2"),
    _note("n13", "Dentist", "Dr. Okafor, Tuesday 14 May at 10:30"),
)


def row(title: str) -> str:
    return tid("note-row", title=title)


_task = functools.partial(records_task, app="notes", key="notes", what="note")


def solve_create(q: DomQuery) -> Iterator[Action]:
    yield from tap(q, tid("new-note"))
    yield from fill(q, tid("note-title"), "Packing list")
    yield from fill(q, tid("note-body"), "passport, charger, sunscreen")
    yield from tap(q, tid("save-note"))
    yield Finished()


def solve_edit(q: DomQuery) -> Iterator[Action]:
    yield from tap(q, row("Book club"))
    yield from fill(q, tid("note-body"), "Meet Thursday at 7pm at Lena's")
    yield from tap(q, tid("save-note"))
    yield Finished()


def solve_pin(q: DomQuery) -> Iterator[Action]:
    yield from tap(q, row("Dentist"))  # the last note: scrolled into view first
    yield from tap(q, tid("pin-note"))
    yield Finished()


def solve_rename(q: DomQuery) -> Iterator[Action]:
    yield from fill(q, tid("search"), "locker")
    yield from tap(q, tid("note-row"))  # the one note the search leaves
    yield from fill(q, tid("note-title"), "Gym locker")
    yield from tap(q, tid("save-note"))
    yield Finished()


def solve_delete(q: DomQuery) -> Iterator[Action]:
    yield from tap(q, row("Groceries"))
    yield from tap(q, tid("delete-note"))
    yield from tap(q, tid("confirm-ok"))  # consequential: the note is gone for good
    yield Finished()


register(
    _task(
        "create_note",
        ("Create a note titled \"Packing list\" with the text \"passport, charger, sunscreen\".",
         "Add a new note called Packing list that says: passport, charger, sunscreen.",
         "Write a new note. Title: Packing list. Body: passport, charger, sunscreen."),
        SHORT, solve_create,
        added=[{"title": "Packing list", "body": "passport, charger, sunscreen", "pinned": False}],
    ),
    _task(
        "edit_note",
        ("Change the text of the \"Book club\" note to \"Meet Thursday at 7pm at Lena's\".",
         "Update the Book club note so that it only says: Meet Thursday at 7pm at Lena's",
         "Replace the body of my Book club note with \"Meet Thursday at 7pm at Lena's\" and save it."),
        SHORT, solve_edit,
        changed={"n2": {"body": "Meet Thursday at 7pm at Lena's"}},
    ),
    _task(
        "pin_note",
        ("Pin the note \"Dentist\".",
         "Pin my Dentist note so it stays at the top of the list.",
         "Find the note about the dentist appointment and pin it."),
        LONG, solve_pin,
        changed={"n13": {"pinned": True}},
    ),
    _task(
        "find_and_rename",
        ("Find the note that mentions my gym locker code and rename it to \"Gym locker\".",
         "Search the notes for the locker code and change that note's title to Gym locker.",
         "One of my notes holds the locker code; give it the title \"Gym locker\"."),
        LONG, solve_rename,
        changed={"n7": {"title": "Gym locker"}},
    ),
    _task(
        "delete_note",
        ("Delete the note \"Groceries\".",
         "Remove my Groceries note; keep all the other notes.",
         "I don't need the Groceries list anymore, delete that note."),
        SHORT, solve_delete,
        removed=["n1"],
    ),
)
