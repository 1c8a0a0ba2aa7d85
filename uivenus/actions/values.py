"""The rules an action record's field values follow: numbers, points, text and key names.

Every record in `space.py` calls these checks when it is constructed, so a value that breaks a rule never becomes a
record; the `ActionError` raised names the action, the field and the rule. They live apart from the records because
they are about values, not about any one action: the point rule serves a dozen record classes, the key names three.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn


class ActionError(ValueError):
    """An action record was given an illegal value; the message names the field and the rule."""


_MODIFIERS = {"ctrl", "control", "alt", "option", "shift", "cmd", "command", "meta", "win", "super", "fn"}
_NAMED_KEYS = {
    "enter", "return", "esc", "escape", "tab", "space", "backspace", "delete", "del", "insert", "home",
    "end", "pageup", "pagedown", "up", "down", "left", "right", "arrowup", "arrowdown", "arrowleft",
    "arrowright", "capslock", "numlock", "scrolllock", "printscreen", "prtsc", "pause", "menu",
    "volumeup", "volumedown", "volumemute", "playpause", "back", "forward",
}
#: Every key name a Hotkey/KeyDown/KeyUp accepts (lower-cased), besides any single printable character.
KEY_NAMES = frozenset(_MODIFIERS | _NAMED_KEYS | {f"f{i}" for i in range(1, 25)})


def is_key_name(key: str) -> bool:
    """A key is a known name (case-insensitive) or exactly one printable, non-space character."""
    return key.lower() in KEY_NAMES or (len(key) == 1 and key.isprintable() and not key.isspace())


def fail(action: str, message: str) -> NoReturn:
    """Raise the `ActionError` for `action` (its type name) breaking the rule `message` states."""
    raise ActionError(f"{action}: {message}")


def check_number(action: str, name: str, value: Any, *, minimum: float | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(action, f"{name} must be a number, got {value!r}")
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int too large for a float is no screen coordinate either
        finite = False
    if not finite:
        fail(action, f"{name} must be finite, got {str(value)[:40]}")
    if minimum is not None and value < minimum:
        fail(action, f"{name} must be >= {minimum}, got {value!r}")


def check_point(action: str, name: str, value: Any) -> None:
    if not isinstance(value, tuple) or len(value) != 2:
        fail(action, f"{name} must be an (x, y) pair, got {value!r}")
    for axis, coordinate in zip("xy", value):
        check_number(action, f"{name}.{axis}", coordinate, minimum=0)


def check_text(action: str, name: str, value: Any, *, required: bool) -> None:
    if value is None and not required:
        return
    if not isinstance(value, str):
        fail(action, f"{name} must be a string, got {value!r}")
    if required and not value.strip():
        fail(action, f"{name} must not be empty")


def check_keys(action: str, keys: Any) -> None:
    if not isinstance(keys, tuple) or not keys:
        fail(action, f"keys must be a non-empty list of key names, got {keys!r}")
    for key in keys:
        if not isinstance(key, str) or not is_key_name(key):
            fail(action, f"unknown key {key!r}; use names like 'ctrl', 'shift', 'enter', 'f5' or one character")
