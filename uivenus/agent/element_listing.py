"""The accessibility tree as a policy reads it beside the screenshot (OSWorld's `screenshot_a11y_tree` observation).

A model that only sees pixels must guess what an unlabelled icon does and where a field's text ends; the tree
names each control exactly. The listing is compact (one tab-separated line per element: role, name, value, centre
in the model's own coordinate frame, so a point can be copied into an action) and bounded (at most `limit` lines,
controls first, long names cut), so a busy window cannot swamp the context. Off by default: `LoopConfig.observation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from uivenus.actions.coords import Frame
from uivenus.envs.base import EnvError
from uivenus.envs.elements import UIElement

__all__ = ["A11Y_HEADER", "MAX_ELEMENTS", "ElementListing", "ObservationType", "list_elements", "read_listing"]


class ObservationType(StrEnum):
    """What the policy is shown each step (OSWorld's names)."""

    SCREENSHOT = "screenshot"
    SCREENSHOT_A11Y_TREE = "screenshot_a11y_tree"


#: Default cap on listed elements; a real LibreOffice window holds ~1,500 accessibles.
MAX_ELEMENTS = 80
#: Longer names and values are cut to this many characters (a document's text is not a control's label).
MAX_CHARS = 40
A11Y_HEADER = "role\tname\tvalue\tcentre"


@dataclass(frozen=True)
class ElementListing:
    """One step's listing: the elements listed (tree order), the text the model reads, and how many were left out."""

    elements: tuple[UIElement, ...]
    text: str
    omitted: int = 0


def _cut(text: str) -> str:
    flat = " ".join(text.replace("\t", " ").split())
    return flat if len(flat) <= MAX_CHARS else flat[:MAX_CHARS - 1] + "…"


def _line(element: UIElement, frame: Frame) -> str:
    x, y = frame.to_model(element.center)  # type: ignore[arg-type]  # only placed elements are listed
    return f"{element.role}\t{_cut(element.name)}\t{_cut(element.value)}\t({x}, {y})"


def _on_screen(element: UIElement, frame: Frame) -> bool:
    centre = element.center
    return element.visible and centre is not None and 0 <= centre[0] < frame.width and 0 <= centre[1] < frame.height


def list_elements(elements: Sequence[UIElement], frame: Frame, limit: int = MAX_ELEMENTS) -> ElementListing:
    """The shown elements whose centre is on the screen and that say or do something, controls before plain text
    when over `limit`."""
    shown = [(n, e) for n, e in enumerate(elements)
             if _on_screen(e, frame) and (e.actionable or e.name.strip() or e.value.strip())]
    ranked = sorted(shown, key=lambda item: (not item[1].actionable, item[0]))[:limit]
    kept = tuple(e for _, e in sorted(ranked, key=lambda item: item[0]))
    lines = [A11Y_HEADER, *(_line(e, frame) for e in kept)]
    omitted = len(shown) - len(kept)
    if omitted:
        lines.append(f"({omitted} more elements not listed)")
    return ElementListing(kept, "\n".join(lines), omitted)


def read_listing(env: Any, frame: Frame, limit: int = MAX_ELEMENTS) -> ElementListing:
    """The env's elements listed; an env without a tree, or one that cannot be read now, gives a one-line note
    instead (the step goes on with the screenshot alone)."""
    reader = getattr(env, "elements", None)
    if not callable(reader):
        return ElementListing((), f"(no accessibility tree: the {type(env).__name__} has none)")
    try:
        return list_elements(reader(), frame, limit)
    except EnvError as exc:
        return ElementListing((), f"(accessibility tree unavailable this step: {_cut(str(exc))})")
