"""GUI-Owl (Mobile-Agent-v3) tool calls to unified actions.

An item is a response holding one or more `<tool_call>{"name": …, "arguments": {…}}</tool_call>` blocks
(any thinking around them is ignored), or the tool-call object itself. Two tools exist: `mobile_use`
(phones) and `computer_use` (desktops); their action names overlap but mean the same things.

Decisions where the tools leave room:

- `system_button` "Menu" is "opening the application background menu" (the tool's own description), i.e.
  the recent-apps screen, so it maps to PressRecent.
- Mobile `key` takes adb keyevent names; only those with a unified action map (back, home, enter,
  app_switch, with or without a KEYCODE_ prefix); volume, power, camera and the like cannot be mapped.
- Scroll `pixels`: the tool says "positive values scroll up, negative values scroll down, between -5 and
  5", i.e. wheel notches, not pixels. The sign gives the direction and the magnitude, rounded to a whole
  notch (at least 1), the amount. Zero scrolls nowhere and cannot be mapped.
- Computer `type` with `enter=1` appends "\\n" (on the desktop a newline presses Enter); `clear=1` first
  selects everything with ctrl+a, so the typed text replaces it.
- `terminate` success → Finished; failure (or "fail") → CallUser with a message saying the agent gave up.

Coordinates are absolute pixels of the resized screenshot (Qwen2.5-VL frame), kept as given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..space import (
    Action,
    Answer,
    CallUser,
    Click,
    DoubleClick,
    Drag,
    Finished,
    Hotkey,
    Hover,
    LaunchApp,
    LongPress,
    MiddleClick,
    Point,
    PressBack,
    PressEnter,
    PressHome,
    PressRecent,
    RightClick,
    Scroll,
    Swipe,
    TripleClick,
    Type,
    Wait,
)
from .base import as_point, fail, fields_of, guarded, number, register

FAILURE_MESSAGE = "GUI-Owl gave up on the task (terminate status 'failure')"

_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_BUTTONS: dict[str, Callable[[], Action]] = {
    "back": PressBack, "home": PressHome, "menu": PressRecent, "enter": PressEnter,
}
_KEYEVENTS: dict[str, Callable[[], Action]] = {
    "back": PressBack, "home": PressHome, "enter": PressEnter, "app_switch": PressRecent,
}


@dataclass(frozen=True)
class GuiOwlConverter:
    name: ClassVar[str] = "guiowl"

    def to_unified(self, item: Any) -> tuple[Action, ...]:
        return guarded("GUI-Owl", item, _convert)


def _convert(item: Any) -> tuple[Action, ...]:
    calls = _tool_calls(item)
    actions: list[Action] = []
    for call in calls:
        call = fields_of(call, "a tool call")
        tool = call.get("name")
        table = _TOOLS.get(tool) if isinstance(tool, str) else None
        if table is None:
            fail(f"unknown tool {tool!r}; GUI-Owl's tools are {', '.join(_TOOLS)}")
        args = call.get("arguments")
        if isinstance(args, str):  # some servers send arguments as a JSON string
            args = _json(args, "arguments")
        args = fields_of(args, f"{tool} arguments")
        action = args.get("action")
        build = table.get(action) if isinstance(action, str) else None
        if build is None:
            fail(f"{tool} has no action {action!r}; known: {', '.join(table)}")
        actions.extend(build(args))
    return tuple(actions)


def _tool_calls(item: Any) -> list[Any]:
    if isinstance(item, Mapping):
        return [item]
    if not isinstance(item, str):
        fail(f"a GUI-Owl item is response text or a tool-call object, got {type(item).__name__}")
    blocks = _TOOL_CALL.findall(item)
    if blocks:
        return [_json(block, "<tool_call>") for block in blocks]
    if item.strip().startswith("{"):
        return [_json(item, "tool call")]
    fail('no <tool_call>{"name": …, "arguments": {…}}</tool_call> in the response')


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        fail(f"{what} is not valid JSON ({exc})")


# --- arguments ------------------------------------------------------------------------------------

def _point(args: Mapping[str, Any], name: str = "coordinate") -> Point:
    if name not in args:
        fail(f"{args['action']} needs {name} [x, y]")
    return as_point(args[name], name)


def _text(args: Mapping[str, Any], name: str = "text") -> str:
    value = args.get(name)
    if not isinstance(value, str):
        fail(f"{args['action']} needs {name} as a string, got {value!r}")
    return value


def _seconds(args: Mapping[str, Any]) -> float | int | None:
    return None if args.get("time") is None else number(args["time"], "time")


def _named(table: Mapping[str, Callable[[], Action]], args: Mapping[str, Any], name: str) -> tuple[Action, ...]:
    raw = _text(args, name)
    key = raw.strip().lower().removeprefix("keycode_")
    if key not in table:
        fail(f"{args['action']} {raw!r} has no unified action; known: {', '.join(table)}")
    return (table[key](),)


def _terminate(args: Mapping[str, Any]) -> tuple[Action, ...]:
    status = args.get("status")
    if status == "success":
        return (Finished(),)
    if status in ("failure", "fail"):
        return (CallUser(FAILURE_MESSAGE),)
    fail(f"terminate status must be 'success' or 'failure', got {status!r}")


def _scroll(args: Mapping[str, Any]) -> tuple[Action, ...]:
    pixels = number(args.get("pixels"), "pixels")
    if pixels == 0:
        fail("scroll by 0 pixels scrolls nowhere")
    point = _point(args) if "coordinate" in args else None
    return (Scroll(direction="up" if pixels > 0 else "down", point=point, amount=max(1, round(abs(pixels)))),)


def _computer_type(args: Mapping[str, Any]) -> tuple[Action, ...]:
    text = _text(args) + ("\n" if args.get("enter") == 1 else "")
    clear = (Hotkey(("ctrl", "a")),) if args.get("clear") == 1 else ()
    return (*clear, Type(text))


def _computer_key(args: Mapping[str, Any]) -> tuple[Action, ...]:
    keys = args.get("keys")
    if isinstance(keys, str):
        keys = [keys]
    if not isinstance(keys, list):
        fail(f"key needs keys as a list of key names, got {keys!r}")
    return (Hotkey(tuple(keys)),)


Builder = Callable[[Mapping[str, Any]], tuple[Action, ...]]


def _one(build: Callable[[Mapping[str, Any]], Action]) -> Builder:
    return lambda args: (build(args),)


_SHARED: dict[str, Builder] = {
    "click": _one(lambda a: Click(_point(a))),
    "wait": _one(lambda a: Wait(seconds=_seconds(a))),
    "terminate": _terminate,
    "answer": _one(lambda a: Answer(_text(a))),
}

_MOBILE: dict[str, Builder] = {
    **_SHARED,
    "key": lambda a: _named(_KEYEVENTS, a, "text"),
    "long_press": _one(lambda a: LongPress(_point(a), duration=_seconds(a))),
    "swipe": _one(lambda a: Swipe(start=_point(a), end=_point(a, "coordinate2"))),
    "type": _one(lambda a: Type(_text(a))),
    "system_button": lambda a: _named(_BUTTONS, a, "button"),
    "open": _one(lambda a: LaunchApp(_text(a))),
}

_COMPUTER: dict[str, Builder] = {
    **_SHARED,
    "left_click": _one(lambda a: Click(_point(a))),
    "double_click": _one(lambda a: DoubleClick(_point(a))),
    "triple_click": _one(lambda a: TripleClick(_point(a))),
    "right_click": _one(lambda a: RightClick(_point(a))),
    "middle_click": _one(lambda a: MiddleClick(_point(a))),
    "mouse_move": _one(lambda a: Hover(_point(a))),
    "drag": _one(lambda a: Drag(start=_point(a), end=_point(a, "coordinate2"))),
    "left_click_drag": _one(lambda a: Drag(end=_point(a))),
    "scroll": _scroll,
    "key": _computer_key,
    "type": _computer_type,
}

_TOOLS: dict[str, dict[str, Builder]] = {"mobile_use": _MOBILE, "computer_use": _COMPUTER}

register(GuiOwlConverter())
