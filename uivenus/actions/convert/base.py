"""The contract every converter keeps, the registry the CLI looks formats up in, and the file reader.

A converter maps one item of a peer's action format (a JSON object, a model response) to unified
action records. Items it cannot map raise `ConvertError`, never another exception: peers' outputs are
model text, so malformed input is normal and must be reported, not crash a batch. Coordinates stay in
the frame the peer wrote them in; only `uivenus.actions.coords` converts frames.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn, Protocol, TypeAlias

from ..space import Action, Number, Point
from ..values import ActionError

#: Longer items are refused before parsing (no real action is this long; parsing it would only cost time).
MAX_ITEM_CHARS = 100_000
_SHOWN_CHARS = 120
SAMPLES_DIR = Path(__file__).parent / "samples"


class ConvertError(ValueError):
    """An item cannot be mapped between a peer's format and the unified space; says which item and why."""


class Converter(Protocol):
    """Maps one item of a named foreign format to the unified actions it stands for (several when the
    peer does several things in one action, e.g. AndroidWorld's input_text types and presses Enter)."""

    name: str

    def to_unified(self, item: Any) -> tuple[Action, ...]: ...


#: Every known foreign format by name; each converter module registers its instance on import.
CONVERTERS: dict[str, Converter] = {}

Result: TypeAlias = tuple[Action, ...] | ConvertError


def register(converter: Converter) -> None:
    CONVERTERS[converter.name] = converter


def get_converter(name: str, **options: Any) -> Converter:
    """The registered converter for `name`, with `options` (its dataclass fields, e.g. `screen=(w, h)`) set."""
    try:
        converter = CONVERTERS[name]
    except KeyError:
        raise ConvertError(f"unknown action format {name!r}; known formats: {', '.join(sorted(CONVERTERS))}") from None
    if not options:
        return converter
    accepted = [f.name for f in dataclasses.fields(converter)] if dataclasses.is_dataclass(converter) else []
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ConvertError(f"format {name!r} has no option(s) {unknown}; its options are {accepted or 'none'}")
    return dataclasses.replace(converter, **options)  # type: ignore[type-var]


def convert_text(name: str, text: str, **options: Any) -> list[Result]:
    """Convert every item of a file's text in format `name`: per item its actions, or the ConvertError."""
    converter = get_converter(name, **options)
    results: list[Result] = []
    for item in split_items(text):
        try:
            results.append(converter.to_unified(item))
        except ConvertError as exc:
            results.append(exc)
    return results


def split_items(text: str) -> list[Any]:
    """The items of a file, in the first layout that fits the whole text.

    1. a JSON array (its elements), or one JSON object;
    2. JSON lines: every non-blank line is a JSON value (objects for AndroidWorld, strings for responses);
    3. plain text: one response per paragraph, paragraphs separated by blank lines (so a response that
       holds a blank line, e.g. a long thought, needs layout 1 or 2).
    """
    stripped = text.strip()
    if not stripped:
        return []
    whole = _json_or_none(stripped)
    if isinstance(whole, list):
        return whole
    if isinstance(whole, dict):
        return [whole]
    lines = [line for line in stripped.splitlines() if line.strip()]
    decoded = [_json_or_none(line) for line in lines]
    if all(isinstance(value, (dict, str)) for value in decoded):
        return decoded
    return [block.strip() for block in re.split(r"\n[ \t]*\r?\n", stripped) if block.strip()]


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def sample_path(name: str) -> Path:
    """The small sample file of format `name` shipped for the CLI demo."""
    found = sorted(SAMPLES_DIR.glob(f"{name}.*"))
    if not found:
        raise ConvertError(f"no sample for format {name!r}; samples exist for: "
                           f"{', '.join(sorted(p.stem for p in SAMPLES_DIR.iterdir()))}")
    return found[0]


# --- helpers shared by the converters ---------------------------------------------------------------

def shorten(item: Any) -> str:
    """The item as it appears in error messages: its repr, cut to a readable length."""
    shown = repr(item)
    return shown if len(shown) <= _SHOWN_CHARS else shown[: _SHOWN_CHARS - 1] + "…"


def guarded(source: str, item: Any, convert: Callable[[Any], tuple[Action, ...]]) -> tuple[Action, ...]:
    """Run `convert(item)`; any reason it cannot map (ours or a record's ActionError) becomes one
    ConvertError that names the format and the item."""
    if isinstance(item, str) and len(item) > MAX_ITEM_CHARS:
        raise ConvertError(f"{source} item of {len(item)} characters is longer than {MAX_ITEM_CHARS}; "
                           "split the file into items")
    try:
        return convert(item)
    except (ConvertError, ActionError) as exc:
        raise ConvertError(f"{source} {shorten(item)}: {exc}") from None


def fail(why: str) -> NoReturn:
    raise ConvertError(why)


def number(value: Any, what: str) -> Number:
    """A finite int or float (JSON and Python literals can also spell booleans, NaN and infinity)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        fail(f"{what} must be a finite number, got {value!r}")
    return value


def as_point(value: Any, what: str) -> Point:
    """A point written as a JSON/Python pair `[x, y]`."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        fail(f"{what} must be a pair [x, y], got {value!r}")
    return (number(value[0], f"{what}.x"), number(value[1], f"{what}.y"))


def box_centre(box: Any, what: str = "box") -> Point:
    """The centre of `(x1, y1, x2, y2)`; integer when the sums are even, so pixel boxes give pixel points."""
    if not isinstance(box, (list, tuple)) or len(box) != 4:
        fail(f"{what} must be (x1, y1, x2, y2), got {box!r}")
    x1, y1, x2, y2 = (number(v, what) for v in box)
    if x2 < x1 or y2 < y1:
        fail(f"{what} {tuple(box)!r} has its corners swapped; write (left, top, right, bottom)")
    return (_middle(x1, x2), _middle(y1, y2))


def _middle(a: Number, b: Number) -> Number:
    total = a + b
    return total // 2 if isinstance(total, int) and total % 2 == 0 else total / 2


def fields_of(data: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        fail(f"{what} must be a JSON object, got {type(data).__name__}")
    return data
