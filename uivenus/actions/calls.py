"""Action calls as text, both ways: `Click(point=(897, 937))` read into a record, and a record written back.

This is the action vocabulary of the grammar, on top of `syntax.py` (which turns text into an `ast` safely): which
names are actions, which arguments each takes, the older and looser spellings models use, and the exact text
released models emit. A call's arguments are read with `ast.literal_eval` one node at a time, never evaluated.

Accepted spellings besides the canonical ones (see docs/ACTIONS.md):

- `box=` for `point=` (older releases);
- `Launch(app=...)` and `LaunchApp(app=...)` mean LaunchApp, `Launch(url=...)` means Launch;
- points as tuples or lists, key lists as lists or tuples, or one string split on `+` / whitespace
  (`Hotkey(keys='ctrl+c')`);
- one positional argument for the action's single required field (or its only field), e.g. `Type('hi')`,
  `Hotkey('ctrl+c')`, `Finished('done')`; this is a leniency of ours, released models write keywords;
- the computer prompt's `Swipe(amount=±N, axis='vertical'|'horizontal', point=...)` (no start/end) is a
  mouse-wheel scroll and becomes `Scroll(direction=..., amount=abs(N), point=...)`: a positive amount scrolls
  down (vertical) or right (horizontal), a negative one up or left.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .points import POINT_FIELDS
from .space import ACTION_CLASSES, Action, ActionType, Direction, Launch, LaunchApp, Scroll, Swipe
from .syntax import CALL_EXAMPLE, Source, read_expression
from .values import ActionError

__all__ = ["format_action", "parse_action", "parse_actions"]


# --- from ast to action records -----------------------------------------------------------------

@dataclass(frozen=True)
class _Arg:
    spelled: str  # the keyword as written ("box"), or "<positional>"
    node: ast.expr  # the value
    origin: ast.AST  # what errors about the argument itself point at: its keyword, or the positional value


_Args = dict[str, _Arg]
_Builder = Callable[[_Args, ast.Call, Source], Action]

#: Older spellings of argument names.
ARG_SYNONYMS = {"box": "point"}


def _literal(node: ast.expr, src: Source, name: str) -> Any:
    try:
        return _freeze(ast.literal_eval(node))
    except (ValueError, TypeError, RecursionError):
        raise src.error(f"a literal value (number, string, tuple or list) for {name}", node) from None


def _freeze(value: Any) -> Any:
    """Lists become tuples (points, key lists), recursively, so records compare and hash."""
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _split_keys(text: str) -> tuple[str, ...]:
    """'ctrl+c', 'ctrl c', 'ctrl + +', 'ctrl++' → key names; a '+' where a key is due is the plus key."""
    keys: list[str] = []
    want_key = True
    for token in re.findall(r"[^+\s]+|\+", text):
        if token != "+" or want_key:
            keys.append(token)
            want_key = False
        else:
            want_key = True
    if want_key and keys:
        keys.append("+")
    return tuple(keys)


def _read_keys(node: ast.expr, src: Source, name: str) -> Any:
    value = _literal(node, src, name)
    return _split_keys(value) if isinstance(value, str) else value


def _read_actions(node: ast.expr, src: Source, name: str) -> tuple[Action, ...]:
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise src.error(f"a list of action calls for {name}, like [Click(point=(x, y)), Type(content='a')]", node)
    return tuple(_action(element, src) for element in node.elts)


#: How each argument is read from its node; anything else is a plain literal.
_FIELD_READERS: Mapping[str, Callable[[ast.expr, Source, str], Any]] = {
    "keys": _read_keys,
    "actions": _read_actions,
}


def _read(name: str, arg: _Arg, src: Source) -> Any:
    return _FIELD_READERS.get(name, _literal)(arg.node, src, name)


@functools.cache
def _signature(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(all field names, required field names) of a record class."""
    fields = dataclasses.fields(cls)
    required = tuple(f.name for f in fields
                     if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
    return tuple(f.name for f in fields), required


def _positional_field(cls: type) -> str | None:
    """The field a single positional argument fills: the only required one, else the only one."""
    names, required = _signature(cls)
    if len(required) == 1:
        return required[0]
    return names[0] if len(names) == 1 and not required else None


def _check_names(action: str, args: _Args, allowed: tuple[str, ...], required: tuple[str, ...],
                 call: ast.Call, src: Source) -> None:
    listing = ", ".join(allowed) if allowed else "none"
    for name, arg in args.items():
        if name not in allowed:
            raise src.error(f"{action}'s arguments ({listing})", arg.origin,
                            reason=f"{action} has no argument {arg.spelled!r}")
    missing = [name for name in required if name not in args]
    if missing:
        wanted = ", ".join(f"{name}=..." for name in allowed if name in missing)
        raise src.error(f"{action}({wanted})", call, reason=f"{action} is missing {', '.join(missing)}")


def _construct(cls: type, kwargs: dict[str, Any], call: ast.Call, src: Source) -> Action:
    try:
        return cls(**kwargs)
    except ActionError as exc:
        raise src.error(f"valid arguments for {cls.type}", call, reason=str(exc)) from None


def _build(cls: type, args: _Args, call: ast.Call, src: Source) -> Action:
    _check_names(cls.type.value, args, *_signature(cls), call, src)
    return _construct(cls, {name: _read(name, arg, src) for name, arg in args.items()}, call, src)


def _build_launch(args: _Args, call: ast.Call, src: Source) -> Action:
    """`Launch(app=...)` is the older spelling of LaunchApp; `Launch(url=...)` opens a URL."""
    return _build(LaunchApp if "app" in args else Launch, args, call, src)


#: Sign of the computer prompt's Swipe amount → wheel direction, per axis.
_AXIS_DIRECTIONS: Mapping[str, tuple[Direction, Direction]] = {
    "vertical": (Direction.DOWN, Direction.UP),
    "horizontal": (Direction.RIGHT, Direction.LEFT),
}


def _build_swipe(args: _Args, call: ast.Call, src: Source) -> Action:
    """Touch `Swipe(start, end)`, or the computer prompt's wheel `Swipe(amount=±N, axis=...)` as a Scroll."""
    if not args.keys() & {"amount", "axis"}:
        return _build(Swipe, args, call, src)
    _check_names("Swipe", args, ("amount", "axis", "point"), ("amount", "axis"), call, src)
    amount = _read("amount", args["amount"], src)
    if isinstance(amount, bool) or not isinstance(amount, int) or amount == 0:
        raise src.error("a non-zero integer amount (positive = down/right, negative = up/left)",
                        args["amount"].node, reason=f"Swipe amount is {amount!r}")
    axis = _read("axis", args["axis"], src)
    if not isinstance(axis, str) or axis.lower() not in _AXIS_DIRECTIONS:
        raise src.error(f"axis one of {', '.join(map(repr, _AXIS_DIRECTIONS))}", args["axis"].node,
                        reason=f"Swipe axis is {axis!r}")
    forward, backward = _AXIS_DIRECTIONS[axis.lower()]
    point = _read("point", args["point"], src) if "point" in args else None
    return _construct(Scroll, {"direction": forward if amount > 0 else backward, "amount": abs(amount),
                               "point": point}, call, src)


#: Every action name a model may write → how its call becomes a record.
_BUILDERS: Mapping[str, _Builder] = {
    **{t.value: functools.partial(_build, ACTION_CLASSES[t]) for t in ActionType},
    ActionType.LAUNCH.value: _build_launch,
    ActionType.SWIPE.value: _build_swipe,
}
#: Every action name a model may write.
ACTION_NAMES = tuple(_BUILDERS)
#: The field a lone positional argument fills, per action name.
POSITIONAL_FIELDS: Mapping[str, str | None] = {t.value: _positional_field(ACTION_CLASSES[t]) for t in ActionType}


def _arguments(name: str, call: ast.Call, src: Source) -> _Args:
    args: _Args = {}
    if call.args:
        field = POSITIONAL_FIELDS[name]
        if field is None or len(call.args) > 1 or isinstance(call.args[0], ast.Starred):
            raise src.error(f"keyword arguments, like {name}(name=value)", call.args[0],
                            reason=f"{name} takes {'at most one positional argument' if field else 'keywords only'}")
        args[field] = _Arg("<positional>", call.args[0], call.args[0])
    for keyword in call.keywords:
        if keyword.arg is None:
            raise src.error(f"keyword arguments, like {name}(name=value)", keyword, reason="'**' is not allowed")
        canonical = ARG_SYNONYMS.get(keyword.arg, keyword.arg)
        if canonical in args:
            raise src.error(f"each argument of {name} once", keyword,
                            reason=f"{keyword.arg!r} repeats {args[canonical].spelled!r}")
        args[canonical] = _Arg(keyword.arg, keyword.value, keyword)
    return args


def _action(node: ast.expr, src: Source) -> Action:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise src.error(CALL_EXAMPLE, node)
    name = node.func.id
    if name not in _BUILDERS:
        raise src.error(f"one of the actions {', '.join(_BUILDERS)}", node.func, reason=f"unknown action {name!r}")
    return _BUILDERS[name](_arguments(name, node, src), node, src)


def read_calls(node: ast.expr, src: Source) -> tuple[Action, ...]:
    """The records of an expression `read_expression` returned: one call, or comma-separated calls (a tuple)."""
    elements = node.elts if isinstance(node, ast.Tuple) else [node]
    if not elements:
        raise src.error(CALL_EXAMPLE, node)
    return tuple(_action(element, src) for element in elements)


def parse_calls(text: str, base: int) -> tuple[Action, ...]:
    """`text`, found at char `base` of a response, as one call or several separated by commas."""
    node, src = read_expression(text, base)
    return read_calls(node, src)


def parse_action(text: str) -> Action:
    """One call expression, e.g. `Click(point=(1, 2))` (a `Sequence(...)` is one call too)."""
    node, src = read_expression(text, 0)
    if isinstance(node, ast.Tuple):
        raise src.error("one action call", node, reason=f"found {len(node.elts)} comma-separated items")
    return _action(node, src)


def parse_actions(text: str) -> tuple[Action, ...]:
    """One call, or several separated by commas (a CAPTCHA answer): `Click(point=(1,2)), Click(point=(3,4))`."""
    return parse_calls(text, 0)


# --- writing ------------------------------------------------------------------------------------

def _format_value(name: str, value: Any) -> str:
    if name == "actions":
        return "[" + ", ".join(map(format_action, value)) + "]"
    if name == "keys":
        return repr(list(value))
    if isinstance(value, StrEnum):
        return repr(value.value)
    return repr(value)


def _field_order(action: Action) -> list[dataclasses.Field]:
    """Points first (point, start, end), then the rest in declared order: `Scroll(point=..., direction=...)`."""
    fields = dataclasses.fields(action)
    rank = {name: i for i, name in enumerate(POINT_FIELDS)}
    return sorted(fields, key=lambda f: rank.get(f.name, len(rank)))


def format_action(action: Action) -> str:
    """The exact text released models emit, e.g. `Click(point=(897, 937))`; fields at their default are left out."""
    parts = [f"{f.name}={_format_value(f.name, value)}" for f in _field_order(action)
             if (value := getattr(action, f.name)) is not None and value != f.default]
    return f"{action.type.value}({', '.join(parts)})"
