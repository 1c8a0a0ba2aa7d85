"""Grounding answers, read and written: where a grounding model points, `[x,y]`, `[-1,-1]` or a box.

Grounding runs with thinking off and greedy decoding, and the answer is not an action call: it is the last bracketed
list of two numbers (the point), four (a box, whose centre is the point), or `[-1,-1]` when the instruction does not
apply to the image (a refusal). A grammar of its own, so it is read with a regular expression, not `ast`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from .syntax import ParseError, check_size

__all__ = ["GroundingAnswer", "format_grounding", "parse_grounding"]

_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
_NUMBER_LIST = re.compile(rf"[\[(]\s*({_NUMBER}(?:\s*,\s*{_NUMBER})*)\s*[\])]")
#: A text that is a grounding answer and nothing else: group 1 the bracketed list, group 2 its numbers.
BARE_ANSWER = re.compile(rf"\s*({_NUMBER_LIST.pattern})\s*")
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
    check_size(text)
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
