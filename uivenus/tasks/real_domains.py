"""What a real app's field takes, by its role and name: the parameter domains of explored functions.

To the accessibility tree every entry is just text and every spin button just a number; a task that types a
sentence into a font box, or a number its spin button refuses, is odd or impossible. A field's words pick a
vocabulary (font names for a font box, file names for a Save As name, short words for names and searches, sentences
only for a document's body); a number field takes integers inside the range its toolkit reports, else one its name
suggests. The same rules judge a generated task's values (`value_problem`), so a task never asks for what its field
would not take.
"""

from __future__ import annotations

import math
import re
from types import MappingProxyType
from typing import Any

from uivenus.envs.elements import UIElement
from uivenus.tasks.catalog import ENUM, INT, Param
from uivenus.tasks.vocabularies import VOCABULARIES

__all__ = ["NAME_DOMAINS", "NUMBER_RANGES", "number_param", "text_param", "typed_param", "value_problem"]

#: A text field's domain by the words of its name (first match); a field no pattern names takes short words.
NAME_DOMAINS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), d) for p, d in (
    (r"font(?!.*size)", "font_name"),
    (r"e-?mail", "email"),
    (r"phone|\btel\b", "phone"),
    (r"file|save|folder|directory", "file_name"),
    (r"\b(title|subject|heading)\b", "title"),
    (r"\b(body|comment|note|description|message)\b", "text"),
    (r"\bname\b", "person_name"),
))
#: A number field's range by the words of its name, when its toolkit reports none (first match).
NUMBER_RANGES: tuple[tuple[re.Pattern[str], tuple[int, int]], ...] = tuple(
    (re.compile(p, re.IGNORECASE), r) for p, r in (
        (r"size|font", (8, 72)),
        (r"zoom|scale|percent|%", (50, 200)),
        (r"width|height|margin|indent", (1, 20)),
    ))
DEFAULT_RANGE = (1, 10)
#: A reported range wider than this is cut to its first values (GTK's unbounded spin buttons say 0..2^31).
MAX_SPAN = 100
#: Domains whose values name one thing in a few words: a longer value is a sentence typed into a name field.
_SHORT = frozenset({"word", "file_name", "font_name", "person_name", "title", "subject"})
#: Domains whose every value is known (a font must be installed); other vocabularies are examples, not limits.
_CLOSED = frozenset({"font_name"})
_UNTYPED = frozenset({"text", "number"})


def _words(*names: str) -> str:
    return " ".join(n.replace("_", " ") for n in names if n)


def text_param(name: str, element: UIElement | None = None, where: str = "") -> Param:
    """A text field's parameter: the vocabulary its name (or its screen's title, `where`: a "Save As" dialog's
    unnamed entry takes a file name) picks; a multi-line document body takes sentences."""
    if element is not None and "multi line" in element.states:
        return Param(name, "text")
    said = _words(name, element.name if element is not None else "", where)
    return Param(name, next((d for pattern, d in NAME_DOMAINS if pattern.search(said)), "word"))


def number_param(name: str, element: UIElement | None = None, where: str = "") -> Param:
    """A number field's parameter: integers in the range its toolkit reports (cut to `MAX_SPAN`), else the range
    its name suggests, else 1..10."""
    reported = element.value_range if element is not None else None
    if reported is not None and math.isfinite(reported[0]) and math.isfinite(reported[1]):
        low, high = math.ceil(reported[0]), math.floor(reported[1])
        if low < high:
            return Param(name, INT, low=low, high=min(high, low + MAX_SPAN))
    said = _words(name, element.name if element is not None else "", where)
    low, high = next((r for pattern, r in NUMBER_RANGES if pattern.search(said)), DEFAULT_RANGE)
    return Param(name, INT, low=low, high=high)


#: How an untyped parameter is typed, by the explored widget's role family.
_TYPERS = MappingProxyType({"text": text_param, "number": number_param})


def typed_param(param: Param, element: UIElement | None = None, where: str = "") -> Param:
    """`param` with its domain typed by role and name (a catalog explored before domains were typed says only
    "text" or "number"); an already typed one is returned as it is."""
    if param.domain not in _UNTYPED:
        return param
    typed = _TYPERS[param.domain](param.name, element, where)
    return Param(typed.name, typed.domain, low=typed.low, high=typed.high, optional=param.optional)


def value_problem(param: Param, value: Any) -> str | None:
    """Why `value` is not one `param`'s field takes (outside its range or vocabulary, a sentence in a name field),
    or None."""
    if param.domain == ENUM:
        return None if str(value) in param.values else f"{param.name}={value!r} is not one of {list(param.values)}"
    if param.domain == INT:
        ok = isinstance(value, int) and param.low <= value <= param.high  # type: ignore[operator]
        return None if ok else f"{param.name}={value!r} is not an integer from {param.low} to {param.high}"
    text = str(value)
    if not text.strip():
        return f"{param.name} is empty"
    if param.domain in _SHORT and (len(text.split()) > 3 or "," in text):
        return f"{param.name}={text!r} is a phrase, not a {param.domain.replace('_', ' ')}"
    if param.domain in _CLOSED and text not in VOCABULARIES[param.domain]:
        return f"{param.name}={text!r} is not a {param.domain.replace('_', ' ')} (vocabulary {param.domain!r})"
    return None
