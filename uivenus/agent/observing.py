"""Observation facts beyond the screenshot that a non-model policy may declare it reads (`Policy.observes`).

A text-reading agent sees what a screen-reading model sees, in text: the screen's text (`screen_text`: the page's
text where the env has a DOM, OCR elsewhere) and the elements it could act on with their boxes (`elements`:
read from the page, or OCR lines where there is no page). The loop puts exactly the facts a policy names into its
request context, so nothing is computed for policies that do not read it; a fact is one entry of
`OBSERVATION_FACTS`. Never an answer, never the env itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from uivenus.agent.policies.ocr import ocr_text_boxes
from uivenus.envs.base import EnvError, Observation
from uivenus.envs.page_script import page_script

__all__ = ["OBSERVATION_FACTS", "ScreenElement", "observation_facts"]

_ELEMENTS_JS = page_script("uivenus.agent", "screen_elements.js")


@dataclass(frozen=True)
class ScreenElement:
    """One thing on the screen an agent could act on: its label, what else names it (placeholder, field label),
    whether it takes typing and clicks (a page says so; OCR text might be anything), and its box (x1, y1, x2, y2) in
    screen pixels. A picture has tag "img" and no label."""

    tag: str
    label: str
    box: tuple[float, float, float, float]
    hint: str = ""
    editable: bool = False
    clickable: bool = True

    @property
    def center(self) -> tuple[float, float]:
        x1, y1, x2, y2 = self.box
        return (x1 + x2) / 2, (y1 + y2) / 2


def _screen_text(env: Any, observation: Observation) -> str:
    if observation.text is not None:
        return observation.text
    return "\n".join(box.text for box in ocr_text_boxes(observation.screenshot))


def _elements(env: Any, observation: Observation) -> tuple[ScreenElement, ...]:
    """The page's elements where the env runs page scripts (`query_dom`), else the screen's OCR lines."""
    query = getattr(env, "query_dom", None)
    if callable(query):
        try:
            found = query(_ELEMENTS_JS, None) or []
        except EnvError:  # the page was being replaced mid-read: nothing to act on this step
            found = []
        return tuple(ScreenElement(e["tag"], e["label"], tuple(e["box"]), e["hint"], e["editable"], e["clickable"])
                     for e in found)
    return tuple(ScreenElement("text", box.text, box.box) for box in ocr_text_boxes(observation.screenshot))


#: Fact name -> how it is read from the env and the observation it just gave.
OBSERVATION_FACTS: dict[str, Callable[[Any, Observation], Any]] = {
    "screen_text": _screen_text,
    "elements": _elements,
}


def observation_facts(names: tuple[str, ...], env: Any, observation: Observation) -> Mapping[str, Any]:
    """The facts `names` (a policy's `observes`) for this step; an unknown name is a ValueError naming the known."""
    unknown = [name for name in names if name not in OBSERVATION_FACTS]
    if unknown:
        raise ValueError(f"no observation fact {', '.join(unknown)}; known: {', '.join(OBSERVATION_FACTS)}")
    return {name: OBSERVATION_FACTS[name](env, observation) for name in names}
