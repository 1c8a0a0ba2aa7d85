"""Unified phone actions to adb shell argument lists: the one place that knows Android's `input` syntax.

`adb_commands(action)` returns the commands to run, in order, each as an argument list such as
`["input", "tap", "540", "1200"]`; never a joined shell string. Passing each list to the transport's
argument form (adbutils `device.shell([...])` quotes every argument) keeps text from being read as shell
syntax. Points must already be screen pixels; they are written as integers rounded half up.

`input text` has its own rules, handled here: it turns "%s" into a space (so spaces are written as %s,
and a literal "%s" in the text is typed in two pieces, "…%" then "s…"), and it can only type printable
ASCII. A newline becomes an Enter key event. Any other character cannot be typed this way: that is a
ConvertError telling the caller to use an IME (e.g. ADBKeyboard's ADB_INPUT_B64 broadcast, as AndroidEnv does).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from ..space import (
    Action,
    Click,
    DoubleClick,
    Drag,
    LaunchApp,
    LongPress,
    Number,
    Platform,
    PressBack,
    PressEnter,
    PressHome,
    PressRecent,
    Swipe,
    Type,
    Wait,
)
from .base import ConvertError

#: Hold time of a LongPress without a duration (what Android's own long-press timeout rounds up to).
LONG_PRESS_MS = 1000
SWIPE_MS = 300
#: A drag moves slowly so the screen follows the finger instead of flinging.
DRAG_MS = 1000

_PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+")
_TYPABLE = re.compile(r"[\x20-\x7e]*")


def adb_commands(action: Action) -> list[list[str]]:
    """The adb shell argument lists that perform `action` on a phone ([] when nothing runs, e.g. Wait)."""
    build = _COMMANDS.get(type(action))
    if build is None:
        if Platform.MOBILE not in action.platforms:
            raise ConvertError(f"{action.type} is not a phone action; phones accept: "
                               f"{', '.join(sorted(cls.type.value for cls in _COMMANDS))}")
        raise ConvertError(f"{action.type} is handled by the agent or environment, not sent to the device; "
                           "there is no adb command for it")
    return build(action)


def _px(value: Number) -> str:
    return str(math.floor(value + 0.5))


def _swipe(start: tuple[Number, Number], end: tuple[Number, Number], ms: int) -> list[str]:
    return ["input", "swipe", _px(start[0]), _px(start[1]), _px(end[0]), _px(end[1]), str(ms)]


def _tap(action: Click | DoubleClick) -> list[list[str]]:
    tap = ["input", "tap", _px(action.point[0]), _px(action.point[1])]
    return [tap] if isinstance(action, Click) else [tap, list(tap)]


def _long_press(action: LongPress) -> list[list[str]]:
    ms = LONG_PRESS_MS if action.duration is None else max(1, round(action.duration * 1000))
    return [_swipe(action.point, action.point, ms)]


def _drag(action: Drag) -> list[list[str]]:
    if action.start is None:
        raise ConvertError("Drag without a start point drags from the pointer, and a phone has none; give start")
    return [_swipe(action.start, action.end, DRAG_MS)]


def _type(action: Type) -> list[list[str]]:
    commands: list[list[str]] = []
    for i, line in enumerate(action.content.split("\n")):
        if i:
            commands.append(["input", "keyevent", "KEYCODE_ENTER"])
        if not _TYPABLE.fullmatch(line):
            bad = next(ch for ch in line if not _TYPABLE.fullmatch(ch))
            raise ConvertError(f"Type {action.content!r}: adb `input text` cannot type {bad!r} (only printable "
                               "ASCII); send this text through an IME such as ADBKeyboard (ADB_INPUT_B64 broadcast; "
                               "AndroidEnv does this when it is installed)")
        pieces = line.split("%s")
        for j, piece in enumerate(pieces):
            chunk = ("s" if j else "") + piece + ("%" if j < len(pieces) - 1 else "")
            if chunk:
                commands.append(["input", "text", chunk.replace(" ", "%s")])
    return commands


def _launch(action: LaunchApp) -> list[list[str]]:
    if not _PACKAGE.fullmatch(action.app):
        raise ConvertError(f"LaunchApp {action.app!r} is an app name, not a package; resolve it to a package "
                           "such as com.android.settings first")
    return [["monkey", "-p", action.app, "-c", "android.intent.category.LAUNCHER", "1"]]


def _key(code: str) -> Callable[[Action], list[list[str]]]:
    return lambda action: [["input", "keyevent", code]]


_COMMANDS: dict[type, Callable] = {
    Click: _tap,
    DoubleClick: _tap,
    LongPress: _long_press,
    Swipe: lambda action: [_swipe(action.start, action.end, SWIPE_MS)],
    Drag: _drag,
    Type: _type,
    PressBack: _key("KEYCODE_BACK"),
    PressHome: _key("KEYCODE_HOME"),
    PressEnter: _key("KEYCODE_ENTER"),
    PressRecent: _key("KEYCODE_APP_SWITCH"),
    LaunchApp: _launch,
    Wait: lambda action: [],
}
