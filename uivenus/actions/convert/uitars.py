"""UI-TARS action strings (UI-TARS-1.5 and the older v1 spelling) to unified actions.

An item is a whole response (`Thought: …\\nAction: click(point='<point>200 300</point>')`, optionally with
`Reflection:` / `Action_Summary:` sections) or just the action text; every `Action:` section is read, and
one section may hold several calls (UI-TARS separates them with blank lines). Each call is parsed with
`ast` and its keyword values with `ast.literal_eval`, so nothing in the text is ever run.

Points: `'<point>x y</point>'` (1.5), `'(x,y)'` and `'<|box_start|>(x,y)<|box_end|>'` (v1), `'<bbox>x1 y1 x2
y2</bbox>'` or `'[x1, y1, x2, y2]'` (a box: its centre is used). Coordinates are kept in the model's own
frame: absolute pixels of the resized screenshot for UI-TARS-1.5, 0–1000 relative units for v1. Nothing
is rescaled here; converting to screen pixels is `uivenus.actions.coords`' job.

Meanings taken from the UI-TARS prompts: `wait()` sleeps 5 s; `call_user()` asks the user for help (a
fixed message is supplied, since the call carries none); `type` content keeps its trailing "\\n", which
submits the input; `long_press(time=…)` has no documented unit and is ignored. `scroll` becomes a wheel
`Scroll` (UI-TARS also uses it on phones; a phone executor turns it into a swipe).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..space import (
    Action,
    CallUser,
    Click,
    DoubleClick,
    Drag,
    Finished,
    Hotkey,
    LaunchApp,
    LongPress,
    Point,
    PressBack,
    PressHome,
    RightClick,
    Scroll,
    Type,
    Wait,
)
from .base import box_centre, fail, guarded, number, register, shorten

WAIT_SECONDS = 5
CALL_USER_MESSAGE = "UI-TARS asked the user for help"

_SECTION = re.compile(r"^[ \t]*(Thought|Reflection|Action_Summary|Action)[ \t]*[:：]", re.MULTILINE)
_POINT_TAGS = re.compile(r"<\|box_start\|>|<\|box_end\|>|</?point>|</?bbox>")
_NUMBERS = re.compile(r"^[(\[]?\s*(-?\d+(?:\.\d+)?)(?:\s*,\s*|\s+)(-?\d+(?:\.\d+)?)"
                      r"(?:(?:\s*,\s*|\s+)(-?\d+(?:\.\d+)?)(?:\s*,\s*|\s+)(-?\d+(?:\.\d+)?))?\s*[)\]]?$")
# UI-TARS writes type content without escaping its quotes; this reads `type(content='It's')` when ast cannot.
_LOOSE_TYPE = re.compile(r"^type\(\s*content\s*=\s*(['\"])(.*)\1\s*\)$", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t"}
_AST_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


@dataclass(frozen=True)
class UITarsConverter:
    name: ClassVar[str] = "uitars"

    def to_unified(self, item: Any) -> tuple[Action, ...]:
        return guarded("UI-TARS", item, _convert)


def _convert(item: Any) -> tuple[Action, ...]:
    if not isinstance(item, str):
        fail(f"a UI-TARS item is response text, got {type(item).__name__}")
    actions: list[Action] = []
    for name, args in _calls(_action_text(item)):
        spec = _ACTIONS.get(name)
        if spec is None:
            fail(f"unknown UI-TARS action {name!r}; known: {', '.join(_ACTIONS)}")
        allowed, build = spec
        extra = sorted(set(args) - allowed)
        if extra:
            fail(f"{name} takes {sorted(allowed) or 'no arguments'}, got unexpected {extra}")
        actions.append(build(args))
    return tuple(actions)


def _action_text(response: str) -> str:
    """The text of every `Action:` section; the whole text when there are no section labels."""
    parts = _SECTION.split(response)
    if len(parts) == 1:
        return response
    bodies = [body for label, body in zip(parts[1::2], parts[2::2], strict=True) if label == "Action"]
    if not bodies:
        fail("the response has no 'Action:' line")
    return "\n".join(bodies)


def _calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls in an action text. When it does not parse as a whole, each blank-line-separated call
    is parsed on its own, so one loosely quoted `type(...)` does not spoil the calls around it."""
    code = text.strip()
    try:
        tree = ast.parse(code, mode="exec")
    except _AST_ERRORS:
        chunks = [chunk.strip() for chunk in re.split(r"\n[ \t]*\n", code)]
        calls = [call for chunk in chunks for call in _loose_calls(chunk)]
    else:
        calls = [_call(code, statement) for statement in tree.body]
    if not calls:
        fail("the action text holds no call")
    return calls


def _loose_calls(code: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        tree = ast.parse(code, mode="exec")
    except _AST_ERRORS as exc:
        loose = _LOOSE_TYPE.match(code)
        if not loose:
            fail(f"not a call like click(point='<point>x y</point>') ({type(exc).__name__}: {exc})")
        return [("type", {"content": re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[1]), loose[2])})]
    return [_call(code, statement) for statement in tree.body]


def _call(code: str, statement: ast.stmt) -> tuple[str, dict[str, Any]]:
    source = shorten(ast.get_source_segment(code, statement) or type(statement).__name__)
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        fail(f"{source} is not an action call like click(point='<point>x y</point>')")
    if call.args:
        fail(f"{source}: UI-TARS actions take keyword arguments only")
    args: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            fail(f"{source}: ** arguments are not allowed")
        try:
            args[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            fail(f"{source}: argument {keyword.arg} is not a literal value")
    return call.func.id, args


# --- arguments ------------------------------------------------------------------------------------

def _point(args: Mapping[str, Any], *names: str, required: bool = True) -> Point | None:
    """The point under the first of `names` present (1.5 and v1 spell the same argument differently)."""
    name = next((n for n in names if n in args), None)
    if name is None:
        if required:
            fail(f"missing {' or '.join(names)}")
        return None
    return parse_point(args[name], name)


def parse_point(value: Any, what: str) -> Point:
    """`'<point>x y</point>'`, `'(x,y)'`, `'<|box_start|>(x,y)<|box_end|>'`; a box's centre for four numbers."""
    if isinstance(value, (tuple, list)) and len(value) in (2, 4):
        numbers = [number(v, what) for v in value]
    elif isinstance(value, str):
        match = _NUMBERS.match(_POINT_TAGS.sub(" ", value).strip())
        if not match:
            fail(f"{what} {value!r} is not a point like '<point>x y</point>' or a box '[x1, y1, x2, y2]'")
        numbers = [float(g) if "." in g else int(g) for g in match.groups() if g is not None]
    else:
        fail(f"{what} must be a point string like '<point>x y</point>', got {value!r}")
    return (numbers[0], numbers[1]) if len(numbers) == 2 else box_centre(numbers, what)


def _text(args: Mapping[str, Any], name: str, *, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        fail(f"{name} must be a string, got {value!r}")
    return value


def _keys(args: Mapping[str, Any]) -> tuple[str, ...]:
    """`'ctrl c'` (UI-TARS spacing) or `'ctrl+c'`."""
    spelled = _text(args, "key")
    keys = spelled.split()
    if len(keys) == 1 and "+" in keys[0] and keys[0] != "+":
        keys = [k for k in keys[0].split("+") if k] or keys
    return tuple(keys)


def _finished(args: Mapping[str, Any]) -> Action:
    content = _text(args, "content", required=False)
    return Finished(content or None)


Builder = Callable[[Mapping[str, Any]], Action]

#: action name -> (the argument names it accepts, how to build the record).
_ACTIONS: dict[str, tuple[frozenset[str], Builder]] = {
    "click": (frozenset({"point", "start_box"}), lambda a: Click(_point(a, "point", "start_box"))),
    "left_double": (frozenset({"point", "start_box"}), lambda a: DoubleClick(_point(a, "point", "start_box"))),
    "right_single": (frozenset({"point", "start_box"}), lambda a: RightClick(_point(a, "point", "start_box"))),
    "long_press": (frozenset({"point", "start_box", "time"}), lambda a: LongPress(_point(a, "point", "start_box"))),
    "drag": (frozenset({"start_point", "end_point", "start_box", "end_box"}),
             lambda a: Drag(start=_point(a, "start_point", "start_box"), end=_point(a, "end_point", "end_box"))),
    "scroll": (frozenset({"point", "start_box", "direction"}),
               lambda a: Scroll(_text(a, "direction"), point=_point(a, "point", "start_box", required=False))),
    "hotkey": (frozenset({"key"}), lambda a: Hotkey(keys=_keys(a))),
    "type": (frozenset({"content"}), lambda a: Type(_text(a, "content"))),
    "open_app": (frozenset({"app_name"}), lambda a: LaunchApp(_text(a, "app_name"))),
    "press_home": (frozenset(), lambda a: PressHome()),
    "press_back": (frozenset(), lambda a: PressBack()),
    "wait": (frozenset(), lambda a: Wait(seconds=WAIT_SECONDS)),
    "finished": (frozenset({"content"}), _finished),
    "call_user": (frozenset({"content"}),
                  lambda a: CallUser(_text(a, "content", required=False) or CALL_USER_MESSAGE)),
}

register(UITarsConverter())
