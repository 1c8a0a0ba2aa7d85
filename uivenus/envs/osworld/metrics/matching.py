"""The small rule shapes OSWorld's metrics share: the one-value language `{"method": ..., "ref": ...}` (one matcher
per method name, so a new method is one entry), "expect"/"unexpect" lists, partial records, and a rule's `type`."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import reduce
from typing import Any

from openpyxl.worksheet.cell_range import MultiCellRange

__all__ = ["UnknownMatchMethod", "expect_unexpect", "match_value", "partial_record", "rule_type"]


class UnknownMatchMethod(ValueError):
    """A rule names a method the language does not have; the message lists the ones it has."""


def _regex(method: str, value: Any, ref: Any) -> bool:
    flags = reduce(operator.or_, (getattr(re, flag) for flag in method.split(".")[1:]), re.RegexFlag(0))
    return re.search(ref, str(value), flags) is not None  # "re", "re.I", "re.I.M": flags after the dots


def _approx(method: str, value: Any, ref: Any) -> bool:
    try:
        return abs(float(value) - float(ref)) <= float(method.split(":", 1)[1])  # "approx:0.01"
    except (TypeError, ValueError):
        return False


def _between(method: str, value: Any, ref: Any) -> bool:
    """`range.XY` with X, Y in {t, e}: "t" is strict; `range.te` [0, 2] means 0 < value <= 2."""
    left, right = (getattr(operator, "l" + bound) for bound in method[6:8])
    try:
        return bool(left(ref[0], value) and right(value, ref[1]))
    except TypeError:
        return False


def _str_container(container: Callable[[Any], Any]) -> Callable[[str, Any, Any], bool]:
    def compare(_method: str, value: Any, ref: Any) -> bool:
        return isinstance(value, str) and container(value.strip("\"'").split(",")) == container(ref)
    return compare


def _comparison(name: str) -> Callable[[str, Any, Any], bool]:
    def compare(_method: str, value: Any, ref: Any) -> bool:
        try:
            return bool(getattr(operator, name)(value, ref))
        except TypeError:  # None < 3: the value is not what the rule wants
            return False
    return compare


def _cell_ranges(_method: str, value: Any, ref: Any) -> bool:
    """`spreadsheet_range` [inner, outer]: the value (ranges, e.g. a validation's sqref) covers inner, within outer."""
    have, inner, outer = MultiCellRange(str(value)), MultiCellRange(ref[0]), MultiCellRange(ref[1])
    return all(r in have for r in inner) and all(r in outer for r in have)


_EXACT: dict[str, Callable[[str, Any, Any], bool]] = {
    **{name: _comparison(name) for name in ("eq", "ne", "lt", "le", "gt", "ge")},
    "re": _regex, "str_list_eq": _str_container(list), "str_set_eq": _str_container(set),
    "spreadsheet_range": _cell_ranges,
}
#: Methods that carry a parameter after a prefix: "re.I", "approx:0.01", "range.te".
_PREFIXED: dict[str, Callable[[str, Any, Any], bool]] = {"re.": _regex, "approx:": _approx, "range.": _between}


def match_value(value: Any, rule: Mapping[str, Any]) -> bool:
    """Whether `value` satisfies `rule` (`method` and its `ref`); `UnknownMatchMethod` for a method we lack."""
    method = str(rule["method"])
    matcher = _EXACT.get(method) or next((fn for prefix, fn in _PREFIXED.items() if method.startswith(prefix)), None)
    if matcher is None:
        known = [*sorted(_EXACT), "re.FLAG[.FLAG]", "approx:TOLERANCE", "range.XY"]
        raise UnknownMatchMethod(f"unknown match method {method!r}; known: {', '.join(known)}")
    return matcher(method, value, rule["ref"])


def expect_unexpect(items: Iterable[Any], expect: Iterable[Any], unexpect: Iterable[Any],
                    matches: Callable[[Any, Any], bool]) -> bool:
    """The benchmark's expect/unexpect shape: every `expect` entry matches some item, no `unexpect` entry any."""
    held = list(items)
    return (all(any(matches(wanted, item) for item in held) for wanted in expect)
            and not any(matches(unwanted, item) for unwanted in unexpect for item in held))


def partial_record(pattern: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    """Whether `record` has every key of `pattern` with the same value."""
    return all(key in record and record[key] == value for key, value in pattern.items())


def rule_type(rule: Mapping[str, Any], metric_name: str, known: Sequence[str]) -> str:
    """`rule["type"]`, which must be one of `known`; a ValueError naming the metric and the known types if not."""
    kind = rule.get("type")
    if kind not in known:
        raise ValueError(f"{metric_name}: rule type {kind!r} is not one of {', '.join(known)}")
    return kind
