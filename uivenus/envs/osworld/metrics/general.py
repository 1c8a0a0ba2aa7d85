"""Metrics over plain values (strings, lists, JSON objects) that getters such as `rule`, `vm_command_line` and the
Chromium tab getters hand over; the `rules` argument carries the task's expectation."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rapidfuzz import fuzz

from uivenus.envs.osworld.metrics.registry import metric

__all__ = [
    "check_direct_json_object", "check_include_exclude", "compare_answer", "exact_match", "fuzzy_match", "is_in_list",
    "literal_match", "match_in_list",
]


@metric("exact_match")
def exact_match(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when the value equals `rules["expected"]`."""
    return float(result == rules["expected"])


@metric("match_in_list")
def match_in_list(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when the value is one of the accepted answers `rules["expected"]`."""
    return float(result in rules["expected"])


@metric("is_in_list")
def is_in_list(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when the list the getter returned contains `rules["expected"]`."""
    return float(result is not None and rules["expected"] in result)


@metric("fuzzy_match")
def fuzzy_match(result: Any, rules: Mapping[str, Any]) -> float:
    """The similarity (0..1, rapidfuzz's normalised ratio) between the value and `rules["expected"]`."""
    return 0.0 if result is None else fuzz.ratio(str(result), str(rules["expected"])) / 100.0


@metric("literal_match")
def literal_match(result: Any, expected: Any, *, type: str = "str", ignore_case: bool = False) -> float:  # noqa: A002
    """Equality of two strings (`type="str"`) or of two lists item by item as strings (`type="list"`)."""

    def norm(value: Any) -> str:
        return str(value).lower() if ignore_case else str(value)

    if type == "str":
        return float(norm(result) == norm(expected))
    if type == "list":
        if not isinstance(result, list | tuple) or not isinstance(expected, list | tuple):
            return 0.0
        return float([norm(v) for v in result] == [norm(v) for v in expected])
    raise ValueError(f"literal_match: option type={type!r} is not 'str' or 'list'")


@metric("check_include_exclude")
def check_include_exclude(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when every `include` string occurs in the value and no `exclude` string does."""
    if result is None:
        return 0.0
    include, exclude = rules.get("include", []), rules.get("exclude", [])
    return float(all(s in result for s in include) and not any(s in result for s in exclude))


def _as_object(result: Any) -> Any:
    """A getter may hand over the object or its text (OSWorld's getters print Python reprs: single quotes)."""
    if isinstance(result, str):
        try:
            return json.loads(result.strip().replace("'", '"'))
        except json.JSONDecodeError:
            return None
    return result


@metric("check_direct_json_object")
def check_direct_json_object(result: Any, rules: Mapping[str, Any]) -> float:
    """Compare a JSON object with `rules["expected"]` key by key.

    By default each expected value must equal the result's (`"ignore_list_order": true` among the expected keys
    compares lists sorted); with `rules["expect_in_result"]` an expected string must occur inside the result's
    string and an expected list names alternatives, one of which must be the result's value or in its list."""
    found = _as_object(result)
    expected: Mapping[str, Any] = rules["expected"]
    if not isinstance(found, Mapping):
        return 0.0
    if not rules.get("expect_in_result", False):
        sort = bool(expected.get("ignore_list_order", False))
        for key, want in expected.items():
            have = found.get(key)
            if sort and isinstance(want, list) and isinstance(have, list):
                want, have = sorted(want, key=repr), sorted(have, key=repr)
            if want != have:
                return 0.0
        return 1.0
    for key, want in expected.items():
        have = found.get(key)
        if isinstance(want, list):
            if not any((isinstance(have, list) and w in have) or (isinstance(have, str) and w == have) for w in want):
                return 0.0
        elif isinstance(want, str):
            if not isinstance(have, str) or want not in have:
                return 0.0
        else:
            return 0.0
    return 1.0


@metric("compare_answer")
def compare_answer(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when a non-empty answer equals `rules["expected"]`."""
    return float(bool(result) and result == rules["expected"])
