"""Where the parts of a well-formed response sit, as character spans of its text: what trainers weight.

Training weights tokens by what they say (the action's name, each argument, the reasoning), so it needs to know
which characters of a response are which; `action_spans` answers that for exactly the responses `parse_response`
accepts strictly, and for bare grounding answers, by running the same readers and keeping the positions.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeAlias

from .calls import ARG_SYNONYMS, POSITIONAL_FIELDS, read_calls
from .grammar import Block, strict_blocks
from .grounding import BARE_ANSWER, parse_grounding
from .syntax import ParseError, Source, check_size, read_expression

__all__ = ["ActionSpans", "Span", "action_spans"]

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


def _inner_span(block: Block) -> Span:
    """The stripped inner text of a block, as a span of the response."""
    inner, start = block
    lead = len(inner) - len(inner.lstrip())
    return start + lead, start + lead + len(inner.strip())


def _call_spans(call: ast.Call, src: Source, prefix: str, names: list[Span], params: dict[str, Span]) -> None:
    """Record the name and argument values of `call` (already built by `read_calls`, so well-formed)."""
    func = call.func
    assert isinstance(func, ast.Name)
    names.append(src.span(func))
    arguments = [(str(POSITIONAL_FIELDS[func.id]), value) for value in call.args]
    arguments += [(ARG_SYNONYMS.get(str(k.arg), str(k.arg)), k.value) for k in call.keywords]
    for name, value in arguments:
        params[prefix + name] = src.span(value)
        if name == "actions" and isinstance(value, (ast.List, ast.Tuple)):
            for i, member in enumerate(value.elts):
                _call_spans(member, src, f"{prefix}{i}.", names, params)  # type: ignore[arg-type]


def _expression_spans(text: str, base: int) -> tuple[Span, tuple[Span, ...], dict[str, Span]]:
    node, src = read_expression(text, base)
    read_calls(node, src)  # the same checks as parsing: spans only for calls that parse
    elements = node.elts if isinstance(node, ast.Tuple) else [node]
    names: list[Span] = []
    params: dict[str, Span] = {}
    for i, element in enumerate(elements):
        _call_spans(element, src, f"{i}." if len(elements) > 1 else "", names, params)  # type: ignore[arg-type]
    return (src.base, src.base + len(src.text)), tuple(names), params


def action_spans(text: str) -> ActionSpans:
    """The spans of a response that `parse_response` accepts strictly, or of a bare grounding answer (`[x,y]`,
    `[-1,-1]`, `[x1,y1,x2,y2]` and nothing else); anything else raises the strict parser's `ParseError`."""
    check_size(text)
    try:
        think, (action, names, params), conclusion = strict_blocks(text, _expression_spans)
    except ParseError:
        match = BARE_ANSWER.fullmatch(text)
        if match is None or len(numbers := re.split(r"\s*,\s*", match.group(2))) not in (2, 4):
            raise
        parse_grounding(text)  # the same checks as a grounding reader
        return ActionSpans(action=match.span(1), params={"point" if len(numbers) == 2 else "box": match.span(2)})
    return ActionSpans(action=action, names=names, params=params,
                       think=_inner_span(think) if think else None,
                       conclusion=_inner_span(conclusion) if conclusion else None)
