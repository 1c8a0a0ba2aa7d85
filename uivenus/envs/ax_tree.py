"""A web page's UI elements (`UIElement`) from Chromium's accessibility tree, placed with the layout's boxes.

`Accessibility.getFullAXTree` gives roles, names, values and states as assistive technology sees them (what a
user of any page can act on, with no hook in the page); one `DOMSnapshot.captureSnapshot` gives every laid-out
node's box, joined by backend node id (one call instead of a box-model query per node). Boxes are turned into the
viewport's pixels, which are the screen's in a browser env.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from uivenus.envs.elements import UIElement

__all__ = ["elements_from_ax", "page_elements"]

#: AX properties whose truth becomes a state of the same name ("checked" also for "mixed").
_BOOLEAN_STATES = ("focusable", "focused", "editable", "expanded", "selected", "required", "readonly", "multiline",
                   "modal", "pressed")
#: Chromium roles that carry no meaning of their own (their children are lifted to the parent).
_SKIPPED = frozenset({"none", "presentation", "InlineTextBox", "LineBreak"})


def page_elements(page: Any) -> tuple[UIElement, ...]:
    """The page's elements now (call on the Playwright thread with a Playwright page)."""
    session = page.context.new_cdp_session(page)
    try:
        nodes = session.send("Accessibility.getFullAXTree")["nodes"]
        snapshot = session.send("DOMSnapshot.captureSnapshot", {"computedStyles": []})
    finally:
        session.detach()
    viewport = page.viewport_size or {"width": 1 << 16, "height": 1 << 16}
    return elements_from_ax(nodes, _boxes(snapshot), (viewport["width"], viewport["height"]), page.url)


def _boxes(snapshot: Mapping[str, Any]) -> dict[int, tuple[float, float, float, float]]:
    """Backend node id -> (x, y, w, h) in the viewport, for the main document's laid-out nodes."""
    documents = snapshot.get("documents") or []
    if not documents:
        return {}
    main = documents[0]
    backend = main["nodes"].get("backendNodeId", [])
    layout = main.get("layout", {})
    dx, dy = main.get("scrollOffsetX", 0), main.get("scrollOffsetY", 0)
    return {backend[index]: (x - dx, y - dy, w, h)
            for index, (x, y, w, h) in zip(layout.get("nodeIndex", []), layout.get("bounds", []))}


def _property(node: Mapping[str, Any], name: str) -> Any:
    return next((p["value"].get("value") for p in node.get("properties", ()) if p["name"] == name), None)


def _range(node: Mapping[str, Any]) -> tuple[float, float] | None:
    """A number control's (valuemin, valuemax), when the page gives both (a number input without min and max
    reads 0..0: no range)."""
    low, high = _property(node, "valuemin"), _property(node, "valuemax")
    numbers = isinstance(low, int | float) and isinstance(high, int | float)
    return (float(low), float(high)) if numbers and high > low else None


def _states(node: Mapping[str, Any], bounds: tuple[int, int, int, int] | None, viewport: tuple[int, int]
            ) -> list[str]:
    states = [name for name in _BOOLEAN_STATES if _property(node, name) in (True, "true")]
    if _property(node, "checked") in (True, "true", "mixed"):
        states.append("checked")
    states.append("disabled" if _property(node, "disabled") in (True, "true") else "enabled")
    if bounds is not None and bounds[2] > 0 and bounds[3] > 0 and bounds[0] < viewport[0] and bounds[1] < viewport[1] \
            and bounds[0] + bounds[2] > 0 and bounds[1] + bounds[3] > 0:
        states += ["showing", "visible"]
    return states


def elements_from_ax(nodes: Sequence[Mapping[str, Any]], boxes: Mapping[int, tuple[float, float, float, float]],
                     viewport: tuple[int, int], app: str = "") -> tuple[UIElement, ...]:
    """Normalised records of a `getFullAXTree` answer in tree order; ignored and presentational nodes are left out
    and their children lifted to the nearest kept ancestor, whose child indexes the paths count."""
    by_id = {node["nodeId"]: node for node in nodes}
    roots = [node for node in nodes if not node.get("parentId") or node["parentId"] not in by_id]
    out: list[UIElement] = []

    def walk(node: Mapping[str, Any], path: tuple[int, ...], counter: list[int]) -> None:
        role = (node.get("role") or {}).get("value", "")
        kept = not node.get("ignored") and role not in _SKIPPED
        if kept:
            box = boxes.get(node.get("backendDOMNodeId", -1))
            bounds = tuple(round(v) for v in box) if box is not None else None
            here = (*path, counter[0])
            counter[0] += 1
            out.append(UIElement(role=role, name=str((node.get("name") or {}).get("value", "")),
                                 value=str((node.get("value") or {}).get("value", "")),
                                 states=tuple(_states(node, bounds, viewport)), bounds=bounds,  # type: ignore[arg-type]
                                 path=here, app=app, value_range=_range(node)))
            path, counter = here, [0]
        for child in node.get("childIds", ()):
            if child in by_id:
                walk(by_id[child], path, counter)

    top = [0]
    for root in roots:
        walk(root, (), top)
    return tuple(out)
