"""Moves that reference solvers share, so each task's solver reads as the steps a person would take.

Every move looks at the live page through `DomQuery` before acting and yields unified actions, so one
solver works in both layouts: off-screen targets are revealed by swiping (phone) or wheel-scrolling
(web) until they are in view; text fields are cleared with ctrl+a on the web and with the field's clear
button on a phone (which has no hotkeys). Moves are generators that `return` the point they acted on,
so a solver can write `point = yield from tap(q, sel)`.

Conventions the bundled apps keep for these moves: stable `data-testid`s; a clearable text field is
followed directly by its `[data-role=clear]` button (shown only while the field holds text); switches
are `role=switch` elements carrying `aria-checked`.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable, Mapping, Sequence
from typing import Any

from uivenus.actions.space import (
    Action, Click, Direction, Hotkey, Platform, Point, Scroll, SelectOption, Swipe, Type,
)
from uivenus.envs.sandbox.tasks import CheckResult, DomQuery, SandboxTask, Solver

#: How many swipes/scrolls a move spends looking for an element in each direction before giving up.
REVEAL_LIMIT = 8
#: Wheel notches per web scroll; a phone swipe travels this fraction of the screen height.
SCROLL_NOTCHES = 3
SWIPE_FRACTION = 0.4

Move = Generator[Action, None, Point]


class SolverError(RuntimeError):
    """A reference solver could not find what it needs on the live page (the app or its setup changed)."""


def css_string(value: str) -> str:
    """`value` quoted as a CSS string, for attribute selectors built from task data."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\a ") + '"'


def tid(testid: str, **attrs: str) -> str:
    """Selector of the element with `data-testid=testid` and `data-<key>=value` for each keyword."""
    parts = [f"[data-testid={css_string(testid)}]"]
    parts += [f"[data-{key.replace('_', '-')}={css_string(value)}]" for key, value in attrs.items()]
    return "".join(parts)


def _reveal_step(q: DomQuery, direction: Direction, within: str | None) -> Action:
    width, height = q.screen_size
    anchor = q.center(within) if within else None
    x, y = anchor or (width // 2, height // 2)
    if q.platform is Platform.WEB:
        return Scroll(direction=direction, point=(x, y), amount=SCROLL_NOTCHES)
    travel = height * SWIPE_FRACTION / 2
    sign = 1 if direction is Direction.DOWN else -1  # content moves up to reveal what lies below
    return Swipe(start=(x, round(y + sign * travel)), end=(x, round(y - sign * travel)))


def reveal(q: DomQuery, selector: str, *, within: str | None = None, limit: int = REVEAL_LIMIT) -> Move:
    """Scroll `selector` into view (downwards first, then back up) and return its centre.

    Swipes and wheel scrolls act over `within`, the scrolling pane (default: the middle of the
    screen, i.e. the document), so apps keep no fixed bar over scrolled content.
    """
    if not q.exists(selector):
        raise SolverError(f"no element matches {selector!r} on the page")
    for direction in (Direction.DOWN, Direction.UP):
        for _ in range(limit if direction is Direction.DOWN else 2 * limit):
            point = q.center(selector)
            if point is not None:
                return point
            yield _reveal_step(q, direction, within)
    point = q.center(selector)
    if point is None:
        raise SolverError(f"{selector!r} exists but stayed out of view after {3 * limit} scrolls; is it hidden?")
    return point


def tap(q: DomQuery, selector: str, *, within: str | None = None) -> Move:
    """Reveal `selector` and click (tap) its centre."""
    point = yield from reveal(q, selector, within=within)
    yield Click(point=point)
    return point


def fill(q: DomQuery, selector: str, text: str, *, within: str | None = None) -> Move:
    """Replace the text of the field `selector` with `text`: focus it, clear it unless it shows its
    placeholder (i.e. is empty), type."""
    point = yield from reveal(q, selector, within=within)
    empty = q.exists(f"{selector}:placeholder-shown")
    if q.platform is Platform.WEB:
        yield Click(point=point)
        if not empty:
            yield Hotkey(keys=("ctrl", "a"))  # typing then replaces the selection
    else:
        clear = None if empty else q.center(f"{selector} + [data-role=clear]")
        yield Click(point=clear or point)  # the clear button empties the field and focuses it
    yield Type(content=text)
    return point


def set_switch(q: DomQuery, selector: str, on: bool, *, within: str | None = None) -> Move:
    """Flip the `role=switch` element `selector` only if it is not already `on`."""
    point = yield from reveal(q, selector, within=within)
    if q.exists(f"{selector}[aria-checked=true]") != on:
        yield Click(point=point)
    return point


def option_index(q: DomQuery, select: str, value: str, *, limit: int = 64) -> int:
    """0-based index of the `<option value=value>` of the `<select>` `select` (read from the live DOM)."""
    for index in range(limit):
        if q.exists(f"{select} > option:nth-of-type({index + 1})[value={css_string(value)}]"):
            return index
    raise SolverError(f"{select!r} has no option with value {value!r}")


def choose(q: DomQuery, select: str, value: str, *, within: str | None = None) -> Move:
    """Pick the option with `value` in the `<select>` `select` (web only: phones use lists of rows)."""
    point = yield from reveal(q, select, within=within)
    yield SelectOption(index=option_index(q, select, value), point=point)
    return point


def slide(
    q: DomQuery, slider: str, value: float, *, lo: tuple[str, float], hi: tuple[str, float],
    readout: str, attempts: int = 4,
) -> Move:
    """Set a range slider to `value` by clicking along its track, correcting until `readout` shows it.

    `lo`/`hi` are (selector, value) of two tick marks drawn under the track whose centres sit where the
    thumb is at those values; they give the track's pixel scale. `readout` is the element showing the
    current value as text (the first number in it is read).
    """
    point = yield from reveal(q, slider)
    (lo_sel, lo_value), (hi_sel, hi_value) = lo, hi
    lo_point, hi_point = q.center(lo_sel), q.center(hi_sel)
    if lo_point is None or hi_point is None:
        raise SolverError(f"the ticks {lo_sel!r}/{hi_sel!r} of {slider!r} are not visible")
    per_unit = (hi_point[0] - lo_point[0]) / (hi_value - lo_value)
    x = lo_point[0] + (value - lo_value) * per_unit
    for _ in range(attempts):
        yield Click(point=(round(x, 1), point[1]))
        shown = _first_number(q.text(readout))
        if shown == value:
            return (x, point[1])
        if shown is None:
            raise SolverError(f"{readout!r} shows no number")
        x += (value - shown) * per_unit
    raise SolverError(f"{slider!r} did not reach {value} in {attempts} clicks")


def _first_number(text: str | None) -> float | None:
    match = re.search(r"-?\d+(?:\.\d+)?", text or "")
    return float(match.group()) if match else None


# --- verdict helpers shared by the suites' checkers ------------------------------------------------

def passed(reason: str = "done") -> CheckResult:
    return CheckResult(True, reason)


def failed(reason: str) -> CheckResult:
    return CheckResult(False, reason)


def expect_fields(state: Mapping[str, Any], expected: Mapping[str, Any], what: str = "state") -> CheckResult:
    """Pass when every key of `expected` has exactly that value in `state`; else name the first difference."""
    for key, want in expected.items():
        if key not in state:
            return failed(f"{what} has no {key!r} (is the right app open?)")
        if state[key] != want:
            return failed(f"{what}[{key!r}] is {state[key]!r}, expected {want!r}")
    return passed(f"{what} as expected")


def expect_records(
    records: Any, original: Sequence[Mapping[str, Any]], *, changed: Mapping[str, Mapping[str, Any]] | None = None,
    removed: Iterable[str] = (), added: Sequence[Mapping[str, Any]] = (), what: str = "record",
) -> CheckResult:
    """Compare a list of `{"id": ...}` records with `original` after exactly the stated edits.

    Every original record must be unchanged except those in `changed` (id -> the new field values) and
    `removed` (must be gone); records with new ids must match `added` one to one (the fields given).
    """
    if not isinstance(records, list):
        return failed(f"expected a list of {what}s, got {type(records).__name__} (is the right app open?)")
    changed, removed = dict(changed or {}), set(removed)
    by_id = {r.get("id"): r for r in records}
    for before in original:
        rid = before["id"]
        now = by_id.pop(rid, None)
        if rid in removed:
            if now is not None:
                return failed(f"{what} {_label(before)} should have been deleted but is still there")
            continue
        if now is None:
            return failed(f"{what} {_label(before)} was deleted but should have been kept")
        want = {**before, **changed.get(rid, {})}
        if now != want:
            diff = sorted(k for k in set(want) | set(now) if want.get(k) != now.get(k))
            return failed(f"{what} {_label(before)} has {({k: now.get(k) for k in diff})}, "
                          f"expected {({k: want.get(k) for k in diff})}")
    fresh = list(by_id.values())
    if len(fresh) != len(added):
        return failed(f"expected {len(added)} new {what}(s), found {len(fresh)}: {[_label(r) for r in fresh]}")
    for spec in added:
        match = next((r for r in fresh if all(r.get(k) == v for k, v in spec.items())), None)
        if match is None:
            return failed(f"no new {what} with {dict(spec)}; new: {fresh}")
        fresh.remove(match)
    return passed(f"{what}s as expected")


def records_task(
    name: str, instructions: tuple[str, ...], records: Sequence[Mapping[str, Any]], solve: Solver, *,
    app: str, key: str, what: str, changed: Mapping[str, Mapping[str, Any]] | None = None,
    removed: Sequence[str] = (), added: Sequence[Mapping[str, Any]] = (),
) -> SandboxTask:
    """A task of an app whose whole state is `{key: records}`, checked by `expect_records` (see there for
    `changed`, `removed` and `added`), so a wrong edit, a duplicate or a collateral deletion fails."""
    original = [dict(r) for r in records]

    def check(state: Mapping[str, Any]) -> CheckResult:
        return expect_records(state.get(key), original, changed=changed, removed=removed, added=added, what=what)

    return SandboxTask(app=app, name=name, instructions=instructions, setup={key: original}, check=check, solve=solve)


def _label(record: Mapping[str, Any]) -> str:
    name = record.get("title") or record.get("name")
    return f"{record['id']} ({name!r})" if name else str(record["id"])
