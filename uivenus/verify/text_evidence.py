"""Text evidence: how the key points of a task stand on the text of the screens an episode kept.

One job: read key points off screen text — normalise spellings (dashes, quotes, dates in words, phone digits), find
a literal on a screen, read a switch's state next to its name, and say for each key point whether the final screen
satisfies, partly shows, lost or contradicts it (`point_status`); `ocr_lines` reads a screenshot's text as visual
rows when no DOM text was recorded. The OCR judge (`verify.judges.OcrJudge`) votes with it, and trace
verification (`verify.trace`) scores screenshots and key-point progress with it, so both read text the same way.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from PIL import Image

from uivenus.verify.keypoints import KeyPoint, KeyPointKind, Toggle

__all__ = ["PointStatus", "checkable", "found_in", "ocr_lines", "point_status", "spellings"]


class PointStatus(StrEnum):
    SATISFIED = "satisfied"  # everything it names is visible as asked on the final screen (and was not all
    #                          visible on the first kept screen already: text that never changed proves nothing)
    PARTIAL = "partial"  # some of it is visible on the final screen
    GONE = "gone"  # seen on an earlier kept screen, not on the final one
    CONTRADICTED = "contradicted"  # never visible on any kept screen, or a switch shows the opposite state
    UNDETERMINED = "undetermined"  # nothing it names can be read off a screen


_DASHES = dict.fromkeys(map(ord, "‐‑‒–—―−"), "-")
_QUOTE_MAP = {ord("“"): '"', ord("”"): '"', ord("‘"): "'", ord("’"): "'", ord("·"): " "}
_STATE_WORDS = MappingProxyType({"on": "on", "off": "off", "enabled": "on", "disabled": "off"})
_PHONE_LIKE = re.compile(r"[+(]?\d[\d\s().-]*\d")
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})")
#: Literals this short and all digits are on every screen (days, counts); they prove nothing.
_MIN_DIGIT_LITERAL = 3


def _norm(text: str) -> str:
    return " ".join(text.translate(_DASHES).translate(_QUOTE_MAP).casefold().split())


def spellings(text: str) -> tuple[str, ...]:
    """Equivalent spellings a screen or a typed value may use: ISO dates also in words ("2026-12-03" → "December 3,
    2026", "3 Dec 2026"), clock times also without a leading zero ("09:30" → "9:30")."""
    stripped = text.strip()
    time = _CLOCK.fullmatch(stripped)
    if time is not None:
        return (text, f"{int(time.group(1))}:{time.group(2)}")
    match = _ISO_DATE.fullmatch(stripped)
    if match is None:
        return (text,)
    try:
        day = dt.date(*map(int, match.groups()))
    except ValueError:
        return (text,)
    return (text, f"{day:%B} {day.day}, {day.year}", f"{day:%b} {day.day}, {day.year}",
            f"{day.day} {day:%B} {day.year}", f"{day.day} {day:%b} {day.year}")


def found_in(literal: str, lines: Sequence[str]) -> bool:
    """Exact (normalised) occurrence with word boundaries; phone-like numbers also by their digits alone."""
    for variant in spellings(literal):
        wanted = _norm(variant)
        pattern = re.compile(rf"(?<!\w){re.escape(wanted)}(?!\w)")
        digits = re.sub(r"\D", "", variant)
        phone_like = _PHONE_LIKE.fullmatch(variant.strip()) is not None and len(digits) >= 5
        for line in lines:
            if pattern.search(_norm(line)):
                return True
            if phone_like and digits in re.sub(r"\D", "", line):
                return True
    return False


def checkable(literal: str) -> bool:
    return not (literal.isdigit() and len(literal) < _MIN_DIGIT_LITERAL)


def _switch_states(toggle: Toggle, lines: Sequence[str]) -> set[str]:
    """States shown right after the switch's name: on the same line ("Wi-Fi off") or starting the next ("Off")."""
    subject = re.compile(rf"(?<!\w){re.escape(_norm(toggle.subject))}(?!\w)")
    seen = set()
    for i, line in enumerate(lines):
        for match in subject.finditer(_norm(line)):
            rest = _norm(line)[match.end():].split()
            if not rest and i + 1 < len(lines):
                rest = _norm(lines[i + 1]).split()
            if rest and rest[0].strip(".,:;|") in _STATE_WORDS:
                seen.add(_STATE_WORDS[rest[0].strip(".,:;|")])
    return seen


def _toggle_status(toggle: Toggle, final: Sequence[str]) -> PointStatus:
    seen = _switch_states(toggle, final)
    if seen == {toggle.state}:
        return PointStatus.SATISFIED
    if seen and toggle.state not in seen:
        return PointStatus.CONTRADICTED
    return PointStatus.UNDETERMINED


def point_status(point: KeyPoint, screens: Sequence[Sequence[str]]) -> tuple[PointStatus, str]:
    """How one key point stands on the kept screens (the final one last)."""
    final, earlier = screens[-1], screens[:-1]
    if point.kind is KeyPointKind.SORT_FILTER:
        return PointStatus.UNDETERMINED, "an ordering cannot be read off text"
    if point.toggles:
        statuses = [_toggle_status(t, final) for t in point.toggles]
        shown = ", ".join(f"{t.subject} {t.state}: {s.value}" for t, s in zip(point.toggles, statuses, strict=True))
        for status in (PointStatus.CONTRADICTED, PointStatus.UNDETERMINED):
            if status in statuses:
                return status, shown
        return PointStatus.SATISFIED, shown
    literals = [lit for lit in point.literals if checkable(lit)]
    if not literals:
        return PointStatus.UNDETERMINED, "names nothing exact to look for"
    on_final = [lit for lit in literals if found_in(lit, final)]
    before = [lit for lit in literals if any(found_in(lit, screen) for screen in earlier)]
    seen = f"on the final screen: {on_final or 'none'} of {literals}"
    if point.kind is KeyPointKind.REMOVAL:  # what must go: gone at the end after being seen; else no evidence
        if not on_final and before:
            return PointStatus.SATISFIED, f"{before} seen earlier, gone at the end"
        return (PointStatus.PARTIAL if on_final else PointStatus.UNDETERMINED), seen
    if len(on_final) == len(literals):
        if earlier and all(found_in(lit, earlier[0]) for lit in literals):  # e.g. "Pin the note 'Dentist'"
            return PointStatus.UNDETERMINED, f"{literals} were already visible on the first kept screen"
        return PointStatus.SATISFIED, seen
    if on_final:
        return PointStatus.PARTIAL, seen
    if before:
        return PointStatus.GONE, f"{before} seen earlier but not on the final screen"
    return PointStatus.CONTRADICTED, f"none of {literals} is visible on any kept screen"


def ocr_lines(image: Image.Image) -> list[str]:
    """OCR text boxes grouped into visual rows, left to right (so "Wi-Fi … Off" reads as one line)."""
    from uivenus.agent.policies.ocr import ocr_text_boxes

    boxes = sorted(ocr_text_boxes(image), key=lambda b: (b.box[1] + b.box[3]) / 2)
    rows: list[list[Any]] = []
    for box in boxes:
        centre = (box.box[1] + box.box[3]) / 2
        if rows and abs(centre - rows[-1][0]) <= (box.box[3] - box.box[1]) / 2:
            rows[-1][1].append(box)
        else:
            rows.append([centre, [box]])
    return [" ".join(b.text for b in sorted(row, key=lambda b: b.box[0])) for _, row in rows]
