"""The points an action carries: which fields hold them, and reading or rewriting them all in one pass.

A frame conversion (`coords.py`) rewrites an action's points through `map_points`, and readers (the loop's screen
check, judges, reports) walk them with `iter_points`; neither needs to know which records hold points, or that a
Sequence holds records.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from .space import Action, ActionSequence, Point

#: The fields that hold points, in the order the grammar writes them.
POINT_FIELDS = ("point", "start", "end")


def iter_points(action: Action) -> Iterator[tuple[str, Point]]:
    """Every (field name, point) an action carries, Sequence members included."""
    if isinstance(action, ActionSequence):
        for inner in action.actions:
            yield from iter_points(inner)
        return
    for name in POINT_FIELDS:
        value = getattr(action, name, None)
        if value is not None:
            yield name, value


def map_points(action: Action, fn: Callable[[Point], Point]) -> Action:
    """A copy of `action` with every point passed through `fn` (the hook frame conversions use)."""
    if isinstance(action, ActionSequence):
        return ActionSequence(actions=tuple(map_points(a, fn) for a in action.actions))
    changes = {name: fn(value) for name in POINT_FIELDS if (value := getattr(action, name, None)) is not None}
    return dataclasses.replace(action, **changes) if changes else action
