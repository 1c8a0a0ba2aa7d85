"""Unified actions to pyautogui code text, for harnesses that execute pyautogui scripts (OSWorld-style).

The text is generated from the records alone: numbers with `repr`, strings with `repr` (so any content,
quotes and newlines included, is a valid literal that reads back exactly), one statement per line, so the
OpenCUA converter maps it back to the same records. Coordinates are written in whatever frame the actions
carry. Unspecified amounts use the defaults below.

Only what a desktop mouse and keyboard do has pyautogui code; phone and episode actions (PressBack,
LaunchApp, Answer, Finished, …) raise ConvertError. `Type` becomes `pyautogui.write`, which presses Enter
for each "\\n" (the unified desktop meaning) but cannot type non-ASCII characters; harnesses that need
those paste through the clipboard instead.
"""

from __future__ import annotations

from collections.abc import Callable

from ..space import (
    Action,
    ActionSequence,
    Click,
    Direction,
    DoubleClick,
    Drag,
    Hotkey,
    Hover,
    KeyDown,
    KeyUp,
    MiddleClick,
    MouseDown,
    MouseUp,
    Number,
    Point,
    PressEnter,
    RightClick,
    Scroll,
    TripleClick,
    Type,
    Wait,
)
from .base import ConvertError

#: Wheel notches for a Scroll without an amount (what UI-TARS' own pyautogui output uses).
DEFAULT_SCROLL_NOTCHES = 5
#: Seconds for a Wait without a duration.
DEFAULT_WAIT_SECONDS = 1


def pyautogui_code(*actions: Action) -> str:
    """pyautogui statements, one per line, that perform `actions` in order."""
    return "\n".join(line for action in actions for line in _lines(action))


def _lines(action: Action) -> list[str]:
    render = _RENDER.get(type(action))
    if render is None:
        supported = ", ".join(sorted(cls.type.value for cls in _RENDER))
        raise ConvertError(f"{action.type} has no pyautogui code (pyautogui drives a desktop mouse and keyboard); "
                           f"pyautogui code exists for: {supported}")
    return render(action)


def _num(value: Number) -> str:
    return repr(value)


def _at(point: Point) -> str:
    return f"x={_num(point[0])}, y={_num(point[1])}"


def _call(function: str, *args: str) -> str:
    return f"pyautogui.{function}({', '.join(args)})"


def _scroll(action: Scroll) -> list[str]:
    notches = action.amount or DEFAULT_SCROLL_NOTCHES
    function = "scroll" if action.direction in (Direction.UP, Direction.DOWN) else "hscroll"
    signed = notches if action.direction in (Direction.UP, Direction.RIGHT) else -notches
    where = () if action.point is None else (_at(action.point),)
    return [_call(function, str(signed), *where)]


def _hotkey(action: Hotkey) -> list[str]:
    keys = [repr(key) for key in action.keys]
    if len(keys) == 1:
        presses = () if action.repeat == 1 else (f"presses={action.repeat}",)
        return [_call("press", keys[0], *presses)]
    return [_call("hotkey", *keys)] * action.repeat


def _drag(action: Drag) -> list[str]:
    start = [] if action.start is None else [_call("moveTo", _at(action.start))]
    return [*start, _call("dragTo", _at(action.end), "button='left'")]


def _mouse(function: str) -> Callable[[MouseDown | MouseUp], list[str]]:
    return lambda action: [_call(function) if action.point is None else _call(function, _at(action.point))]


def _pointed(function: str) -> Callable[[Action], list[str]]:
    return lambda action: [_call(function, _at(action.point))]


_RENDER: dict[type, Callable] = {
    Click: _pointed("click"),
    DoubleClick: _pointed("doubleClick"),
    TripleClick: _pointed("tripleClick"),
    RightClick: _pointed("rightClick"),
    MiddleClick: _pointed("middleClick"),
    Hover: _pointed("moveTo"),
    Drag: _drag,
    MouseDown: _mouse("mouseDown"),
    MouseUp: _mouse("mouseUp"),
    Scroll: _scroll,
    Type: lambda action: [_call("write", f"message={action.content!r}")],
    Hotkey: _hotkey,
    KeyDown: lambda action: [_call("keyDown", repr(key)) for key in action.keys],
    KeyUp: lambda action: [_call("keyUp", repr(key)) for key in action.keys],
    PressEnter: lambda action: [_call("press", "'enter'")],
    Wait: lambda action: [_call("sleep", _num(DEFAULT_WAIT_SECONDS if action.seconds is None else action.seconds))],
    ActionSequence: lambda action: [line for inner in action.actions for line in _lines(inner)],
}
