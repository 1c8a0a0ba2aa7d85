"""The import-time check that a table keyed by a closed set (action types, action fields, handlers) covers it.

Tables that must hold an entry for every action type or field live in several layers (prompts, rewards, the random
policy, the desktop executor); each checks itself with `check_covers` when its module imports, so a new action that
a table lacks fails at once, with a `RegistryError` naming the gap. An `assert` would vanish under `python -O`.
"""

from __future__ import annotations

from collections.abc import Iterable


class RegistryError(RuntimeError):
    """Two tables that must cover the same keys disagree: a programming error, raised when the module imports."""


def check_covers(table: str, keys: Iterable[object], expected: Iterable[object], *, extra_ok: bool = False) -> None:
    """Raise `RegistryError` when `keys` lacks any of `expected` (or, unless `extra_ok`, holds others): the check
    every registry runs at import, where an `assert` would vanish under `python -O`."""
    have, want = set(keys), set(expected)
    missing, unexpected = want - have, set() if extra_ok else have - want
    if missing or unexpected:
        found = [f"{label} {sorted(map(str, items))}"
                 for label, items in (("missing", missing), ("unexpected", unexpected)) if items]
        raise RegistryError(f"{table}: {'; '.join(found)}")
