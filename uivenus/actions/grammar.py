"""The response grammar: `<think>…</think>`, `<action>…</action>`, `<conclusion>…</conclusion>`, read and written.

A response is `<think>…</think>` (optional), `<action>CALL</action>`, `<conclusion>…</conclusion>` (optional); CALL
is one action call such as `Click(point=(897, 937))`, or several separated by commas (a CAPTCHA answer), read by
`calls.py`. Strict parsing takes exactly that shape. Lenient parsing, for models that stray from it, recovers the
last well-formed action and says in `notes` what it ignored. `format_response` writes the shape strict parsing
reads back. Grounding answers (`[x,y]`) have their own grammar, in `grounding.py`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from .calls import ACTION_NAMES, format_action, parse_calls
from .space import Action, ActionSequence, is_action
from .syntax import ParseError, call_end, check_size, find_outside_strings
from .values import ActionError

__all__ = ["FormatError", "Response", "format_response", "parse_response"]

#: Lenient recovery looks at no more than this many call-like spots, counted from the end.
_MAX_RECOVERY_CANDIDATES = 64


class FormatError(ValueError):
    """A response cannot be written so that it parses back (a closing tag inside think or conclusion text)."""


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
    close = find_outside_strings(text, closing, inner) if name == "action" else -1
    if close < 0:
        close = text.find(closing, inner)
    if close < 0:
        raise ParseError(f"{closing} to close the {opening} from char {pos}", position=len(text),
                         fragment=text[inner:])
    return text[inner:close], inner, close + len(closing)


Block = tuple[str, int]  # a block's inner text and where it starts in the response
T = TypeVar("T")


def strict_blocks(text: str, read_action: Callable[[str, int], T]) -> tuple[Block | None, T, Block | None]:
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
    think, actions, conclusion = strict_blocks(text, parse_calls)
    return Response(raw=text, actions=actions, think=think[0].strip() if think else None,
                    conclusion=conclusion[0].strip() if conclusion else None)


# --- lenient recovery ---------------------------------------------------------------------------

_CALL_START = re.compile(
    r"(?<![\w.])(?:" + "|".join(sorted(map(re.escape, ACTION_NAMES), key=len, reverse=True)) + r")\s*\("
)
_ACTION_REGION = re.compile(r"<action>(.*?)(?:</action>|(?=<action>|<conclusion>)|\Z)", re.DOTALL)


def _last_call_group(text: str, start: int, end: int) -> tuple[tuple[Action, ...], int, int] | None:
    """The last well-formed call in text[start:end] (with comma-joined neighbours): (actions, span start, end)."""
    region = text[start:end]
    spans = []
    for m in list(_CALL_START.finditer(region))[-_MAX_RECOVERY_CANDIDATES:]:
        if (close := call_end(region, m.end() - 1)) is not None:
            spans.append((m.start(), close))
    outermost = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]

    def parsed(span: tuple[int, int]) -> tuple[Action, ...] | None:
        try:
            return parse_calls(region[span[0]:span[1]], start + span[0])
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
            actions = parse_calls(region.group(1), region.start(1))
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
    check_size(text)
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
