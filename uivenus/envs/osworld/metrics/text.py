"""Metrics over plain-text files the agent wrote or edited: exact (optionally blank/case-insensitive) equality,
line-level similarity, regular expressions per line, CSV records."""

from __future__ import annotations

import csv
import difflib
import io
import re
from collections.abc import Mapping
from typing import Any

from uivenus.envs.osworld.metrics.matching import expect_unexpect, partial_record
from uivenus.envs.osworld.metrics.readers import read_text
from uivenus.envs.osworld.metrics.registry import metric

__all__ = [
    "check_csv", "check_line_number", "check_list", "compare_config", "compare_python_pure_text",
    "compare_terminal_and_txt", "compare_text_file", "diff_text_file", "file_contains",
]


@metric("compare_text_file")
def compare_text_file(result: Any, expected: Any, *, ignore_blanks: bool = False, ignore_case: bool = False) -> float:
    """1.0 when the two files hold the same text (`ignore_blanks` collapses every run of whitespace)."""
    have, want = read_text(result), read_text(expected)
    if have is None or want is None:
        return 0.0
    if ignore_blanks:
        have, want = (re.sub(r"\s+", " ", t).strip() for t in (have, want))
    if ignore_case:
        have, want = have.lower(), want.lower()
    return float(have == want)


@metric("diff_text_file")
def diff_text_file(result: Any, expected: Any) -> float:
    """How alike the two files' lines are: difflib's ratio over the line sequences (1.0 for identical files)."""
    have, want = read_text(result), read_text(expected)
    if have is None or want is None:
        return 0.0
    return difflib.SequenceMatcher(a=have.splitlines(), b=want.splitlines()).ratio()


@metric("check_list")
def check_list(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when each `expect` regex matches some line of the file and no `unexpect` regex matches any line."""
    text = read_text(result)
    if text is None:
        return 0.0
    expect = [re.compile(p) for p in rules.get("expect", [])]
    unexpect = [re.compile(p) for p in rules.get("unexpect", [])]
    return float(expect_unexpect(text.splitlines(), expect, unexpect, lambda p, line: p.search(line) is not None))


@metric("check_csv")
def check_csv(result: Any, rules: Mapping[str, Any]) -> float:
    """Over the CSV's records (header row = keys): each `expect` pattern (a partial record) matches some record
    and no `unexpect` pattern matches any."""
    text = read_text(result)
    if text is None:
        return 0.0
    records = list(csv.DictReader(io.StringIO(text)))
    return float(expect_unexpect(records, rules.get("expect", []), rules.get("unexpect", []), partial_record))


@metric("file_contains")
def file_contains(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when every string in `rules["expected"]` occurs in the file."""
    text = read_text(result)
    return float(text is not None and all(s in text for s in rules["expected"]))


@metric("compare_config")
def compare_config(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when the file's whole text is `rules["expected"]`."""
    return float(read_text(result) == rules["expected"])


@metric("check_line_number")
def check_line_number(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when exactly `rules["expected"]` lines of the file carry a time of day (HH:MM:SS)."""
    text = read_text(result)
    if text is None:
        return 0.0
    clock = re.compile(r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)")
    return float(sum(1 for line in text.splitlines() if clock.search(line)) == int(rules["expected"]))


@metric("compare_terminal_and_txt")
def compare_terminal_and_txt(result: Any, terminal_output: Any) -> float:
    """1.0 when the terminal printed exactly the file's text."""
    text = read_text(result)
    return float(bool(text) and isinstance(terminal_output, str) and terminal_output == text)


def _python_lines(text: str) -> str:
    """Python source without a leading shebang/encoding line, blank lines and trailing spaces (tabs as 4)."""
    lines = text.splitlines()
    head = 0
    while head < min(len(lines), 3) and lines[head].strip().startswith(("#!", "# -*- coding:", "# coding:",
                                                                          "# coding=")):
        head += 1
    return "\n".join(line.expandtabs(4).rstrip() for line in lines[head:] if line.strip())


@metric("compare_python_pure_text")
def compare_python_pure_text(result: Any, expected: Any) -> float:
    """1.0 when the two Python files read the same once layout noise is gone (never run)."""
    have, want = read_text(result), read_text(expected)
    return float(have is not None and want is not None and _python_lines(have) == _python_lines(want))
