"""The HTML report of an OSWorld-format evaluation: an index with one row per domain, and a page per domain
with one row per task (its result, score, outcome and why it failed), from the packaged Jinja2 templates."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from uivenus.files import write_text
from uivenus.reports.pages import render

__all__ = ["write_osworld_report"]

TEMPLATE = "osworld.html.j2"


def _page_name(domain: str) -> str:
    return (re.sub(r"[^A-Za-z0-9_.-]+", "-", domain).strip("-.") or "domain") + ".html"


def write_osworld_report(directory: Path | str, summary: Mapping[str, Any],
                         results: Sequence[Mapping[str, Any]]) -> Path:
    """Write `index.html` and one page per domain under `directory`; returns the index's path."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    pages = {domain: _page_name(domain) for domain in summary["domains"]}
    title = f"OSWorld-format tasks · {summary['policy']}"
    for domain, page in pages.items():
        rows = [r for r in results if r["domain"] == domain]
        write_text(out / page, render(TEMPLATE, title=f"{title} · {domain}", summary=summary, domain=domain,
                                      rows=rows, pages=pages), fsync=False)
    return write_text(out / "index.html", render(TEMPLATE, title=title, summary=summary, domain=None, rows=[],
                                                 pages=pages), fsync=False)
