"""Presentation metrics (Impress): `compare_pptx_files` walks both decks slide by slide, shape by shape, paragraph by
paragraph and run by run; each `examine_*` option switches one aspect on or off, with the benchmark's defaults.

Options the benchmark tied to single public tasks (a title that must sit below 3600000 EMU when it reads
"Product Comparison", ...) are refused with `SlideOptionError`, not silently ignored."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pptx
from pptx.enum.shapes import MSO_SHAPE_TYPE
from pptx.enum.text import PP_ALIGN
from pptx.presentation import Presentation
from pptx.util import Inches

from uivenus.envs.osworld.metrics.readers import read_or_none
from uivenus.envs.osworld.metrics.registry import metric
from uivenus.envs.osworld.metrics.settings import xcu_value

__all__ = ["SlideOptionError", "check_image_stretch_and_center", "check_presenter_console_disable",
           "check_slide_orientation_Portrait", "compare_pptx_files"]

_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"

#: Every option `compare_pptx_files` accepts, with the benchmark's default.
PPTX_OPTIONS: Mapping[str, Any] = {
    "examine_number_of_slides": True, "examine_shape": True, "examine_text": True, "examine_indent": True,
    "examine_font_name": True, "examine_font_size": True, "examine_font_bold": True, "examine_font_italic": True,
    "examine_color_rgb": True, "examine_font_underline": True, "examine_strike_through": True,
    "examine_alignment": True, "examine_bullets": True, "examine_background_color": True, "examine_note": True,
    "examine_image_size": False, "examine_modify_height": False, "approximately_tolerance": 0.005,
}
#: Options whose public meaning is hard-wired to one task's text or slide number; a task using them cannot be judged.
_TASK_SPECIFIC = ("examine_title_bottom_position", "examine_table_bottom_position", "examine_right_position",
                  "examine_top_position", "examine_shape_for_shift_size")


class SlideOptionError(ValueError):
    """A `compare_pptx_files` option we do not implement; the message names it."""


def _deck(path: Any) -> Presentation | None:
    return read_or_none(path, lambda p: pptx.Presentation(str(p)))


def _close(a: float, b: float, tolerance: float) -> bool:
    if a == b:
        return True
    if a == 0 or b == 0:
        return False
    return abs(a - b) / max(abs(a), abs(b)) <= tolerance


def _background(slide: Any) -> Any:
    """The slide's solid background colour, else its master's, else None."""
    for fill in (slide.background.fill, slide.slide_layout.slide_master.background.fill):
        if fill.type == 1:  # MSO_FILL.SOLID
            return fill.fore_color.rgb
        if fill.type != 5:  # 5: MSO_FILL.BACKGROUND, "inherit from the master"
            return None
    return None


def _notes(slide: Any) -> str:
    return slide.notes_slide.notes_text_frame.text.strip() if slide.has_notes_slide else ""


def _rgb(font: Any) -> Any:
    try:
        return font.color.rgb
    except AttributeError:  # no colour set, or a theme colour: nothing to compare
        return None


def _off(value: Any) -> bool:
    return value is None or value is False


def _run_differs(a: Any, b: Any, o: Mapping[str, Any]) -> bool:
    fa, fb = a.font, b.font
    strike = lambda run: run.font._rPr.get("strike") if run.font._rPr is not None else None  # noqa: E731, SLF001
    return ((o["examine_font_name"] and fa.name != fb.name)
            or (o["examine_font_size"] and fa.size != fb.size)
            or (o["examine_font_bold"] and fa.bold != fb.bold and not (_off(fa.bold) and _off(fb.bold)))
            or (o["examine_font_italic"] and fa.italic != fb.italic and not (_off(fa.italic) and _off(fb.italic)))
            or (o["examine_color_rgb"] and _rgb(fa) != _rgb(fb))
            or (o["examine_font_underline"] and fa.underline != fb.underline
                and not (_off(fa.underline) and _off(fb.underline)))
            or (o["examine_strike_through"] and strike(a) != strike(b)))


def _bullet(paragraph: Any) -> tuple[Any, ...]:
    """The bullet a paragraph sets itself: the kind (none, character, numbering) and its character or scheme."""
    props = paragraph._p.pPr  # noqa: SLF001 - python-pptx has no bullet API
    if props is None:
        return ()
    return tuple((child.tag.removeprefix(_A), child.get("char") or child.get("type")) for child in props
                 if child.tag in (f"{_A}buNone", f"{_A}buChar", f"{_A}buAutoNum"))


def _paragraphs_differ(a: Any, b: Any, o: Mapping[str, Any]) -> bool:
    for pa, pb in zip(a.text_frame.paragraphs, b.text_frame.paragraphs):
        if o["examine_alignment"] and (pa.alignment or PP_ALIGN.LEFT) != (pb.alignment or PP_ALIGN.LEFT):
            return True
        if (o["examine_text"] and pa.text != pb.text) or (o["examine_indent"] and pa.level != pb.level):
            return True
        if o["examine_bullets"] and _bullet(pa) != _bullet(pb):
            return True
        if any(_run_differs(ra, rb, o) for ra, rb in zip(pa.runs, pb.runs)):
            return True
    return False


def _table_runs(shape: Any) -> Iterator[Any]:
    table = shape.table
    for row in range(len(table.rows)):
        for col in range(len(table.columns)):
            for paragraph in table.cell(row, col).text_frame.paragraphs:
                yield from paragraph.runs


def _shapes_differ(a: Any, b: Any, o: Mapping[str, Any]) -> bool:
    tol = float(o["approximately_tolerance"])
    geometry = ("left", "top", "width", "height")
    same = {g: _close(getattr(a, g) or 0, getattr(b, g) or 0, tol) for g in geometry}
    if o["examine_shape"] and not all(same.values()):
        return True
    pictures = a.shape_type == MSO_SHAPE_TYPE.PICTURE and b.shape_type == MSO_SHAPE_TYPE.PICTURE
    if o["examine_image_size"] and not ((same["width"] and same["height"]) if pictures else all(same.values())):
        return True
    if o["examine_modify_height"]:
        height_only = (not a.has_text_frame and not b.has_text_frame) or (
            a.shape_type == MSO_SHAPE_TYPE.FREEFORM and b.shape_type == MSO_SHAPE_TYPE.FREEFORM)
        if not (same["height"] if height_only else all(same.values())):
            return True
    if getattr(a, "has_table", False) and getattr(b, "has_table", False):
        table_options = {**o, "examine_font_name": False, "examine_font_size": False, "examine_strike_through": False}
        if any(_run_differs(ra, rb, table_options) for ra, rb in zip(_table_runs(a), _table_runs(b))):
            return True
    if a.has_text_frame and b.has_text_frame:
        if o["examine_text"] and a.text_frame.text.strip() != b.text_frame.text.strip():
            return True
        return _paragraphs_differ(a, b, o)
    return False


def _slides_differ(a: Any, b: Any, o: Mapping[str, Any]) -> bool:
    if o["examine_background_color"] and _background(a) != _background(b):
        return True
    if o["examine_note"] and _notes(a) != _notes(b):
        return True
    if len(a.shapes) != len(b.shapes):
        return True
    return any(_shapes_differ(sa, sb, o) for sa, sb in zip(a.shapes, b.shapes))


@metric("compare_pptx_files")
def compare_pptx_files(result: Any, expected: Any, **options: Any) -> float:
    """1.0 when the result deck matches the expected one in every examined aspect (see `PPTX_OPTIONS`)."""
    refused = [name for name in _TASK_SPECIFIC if options.get(name)]
    unknown = [name for name in options if name not in PPTX_OPTIONS and name not in _TASK_SPECIFIC
               and name != "enable_debug"]
    if refused or unknown:
        raise SlideOptionError(f"compare_pptx_files: options not implemented: {refused + unknown} (the benchmark ties "
                               f"{', '.join(_TASK_SPECIFIC)} to single tasks); implemented: {', '.join(PPTX_OPTIONS)}")
    chosen = {**PPTX_OPTIONS, **{k: v for k, v in options.items() if k in PPTX_OPTIONS}}
    first, second = _deck(result), _deck(expected)
    if first is None or second is None:
        return 0.0
    if chosen["examine_number_of_slides"] and len(first.slides) != len(second.slides):
        return 0.0
    return float(not any(_slides_differ(a, b, chosen) for a, b in zip(first.slides, second.slides)))


@metric("check_slide_orientation_Portrait")
def check_slide_orientation_Portrait(result: Any) -> float:  # noqa: N802 - the benchmark's name
    """1.0 when the deck's slides are taller than wide."""
    deck = _deck(result)
    return 0.0 if deck is None else float(deck.slide_height > deck.slide_width)


@metric("check_presenter_console_disable")
def check_presenter_console_disable(result: Any) -> float:
    """1.0 when LibreOffice's registrymodifications.xcu turns the Impress presenter screen off."""
    value = xcu_value(result, "/org.openoffice.Office.Impress/Misc/Start", "EnablePresenterScreen")
    return float((value or "").strip().lower() == "false")


@metric("check_image_stretch_and_center")
def check_image_stretch_and_center(result: Any, original: Any) -> float:
    """1.0 when the first picture of the original's first slide is, in the result, stretched to the slide (within
    half an inch each way) and centred."""
    mine, theirs = _deck(result), _deck(original)
    if mine is None or theirs is None or not mine.slides or not theirs.slides:
        return 0.0
    pictures = [s for s in theirs.slides[0].shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE]
    if not pictures:
        return 0.0
    blob = pictures[0].image.blob
    moved = [s for s in mine.slides[0].shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE and s.image.blob == blob]
    if not moved:
        return 0.0
    shape, slack = moved[-1], Inches(0.5)
    width, height = theirs.slide_width, theirs.slide_height
    return float(abs(shape.width - width) <= slack and abs(shape.height - height) <= slack
                 and abs(shape.left - (width - shape.width) / 2) <= slack
                 and abs(shape.top - (height - shape.height) / 2) <= slack)
