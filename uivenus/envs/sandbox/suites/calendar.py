"""Calendar tasks: create events (with and without a location), move one in time or to another day, delete one.

Checkers compare every event (title, date, time, location) with what it should be, so an extra event,
a wrong day or a deleted namesake fails.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from uivenus.actions.space import Action, Finished
from uivenus.envs.sandbox.solving import SolverError, failed, fill, passed, tap, tid
from uivenus.envs.sandbox.tasks import CheckResult, DomQuery, SandboxTask, register

#: How many months a solver pages through looking for a day before giving up.
MONTH_LIMIT = 12


def event(id: str, title: str, date: str, time: str, location: str = "") -> dict[str, Any]:
    return {"id": id, "title": title, "date": date, "time": time, "location": location}


#: The events most tasks start from.
EVENTS = (
    event("e1", "Team standup", "2026-11-16", "09:00", "Room 4B"),
    event("e2", "Yoga class", "2026-11-18", "18:30", "Lotus Studio"),
    event("e3", "Lunch with Priya", "2026-11-19", "12:30", "Ramen Ya"),
    event("e4", "Car service", "2026-11-24", "08:00", "AutoFix Garage"),
    event("e5", "Project review", "2026-11-26", "14:00"),
    event("e6", "Mom's birthday dinner", "2026-11-28", "19:00", "Casa Lima"),
    event("e7", "Piano recital", "2026-12-12", "17:00", "City Hall"),
    event("e8", "Flight to Berlin", "2026-12-20", "07:15", "Lisbon Airport"),
)
FIELDS = ("title", "date", "time", "location")


def _key(e: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(" ".join(str(e.get(f, "")).split()) for f in FIELDS)


def _expect_events(state: Mapping[str, Any], want: Sequence[Mapping[str, Any]], done: str) -> CheckResult:
    have = sorted(_key(e) for e in state.get("events", []))
    need = sorted(_key(e) for e in want)
    if have == need:
        return passed(done)
    missing = [dict(zip(FIELDS, k)) for k in need if k not in have]
    extra = [dict(zip(FIELDS, k)) for k in have if k not in need]
    return failed(f"the events differ: missing {missing or 'nothing'}, unexpected {extra or 'nothing'}")


# --- solving ------------------------------------------------------------------------------------------

def open_day(q: DomQuery, date: str) -> Iterator[Action]:
    """Page the month grid to `date`'s month (forwards or backwards) and select that day."""
    cell = tid("day", date=date)
    for _ in range(MONTH_LIMIT):
        if q.exists(cell):
            break
        yield from tap(q, tid("next-month" if date[:7] > shown_month(q) else "prev-month"))
    else:
        raise SolverError(f"the calendar never showed {date}")
    yield from tap(q, f"{cell} .num")  # the day number: the event chips beside it open their events


def shown_month(q: DomQuery) -> str:
    """The YYYY-MM of the month grid on screen, read from its title ("November 2026")."""
    title = (q.text("#month-title") or "").strip()
    try:
        return datetime.strptime(title, "%B %Y").strftime("%Y-%m")
    except ValueError:
        raise SolverError(f"cannot read the month from the calendar title {title!r}") from None


def open_event(q: DomQuery, title: str, date: str) -> Iterator[Action]:
    yield from open_day(q, date)
    yield from tap(q, tid("event", title=title))


def save_event(q: DomQuery, *, title: str | None = None, date: str | None = None, time: str | None = None,
               location: str | None = None) -> Iterator[Action]:
    """Fill the fields given (others stay as they are) and press Save."""
    for field, value in (("ev-title", title), ("ev-date", date), ("ev-time", time), ("ev-location", location)):
        if value is not None:
            yield from fill(q, tid(field), value)
    yield from tap(q, tid("ev-save"))


def solve_dentist(q: DomQuery) -> Iterator[Action]:
    yield from tap(q, tid("new-event"))
    yield from save_event(q, title="Dentist", date="2026-12-03", time="09:30")
    yield Finished()


def solve_offsite(q: DomQuery) -> Iterator[Action]:
    yield from open_day(q, "2026-11-20")
    yield from tap(q, tid("new-event"))  # the form starts on the selected day
    yield from save_event(q, title="Team offsite", time="10:00", location="Harbor Hall")
    yield Finished()


def solve_yoga_later(q: DomQuery) -> Iterator[Action]:
    yield from open_event(q, "Yoga class", "2026-11-18")
    yield from save_event(q, time="19:15")
    yield Finished()


def solve_delete_car_service(q: DomQuery) -> Iterator[Action]:
    yield from open_event(q, "Car service", "2026-11-24")
    yield from tap(q, tid("ev-delete"))
    yield from tap(q, tid("delete-ok"))  # consequential: the event is gone
    yield Finished()


def solve_recital(q: DomQuery) -> Iterator[Action]:
    yield from open_event(q, "Piano recital", "2026-12-12")
    yield from save_event(q, date="2026-12-14")
    yield Finished()


# --- the tasks ---------------------------------------------------------------------------------------

def _task(name: str, instructions: tuple[str, ...], events: Sequence[Mapping[str, Any]],
          want: Sequence[Mapping[str, Any]], done: str, solve, today: str = "2026-11-16") -> SandboxTask:
    return SandboxTask(app="calendar", name=name, instructions=instructions,
                       setup={"today": today, "events": [dict(e) for e in events], "nextId": 100},
                       check=lambda s: _expect_events(s, want, done), solve=solve)


def _replace(events: Sequence[Mapping[str, Any]], id: str, **changes: str) -> list[Mapping[str, Any]]:
    return [{**e, **changes} if e["id"] == id else e for e in events]


SECOND_SERVICE = event("e9", "Car service", "2026-12-22", "08:00", "AutoFix Garage")

register(
    _task(
        "create_dentist",
        ("Create an event \"Dentist\" on 2026-12-03 at 09:30.",
         "Add a Dentist appointment to my calendar for December 3, 2026 at 9:30.",
         "Put \"Dentist\" in the calendar: 3 Dec 2026, 09:30."),
        EVENTS, [*EVENTS, event("new", "Dentist", "2026-12-03", "09:30")], "Dentist is on 2026-12-03 at 09:30",
        solve_dentist,
    ),
    _task(
        "team_offsite",
        ("Add an event \"Team offsite\" on November 20, 2026 at 10:00, location Harbor Hall.",
         "Schedule the Team offsite for 2026-11-20 at 10:00 at Harbor Hall.",
         "Create \"Team offsite\" on Friday Nov 20 (2026), 10:00, at Harbor Hall."),
        EVENTS, [*EVENTS, event("new", "Team offsite", "2026-11-20", "10:00", "Harbor Hall")],
        "Team offsite is on 2026-11-20 at 10:00 at Harbor Hall",
        solve_offsite,
    ),
    _task(
        "yoga_later",
        ("Move my yoga class on November 18 to 19:15.",
         "Change the time of Yoga class on 2026-11-18 to 19:15.",
         "My yoga class on Nov 18 now starts at 19:15; update the event."),
        EVENTS, _replace(EVENTS, "e2", time="19:15"), "Yoga class on 2026-11-18 starts at 19:15",
        solve_yoga_later,
    ),
    _task(
        "delete_car_service",
        ("Delete the Car service event on November 24.",
         "Remove the 2026-11-24 Car service appointment from my calendar (keep the one in December).",
         "Cancel the car service on Nov 24: delete that event."),
        [*EVENTS, SECOND_SERVICE], [*(e for e in EVENTS if e["id"] != "e4"), SECOND_SERVICE],
        "the Nov 24 Car service is deleted and the Dec 22 one kept",
        solve_delete_car_service,
    ),
    _task(
        "move_recital",
        ("The piano recital moved from December 12 to December 14, 2026; update the calendar.",
         "Change the date of Piano recital from 2026-12-12 to 2026-12-14, same time.",
         "Reschedule the Piano recital to Dec 14, 2026 (it was on Dec 12)."),
        EVENTS, _replace(EVENTS, "e7", date="2026-12-14"), "Piano recital is on 2026-12-14 at 17:00",
        solve_recital, today="2026-10-30",
    ),
)
