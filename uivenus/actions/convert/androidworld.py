"""AndroidWorld JSON actions (`android_world/env/json_action.py`) to unified actions.

The mapping follows what AndroidWorld's executor (`env/actuation.py`) does with each action, not only
its name:

- `input_text` clicks its target first (when it has one), types, then presses Enter: Click?, Type, PressEnter.
- `scroll` names the way the *view* moves ("scroll down" shows what is below), so the finger moves the
  other way; `swipe` names the way the *finger* moves. Both become a `Swipe` from the centre of the region
  (the element's box when an `index` is given, else the screen) to its edge in the finger's direction:
  scroll down == swipe up == finger from the centre to the top edge. The far edges are the last pixel
  inside the region (x2 - 1, y2 - 1) so the end point stays on screen. (AndroidWorld's own `swipe` runs
  edge to edge, from outside the screen on two sides, and flips left/right; we keep one geometry.)
- `wait` sleeps one second in AndroidWorld, so it becomes `Wait(seconds=1)`.
- `status` complete → Finished; infeasible → CallUser saying so. `answer` → Answer.
- An element `index` needs that element's box: pass `element_boxes={index: (x1, y1, x2, y2)}`; the
  action then targets the box centre. Without boxes the item cannot be mapped (ConvertError).
- `keycode` and `clear_text` are accepted and ignored, as AndroidWorld's executor ignores them for these
  actions.

Coordinates are screen pixels, kept as given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..space import (
    Action,
    Answer,
    CallUser,
    Click,
    DoubleClick,
    Finished,
    LaunchApp,
    LongPress,
    Number,
    Point,
    PressBack,
    PressEnter,
    PressHome,
    Swipe,
    Type,
    Wait,
)
from .base import ConvertError, box_centre, fail, guarded, number, register

Box = tuple[Number, Number, Number, Number]

_FIELDS = ("action_type", "index", "x", "y", "text", "direction", "goal_status", "app_name", "keycode", "clear_text")
_DIRECTIONS = ("up", "down", "left", "right")
_OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}
WAIT_SECONDS = 1
INFEASIBLE_MESSAGE = "AndroidWorld agent reported the task as infeasible"


@dataclass(frozen=True)
class AndroidWorldConverter:
    """`screen` = (width, height) in pixels places scroll/swipe gestures; `element_boxes` maps an element
    index to its (x1, y1, x2, y2) pixel box."""

    name: ClassVar[str] = "androidworld"
    screen: tuple[int, int] | None = None
    element_boxes: Mapping[int, Box] | None = None

    def __post_init__(self) -> None:
        if self.screen is not None:
            valid = (isinstance(self.screen, (tuple, list)) and len(self.screen) == 2
                     and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in self.screen))
            if not valid:
                raise ConvertError(f"screen must be (width, height) in positive whole pixels, got {self.screen!r}")
            object.__setattr__(self, "screen", tuple(self.screen))
        if self.element_boxes is not None:
            if not isinstance(self.element_boxes, Mapping):
                raise ConvertError("element_boxes must map element index -> (x1, y1, x2, y2), "
                                   f"got {self.element_boxes!r}")
            boxes = {}
            for index, box in self.element_boxes.items():
                key = _index(index)
                box_centre(box, f"element_boxes[{key}]")  # validates the box now, not at first use
                boxes[key] = tuple(box)
            object.__setattr__(self, "element_boxes", boxes)

    def to_unified(self, item: Any) -> tuple[Action, ...]:
        return guarded("AndroidWorld", item, self._convert)

    def _convert(self, item: Any) -> tuple[Action, ...]:
        data = _as_object(item)
        unknown = sorted(set(data) - set(_FIELDS), key=str)
        if unknown:
            fail(f"unknown field(s) {unknown}; AndroidWorld actions have {list(_FIELDS)}")
        kind = data.get("action_type")
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            fail(f"unknown action_type {kind!r}; known: {', '.join(_HANDLERS)}")
        return handler(self, data)

    # --- targets ----------------------------------------------------------------------------------

    def _target(self, data: Mapping[str, Any]) -> Point | None:
        """The point an action acts on: x, y, or the centre of element `index`'s box; None if neither."""
        kind = data["action_type"]
        has_xy = data.get("x") is not None or data.get("y") is not None
        if data.get("index") is not None:
            if has_xy:
                fail(f"{kind} gives both an element index and x, y; AndroidWorld takes one or the other")
            return box_centre(self._box(kind, data["index"]))
        if not has_xy:
            return None
        if data.get("x") is None or data.get("y") is None:
            fail(f"{kind} needs both x and y, got x={data.get('x')!r}, y={data.get('y')!r}")
        return (number(data["x"], "x"), number(data["y"], "y"))

    def _box(self, kind: str, raw_index: Any) -> Box:
        index = _index(raw_index)
        if self.element_boxes is None or index not in self.element_boxes:
            known = "no element boxes were given" if self.element_boxes is None else \
                f"boxes are known for {sorted(self.element_boxes)}"
            fail(f"{kind} by element index {index} has no box ({known}); "
                 f"pass element_boxes={{{index}: (x1, y1, x2, y2)}} to map it")
        return self.element_boxes[index]

    def _region(self, data: Mapping[str, Any]) -> Box:
        """Where a scroll/swipe happens: the element's box (clipped to the screen when known) or the screen."""
        kind = data["action_type"]
        if data.get("index") is not None:
            x1, y1, x2, y2 = self._box(kind, data["index"])
            if self.screen is None:
                return (x1, y1, x2, y2)
            width, height = self.screen
            return (max(x1, 0), max(y1, 0), min(x2, width), min(y2, height))
        if self.screen is None:
            fail(f"{kind} {data.get('direction')!r} is a swipe across the screen, whose size is unknown; "
                 "give the screen size in pixels (uivenus actions convert --screen 1080x2400; "
                 "screen=(width, height) in code)")
        return (0, 0, *self.screen)


def _as_object(item: Any) -> Mapping[str, Any]:
    if isinstance(item, str):
        try:
            item = json.loads(item)
        except (ValueError, RecursionError) as exc:
            fail(f"not a JSON action object ({exc})")
    if not isinstance(item, Mapping):
        fail(f"an AndroidWorld action is a JSON object with an action_type, got {type(item).__name__}")
    return item


def _index(raw: Any) -> int:
    if isinstance(raw, str) and raw.strip().isdecimal():
        return int(raw)
    if isinstance(raw, bool) or not isinstance(raw, int):
        fail(f"element index must be a whole number, got {raw!r}")
    return raw


def _text(data: Mapping[str, Any], field: str) -> str:
    """A text field; AndroidWorld turns non-string values into strings, and so do we."""
    value = data.get(field)
    if value is None:
        fail(f"{data['action_type']} needs {field!r}")
    if isinstance(value, (dict, list)):
        fail(f"{field} must be text, got {value!r}")
    return value if isinstance(value, str) else str(value)


def _finger_swipe(region: Box, finger: str) -> Swipe:
    x1, y1, x2, y2 = region
    centre = box_centre(region, "region")
    cx, cy = centre
    ends = {"up": (cx, y1), "down": (cx, y2 - 1), "left": (x1, cy), "right": (x2 - 1, cy)}
    return Swipe(start=centre, end=ends[finger])


def _direction(data: Mapping[str, Any]) -> str:
    direction = data.get("direction")
    if direction not in _DIRECTIONS:
        fail(f"{data['action_type']} direction must be one of {', '.join(_DIRECTIONS)}, got {direction!r}")
    return direction


# --- one handler per action_type ------------------------------------------------------------------

Handler = Callable[[AndroidWorldConverter, Mapping[str, Any]], tuple[Action, ...]]


def _pointed(record: Callable[[Point], Action]) -> Handler:
    def handle(conv: AndroidWorldConverter, data: Mapping[str, Any]) -> tuple[Action, ...]:
        point = conv._target(data)
        if point is None:
            fail(f"{data['action_type']} needs x, y or an element index")
        return (record(point),)
    return handle


def _input_text(conv: AndroidWorldConverter, data: Mapping[str, Any]) -> tuple[Action, ...]:
    text = _text(data, "text")
    if not text:
        fail("input_text with empty text does nothing in AndroidWorld; nothing to map")
    point = conv._target(data)
    focus = () if point is None else (Click(point),)
    return (*focus, Type(text), PressEnter())


def _status(conv: AndroidWorldConverter, data: Mapping[str, Any]) -> tuple[Action, ...]:
    status = data.get("goal_status")
    if status == "complete":
        return (Finished(),)
    if status == "infeasible":
        return (CallUser(INFEASIBLE_MESSAGE),)
    fail(f"status goal_status must be 'complete' or 'infeasible', got {status!r}")


def _fixed(*actions: Action) -> Handler:
    return lambda conv, data: actions


_HANDLERS: dict[str, Handler] = {
    "click": _pointed(Click),
    "double_tap": _pointed(DoubleClick),
    "long_press": _pointed(LongPress),
    "scroll": lambda conv, data: (_finger_swipe(conv._region(data), _OPPOSITE[_direction(data)]),),
    "swipe": lambda conv, data: (_finger_swipe(conv._region(data), _direction(data)),),
    "input_text": _input_text,
    "navigate_home": _fixed(PressHome()),
    "navigate_back": _fixed(PressBack()),
    "keyboard_enter": _fixed(PressEnter()),
    "open_app": lambda conv, data: (LaunchApp(_text(data, "app_name")),),
    "wait": _fixed(Wait(seconds=WAIT_SECONDS)),
    "status": _status,
    "answer": lambda conv, data: (Answer(_text(data, "text")),),
}

register(AndroidWorldConverter())
