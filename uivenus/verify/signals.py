"""The observable signals a step label is decided from, each computed on its own and checkable by hand: what lies
under the action's point and what text the screen shows (two read-only probes of a live page, `hit_test` and
`read_screen_text`, or their records in `Step.info`), how much the screen changed (`screen_change`), whether two
actions are the same (`same_action`), and whether the agent's think text and the task name what the action acts on
(`intent_consistency`, `on_goal`).

step.py gathers them into `StepSignals` and labels the step with its rule table; they live apart because measuring
a screen or a page is one job and deciding a label from the measures another (trace verification and the verifier
evaluation read these signals too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageChops

from uivenus.actions.grammar import parse_response
from uivenus.actions.syntax import ParseError
from uivenus.actions.points import iter_points
from uivenus.actions.space import Action, Type
from uivenus.actions.values import ActionError
from uivenus.envs.base import EnvError
from uivenus.envs.page_script import PageScript, page_script

__all__ = [
    "CHANGE_THRESHOLD", "COMPARE_WIDTH", "HIT_KEY", "HIT_TEST_JS", "PIXEL_TOLERANCE", "SAME_POINT_PX", "SCREEN_TEXT_JS",
    "SCREEN_TEXT_KEY", "action_fields", "hit_test", "intent_consistency", "on_goal", "page_probe", "read_screen_text",
    "same_action", "screen_change", "screen_changes", "think_text",
]

#: Where a recorder keeps, in `Step.info`, the DOM probe at the action's point and the text the screen showed.
HIT_KEY = "hit"
SCREEN_TEXT_KEY = "screen_text"
#: A step changed the screen when more than this share of its pixels changed visibly (see `screen_change`).
CHANGE_THRESHOLD = 0.0005
#: A pixel changed visibly when its grey level moved by more than this (0–255); below it is antialiasing noise.
PIXEL_TOLERANCE = 12
#: Screens are compared at this width at most (a toggle flipping still covers dozens of pixels there).
COMPARE_WIDTH = 320
#: Two pointer actions are the same when each point is within this many pixels of the other's.
SAME_POINT_PX = 8

_STOPWORDS = frozenset(
    "the a an and or of to in on at for with from by my your this that these those it its is are be then into "
    "next step will now click tap press type enter button field page screen off".split())
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_QUOTED = re.compile(r'"([^"]{1,80})"|“([^”]{1,80})”|(?<!\w)\'([^\']{1,80})\'(?!\w)')
#: Screen lines this short are UI labels (button captions, titles) a think text may name.
_LABEL_WORDS = 4


# --- reading a live page (scripts in verify/js/) ------------------------------------------------------

#: What lies under a point: the nearest actionable ancestor (control, role, onclick, pointer cursor) or the bare
#: element, with its text; read-only.
HIT_TEST_JS = page_script("uivenus.verify", "hit_test.js")
#: The text a reader of the screenshot would see: text inside the viewport (and field values, or placeholders of
#: empty fields), grouped into visual rows read left to right.
SCREEN_TEXT_JS = page_script("uivenus.verify", "screen_text.js")


def page_probe(env: Any, script: PageScript, arg: Any = None) -> Any:
    """Run a packaged read-only `script` on a browser env's page (`query_dom`); None when the env has no DOM or the
    page was being replaced mid-read."""
    query = getattr(env, "query_dom", None)
    if not callable(query):
        return None
    try:
        return query(script, arg)
    except EnvError:
        return None


def hit_test(env: Any, point: tuple[float, float]) -> Mapping[str, Any] | None:
    """What lies under `point` on a browser env's live page (see `HIT_TEST_JS`); None without a DOM."""
    return page_probe(env, HIT_TEST_JS, [float(point[0]), float(point[1])])


def read_screen_text(env: Any) -> str | None:
    """The visible text of a browser env's screen, row by row (see `SCREEN_TEXT_JS`); None without a DOM."""
    return page_probe(env, SCREEN_TEXT_JS)


# --- pure signals -------------------------------------------------------------------------------------

def screen_change(before: Image.Image, after: Image.Image) -> float:
    """Share of pixels (compared in grey at most `COMPARE_WIDTH` wide) whose level moved by more than
    `PIXEL_TOLERANCE`; 1.0 when the screens differ in size."""
    return _change(_shrink(before), _shrink(after))


@dataclass(frozen=True)
class _Shrunk:
    """A screen as `screen_change` compares it: its own size (the size rule) and its pixels in grey, at most
    `COMPARE_WIDTH` wide."""

    size: tuple[int, int]
    grey: Image.Image


def _shrink(image: Image.Image) -> _Shrunk:
    """Shrunk once per screen: `screen_changes` compares each screen with both its neighbours."""
    width, height = image.size
    scale = min(1.0, COMPARE_WIDTH / width)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return _Shrunk(image.size, image.convert("L").resize(size, Image.Resampling.BOX))


#: `point`'s table for "moved visibly" (built once: a lambda is called 256 times per comparison).
_VISIBLE = [255 if v > PIXEL_TOLERANCE else 0 for v in range(256)]


def _change(before: _Shrunk, after: _Shrunk) -> float:
    """`screen_change` of two shrunk screens: the one place its rules live, for one pair and for a whole run."""
    if before.size != after.size:
        return 1.0
    diff = ImageChops.difference(before.grey, after.grey).point(_VISIBLE)
    width, height = before.grey.size
    return diff.histogram()[255] / (width * height)


def action_fields(action: Action) -> dict[str, Any]:
    data = action.to_dict()
    for name, _ in iter_points(action):
        data.pop(name, None)
    return data


def same_action(a: Action, b: Action, radius: float = SAME_POINT_PX) -> bool:
    """Same type, same non-point fields (text, keys, direction), and every point within `radius` pixels."""
    if a.type is not b.type or action_fields(a) != action_fields(b):
        return False
    pa, pb = [p for _, p in iter_points(a)], [p for _, p in iter_points(b)]
    return len(pa) == len(pb) and all(abs(x1 - x2) <= radius and abs(y1 - y2) <= radius
                                      for (x1, y1), (x2, y2) in zip(pa, pb, strict=True))


def _words(text: str) -> set[str]:
    """Content words, lower-cased, a plural `s` dropped ("contacts" meets "contact")."""
    out = set()
    for word in _WORD.findall(text.casefold()):
        if (len(word) < 3 and not word.isdigit()) or word in _STOPWORDS:
            continue
        out.add(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return out


def _acted_text(action: Action, target: str | None) -> str | None:
    """What an action acts on or enters, as text: the typed text of a Type, the target's text of a pointer action."""
    if isinstance(action, Type):
        return action.content
    return target or None


def on_goal(action: Action, target: str | None, instruction: str) -> bool | None:
    """Does what the action acts on (its target's text) or enters (typed text) share a word with the task?"""
    text = _acted_text(action, target)
    if not text:
        return None
    return bool(_words(text) & _words(instruction))


def intent_consistency(intent: str | None, action: Action, target: str | None,
                       screen_text: str | None = None) -> bool | None:
    """True when the think text names what the action acts on (or types); False when it names something else
    that is on the screen (a quoted name, a short on-screen label) but not that; None when it names nothing."""
    acted = _acted_text(action, target)
    if not intent or not acted:
        return None
    think = _words(intent)
    if think & _words(acted):
        return True
    named = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(intent)]
    for line in (screen_text or "").splitlines():
        words = _words(line)
        if words and len(line.split()) <= _LABEL_WORDS and words <= think:
            named.append(line)
    return False if any(_words(name) for name in named) else None


def screen_changes(screens: Sequence[Image.Image | None]) -> list[float | None]:
    """Change from each step's screen to the next one's (`screen_change`); None where either is missing (the last
    step). Each screen is shrunk once, not once per neighbour: verification runs this on every collected episode."""
    shrunk = [None if image is None else _shrink(image) for image in screens]
    out = [None if a is None or b is None else _change(a, b) for a, b in zip(shrunk, shrunk[1:], strict=False)]
    return [*out, None][:len(screens)]  # none for no steps


def think_text(response: str | None) -> str | None:
    """The <think> part of a model reply (leniently read); None when there is none."""
    if not response:
        return None
    try:
        return parse_response(response, lenient=True).think
    except (ParseError, ActionError):
        match = re.search(r"<think>(.*?)</think>", response, re.DOTALL)
        return match.group(1) if match else None
