"""One-field mutations of a final state: does a checker notice each wrong field, and say which one?

A task's checker is its reward and its benchmark truth, so a checker that ignores a field it should compare
passes wrong work and inflates success rates without a sound. A reference solution (must pass) and doing
nothing (must fail) cannot show that: both change many fields at once. Here a final state the checker must
accept is changed in one field at a time, and each change must fail with a verdict that names the field.

Fields are paths into a JSON-like state (mappings and lists): `("orders", 1, "shipping")`, list positions as
ints (-1 is the last). An `Edit` says what to do there:

    Change(path)             the value changed by `changed` (a string reversed, a number + 1, a flag flipped)
    Change(path, value=x)    the value set to x (an enum to another member, a text with a forbidden word added)
    Drop(path)               the list element or mapping key removed (a record deleted, a file missing)
    Insert(path, item)       `item` appended to the list at `path` (a stray record, a second order)

`record_fields`, `elements` and `every_key` build the usual edits; `unnoticed(check, state, edits)` returns the
mutations the checker passed, raised on or failed without naming the field (a `Finding` each), so a test
asserts it is empty and a synthesis gate can refuse a lax generated checker the same way.

A verdict names a field when its reason contains one of the mutation's `names` (compared without case and
punctuation, so `cardLast4` is named by "card_last4"): by default the innermost key of the path; for a record
whose `id` changed (it looks deleted), also the record's identifying values (`IDENTITY_KEYS`); for a dropped
list element or an inserted item, also the list's key in the singular and that element's identifying values.
An edit may give its own `names` where a checker speaks of the field in other terms (a file tree names paths,
not `parent`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from uivenus.envs.sandbox.tasks import CheckResult

__all__ = [
    "CHANGE", "IDENTITY_KEYS", "Change", "Drop", "Edit", "Finding", "Insert", "Mutation", "MutationError", "Path",
    "apply", "changed", "elements", "every_key", "mutations", "names_field", "record_fields", "show_path", "unnoticed",
]

Path: TypeAlias = tuple[str | int, ...]
#: Keys whose values identify a record in a verdict ("note n2 ('Book club')", "message 'Lunch'").
IDENTITY_KEYS = ("id", "name", "title", "subject")


class MutationError(ValueError):
    """An edit that cannot be applied (no such path, nothing to change it to, or it changes nothing)."""


class _Changed:
    def __repr__(self) -> str:
        return "CHANGE"


#: `Change`'s default value: whatever `changed` makes of the value found there.
CHANGE: Any = _Changed()


@dataclass(frozen=True)
class Change:
    """The value at `path` changed (`CHANGE`: by `changed`) or set to `value`."""

    path: Path
    value: Any = CHANGE
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Drop:
    """The list element or mapping key at `path` removed."""

    path: Path
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Insert:
    """`item` appended to the list at `path`."""

    path: Path
    item: Any
    names: tuple[str, ...] = ()


Edit: TypeAlias = Change | Drop | Insert


@dataclass(frozen=True)
class Mutation:
    """One edit applied to a copy of the state: the whole mutated state, and what a verdict on it must name."""

    edit: Edit
    state: Any
    before: Any
    after: Any
    names: tuple[str, ...]

    def __str__(self) -> str:
        where = show_path(self.edit.path)
        match self.edit:
            case Drop():
                return f"{where} dropped (was {_short(self.before)})"
            case Insert():
                return f"{where} += {_short(self.after)}"
        return f"{where}: {_short(self.before)} -> {_short(self.after)}"


@dataclass(frozen=True)
class Finding:
    """A mutation the checker let through, raised on, or failed without naming the field."""

    mutation: Mutation | None  # None: the unmutated state itself was rejected
    problem: str

    def __str__(self) -> str:
        return self.problem if self.mutation is None else f"{self.mutation}: {self.problem}"


def show_path(path: Path) -> str:
    """`("orders", 1, "shipping")` as `orders[1].shipping`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(the whole state)"


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def changed(value: Any) -> Any:
    """A different value of the same type: a flag flipped, a number plus one, a string reversed behind a '~'
    (so neither an exact, a normalised nor a contains comparison still holds)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return "~" + value[::-1]
    raise MutationError(f"no generic change for {type(value).__name__} {_short(value)}; give Change(path, value=...), "
                        "or Drop/Insert for a list")


def _plain(value: Any) -> Any:
    """A deep copy as plain dicts and lists (states may hold read-only mappings or tuples)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return copy.deepcopy(value)


def _container(state: Any, path: Path) -> tuple[Any, str | int]:
    """The mapping or list holding the last step of `path`, and that step."""
    if not path:
        raise MutationError("an edit needs a path into the state, not the whole state")
    node = state
    for i, part in enumerate(path[:-1]):
        node = _step(node, part, path[: i + 1])
    last = path[-1]
    _step(node, last, path)  # it must exist
    return node, last


def _step(node: Any, part: str | int, where: Path) -> Any:
    try:
        if isinstance(part, int) and isinstance(node, list):
            return node[part]
        if isinstance(part, str) and isinstance(node, dict):
            return node[part]
    except (IndexError, KeyError):
        pass
    raise MutationError(f"the state has nothing at {show_path(where)}")


def _get(state: Any, path: Path) -> Any:
    node = state
    for i, part in enumerate(path):
        node = _step(node, part, path[: i + 1])
    return node


def _key(path: Path) -> str | None:
    """The innermost mapping key of `path`."""
    return next((p for p in reversed(path) if isinstance(p, str)), None)


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _identity(item: Any) -> list[str]:
    if not isinstance(item, Mapping):
        return []
    return [str(item[k]) for k in IDENTITY_KEYS if isinstance(item.get(k), (str, int)) and str(item[k])]


def _default_names(edit: Edit, holder: Any, before: Any, after: Any) -> tuple[str, ...]:
    """What a verdict may call the field (see the module's docstring); `holder` is what held it before the edit."""
    key = _key(edit.path)
    names: list[str] = [key] if key else []
    match edit:
        case Change():
            if key == "id":  # a record whose id changed looks deleted: the verdict names the record
                names += _identity(holder)
        case Drop():
            if isinstance(edit.path[-1], int):
                names += [_singular(key)] if key else []
                names += _identity(before)
        case Insert():
            names += [_singular(key)] if key else []
            names += _identity(after)
    return tuple(dict.fromkeys(n for n in names if n))


def apply(state: Any, edit: Edit) -> Mutation:
    """`edit` applied to a plain copy of `state` (which is left as it is)."""
    mutated = _plain(state)
    holder = _get(state, edit.path[:-1]) if edit.path else None
    match edit:
        case Change(path=path, value=value):
            node, last = _container(mutated, path)
            before = node[last]
            after = changed(before) if value is CHANGE else _plain(value)
            node[last] = after
        case Drop(path=path):
            node, last = _container(mutated, path)
            before, after = node[last], None
            del node[last]
        case Insert(path=path, item=item):
            target = _get(mutated, path)
            if not isinstance(target, list):
                raise MutationError(f"Insert needs a list at {show_path(path)}, found {type(target).__name__}")
            before, after = None, _plain(item)
            target.append(after)
        case _:
            raise MutationError(f"not an edit: {edit!r}")
    if mutated == _plain(state):
        raise MutationError(f"{show_path(edit.path)}: the edit changes nothing (value {_short(before)})")
    names = edit.names or _default_names(edit, holder, before, after)
    return Mutation(edit, mutated, before, after, names)


def mutations(state: Any, edits: Iterable[Edit]) -> Iterator[Mutation]:
    """Each edit applied on its own to a copy of `state`."""
    for edit in edits:
        yield apply(state, edit)


def _words(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def names_field(reason: str, names: Sequence[str]) -> bool:
    """Whether `reason` mentions one of `names` (ignoring case, spaces and punctuation)."""
    said = _words(reason)
    return any(_words(n) and _words(n) in said for n in names)


Checker = Callable[[Any], CheckResult]


def unnoticed(check: Checker, state: Any, edits: Iterable[Edit]) -> list[Finding]:
    """The mutations of `state` (one per edit) that `check` passes, raises on, or fails without naming the field.

    `state` is a final state the checker must accept; if it rejects it, that is the only finding (every
    mutation would fail for the wrong reason). Empty means the checker compares every field it was given.
    """
    base = check(_plain(state))
    if not base.passed:
        return [Finding(None, f"the checker rejects the unmutated state: {base.reason}")]
    findings = []
    for mutation in mutations(state, edits):
        try:
            result = check(_plain(mutation.state))
        except Exception as exc:  # noqa: BLE001 - a checker must judge any well-formed state, not crash
            findings.append(Finding(mutation, f"the checker raised {type(exc).__name__}: {exc}"))
            continue
        if result.passed:
            findings.append(Finding(mutation, f"passed ({result.reason})"))
        elif not names_field(result.reason, mutation.names):
            findings.append(Finding(mutation, f"failed without naming any of {list(mutation.names)}: {result.reason}"))
    return findings


# --- edits for common shapes -------------------------------------------------------------------------

def every_key(state: Any, path: Path = ()) -> list[Edit]:
    """A generic `Change` of every key of the mapping at `path`."""
    return [Change((*path, key)) for key in _get(state, path)]


def record_fields(state: Any, path: Path, keys: Iterable[str], *,
                  where: Callable[[Mapping[str, Any]], bool] | None = None, names: tuple[str, ...] = ()) -> list[Edit]:
    """A generic `Change` of each of `keys` in each record (mapping) of the list at `path` that has it (and that
    `where` accepts, when given)."""
    keys = tuple(keys)
    return [Change((*path, i, key), names=names) for i, record in enumerate(_get(state, path))
            if where is None or where(record) for key in keys if key in record]


def elements(state: Any, path: Path, extra: Any = None, *, where: Callable[[Any], bool] | None = None) -> list[Edit]:
    """A `Drop` of each element of the list at `path` (that `where` accepts, when given), and an `Insert` of
    `extra` when it is given."""
    edits: list[Edit] = [Drop((*path, i)) for i, item in enumerate(_get(state, path)) if where is None or where(item)]
    return edits + ([Insert(path, extra)] if extra is not None else [])
