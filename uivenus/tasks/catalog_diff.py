"""What changed between two capability catalogs, entry by entry: functions, states, transitions and constraints
added, removed or changed (`diff_catalogs`).

The task loop prints it after every round and `uivenus tasks` after every build, so a catalog's growth can be read
as records rather than as a JSON diff.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from uivenus.tasks.catalog import AppCatalog, Catalog, plain_record

__all__ = ["CatalogDiff", "Change", "DiffEntry", "diff_catalogs"]


class Change(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


@dataclass(frozen=True)
class DiffEntry:
    app: str
    section: str  # functions, states, transitions, constraints
    key: str
    change: Change

    def __str__(self) -> str:
        mark = {Change.ADDED: "+", Change.REMOVED: "-", Change.CHANGED: "~"}[self.change]
        return f"{mark} {self.app} {self.section[:-1]} {self.key}"


@dataclass(frozen=True)
class CatalogDiff:
    """What changed from one catalog to another, entry by entry."""

    before_version: int
    after_version: int
    entries: tuple[DiffEntry, ...]

    def __bool__(self) -> bool:
        return bool(self.entries)

    def __str__(self) -> str:
        head = f"catalog v{self.before_version} -> v{self.after_version}: {len(self.entries)} change(s)"
        return "\n".join([head, *map(str, self.entries)])


def _sections(cat: AppCatalog) -> dict[str, dict[str, Any]]:
    return {
        "functions": {k: plain_record(v) for k, v in cat.functions.items()},
        "states": {k: plain_record(v) for k, v in cat.states.items()},
        "transitions": {f"{t.source} {t.gesture}": plain_record(t) for t in cat.transitions},
        "constraints": {c.identity: plain_record(c) for c in cat.constraints},
    }


def diff_catalogs(before: Catalog, after: Catalog) -> CatalogDiff:
    """Functions, states, transitions and constraints added, removed or changed between two catalogs."""
    entries = []
    for app in sorted(set(before.apps) | set(after.apps)):
        old, new = _sections(before.apps.get(app, AppCatalog(app))), _sections(after.apps.get(app, AppCatalog(app)))
        for section in old:
            a, b = old[section], new[section]
            for key in sorted(set(a) | set(b)):
                change = Change.ADDED if key not in a else Change.REMOVED if key not in b else Change.CHANGED
                if change is not Change.CHANGED or a[key] != b[key]:
                    label = key if section != "constraints" else _constraint_label(a.get(key) or b[key])
                    entries.append(DiffEntry(app, section, label, change))
    return CatalogDiff(before.version, after.version, tuple(entries))


def _constraint_label(c: Mapping[str, Any]) -> str:
    on = f".{c['param']}" if c.get("param") else ""
    return f"{c['function']}{on} {c['kind']} {json.dumps(c['condition'], sort_keys=True)}"
