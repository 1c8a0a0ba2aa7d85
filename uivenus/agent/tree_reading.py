"""The desktop screen as the guard reads it: the accessibility tree's text, OCR only for what the tree cannot see.

A full-screen OCR costs seconds per step on a loaded machine; the tree of an OSWorld session's apps is read in
milliseconds and names each control exactly. What the tree cannot see is OCR'd by region, so an injection stays
visible where it hides from the tree: a top-level window that no accessible frame covers (an X toolkit app such as
xterm or xmessage has no tree) and a picture large enough to hold a sentence (text inside an image). Lost against a
full-screen OCR: text painted outside every window and picture (the wallpaper, the panels), and words an app draws
in a widget whose accessible has neither name nor value.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from uivenus.envs.base import EnvError
from uivenus.envs.elements import UIElement

__all__ = ["MAX_PICTURES", "MIN_PICTURE", "PICTURE_ROLES", "WINDOW_ROLES", "Region", "TreeRead", "read_tree",
           "unseen_regions"]

log = logging.getLogger(__name__)

Region = tuple[int, int, int, int]  # x1, y1, x2, y2 in screen pixels

#: Roles whose pixels may carry words the tree does not hold: OCR'd by region (GTK names a GtkImage "icon").
PICTURE_ROLES = frozenset({"image", "icon", "canvas", "animation"})
#: Roles of an app's top-level windows: an X window one of them matches is seen by the tree. Not "window": the
#: file manager's desktop (the whole screen) and popups have it, and would hide every X toolkit window behind them.
WINDOW_ROLES = frozenset({"frame", "dialog", "alert", "file chooser"})
#: Smaller pictures (a toolbar's or a file's icon) hold no readable sentence: not worth an OCR call.
MIN_PICTURE = (96, 20)
#: At most this many pictures are read per screen, the largest first (each is one OCR call).
MAX_PICTURES = 8
#: How closely an accessible frame must match an X window (intersection over union; the frame may include the
#: title bar the X client area lacks) to count as the same window.
COVERED = 0.5


@dataclass(frozen=True)
class TreeRead:
    """One screen's read: its shown elements (tree order) and the regions only OCR can read."""

    elements: tuple[UIElement, ...]
    regions: tuple[Region, ...]

    def text(self) -> str:
        """The shown elements' names and values, one per line, each said once."""
        lines = dict.fromkeys(part for e in self.elements for part in (e.name, e.value) if part.strip())
        return "\n".join(lines)

    def focused(self) -> UIElement | None:
        return next((e for e in self.elements if "focused" in e.states), None)


def _box(x: int, y: int, w: int, h: int) -> Region:
    return x, y, x + w, y + h


def _area(a: Region) -> int:
    return max(0, a[2] - a[0]) * max(0, a[3] - a[1])


def _matches(a: Region, b: Region) -> bool:
    shared = _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))
    return shared >= COVERED * (_area(a) + _area(b) - shared)


def unseen_regions(elements: Sequence[UIElement], windows: Iterable[Region]) -> tuple[Region, ...]:
    """The windows no accessible frame matches, then the largest pictures big enough to hold a sentence."""
    frames = [_box(*e.bounds) for e in elements if e.role in WINDOW_ROLES and e.bounds]
    bare = tuple(w for w in windows if _area(w) > 0 and not any(_matches(w, f) for f in frames))
    pictures = sorted((e.bounds for e in elements if e.role in PICTURE_ROLES and e.bounds
                       and e.bounds[2] >= MIN_PICTURE[0] and e.bounds[3] >= MIN_PICTURE[1]),
                      key=lambda b: -b[2] * b[3])
    return bare + tuple(_box(*b) for b in pictures[:MAX_PICTURES])


def _windows(state: Mapping[str, Any]) -> tuple[Region, ...]:
    return tuple(_box(*w["geometry"]) for w in state.get("windows", ()))


def read_tree(env: Any) -> TreeRead | None:
    """The env's shown elements and what only OCR can read; None when the env has no tree (no `elements`, not an
    OSWorld session) or it could not be read (the guard then OCRs the whole screen)."""
    reader = getattr(env, "elements", None)
    if not callable(reader):
        return None
    try:
        elements = tuple(e for e in reader() if e.visible)
        windows = _windows(env.state())
    except EnvError as exc:  # not an OSWorld session, or an app hangs the bus (A11yError)
        log.info("no accessibility tree for the guard, OCR instead: %s", exc)
        return None
    return TreeRead(elements, unseen_regions(elements, windows))
