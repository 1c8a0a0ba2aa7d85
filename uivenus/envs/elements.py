"""One normalised UI element record for every real UI: desktop apps (AT-SPI) and web pages (Chromium's AX tree).

The agent loop, the guard, the verifier's action judge and the explorer read the same record whatever the source,
so a role, a state or an action has one spelling here: lower case, words joined by spaces ("push button",
"check box", "menu item"), states as AT-SPI names them ("focused", "checked", "enabled", "editable"). Bounds are
(x, y, width, height) in the screen's pixels. An element's `path` (child indexes from the root) places it in the
tree, so a flat tuple of elements keeps the hierarchy.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["ACTIONABLE_ROLES", "ARIA_ROLES", "VOLATILE_ROLES", "UIElement", "element_at", "hit_record", "tree_hash"]

#: Roles a user acts on (what the explorer tries, what a hit is reported as when the point lands in them).
ACTIONABLE_ROLES = frozenset({
    "push button", "toggle button", "check box", "radio button", "combo box", "menu item", "check menu item",
    "radio menu item", "menu", "page tab", "link", "text", "entry", "password text", "spin button", "slider",
    "list item", "table cell", "tree item", "textbox", "searchbox", "button", "checkbox", "radio", "tab",
    "combobox", "option", "menuitem", "menuitemcheckbox", "menuitemradio", "switch", "spinbutton",
})
#: Roles whose name or value changes on its own (clocks, progress, status lines): left out of a state's identity.
VOLATILE_ROLES = frozenset({"status bar", "progress bar", "statusbar", "progressbar", "timer", "marquee", "log",
                            "tool tip", "tooltip", "notification", "alert"})

#: AT-SPI roles as the web's ARIA names them, so a hit on a desktop button reads like a hit on a web button.
ARIA_ROLES = {
    "push button": "button", "toggle button": "button", "check box": "checkbox", "radio button": "radio",
    "menu item": "menuitem", "check menu item": "menuitemcheckbox", "radio menu item": "menuitemradio",
    "menu": "menuitem", "page tab": "tab", "link": "link", "text": "textbox", "entry": "textbox",
    "password text": "textbox", "combo box": "combobox", "spin button": "spinbutton", "slider": "slider",
    "list item": "option", "tree item": "treeitem",
}


@dataclass(frozen=True)
class UIElement:
    """One accessible object as a user meets it: what it is, what it says and holds, where it is, what it does."""

    role: str
    name: str = ""
    value: str = ""  # text content or current value (an entry's text, a spin button's number, a combo's choice)
    states: tuple[str, ...] = ()
    bounds: tuple[int, int, int, int] | None = None  # x, y, width, height in screen pixels; None when unplaced
    actions: tuple[str, ...] = ()  # what the toolkit says can be done: "click", "press", "toggle", "activate"
    path: tuple[int, ...] = ()  # child indexes from the tree's root
    app: str = ""  # the application (desktop) or the page's origin (web) it belongs to
    #: (minimum, maximum) a number control takes (AT-SPI's Value interface, the web's aria-valuemin/-max or an
    #: input's min/max); None when the toolkit gives none
    value_range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "role", " ".join(self.role.replace("-", " ").replace("_", " ").lower().split()))
        object.__setattr__(self, "name", " ".join(self.name.split()))  # menu labels pad to their accelerators
        object.__setattr__(self, "states", tuple(sorted(set(self.states))))
        object.__setattr__(self, "actions", tuple(dict.fromkeys(self.actions)))
        object.__setattr__(self, "path", tuple(self.path))
        if self.bounds is not None:
            object.__setattr__(self, "bounds", tuple(int(v) for v in self.bounds))
        if self.value_range is not None:
            object.__setattr__(self, "value_range", tuple(float(v) for v in self.value_range))

    @property
    def depth(self) -> int:
        return len(self.path)

    @property
    def enabled(self) -> bool:
        """Usable now (both readers mark a usable element "enabled")."""
        return "enabled" in self.states and "disabled" not in self.states

    @property
    def visible(self) -> bool:
        """Shown with an area on screen (both readers mark a shown element "showing"; a zero-size one cannot be
        clicked)."""
        return "showing" in self.states and self.bounds is not None and self.bounds[2] > 0 and self.bounds[3] > 0

    @property
    def actionable(self) -> bool:
        return (self.role in ACTIONABLE_ROLES or bool(self.actions)) and self.enabled and self.visible

    @property
    def center(self) -> tuple[int, int] | None:
        if self.bounds is None:
            return None
        x, y, w, h = self.bounds
        return x + w // 2, y + h // 2

    def contains(self, point: tuple[float, float]) -> bool:
        if not self.visible:
            return False
        x, y, w, h = self.bounds  # type: ignore[misc] - visible implies bounds
        return x <= point[0] < x + w and y <= point[1] < y + h

    def label(self) -> str:
        """How a person would name it: its name, else its value, else its role."""
        return self.name or self.value or self.role

    def to_dict(self) -> dict[str, Any]:
        """JSON data, empty fields left out (catalog files stay small and diff well)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value not in ("", (), None):
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UIElement:
        bounds = data.get("bounds")
        value_range = data.get("value_range")
        return cls(role=str(data["role"]), name=str(data.get("name", "")), value=str(data.get("value", "")),
                   states=tuple(data.get("states", ())),
                   bounds=tuple(bounds) if bounds else None,  # type: ignore[arg-type]
                   actions=tuple(data.get("actions", ())), path=tuple(data.get("path", ())),
                   app=str(data.get("app", "")),
                   value_range=tuple(value_range) if value_range else None)  # type: ignore[arg-type]

#: Roles whose value is what a user typed: typing is not a new screen.
_FREE_TEXT = frozenset({"document text", "paragraph", "text", "entry", "document frame", "textbox", "searchbox",
                        "password text", "terminal"})

#: Roles of plain text, whose numbers are left out of a state's identity ("Queries took 1.4ms", "12:01").
_PLAIN_TEXT = frozenset({"statictext", "label", "static", "labeltext"})
_DIGITS = re.compile(r"\d+")


def element_at(elements: Sequence[UIElement], point: tuple[float, float]) -> UIElement | None:
    """The element a pointer at `point` acts on: the deepest visible one containing it, an actionable one preferred
    (a click on a button's label lands on the button); None when nothing placed contains the point."""
    hits = [e for e in elements if e.contains(point)]
    if not hits:
        return None
    actionable = [e for e in hits if e.actionable]
    return max(actionable or hits, key=lambda e: (e.depth, -(e.bounds[2] * e.bounds[3])))  # type: ignore[index]


def hit_record(element: UIElement | None) -> dict[str, Any]:
    """What a pointer action hit, as `StepResult.info[HIT_ELEMENT]` holds it for the verifier (the keys the
    browser's DOM read gives: `tag` None when the point hit nothing)."""
    if element is None:
        return {"tag": None, "text": ""}
    return {"tag": element.role, "role": ARIA_ROLES.get(element.role, element.role), "text": element.label(),
            "label": element.name, "value": element.value, "interactive": element.actionable,
            "bounds": list(element.bounds) if element.bounds else None, "source": "a11y"}


def tree_hash(elements: Iterable[UIElement], *, ignore_roles: frozenset[str] = VOLATILE_ROLES,
              extra: Mapping[str, Any] | None = None) -> str:
    """The identity of a UI state: the roles, names and structure of its shown elements plus the values and checked /
    selected states of its controls; positions, focus, volatile roles, numbers in plain text and the contents of
    documents and fields (a typed letter is not a new screen) are left out."""
    parts = []
    for e in elements:
        if e.role in ignore_roles or "showing" not in e.states:
            continue
        value = "" if e.role in _FREE_TEXT else e.value
        marks = [s for s in e.states if s in ("checked", "selected", "expanded", "pressed", "active", "modal")]
        name = _DIGITS.sub("#", e.name) if e.role in _PLAIN_TEXT else e.name
        parts.append([e.role, name, value, marks, len(e.path)])
    digest = hashlib.sha256(json.dumps([parts, dict(extra or {})], sort_keys=True).encode()).hexdigest()
    return digest[:16]

