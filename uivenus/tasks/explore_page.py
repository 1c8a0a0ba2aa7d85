"""What exploration reads of a sandbox app's page, and the gestures it makes there: the page's heading, its route
and its visible interactive elements (`read_elements`), what it shows went wrong (`page_facts`), and the value a
text field gets (`field_value`).

BrowserEnv has no public call listing a page's elements, so the two reads run fixed, read-only scripts
(tasks/js/elements.js, tasks/js/page_facts.js) through its DOM-query method, `query_dom`. They are apart from the
walk (explore.py) because reading a page is one job and deciding where to go next another; the task gate reads
`page_facts` too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from uivenus.envs.base import EnvError
from uivenus.envs.page_script import PageScript, page_script
from uivenus.envs.sandbox.solving import tid
from uivenus.tasks.naming import slug
from uivenus.tasks.vocabularies import VOCABULARIES, field_domain

__all__ = ["ELEMENTS_JS", "Element", "ExploreError", "Gesture", "PAGE_FACTS_JS", "field_value", "page_facts",
           "read_elements", "route_pattern"]


class ExploreError(RuntimeError):
    """The environment cannot be explored (no DOM to read, not a sandbox app)."""


#: Every visible interactive element with a test id (or DOM id): what it is, its state, whether something
#: covers its centre (a modal over the page). Field clear buttons are left out: they belong to their field.
ELEMENTS_JS = page_script("uivenus.tasks", "elements.js")
#: What a page says went wrong: the texts of visible `*-error` elements and the visible disabled controls.
PAGE_FACTS_JS = page_script("uivenus.tasks", "page_facts.js")

_FILL_TYPES = frozenset({"", "text", "tel", "email", "url", "number", "password"})


def _probe(env: Any, script: PageScript) -> Any:
    """Run a packaged read-only script on the env's page (`query_dom`)."""
    query = getattr(env, "query_dom", None)
    if not callable(query):
        raise ExploreError(f"{type(env).__name__} has no DOM to read; explore a BrowserEnv or a sandbox env")
    return query(script, None)


@dataclass(frozen=True)
class Element:
    """One interactive element as read from the page."""

    selector: str
    kind: str  # the test id (or #dom-id): one element kind, shared by the rows of a list
    tag: str
    type: str
    role: str | None
    label: str
    disabled: bool
    covered: bool
    data: Mapping[str, str] = field(default_factory=dict)
    value: str | None = None
    low: str | None = None
    high: str | None = None
    options: tuple[tuple[str, str], ...] = ()

    @property
    def gesture(self) -> str:
        """How exploration uses it: fill (a text field), select (a drop-down), tap (anything else), skip."""
        if self.tag == "textarea" or (self.tag == "input" and self.type in _FILL_TYPES):
            return "skip" if "search" in self.kind else "fill"
        if self.tag == "input" and self.type in ("search", "file"):
            return "skip"
        return "select" if self.tag == "select" else "tap"

    @property
    def words(self) -> list[str]:
        return self.kind.lstrip("#").replace("_", "-").split("-")


def route_pattern(route: str) -> str:
    """A URL hash with record ids generalised: '#edit/c12' -> '#edit/*', '#/message/m100' -> '#/message/*'."""
    return "/".join("*" if re.fullmatch(r"[a-z]{0,2}\d+", part) else part for part in route.split("/"))


def read_elements(env: Any) -> tuple[str, str, list[Element]]:
    """The page's heading, its route (URL hash, ids generalised) and its visible interactive elements."""
    raw = _probe(env, ELEMENTS_JS)
    elements = []
    for e in raw["elements"]:
        if e["testid"]:
            kind = e["testid"]
            selector = tid(kind, id=e["data"]["id"]) if "id" in e["data"] else tid(kind)
        else:
            kind = selector = f"#{e['domid']}"
        elements.append(Element(selector, kind, e["tag"], e["type"], e["role"], e["label"], e["disabled"],
                                e["covered"], e["data"], e["value"], e["min"], e["max"],
                                tuple((v, t) for v, t in e["options"])))
    return raw["heading"] or raw["title"], route_pattern(raw["route"]), elements


def page_facts(env: Any) -> dict[str, Any]:
    """What the page shows went wrong: `{"errors": {testid: text}, "disabled": [testid, ...]}`."""
    try:
        return dict(_probe(env, PAGE_FACTS_JS))
    except EnvError:
        return {"errors": {}, "disabled": []}


def field_value(element: Element) -> str:
    """What exploration types into a field: the first sample of the field's domain."""
    name = slug(element.kind)
    short = "_".join(name.split("_")[1:]) or name
    domain = field_domain(name) if field_domain(name) != "text" else field_domain(short, element.type)
    return VOCABULARIES.get(domain, ("Sample text",))[0]


@dataclass(frozen=True)
class Gesture:
    """One exploration gesture, replayable: tap, fill (with `value`) or select (the option `value`)."""

    action: str
    element: Element
    value: str | None = None

    def __str__(self) -> str:
        record = self.element.data.get("id")
        return (f"{self.action} {self.element.kind}" + (f"[{record}]" if record else "")
                + (f" = {self.value!r}" if self.value is not None else ""))
