"""OpenCUA pyautogui code to unified actions.

An item is a response (its fenced code blocks are read; prose around them such as `## Action:` is
ignored) or bare code. The code is parsed with `ast.parse(mode='exec')` and never run: every statement
must be a call of a known function (`pyautogui.*`, `computer.triple_click/terminate/wait`, `time.sleep`)
whose arguments are literals, otherwise the item is refused naming the statement. Each statement becomes
its own action(s), with one exception: `moveTo(a)` directly followed by `dragTo(b)` is one
`Drag(start=a, end=b)`, which is how pyautogui spells a drag from a given point.

Meanings: `scroll(n)` turns the wheel n notches, positive up; `hscroll(n)` positive right. `click` with
`clicks=2/3` is a double/triple click, with `button='right'/'middle'` a right/middle click. `press(k,
presses=n)` is `Hotkey((k,), repeat=n)`; a list of keys is pressed one after another. Timing arguments
(duration, interval, tween) do not change what is done and are ignored. `computer.terminate(status=
'success')` is Finished (Answer when it carries `answer`), `'failure'` is CallUser saying the agent gave up.

Coordinates are kept in the model's frame (absolute pixels of the resized screenshot, or 0–1 fractions in
some OpenCUA versions); only `uivenus.actions.coords` rescales.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..space import (
    HOTKEY_MAX_REPEAT,
    Action,
    Answer,
    CallUser,
    Click,
    DoubleClick,
    Drag,
    Finished,
    Hotkey,
    Hover,
    KeyDown,
    KeyUp,
    MiddleClick,
    MouseDown,
    MouseUp,
    Point,
    RightClick,
    Scroll,
    TripleClick,
    Type,
    Wait,
)
from .base import fail, guarded, number, register, shorten

FAILURE_MESSAGE = "OpenCUA gave up on the task (terminate status 'failure')"

_TIMING = ("duration", "tween", "logScreenshot", "_pause")
_BUTTONS = {"left": "left", "primary": "left", "right": "right", "secondary": "right", "middle": "middle"}


@dataclass(frozen=True)
class OpenCUAConverter:
    name: ClassVar[str] = "opencua"

    def to_unified(self, item: Any) -> tuple[Action, ...]:
        return guarded("OpenCUA", item, _convert)


def _convert(item: Any) -> tuple[Action, ...]:
    if not isinstance(item, str):
        fail(f"an OpenCUA item is response text or pyautogui code, got {type(item).__name__}")
    code = _code(item).strip()
    try:
        tree = ast.parse(code, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        fail(f"not Python code ({type(exc).__name__}: {exc})")
    if not tree.body:
        fail("the code has no statements")
    actions: list[Action] = []
    for statement in tree.body:
        for action in _statement(code, statement):
            if isinstance(action, Drag) and action.start is None and actions and isinstance(actions[-1], Hover):
                action = Drag(start=actions.pop().point, end=action.end)
            actions.append(action)
    return tuple(actions)


def _code(response: str) -> str:
    """The lines between ``` fence lines (an unclosed last fence runs to the end), or the whole response."""
    lines = response.split("\n")
    if not any(line.lstrip().startswith("```") for line in lines):
        return response
    inside, code = False, []
    for line in lines:
        if line.lstrip().startswith("```"):
            inside = not inside
        elif inside:
            code.append(line)
    return "\n".join(code)


@dataclass(frozen=True)
class _Function:
    """A known function: its parameters in pyautogui's positional order, and how to build the actions."""

    params: tuple[str, ...]
    build: Callable[[Mapping[str, Any]], tuple[Action, ...]]
    varargs: bool = False  # hotkey(*keys): positional arguments are collected under "*"


def _statement(code: str, statement: ast.stmt) -> tuple[Action, ...]:
    source = shorten(ast.get_source_segment(code, statement) or type(statement).__name__)
    call = statement.value if isinstance(statement, ast.Expr) else None
    func = getattr(call, "func", None)
    if not (isinstance(call, ast.Call) and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        fail(f"statement {source} is not a call of a known function (e.g. pyautogui.click(x=1, y=2))")
    name = f"{func.value.id}.{func.attr}"
    function = _FUNCTIONS.get(name)
    if function is None:
        fail(f"statement {source} calls {name}, which is not a known action; known: {', '.join(_FUNCTIONS)}")
    return function.build(_bind(source, name, function, call))


def _bind(source: str, name: str, function: _Function, call: ast.Call) -> dict[str, Any]:
    positional = [_literal(source, node) for node in call.args]
    if function.varargs:
        args: dict[str, Any] = {"*": positional}
    elif len(positional) > len(function.params):
        fail(f"statement {source}: {name} takes at most {len(function.params)} positional arguments")
    else:
        args = dict(zip(function.params, positional, strict=False))
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in function.params:
            fail(f"statement {source}: {name} has no argument {keyword.arg or '**'!r}; "
                 f"its arguments are {', '.join(function.params) or 'none'}")
        if keyword.arg in args:
            fail(f"statement {source}: argument {keyword.arg} is given twice")
        args[keyword.arg] = _literal(source, keyword.value)
    return args


def _literal(source: str, node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        fail(f"statement {source}: arguments must be literal values (numbers, strings, lists)")


# --- arguments ------------------------------------------------------------------------------------

def _xy(args: Mapping[str, Any], action: str, *, required: bool = True) -> Point | None:
    """pyautogui's x, y (x may also be an (x, y) pair); None = where the pointer already is."""
    x, y = args.get("x"), args.get("y")
    if isinstance(x, (tuple, list)) and len(x) == 2 and y is None:
        x, y = x
    if x is None and y is None:
        if required:
            fail(f"{action} without x, y acts wherever the pointer is; the unified action needs a point")
        return None
    if x is None or y is None:
        fail(f"{action} needs both x and y, got x={x!r}, y={y!r}")
    return (number(x, "x"), number(y, "y"))


def _button(args: Mapping[str, Any]) -> str:
    button = args.get("button", "left")
    if not isinstance(button, str) or button not in _BUTTONS:
        fail(f"button must be one of {', '.join(_BUTTONS)}, got {button!r}")
    return _BUTTONS[button]


def _left_only(args: Mapping[str, Any], action: str) -> None:
    if _button(args) != "left":
        fail(f"{action} with button {args['button']!r} has no unified action (only the left button)")


def _count(args: Mapping[str, Any], name: str, default: int) -> int:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= HOTKEY_MAX_REPEAT:
        fail(f"{name} must be a whole number in 1..{HOTKEY_MAX_REPEAT}, got {value!r}")
    return value


_CLICKS: dict[tuple[int, str], Callable[[Point], Action]] = {
    (1, "left"): Click, (2, "left"): DoubleClick, (3, "left"): TripleClick,
    (1, "right"): RightClick, (1, "middle"): MiddleClick,
}


def _click(args: Mapping[str, Any]) -> tuple[Action, ...]:
    point = _xy(args, "click")
    clicks, button = args.get("clicks", 1), _button(args)
    record = _CLICKS.get((clicks, button)) if isinstance(clicks, int) and not isinstance(clicks, bool) else None
    if record is None:
        fail(f"click with clicks={clicks!r} and button={button!r} has no unified action; "
             "single left/right/middle clicks and double/triple left clicks do")
    return (record(point),)


def _left_click(record: Callable[[Point], Action], action: str) -> Callable[[Mapping[str, Any]], tuple[Action, ...]]:
    def build(args: Mapping[str, Any]) -> tuple[Action, ...]:
        _left_only(args, action)
        return (record(_xy(args, action)),)
    return build


def _wheel(vertical: bool) -> Callable[[Mapping[str, Any]], tuple[Action, ...]]:
    positive, negative = ("up", "down") if vertical else ("right", "left")

    def build(args: Mapping[str, Any]) -> tuple[Action, ...]:
        clicks = number(args.get("clicks"), "clicks")
        if clicks == 0:
            fail("scrolling by 0 clicks scrolls nowhere")
        direction = positive if clicks > 0 else negative
        point = _xy(args, "scroll", required=False)
        return (Scroll(direction=direction, point=point, amount=max(1, round(abs(clicks)))),)
    return build


def _key_list(value: Any, name: str) -> list[str]:
    keys = [value] if isinstance(value, str) else value
    if not isinstance(keys, (list, tuple)) or not keys or not all(isinstance(k, str) for k in keys):
        fail(f"{name} must be a key name or a non-empty list of key names, got {value!r}")
    return list(keys)


def _press(args: Mapping[str, Any]) -> tuple[Action, ...]:
    presses = _count(args, "presses", 1)
    keys = args.get("keys")
    if isinstance(keys, str):
        return (Hotkey((keys,), repeat=presses),)
    return tuple(Hotkey((key,)) for _ in range(presses) for key in _key_list(keys, "keys"))


def _write(args: Mapping[str, Any]) -> tuple[Action, ...]:
    message = args.get("message")
    if isinstance(message, (list, tuple)):  # typewrite(['a', 'enter']) presses keys one by one
        return tuple(Hotkey((key,)) for key in _key_list(message, "message"))
    if not isinstance(message, str):
        fail(f"write needs message as a string, got {message!r}")
    return (Type(message),)


def _hotkey(args: Mapping[str, Any]) -> tuple[Action, ...]:
    keys = args["*"]
    if len(keys) == 1 and isinstance(keys[0], (list, tuple)):
        keys = keys[0]
    return (Hotkey(tuple(_key_list(list(keys), "hotkey keys"))),)


def _held(record: Callable[[tuple[str, ...]], Action]) -> Callable[[Mapping[str, Any]], tuple[Action, ...]]:
    return lambda args: (record(tuple(_key_list(args.get("key"), "key"))),)


def _mouse(record: Callable[..., Action], action: str) -> Callable[[Mapping[str, Any]], tuple[Action, ...]]:
    def build(args: Mapping[str, Any]) -> tuple[Action, ...]:
        _left_only(args, action)
        return (record(point=_xy(args, action, required=False)),)
    return build


def _drag_to(args: Mapping[str, Any]) -> tuple[Action, ...]:
    _left_only(args, "dragTo")
    return (Drag(end=_xy(args, "dragTo")),)


def _terminate(args: Mapping[str, Any]) -> tuple[Action, ...]:
    status, answer = args.get("status"), args.get("answer")
    if status == "success":
        return (Answer(answer),) if answer is not None else (Finished(),)
    if status == "failure":
        return (CallUser(FAILURE_MESSAGE),)
    fail(f"terminate status must be 'success' or 'failure', got {status!r}")


def _sleep(args: Mapping[str, Any]) -> tuple[Action, ...]:
    seconds = args.get("seconds")
    return (Wait(seconds=None if seconds is None else number(seconds, "seconds")),)


_CLICK_PARAMS = ("x", "y", "interval", "button", *_TIMING)
_FUNCTIONS: dict[str, _Function] = {
    "pyautogui.click": _Function(("x", "y", "clicks", "interval", "button", *_TIMING), _click),
    "pyautogui.doubleClick": _Function(_CLICK_PARAMS, _left_click(DoubleClick, "doubleClick")),
    "pyautogui.tripleClick": _Function(_CLICK_PARAMS, _left_click(TripleClick, "tripleClick")),
    "pyautogui.rightClick": _Function(("x", "y", "interval", *_TIMING), lambda a: (RightClick(_xy(a, "rightClick")),)),
    "pyautogui.middleClick": _Function(("x", "y", "interval", *_TIMING),
                                       lambda a: (MiddleClick(_xy(a, "middleClick")),)),
    "pyautogui.moveTo": _Function(("x", "y", *_TIMING), lambda a: (Hover(_xy(a, "moveTo")),)),
    "pyautogui.dragTo": _Function(("x", "y", "duration", "tween", "button", "logScreenshot", "_pause",
                                   "mouseDownUp"), _drag_to),
    "pyautogui.mouseDown": _Function(("x", "y", "button", *_TIMING), _mouse(MouseDown, "mouseDown")),
    "pyautogui.mouseUp": _Function(("x", "y", "button", *_TIMING), _mouse(MouseUp, "mouseUp")),
    "pyautogui.scroll": _Function(("clicks", "x", "y", "logScreenshot", "_pause"), _wheel(vertical=True)),
    "pyautogui.hscroll": _Function(("clicks", "x", "y", "logScreenshot", "_pause"), _wheel(vertical=False)),
    "pyautogui.write": _Function(("message", "interval", "logScreenshot", "_pause"), _write),
    "pyautogui.typewrite": _Function(("message", "interval", "logScreenshot", "_pause"), _write),
    "pyautogui.press": _Function(("keys", "presses", "interval", "logScreenshot", "_pause"), _press),
    "pyautogui.hotkey": _Function(("interval", "logScreenshot", "_pause"), _hotkey, varargs=True),
    "pyautogui.keyDown": _Function(("key", "logScreenshot", "_pause"), _held(KeyDown)),
    "pyautogui.keyUp": _Function(("key", "logScreenshot", "_pause"), _held(KeyUp)),
    "pyautogui.sleep": _Function(("seconds",), _sleep),
    "time.sleep": _Function(("seconds",), _sleep),
    "computer.triple_click": _Function(("x", "y"), lambda a: (TripleClick(_xy(a, "triple_click")),)),
    "computer.wait": _Function(("seconds",), _sleep),
    "computer.terminate": _Function(("status", "answer"), _terminate),
}

register(OpenCUAConverter())
