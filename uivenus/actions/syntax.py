"""Model text read as one Python expression without running it: the layer under every reader of model output.

Model output is data, so an action call is read with `ast` (and `ast.literal_eval` on single argument nodes by the
readers above); nothing is ever evaluated. Before `ast` sees the text it is bounded (its length, its bracket depth,
counted outside string literals), and every failure, `ast`'s own included, becomes a `ParseError` that says what was
expected, at which character of the whole response, and what was found there. The response grammar (`grammar.py`),
the action calls (`calls.py`), grounding answers (`grounding.py`) and spans (`spans.py`) all stand on this.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterator

__all__ = ["MAX_CALL_CHARS", "MAX_NESTING", "MAX_RESPONSE_CHARS", "ParseError", "check_size"]

#: Longer responses are refused before any parsing (a model that rambles this long has failed anyway).
MAX_RESPONSE_CHARS = 100_000
#: Longest action expression handed to `ast.parse`.
MAX_CALL_CHARS = 16_384
#: Deepest bracket nesting (outside string literals) an action expression may have; real ones use 4.
MAX_NESTING = 16
_FRAGMENT_CHARS = 80
#: What an action expression should look like, for error messages.
CALL_EXAMPLE = "an action call like Click(point=(x, y))"


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


def _shorten(text: str) -> str:
    return text if len(text) <= _FRAGMENT_CHARS else text[: _FRAGMENT_CHARS - 1] + "…"


def check_size(text: str) -> None:
    """Refuse what is not a str, or longer than `MAX_RESPONSE_CHARS`, before any parsing looks at it."""
    if not isinstance(text, str):
        raise ParseError("model output as a str", fragment=repr(text), reason=f"got {type(text).__name__}")
    if len(text) > MAX_RESPONSE_CHARS:
        raise ParseError(f"a response of at most {MAX_RESPONSE_CHARS} characters", position=0, fragment=text,
                         reason=f"it has {len(text)}")


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


def call_end(text: str, open_paren: int) -> int | None:
    """Index just past the bracket matching `text[open_paren]`, or None (unbalanced, or too long to be a call)."""
    depth = 0
    for bracket in _brackets(text, open_paren):
        if bracket.start() >= open_paren + MAX_CALL_CHARS:
            return None
        depth += 1 if bracket.group() in "([{" else -1
        if depth == 0:
            return bracket.end()
    return None


def find_outside_strings(text: str, needle: str, start: int) -> int:
    """First `needle` (which holds no quote) at or after `start` and outside string literals, else -1."""
    return next((i for begin, end in _code_spans(text, start) if (i := text.find(needle, begin, end)) >= 0), -1)


# --- from expression text to ast --------------------------------------------------------------

class Source:
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
        return ParseError(CALL_EXAMPLE, position=self.base + offset, fragment=self.text[offset:],
                          reason=f"invalid syntax ({message})")


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


def read_expression(text: str, base: int) -> tuple[ast.expr, Source]:
    """Parse one expression; every failure of `ast` (syntax, depth, size) becomes a ParseError."""
    lead = len(text) - len(text.lstrip())
    expr = text.strip()
    src = Source(expr, base + lead)
    if not expr:
        raise src.error(CALL_EXAMPLE, reason="the action is empty")
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
        raise ParseError(CALL_EXAMPLE, position=src.base, fragment=expr,
                         reason=f"the expression is too complex ({type(exc).__name__})") from None
    return node, src
