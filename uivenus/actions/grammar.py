"""The text grammar released UI-Venus models speak: parse responses into action records and write them back.

Model output is data, so it is read with `ast` and `ast.literal_eval` on single argument nodes; nothing is
ever evaluated. A response is `<think>…</think>` (optional), `<action>CALL</action>`, `<conclusion>…</conclusion>`
(optional); CALL is a keyword-argument call such as `Click(point=(897, 937))`, or several calls separated by
commas (a CAPTCHA answer). Grounding answers are a bracketed number list: `[x,y]`, `[-1,-1]` (refusal) or a
box `[x1,y1,x2,y2]`.

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
import math
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, TypeAlias, TypeVar

from .points import POINT_FIELDS
from .space import (
    ACTION_CLASSES,
    Action,
    ActionSequence,
    ActionType,
    Direction,
    Launch,
    LaunchApp,
    Scroll,
    Swipe,
    is_action,
)
from .values import ActionError

__all__ = [
    "ActionSpans",
    "MAX_CALL_CHARS",
    "MAX_NESTING",
    "MAX_RESPONSE_CHARS",
    "FormatError",
    "GroundingAnswer",
    "ParseError",
    "Response",
    "Span",
    "action_spans",
    "format_action",
    "format_grounding",
    "format_response",
    "parse_action",
    "parse_actions",
    "parse_grounding",
    "parse_response",
]

#: Longer responses are refused before any parsing (a model that rambles this long has failed anyway).
MAX_RESPONSE_CHARS = 100_000
#: Longest action expression handed to `ast.parse`.
MAX_CALL_CHARS = 16_384
#: Deepest bracket nesting (outside string literals) an action expression may have; real ones use 4.
MAX_NESTING = 16
#: Lenient recovery looks at no more than this many call-like spots, counted from the end.
_MAX_RECOVERY_CANDIDATES = 64
_FRAGMENT_CHARS = 80


class ParseError(ValueError):
    """Model text does not follow the grammar; says what was expected, where, and what was found there."""

    def __init__(self, expected: str, *, position: int | None = None, fragment: str = "", reason: str | None = None):
        self.expected = expected
        self.position = position
        self.fragment = fragment
        self.reason = reason
        where = f" at char {position}" if position is not None else ""
        found = f": {_shorten(fragment)!r}" if fragment else ""
        super().__init__(f"{reason + '; ' if reason else ''}expected {expected}{where}{found}")


class FormatError(ValueError):
    """A response cannot be written so that it parses back (a closing tag inside think or conclusion text)."""


def _shorten(text: str) -> str:
    return text if len(text) <= _FRAGMENT_CHARS else text[: _FRAGMENT_CHARS - 1] + "…"


# --- scanning code text -------------------------------------------------------------------------

_STRING_OPEN = re.compile(r"'''|\"\"\"|'|\"")
#: The rest of a string literal after its opening quote, escapes skipped (disjoint alternatives: linear time).
_STRING_REST = {
    "'''": re.compile(r"(?:[^\\]|\\.)*?'''", re.DOTALL),
    '"""': re.compile(r'(?:[^\\]|\\.)*?"""', re.DOTALL),
    "'": re.compile(r"(?:[^'\\]|\\.)*'", re.DOTALL),
    '"': re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL),
}
_BRACKET = re.compile(r"[()\[\]{}]")


def _code_spans(text: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """Spans of `text` from `start` that lie outside Python string literals (an unclosed literal ends them)."""
    i = start
    while (quote := _STRING_OPEN.search(text, i)) is not None:
        yield i, quote.start()
        if (rest := _STRING_REST[quote.group()].match(text, quote.end())) is None:
            return
        i = rest.end()
    yield i, len(text)


def _brackets(text: str, start: int = 0) -> Iterator[re.Match[str]]:
    for begin, end in _code_spans(text, start):
        yield from _BRACKET.finditer(text, begin, end)


def _nesting(text: str) -> int:
    depth = deepest = 0
    for bracket in _brackets(text):
        depth += 1 if bracket.group() in "([{" else -1
        deepest = max(deepest, depth)
    return deepest


def _call_end(text: str, open_paren: int) -> int | None:
    """Index just past the bracket matching `text[open_paren]`, or None (unbalanced, or too long to be a call)."""
    depth = 0
    for bracket in _brackets(text, open_paren):
        if bracket.start() >= open_paren + MAX_CALL_CHARS:
            return None
        depth += 1 if bracket.group() in "([{" else -1
        if depth == 0:
            return bracket.end()
    return None


def _find_outside_strings(text: str, needle: str, start: int) -> int:
    """First `needle` (which holds no quote) at or after `start` and outside string literals, else -1."""
    return next((i for begin, end in _code_spans(text, start) if (i := text.find(needle, begin, end)) >= 0), -1)


# --- from expression text to ast --------------------------------------------------------------

class _Source:
    """An action expression and where it sits in the response, for error positions."""

    def __init__(self, text: str, base: int, first_line: int = 1):
        self.text, self.base, self.first_line = text, base, first_line
        self.line_starts = [0]
        for m in re.finditer(r"\r\n|\r|\n", text):
            self.line_starts.append(m.end())

    def _offset(self, lineno: int | None, col_bytes: int | None) -> int:
        """Char offset in the expression of an ast position (line `first_line` is its first line; cols in bytes)."""
        if lineno is None or col_bytes is None or lineno < self.first_line:
            return 0
        line = lineno - self.first_line
        if line >= len(self.line_starts):
            return len(self.text)
        start = self.line_starts[line]
        col = len(self.text[start:start + col_bytes].encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))
        return min(start + col, len(self.text))

    def _extent(self, node: ast.AST) -> tuple[int, int]:
        begin = self._offset(getattr(node, "lineno", None), getattr(node, "col_offset", None))
        return begin, self._offset(getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Where `node` sits in the response: [start, end) character offsets."""
        begin, end = self._extent(node)
        return self.base + begin, self.base + end

    def error(self, expected: str, node: ast.AST | None = None, *, reason: str | None = None) -> ParseError:
        if node is None:
            return ParseError(expected, position=self.base, fragment=self.text, reason=reason)
        begin, end = self._extent(node)
        return ParseError(expected, position=self.base + begin, fragment=self.text[begin:max(end, begin + 1)],
                          reason=reason)

    def syntax_error(self, exc: SyntaxError) -> ParseError:
        line = min(max((exc.lineno or 1) - self.first_line, 0), len(self.line_starts) - 1)
        offset = min(self.line_starts[line] + max((exc.offset or 1) - 1, 0), len(self.text))
        message = re.sub(r" [(]detected at line [0-9]+[)]", "", exc.msg)
        return ParseError(_CALL_EXAMPLE, position=self.base + offset, fragment=self.text[offset:],
                          reason=f"invalid syntax ({message})")


_CALL_EXAMPLE = "an action call like Click(point=(x, y))"


def _quiet_parse(expr: str) -> ast.expr:
    """`ast.parse` without the warnings model text provokes (a Windows path's "\\e" is an invalid escape)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(expr, mode="eval").body


def _ast(expr: str) -> tuple[ast.expr, int]:
    """`expr` as one expression, and the ast line number of its first line.

    A comma-separated list may break lines between its calls; for that the fallback parses `[` + expr + `]`,
    taking only a single list display that spans the whole text, so text that closes the bracket early
    (`A], [B`) cannot smuggle in extra structure.
    """
    try:
        return _quiet_parse(expr), 1
    except SyntaxError as exc:
        try:
            wrapped = _quiet_parse(f"[\n{expr}\n]")
        except SyntaxError:
            raise exc from None
        if not isinstance(wrapped, ast.List) or not wrapped.elts:
            raise exc from None
        if len(wrapped.elts) == 1:
            return wrapped.elts[0], 2
        return ast.copy_location(ast.Tuple(elts=wrapped.elts, ctx=ast.Load()), wrapped), 2


def _expression(text: str, base: int) -> tuple[ast.expr, _Source]:
    """Parse one expression; every failure of `ast` (syntax, depth, size) becomes a ParseError."""
    lead = len(text) - len(text.lstrip())
    expr = text.strip()
    src = _Source(expr, base + lead)
    if not expr:
        raise src.error(_CALL_EXAMPLE, reason="the action is empty")
    if len(expr) > MAX_CALL_CHARS:
        raise ParseError(f"an action expression of at most {MAX_CALL_CHARS} characters", position=src.base,
                         fragment=expr, reason=f"it has {len(expr)}")
    if (depth := _nesting(expr)) > MAX_NESTING:
        raise ParseError(f"at most {MAX_NESTING} nested brackets", position=src.base, fragment=expr,
                         reason=f"the action nests {depth} deep")
    try:
        node, src.first_line = _ast(expr)
    except SyntaxError as exc:
        raise src.syntax_error(exc) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ParseError(_CALL_EXAMPLE, position=src.base, fragment=expr,
                         reason=f"the expression is too complex ({type(exc).__name__})") from None
    return node, src


# --- from ast to action records -----------------------------------------------------------------

@dataclass(frozen=True)
class _Arg:
    spelled: str  # the keyword as written ("box"), or "<positional>"
    node: ast.expr  # the value
    origin: ast.AST  # what errors about the argument itself point at: its keyword, or the positional value


_Args = dict[str, _Arg]
_Builder = Callable[[_Args, ast.Call, _Source], Action]

#: Older spellings of argument names.
_ARG_SYNONYMS = {"box": "point"}


def _literal(node: ast.expr, src: _Source, name: str) -> Any:
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


def _read_keys(node: ast.expr, src: _Source, name: str) -> Any:
    value = _literal(node, src, name)
    return _split_keys(value) if isinstance(value, str) else value


def _read_actions(node: ast.expr, src: _Source, name: str) -> tuple[Action, ...]:
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise src.error(f"a list of action calls for {name}, like [Click(point=(x, y)), Type(content='a')]", node)
    return tuple(_action(element, src) for element in node.elts)


#: How each argument is read from its node; anything else is a plain literal.
_FIELD_READERS: Mapping[str, Callable[[ast.expr, _Source, str], Any]] = {
    "keys": _read_keys,
    "actions": _read_actions,
}


def _read(name: str, arg: _Arg, src: _Source) -> Any:
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
                 call: ast.Call, src: _Source) -> None:
    listing = ", ".join(allowed) if allowed else "none"
    for name, arg in args.items():
        if name not in allowed:
            raise src.error(f"{action}'s arguments ({listing})", arg.origin,
                            reason=f"{action} has no argument {arg.spelled!r}")
    missing = [name for name in required if name not in args]
    if missing:
        wanted = ", ".join(f"{name}=..." for name in allowed if name in missing)
        raise src.error(f"{action}({wanted})", call, reason=f"{action} is missing {', '.join(missing)}")


def _construct(cls: type, kwargs: dict[str, Any], call: ast.Call, src: _Source) -> Action:
    try:
        return cls(**kwargs)
    except ActionError as exc:
        raise src.error(f"valid arguments for {cls.type}", call, reason=str(exc)) from None


def _build(cls: type, args: _Args, call: ast.Call, src: _Source) -> Action:
    _check_names(cls.type.value, args, *_signature(cls), call, src)
    return _construct(cls, {name: _read(name, arg, src) for name, arg in args.items()}, call, src)


def _build_launch(args: _Args, call: ast.Call, src: _Source) -> Action:
    """`Launch(app=...)` is the older spelling of LaunchApp; `Launch(url=...)` opens a URL."""
    return _build(LaunchApp if "app" in args else Launch, args, call, src)


#: Sign of the computer prompt's Swipe amount → wheel direction, per axis.
_AXIS_DIRECTIONS: Mapping[str, tuple[Direction, Direction]] = {
    "vertical": (Direction.DOWN, Direction.UP),
    "horizontal": (Direction.RIGHT, Direction.LEFT),
}


def _build_swipe(args: _Args, call: ast.Call, src: _Source) -> Action:
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
#: The field a lone positional argument fills, per action name.
_POSITIONAL: Mapping[str, str | None] = {t.value: _positional_field(ACTION_CLASSES[t]) for t in ActionType}


def _arguments(name: str, call: ast.Call, src: _Source) -> _Args:
    args: _Args = {}
    if call.args:
        field = _POSITIONAL[name]
        if field is None or len(call.args) > 1 or isinstance(call.args[0], ast.Starred):
            raise src.error(f"keyword arguments, like {name}(name=value)", call.args[0],
                            reason=f"{name} takes {'at most one positional argument' if field else 'keywords only'}")
        args[field] = _Arg("<positional>", call.args[0], call.args[0])
    for keyword in call.keywords:
        if keyword.arg is None:
            raise src.error(f"keyword arguments, like {name}(name=value)", keyword, reason="'**' is not allowed")
        canonical = _ARG_SYNONYMS.get(keyword.arg, keyword.arg)
        if canonical in args:
            raise src.error(f"each argument of {name} once", keyword,
                            reason=f"{keyword.arg!r} repeats {args[canonical].spelled!r}")
        args[canonical] = _Arg(keyword.arg, keyword.value, keyword)
    return args


def _action(node: ast.expr, src: _Source) -> Action:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise src.error(_CALL_EXAMPLE, node)
    name = node.func.id
    if name not in _BUILDERS:
        raise src.error(f"one of the actions {', '.join(_BUILDERS)}", node.func, reason=f"unknown action {name!r}")
    return _BUILDERS[name](_arguments(name, node, src), node, src)


def _calls(node: ast.expr, src: _Source) -> tuple[Action, ...]:
    elements = node.elts if isinstance(node, ast.Tuple) else [node]
    if not elements:
        raise src.error(_CALL_EXAMPLE, node)
    return tuple(_action(element, src) for element in elements)


def _parse_calls(text: str, base: int) -> tuple[Action, ...]:
    node, src = _expression(text, base)
    return _calls(node, src)


def parse_action(text: str) -> Action:
    """One call expression, e.g. `Click(point=(1, 2))` (a `Sequence(...)` is one call too)."""
    node, src = _expression(text, 0)
    if isinstance(node, ast.Tuple):
        raise src.error("one action call", node, reason=f"found {len(node.elts)} comma-separated items")
    return _action(node, src)


def parse_actions(text: str) -> tuple[Action, ...]:
    """One call, or several separated by commas (a CAPTCHA answer): `Click(point=(1,2)), Click(point=(3,4))`."""
    return _parse_calls(text, 0)


# --- responses ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Response:
    """A parsed model response: its action(s), reasoning and summary, and what lenient parsing repaired."""

    raw: str
    actions: tuple[Action, ...]
    think: str | None = None
    conclusion: str | None = None
    recovered: bool = False
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.actions, tuple) or not self.actions or not all(map(is_action, self.actions)):
            raise ActionError(f"a Response needs a non-empty tuple of action records, got {self.actions!r}")

    @property
    def action(self) -> Action:
        """The single action, or the comma-separated list as one Sequence (which must then be a legal one)."""
        if len(self.actions) == 1:
            return self.actions[0]
        try:
            return ActionSequence(actions=self.actions)
        except ActionError as exc:
            raise ParseError("2–32 comma-separated actions, none a Sequence, a terminal one only last",
                             fragment=self.raw, reason=str(exc)) from None

    def format(self) -> str:
        return format_response(self.actions, think=self.think, conclusion=self.conclusion)


_TAGS = {name: (f"<{name}>", f"</{name}>") for name in ("think", "action", "conclusion")}


def _skip_space(text: str, pos: int) -> int:
    return len(text) - len(text[pos:].lstrip()) if pos < len(text) else pos


def _block(text: str, pos: int, name: str) -> tuple[str, int, int] | None:
    """The `<name>…</name>` block at `pos`: (inner text, inner start, end after the closing tag); None if absent."""
    opening, closing = _TAGS[name]
    if not text.startswith(opening, pos):
        return None
    inner = pos + len(opening)
    close = _find_outside_strings(text, closing, inner) if name == "action" else -1
    if close < 0:
        close = text.find(closing, inner)
    if close < 0:
        raise ParseError(f"{closing} to close the {opening} from char {pos}", position=len(text),
                         fragment=text[inner:])
    return text[inner:close], inner, close + len(closing)


def _check_size(text: str) -> None:
    if not isinstance(text, str):
        raise ParseError("model output as a str", fragment=repr(text), reason=f"got {type(text).__name__}")
    if len(text) > MAX_RESPONSE_CHARS:
        raise ParseError(f"a response of at most {MAX_RESPONSE_CHARS} characters", position=0, fragment=text,
                         reason=f"it has {len(text)}")


_Block = tuple[str, int]  # a block's inner text and where it starts in the response
T = TypeVar("T")


def _strict_blocks(text: str, read_action: Callable[[str, int], T]) -> tuple[_Block | None, T, _Block | None]:
    """Walk `<think>` (optional), `<action>`, `<conclusion>` (optional), then the end; `read_action(inner, start)`
    reads the action block as soon as it is found, so its errors come before those about what follows it."""
    pos = _skip_space(text, 0)
    think = None
    if (block := _block(text, pos, "think")) is not None:
        think, pos = block[:2], _skip_space(text, block[2])
    block = _block(text, pos, "action")
    if block is None:
        after = "after </think> " if think is not None else ""
        raise ParseError(f"<action>...</action> {after}holding the action call", position=pos,
                         fragment=text[pos:], reason="no <action> here")
    action = read_action(block[0], block[1])
    pos = _skip_space(text, block[2])
    conclusion = None
    if (block := _block(text, pos, "conclusion")) is not None:
        conclusion, pos = block[:2], _skip_space(text, block[2])
    if pos < len(text):
        reason = "a second <action> block" if text.startswith("<action>", pos) else "unexpected text"
        raise ParseError("one <action> block, optionally followed by <conclusion>...</conclusion>, then the end",
                         position=pos, fragment=text[pos:], reason=reason)
    return think, action, conclusion


def _parse_strict(text: str) -> Response:
    think, actions, conclusion = _strict_blocks(text, _parse_calls)
    return Response(raw=text, actions=actions, think=think[0].strip() if think else None,
                    conclusion=conclusion[0].strip() if conclusion else None)


_CALL_START = re.compile(
    r"(?<![\w.])(?:" + "|".join(sorted(map(re.escape, _BUILDERS), key=len, reverse=True)) + r")\s*\("
)
_ACTION_REGION = re.compile(r"<action>(.*?)(?:</action>|(?=<action>|<conclusion>)|\Z)", re.DOTALL)


def _last_call_group(text: str, start: int, end: int) -> tuple[tuple[Action, ...], int, int] | None:
    """The last well-formed call in text[start:end] (with comma-joined neighbours): (actions, span start, end)."""
    region = text[start:end]
    spans = []
    for m in list(_CALL_START.finditer(region))[-_MAX_RECOVERY_CANDIDATES:]:
        if (close := _call_end(region, m.end() - 1)) is not None:
            spans.append((m.start(), close))
    outermost = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]

    def parsed(span: tuple[int, int]) -> tuple[Action, ...] | None:
        try:
            return _parse_calls(region[span[0]:span[1]], start + span[0])
        except ParseError:
            return None

    for last in reversed(range(len(outermost))):
        if (actions := parsed(outermost[last])) is None:
            continue
        first = last
        while first > 0 and re.fullmatch(r"\s*,\s*", region[outermost[first - 1][1]:outermost[first][0]]):
            if (earlier := parsed(outermost[first - 1])) is None:
                break
            actions, first = earlier + actions, first - 1
        return actions, start + outermost[first][0], start + outermost[last][1]
    return None


_CONCLUSION = re.compile(r"<conclusion>(.*?)</conclusion>", re.DOTALL)


def _recover_from_regions(text: str, regions: list[re.Match[str]]) -> tuple[tuple[Action, ...], int, list[str]] | None:
    """The last <action> region holding a well-formed call: (actions, region end, notes)."""
    for index in reversed(range(len(regions))):
        region, notes = regions[index], []
        try:
            actions = _parse_calls(region.group(1), region.start(1))
        except ParseError:
            if (group := _last_call_group(text, region.start(1), region.end(1))) is None:
                continue
            actions = group[0]
            notes.append(f"ignored text around the call at chars {group[1]}-{group[2]} inside <action>")
        if len(regions) > 1:
            which = "last" if index == len(regions) - 1 else f"last well-formed (number {index + 1})"
            notes.append(f"took the {which} of {len(regions)} <action> blocks")
        if not region.group(0).endswith("</action>"):
            notes.append(f"the <action> at char {region.start()} was not closed")
        return actions, region.end(), notes
    return None


def _recover(text: str) -> Response | None:
    """Lenient mode: the last well-formed action in the text, and notes on what was ignored."""
    think_match = re.search(r"<think>(.*?)</think>", text, re.DOTALL)
    think = think_match.group(1).strip() if think_match else None
    after_think = think_match.end() if think_match else 0
    regions = list(_ACTION_REGION.finditer(text, after_think))
    if regions:
        found = _recover_from_regions(text, regions)
    else:
        # Without tags, only text outside <think> counts: a call the model merely considered is no answer.
        body = len(text) if think_match is None and "<think>" in text else after_think
        group = _last_call_group(text, body, len(text))
        if group is None:
            return None
        found = group[0], group[2], [f"no <action> tags; used the call at chars {group[1]}-{group[2]}"]
    if found is None:
        return None
    actions, end, notes = found
    conclusion_match = _CONCLUSION.search(text, end)
    conclusion = conclusion_match.group(1).strip() if conclusion_match else None
    return Response(raw=text, actions=actions, think=think, conclusion=conclusion, recovered=True,
                    notes=tuple(notes))


def parse_response(text: str, *, lenient: bool = False) -> Response:
    """Parse `<think>…</think><action>…</action><conclusion>…</conclusion>` (think, conclusion optional).

    Strict mode raises `ParseError` for anything else. Lenient mode first tries strict parsing; if that fails it
    takes the last well-formed action: the last <action> block that parses (ignoring junk after </action>, a
    missing </action>, text around the call inside the tags), or without any tags the last call of a known action
    outside <think>. It then sets `recovered=True` and lists what it did in `notes`, the strict error first.
    """
    _check_size(text)
    try:
        return _parse_strict(text)
    except ParseError as strict_error:
        if not lenient:
            raise
        response = _recover(text)
        if response is None:
            reason = f"{strict_error.reason}; " if strict_error.reason else ""
            raise ParseError(strict_error.expected, position=strict_error.position, fragment=strict_error.fragment,
                             reason=f"{reason}lenient recovery found no well-formed action call either") from None
        return dataclasses.replace(response, notes=(f"strict parse failed: {strict_error}", *response.notes))


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


def format_response(actions: Action | Iterable[Action], *, think: str | None = None,
                    conclusion: str | None = None) -> str:
    """`<think>…</think>\\n<action>…</action>` plus `\\n<conclusion>…</conclusion>`; several actions comma-joined."""
    actions = (actions,) if is_action(actions) else tuple(actions)
    if not actions:
        raise FormatError("a response needs at least one action")
    for name, text in (("think", think), ("conclusion", conclusion)):
        if text is not None and _TAGS[name][1] in text:
            raise FormatError(f"{name} text must not contain {_TAGS[name][1]}; it would end the block early")
    parts = [] if think is None else [f"<think>{think}</think>"]
    parts.append(f"<action>{', '.join(map(format_action, actions))}</action>")
    if conclusion is not None:
        parts.append(f"<conclusion>{conclusion}</conclusion>")
    return "\n".join(parts)


# --- grounding ----------------------------------------------------------------------------------

_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
_NUMBER_LIST = re.compile(rf"[\[(]\s*({_NUMBER}(?:\s*,\s*{_NUMBER})*)\s*[\])]")
_GROUNDING_FORMS = "[x,y], [-1,-1] (refusal) or a box [x1,y1,x2,y2]"


def _is_coordinate(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value)) and value >= 0
    except OverflowError:
        return False


@dataclass(frozen=True)
class GroundingAnswer:
    """Where a grounding model points: a point (None = refusal), and the box when the model answered one."""

    point: tuple[float, float] | None
    box: tuple[float, float, float, float] | None = None
    raw: str = ""

    def __post_init__(self) -> None:
        if self.point is not None and not (len(self.point) == 2 and all(map(_is_coordinate, self.point))):
            raise ParseError("a point of two finite coordinates >= 0 (only [-1,-1] means refusal)",
                             fragment=self.raw or repr(self.point), reason=f"got point {self.point!r}")
        if self.box is not None and not (
            len(self.box) == 4 and all(map(_is_coordinate, self.box))
            and self.box[0] <= self.box[2] and self.box[1] <= self.box[3]
        ):
            raise ParseError("a box [x1,y1,x2,y2] of coordinates >= 0 with x1 <= x2 and y1 <= y2",
                             fragment=self.raw or repr(self.box), reason=f"got box {self.box!r}")

    @property
    def refused(self) -> bool:
        return self.point is None


def _number(text: str) -> int | float:
    return float(text) if any(c in text for c in ".eE") else int(text)


def parse_grounding(text: str) -> GroundingAnswer:
    """The last bracketed list of 2 or 4 numbers in `text`: `[x,y]`, `(x, y)`, `[-1,-1]`, or a box (point = centre)."""
    _check_size(text)
    lists = [(m, re.split(r"\s*,\s*", m.group(1))) for m in _NUMBER_LIST.finditer(text)]
    answers = [(m, items) for m, items in lists if len(items) in (2, 4)]
    if not answers:
        reason = f"the last bracketed list has {len(lists[-1][1])} numbers" if lists else "no bracketed numbers"
        raise ParseError(_GROUNDING_FORMS, position=lists[-1][0].start() if lists else 0,
                         fragment=lists[-1][0].group(0) if lists else text, reason=reason)
    match, items = answers[-1]
    try:
        numbers = tuple(map(_number, items))
    except ValueError:  # more digits than int() accepts
        raise ParseError(_GROUNDING_FORMS, position=match.start(), fragment=match.group(0),
                         reason="a number is too long") from None
    if all(n == -1 for n in numbers):
        return GroundingAnswer(point=None, raw=text)
    try:
        if len(numbers) == 2:
            return GroundingAnswer(point=numbers, raw=text)
        if not all(map(_is_coordinate, numbers)):
            raise ParseError("coordinates that are finite and >= 0 (only [-1,-1] means refusal)",
                             reason=f"got box {numbers!r}")
        centre = ((numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2)
        return GroundingAnswer(point=centre, box=numbers, raw=text)
    except ParseError as exc:
        raise ParseError(exc.expected, position=match.start(), fragment=match.group(0),
                         reason=exc.reason) from None


def _format_coordinate(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(float(value))


def format_grounding(answer: GroundingAnswer | tuple[float, float] | None) -> str:
    """`[x,y]` as grounding models answer, or `[-1,-1]` for a refusal (an answer, a bare point, or None)."""
    point = answer.point if isinstance(answer, GroundingAnswer) else answer
    if point is None:
        return "[-1,-1]"
    return "[" + ",".join(map(_format_coordinate, point)) + "]"


# --- spans ---------------------------------------------------------------------------------------

Span: TypeAlias = tuple[int, int]  # [start, end) character offsets into the response text


@dataclass(frozen=True)
class ActionSpans:
    """Where the parts of a well-formed response sit, as character spans of its text: what trainers weight.

    `action` is the call expression (all comma-separated calls), or a grounding answer's bracketed list;
    `names` the action name of every call (Sequence members included; none for a grounding answer); `params`
    each argument's value by canonical name (`box=` is "point", a positional argument is the field it fills),
    prefixed "<i>." inside a comma-separated list or a Sequence's `actions` — the paths `ReferenceAction.boxes`
    uses; a grounding answer's numbers are "point" (or "box" for four). `think` and `conclusion` are the
    stripped inner texts of those blocks.
    """

    action: Span
    names: tuple[Span, ...] = ()
    params: Mapping[str, Span] = dataclasses.field(default_factory=dict)
    think: Span | None = None
    conclusion: Span | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))


def _inner_span(block: _Block) -> Span:
    """The stripped inner text of a block, as a span of the response."""
    inner, start = block
    lead = len(inner) - len(inner.lstrip())
    return start + lead, start + lead + len(inner.strip())


def _call_spans(call: ast.Call, src: _Source, prefix: str, names: list[Span], params: dict[str, Span]) -> None:
    """Record the name and argument values of `call` (already built by `_calls`, so well-formed)."""
    func = call.func
    assert isinstance(func, ast.Name)
    names.append(src.span(func))
    arguments = [(str(_POSITIONAL[func.id]), value) for value in call.args]
    arguments += [(_ARG_SYNONYMS.get(str(k.arg), str(k.arg)), k.value) for k in call.keywords]
    for name, value in arguments:
        params[prefix + name] = src.span(value)
        if name == "actions" and isinstance(value, (ast.List, ast.Tuple)):
            for i, member in enumerate(value.elts):
                _call_spans(member, src, f"{prefix}{i}.", names, params)  # type: ignore[arg-type]


def _expression_spans(text: str, base: int) -> tuple[Span, tuple[Span, ...], dict[str, Span]]:
    node, src = _expression(text, base)
    _calls(node, src)  # the same checks as parsing: spans only for calls that parse
    elements = node.elts if isinstance(node, ast.Tuple) else [node]
    names: list[Span] = []
    params: dict[str, Span] = {}
    for i, element in enumerate(elements):
        _call_spans(element, src, f"{i}." if len(elements) > 1 else "", names, params)  # type: ignore[arg-type]
    return (src.base, src.base + len(src.text)), tuple(names), params


_GROUNDING_ONLY = re.compile(rf"\s*([\[(]\s*({_NUMBER}(?:\s*,\s*{_NUMBER})*)\s*[\])])\s*")


def action_spans(text: str) -> ActionSpans:
    """The spans of a response that `parse_response` accepts strictly, or of a bare grounding answer (`[x,y]`,
    `[-1,-1]`, `[x1,y1,x2,y2]` and nothing else); anything else raises the strict parser's `ParseError`."""
    _check_size(text)
    try:
        think, (action, names, params), conclusion = _strict_blocks(text, _expression_spans)
    except ParseError:
        match = _GROUNDING_ONLY.fullmatch(text)
        if match is None or len(numbers := re.split(r"\s*,\s*", match.group(2))) not in (2, 4):
            raise
        parse_grounding(text)  # the same checks as a grounding reader
        return ActionSpans(action=match.span(1), params={"point" if len(numbers) == 2 else "box": match.span(2)})
    return ActionSpans(action=action, names=names, params=params,
                       think=_inner_span(think) if think else None,
                       conclusion=_inner_span(conclusion) if conclusion else None)
