"""How catalog functions are named: the words that say what happens to a record (`VERBS`), English singulars and
plurals of state keys, and slugs of labels.

Naming rules shared by both builders (exploration and docs) keep their functions apart from each other's by name
only when they really differ: `set_toggle` for a family of switches, `set_<key>` for one setting,
`<verb>_<noun>` for what happens to a record (`create_note`, `delete_contact`, `send_message`), `reset_<app>` for
a reset. Both builders import these, so the same feature gets the same name from either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["BOUNDARY_WORDS", "GENERIC_VERBS", "VERBS", "plural", "singular", "slug"]


#: Words (in docs sentences and element names) that say what happens to a record, by the verb a function
#: name uses. "save" only says something was stored: the name falls back on it when nothing better is found.
VERBS: Mapping[str, str] = MappingProxyType({
    "new": "create", "create": "create", "write": "create", "add": "add", "compose": "send", "send": "send",
    "reply": "reply", "forward": "forward", "delete": "delete", "remove": "delete", "erase": "delete",
    "pin": "pin", "favorite": "favorite", "favourite": "favorite", "star": "favorite", "edit": "edit",
    "rename": "edit", "update": "edit", "archive": "archive", "read": "read", "open": "read", "reset": "reset",
    "clear": "clear",
})
GENERIC_VERBS: Mapping[str, str] = MappingProxyType({"save": "edit", "submit": "edit", "done": "edit"})
#: Element words that end a train of thought: a verb before one of these did not lead to what followed.
BOUNDARY_WORDS = frozenset({"cancel", "back", "discard", "close"})


def singular(noun: str) -> str:
    """contacts -> contact, messages -> message, boxes -> box (enough for app state keys)."""
    if noun.endswith("ies"):
        return noun[:-3] + "y"
    if noun.endswith(("ses", "xes")):
        return noun[:-2]
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


def plural(noun: str) -> str:
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "es" if noun.endswith(("s", "x")) else noun + "s"


def slug(text: str) -> str:
    """'Wi-Fi' -> 'wifi', 'dark mode' -> 'dark_mode', 'toggle-dark-mode' -> 'toggle_dark_mode'."""
    text = re.sub(r"\b(\w{1,2})-(\w)", r"\1\2", text.strip().lower())  # wi-fi, e-mail
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")
