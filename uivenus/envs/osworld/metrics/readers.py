"""The guards between a metric and the files it is given: the getter's value is a host path or None, and a
missing, corrupt or wrongly typed file must score 0.0, never raise (the agent may have left anything there)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["file_pairs", "read_or_none", "read_text"]

T = TypeVar("T")


def read_or_none(path: Any, reader: Callable[[Path], T]) -> T | None:
    """`reader(Path(path))`, or None when `path` is None, not a file, or the reader fails on its bytes.

    The readers are third-party parsers (openpyxl, python-docx, pypdf, ...) that raise every kind of exception on a
    damaged file, so anything they raise means "unreadable" here."""
    if path is None or not Path(path).is_file():
        return None
    try:
        return reader(Path(path))
    except Exception:  # noqa: BLE001 - a parser's failure on bad bytes is the answer "unreadable", not a crash
        return None


def read_text(path: Any) -> str | None:
    """The file's text (UTF-8, undecodable bytes replaced), or None when it cannot be read."""
    return read_or_none(path, lambda p: p.read_text(encoding="utf-8", errors="replace"))


def file_pairs(result: Any, expected: Any) -> list[tuple[Any, Any]]:
    """The (result, expected) file pairs a metric compares: the benchmark passes one of each, or two lists."""
    if isinstance(result, list) and isinstance(expected, list):
        return list(zip(result, expected))
    return [(result, expected)]
