"""Launcher tasks: open apps from the home screen (icons, search, the Recent row) and clear the Recent list.

The launcher records every app opened from it in `opened`; its checkers also require ending back on
the home screen, since another app's page has no `opened` to read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from uivenus.actions.space import Action, Finished, PressHome
from uivenus.envs.sandbox.solving import expect_fields, fill, tap, tid
from uivenus.envs.sandbox.tasks import CheckResult, DomQuery, SandboxTask, register


def _task(name: str, instructions: tuple[str, ...], opened: Sequence[str], expected: Sequence[str],
          solve) -> SandboxTask:
    want = {"opened": list(expected)}

    def check(state: Mapping[str, Any]) -> CheckResult:
        return expect_fields(state, want, "the home screen")

    return SandboxTask(app="launcher", name=name, instructions=instructions, setup={"opened": list(opened)},
                       check=check, solve=solve)


def open_app(q: DomQuery, app: str) -> Iterator[Action]:
    """Tap the app's icon, then go back to the home screen."""
    yield from tap(q, tid(f"app-{app}"))
    yield PressHome()


def solve_open_notes(q: DomQuery) -> Iterator[Action]:
    yield from open_app(q, "notes")
    yield Finished()


def solve_open_two(q: DomQuery) -> Iterator[Action]:
    yield from open_app(q, "settings")
    yield from open_app(q, "contacts")
    yield Finished()


def solve_search_calendar(q: DomQuery) -> Iterator[Action]:
    yield from fill(q, tid("app-search"), "cal")
    yield from open_app(q, "calendar")  # the only icon the search leaves
    yield Finished()


def solve_reopen_recent(q: DomQuery) -> Iterator[Action]:
    yield from tap(q, tid("recent-app"))  # the Recent row starts with the most recent app
    yield PressHome()
    yield Finished()


def solve_clear_recents(q: DomQuery) -> Iterator[Action]:
    yield from tap(q, tid("clear-recents"))
    yield from tap(q, tid("confirm-ok"))  # consequential: the history is erased
    yield Finished()


register(
    _task(
        "open_notes",
        ("Open the Notes app, then return to the home screen.",
         "Launch Notes from the home screen and go back home afterwards.",
         "Start the Notes app and then press Home."),
        [], ["notes"], solve_open_notes,
    ),
    _task(
        "open_two_apps",
        ("Open Settings, go back to the home screen, then open Contacts and return home.",
         "Launch Settings and then Contacts, returning to the home screen after each.",
         "From the home screen, open Settings, come back, open Contacts, and come back again."),
        ["mail"], ["mail", "settings", "contacts"], solve_open_two,
    ),
    _task(
        "search_open_calendar",
        ("Use the app search to find Calendar, open it, then go back to the home screen.",
         "Search the home screen for \"cal\", open the Calendar app it finds, and return home.",
         "Find the Calendar app with the search box, start it, then press Home."),
        ["files"], ["files", "calendar"], solve_search_calendar,
    ),
    _task(
        "reopen_recent",
        ("Reopen the app I used most recently, then return to the home screen.",
         "Open the first app in the Recent list again and go back home.",
         "Go back into my last used app from the home screen, then come back."),
        ["mail", "contacts", "notes", "settings"], ["mail", "contacts", "notes", "settings", "settings"],
        solve_reopen_recent,
    ),
    _task(
        "clear_recents",
        ("Clear the list of recently used apps.",
         "Erase the Recent apps history on the home screen.",
         "Remove every app from the Recent list."),
        ["shop", "mail", "notes"], [], solve_clear_recents,
    ),
)
