"""OSWorld's one-value rule language (`{"method", "ref"}`), shared by the table, JSON and preferences metrics."""

from __future__ import annotations

import pytest

from uivenus.envs.osworld.metrics.matching import UnknownMatchMethod, match_value


@pytest.mark.parametrize(("value", "method", "ref", "holds"), [
    (3, "eq", 3, True), (3, "ne", 3, False), (3, "lt", 4, True), (None, "gt", 1, False),
    ("Hello World", "re", "World$", True), ("hello", "re", "^H", False), ("hello", "re.I", "^H", True),
    ("a\nB", "re.I.M", "^b$", True),
    (7.504, "approx:0.01", 7.5, True), (7.6, "approx:0.01", 7.5, False), ("n/a", "approx:0.1", 1, False),
    (2, "range.te", [0, 2], True), (0, "range.te", [0, 2], False), (0, "range.ee", [0, 2], True),
    ("'a,b'", "str_list_eq", ["a", "b"], True), ("b,a", "str_list_eq", ["a", "b"], False),
    ("b,a", "str_set_eq", ["a", "b"], True),
    ("A1:B5", "spreadsheet_range", ["A2:A3", "A1:C10"], True), ("A1:D5", "spreadsheet_range", ["A2", "A1:C10"], False),
])
def test_methods(value: object, method: str, ref: object, holds: bool) -> None:
    assert match_value(value, {"method": method, "ref": ref}) is holds


def test_an_unknown_method_names_the_known_ones() -> None:
    with pytest.raises(UnknownMatchMethod, match=r"'roughly'.*approx:TOLERANCE"):
        match_value(1, {"method": "roughly", "ref": 1})
