"""PDF metrics: the text of each page, extracted with pypdf, compared by similarity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pypdf import PdfReader
from rapidfuzz import fuzz

from uivenus.envs.osworld.metrics.readers import file_pairs, read_or_none, read_text
from uivenus.envs.osworld.metrics.registry import metric

__all__ = ["compare_pdfs", "is_gold_text_included_in_pdf", "pdf_text"]


def pdf_text(path: Any) -> str | None:
    """All pages' text joined and stripped, or None when the file is missing or not a readable PDF."""
    return read_or_none(path, lambda p: "".join(page.extract_text() or "" for page in PdfReader(Path(p)).pages).strip())


@metric("compare_pdfs")
def compare_pdfs(result: Any, expected: Any) -> float:
    """The text similarity (0..1) of the result PDF and the expected one; lists of PDFs pair up and average."""
    pairs = file_pairs(result, expected)
    if not pairs:
        return 0.0
    total = 0.0
    for mine, theirs in pairs:
        have, want = pdf_text(mine), pdf_text(theirs)
        total += 0.0 if have is None or want is None else fuzz.ratio(have, want) / 100.0
    return total / len(pairs)


@metric("is_gold_text_included_in_pdf")
def is_gold_text_included_in_pdf(result: Any, gold: Any) -> float:
    """1.0 when every value of the gold JSON file (a mapping of strings) occurs in the PDF's text."""
    text, wanted = pdf_text(result), read_text(gold)
    if text is None or wanted is None:
        return 0.0
    try:
        values = json.loads(wanted)
    except json.JSONDecodeError:
        return 0.0
    return float(isinstance(values, dict) and all(str(v) in text for v in values.values()))
