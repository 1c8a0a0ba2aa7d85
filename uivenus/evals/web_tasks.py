"""Live-web task sets in their public formats, read into TaskSpecs that open each task's start page.

Three formats, one entry each in `WEB_FORMATS` (what a row must have, and how it becomes a task):

- Online-Mind2Web (the `Online_Mind2Web.json` list): `task_id`, `confirmed_task` (the instruction), `website`
  (the start URL), `reference_length` (steps a human took) and `level` (easy / medium / hard);
- WebVoyager (`WebVoyager_data.jsonl`): `web_name` (the site's name), `id` (`<web_name>--<n>`), `ques` (the
  instruction) and `web` (the start URL);
- plain, for users' own sets: `id`, `instruction`, `start_url`, and optionally `website` and `level`.

A file is a JSON list or JSON lines. A row that is malformed (not JSON, not an object, a required field missing or
empty, a start URL that is not http(s)) is reported with its line — the rest load. Every field of a row is kept
in `metadata["row"]`, the ones we do not read included. An optional `reference` field (our extension) holds a
scripted reference solution that the oracle plays (the `scripted` check kind of `uivenus.envs.web_script`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from uivenus.actions.space import Platform
from uivenus.envs.browser_config import MODES
from uivenus.envs.web_script import SCRIPTED_KIND, check_steps
from uivenus.records import RecordError, TaskSpec

__all__ = [
    "AUTO", "LEVEL_KEY", "REFERENCE_FIELD", "ROW_KEY", "WEBSITE_KEY", "WEB_FORMATS", "RowError", "WebFormat",
    "WebTaskError", "WebTaskSet", "detect_format", "load_web_tasks", "read_rows", "site_of",
]

AUTO = "auto"
#: Where a task keeps its source row, its website (for summaries and rate limits) and its difficulty level.
ROW_KEY, WEBSITE_KEY, LEVEL_KEY = "row", "website", "level"
#: The optional field holding a scripted reference solution (our extension of every format).
REFERENCE_FIELD = "reference"
#: Step budget of a task whose row says nothing better (Online-Mind2Web rows give the human's step count).
DEFAULT_MAX_STEPS = 30


class WebTaskError(ValueError):
    """A task file cannot be read at all (missing, not JSON/JSONL, an unknown or undetectable format)."""


@dataclass(frozen=True)
class RowError:
    """One row that did not load: where it is and why."""

    line: int  # the JSONL line, or the 1-based position in a JSON list
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True)
class WebFormat:
    """A public task format: the fields that identify it, and how one of its rows becomes our fields."""

    name: str
    required: tuple[str, ...]
    id: Callable[[Mapping[str, Any]], str]
    instruction: Callable[[Mapping[str, Any]], str]
    start_url: Callable[[Mapping[str, Any]], str]
    website: Callable[[Mapping[str, Any]], str]
    level: Callable[[Mapping[str, Any]], str | None]
    max_steps: Callable[[Mapping[str, Any]], int | None] = lambda row: None


def site_of(url: str) -> str:
    """The host a URL is on, without `www.` (how summaries and rate limits group tasks)."""
    host = (urlsplit(url).hostname or url).lower()
    return host[4:] if host.startswith("www.") else host


def _text(row: Mapping[str, Any], key: str) -> str:
    return str(row[key]).strip()


def _mind2web_steps(row: Mapping[str, Any]) -> int | None:
    """Twice the human's step count (at least 15): room to explore, bounded like the benchmark's own runs."""
    length = row.get("reference_length")
    return max(15, 2 * int(length)) if isinstance(length, int) and length > 0 else None


WEB_FORMATS: Mapping[str, WebFormat] = MappingProxyType({fmt.name: fmt for fmt in (
    WebFormat("online-mind2web", ("task_id", "confirmed_task", "website"),
              id=lambda r: _text(r, "task_id"), instruction=lambda r: _text(r, "confirmed_task"),
              start_url=lambda r: _text(r, "website"), website=lambda r: site_of(_text(r, "website")),
              level=lambda r: str(r["level"]) if r.get("level") else None, max_steps=_mind2web_steps),
    WebFormat("webvoyager", ("web_name", "id", "ques", "web"),
              id=lambda r: _text(r, "id"), instruction=lambda r: _text(r, "ques"),
              start_url=lambda r: _text(r, "web"), website=lambda r: _text(r, "web_name"),
              level=lambda r: str(r["level"]) if r.get("level") else None),
    WebFormat("plain", ("id", "instruction", "start_url"),
              id=lambda r: _text(r, "id"), instruction=lambda r: _text(r, "instruction"),
              start_url=lambda r: _text(r, "start_url"),
              website=lambda r: _text(r, "website") if r.get("website") else site_of(_text(r, "start_url")),
              level=lambda r: str(r["level"]) if r.get("level") else None,
              max_steps=lambda r: r.get("max_steps") if isinstance(r.get("max_steps"), int) else None),
)})


@dataclass(frozen=True)
class WebTaskSet:
    """What a task file held: the tasks that loaded (file order), the rows that did not, and the format read."""

    path: str
    format: str
    tasks: tuple[TaskSpec, ...]
    errors: tuple[RowError, ...]


def read_rows(path: str | Path, error: type[Exception] = WebTaskError) -> list[tuple[int, Any]]:
    """(line or position, value) of every row of a JSON list or JSON-lines file; a line that is not JSON is kept
    as its exception, to be reported with its line. A file that cannot be read as either raises `error`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path} is not UTF-8 text ({exc.reason}); give a JSON list or JSON lines") from None
    if text.lstrip().startswith("["):
        try:
            values = json.loads(text)
        except json.JSONDecodeError as exc:
            raise error(f"{path} starts like a JSON list but is not valid JSON ({exc.msg} at line "
                        f"{exc.lineno}); fix it or write one row per line (JSONL)") from None
        return list(enumerate(values, 1))
    rows: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                rows.append((number, exc))
    return rows


def detect_format(row: Mapping[str, Any]) -> str | None:
    """The first format whose identifying fields the row has, or None."""
    return next((fmt.name for fmt in WEB_FORMATS.values() if all(key in row for key in fmt.required)), None)


def _task(fmt: WebFormat, row: Mapping[str, Any], platform: Platform) -> TaskSpec:
    missing = [key for key in fmt.required if key not in row or row[key] is None or not str(row[key]).strip()]
    if missing:
        raise RecordError(f"a {fmt.name} row needs {', '.join(fmt.required)}; missing or empty: {', '.join(missing)}")
    url = fmt.start_url(row)
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
        raise RecordError(f"the start URL {url[:80]!r} is not an http(s) URL")
    metadata = {ROW_KEY: dict(row), WEBSITE_KEY: fmt.website(row), LEVEL_KEY: fmt.level(row), "format": fmt.name}
    check = None
    if row.get(REFERENCE_FIELD) is not None:
        check = {"kind": SCRIPTED_KIND, "steps": check_steps(row[REFERENCE_FIELD])}
    return TaskSpec(id=fmt.id(row), instruction=fmt.instruction(row), platform=platform, url=url, check=check,
                    max_steps=fmt.max_steps(row) or DEFAULT_MAX_STEPS, metadata=metadata)


def load_web_tasks(path: str | Path, format: str = AUTO, viewport: str = "desktop") -> WebTaskSet:
    """The tasks of a JSON or JSONL file in `format` (`auto`: detected from the first row that is an object), for a
    browser in `viewport` mode (`desktop` or `phone`); bad rows are listed in `errors`, never fatal."""
    path = Path(path)
    if format != AUTO and format not in WEB_FORMATS:
        raise WebTaskError(f"unknown task format {format!r}; use {AUTO}, {', '.join(WEB_FORMATS)}")
    if viewport not in MODES:
        raise WebTaskError(f"unknown viewport {viewport!r}; use {', '.join(MODES)}")
    rows = read_rows(path)
    if format == AUTO:
        found = next((detect_format(v) for _, v in rows if isinstance(v, Mapping) and detect_format(v)), None)
        if found is None:
            raise WebTaskError(f"{path}: no row has the fields of a known format ("
                               + "; ".join(f"{f.name}: {', '.join(f.required)}" for f in WEB_FORMATS.values())
                               + "); pass --format or fix the file")
        format = found
    fmt, platform = WEB_FORMATS[format], MODES[viewport].platform
    tasks: list[TaskSpec] = []
    errors: list[RowError] = []
    seen: set[str] = set()
    for line, value in rows:
        if isinstance(value, Exception):
            errors.append(RowError(line, f"not JSON ({value})"))
        elif not isinstance(value, Mapping):
            errors.append(RowError(line, f"a task is a JSON object, got {type(value).__name__}"))
        else:
            try:
                task = _task(fmt, value, platform)
            except (RecordError, ValueError, TypeError) as exc:
                errors.append(RowError(line, str(exc)))
                continue
            if task.id in seen:
                errors.append(RowError(line, f"task id {task.id!r} appears again; ids must be unique"))
                continue
            seen.add(task.id)
            tasks.append(task)
    return WebTaskSet(str(path), format, tuple(tasks), tuple(errors))

