"""Text-document metrics (Writer): paragraphs, tables, line spacing, fonts and a few formatting checks, read with
python-docx (.docx) and odfpy (.odt). The first argument is the agent's file, the second (if any) the expected one."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from io import BytesIO
from pathlib import Path
from typing import Any

import docx
from docx.document import Document
from docx.enum.text import WD_PARAGRAPH_ALIGNMENT, WD_TAB_ALIGNMENT
from odf import opendocument, teletype
from odf.namespaces import FONS, STYLENS, TEXTNS
from odf.text import P, Span
from PIL import Image
from rapidfuzz import fuzz

from uivenus.envs.osworld.metrics.readers import read_or_none
from uivenus.envs.osworld.metrics.registry import metric
from uivenus.envs.osworld.metrics.settings import xcu_value

__all__ = [
    "check_highlighted_words", "check_italic_font_size_14", "check_no_duplicates", "check_tabstops",
    "compare_contains_image", "compare_unique_train_records", "evaluate_alignment", "fuzzy_place_math",
    "compare_docx_files", "compare_docx_files_and_ignore_new_lines", "compare_docx_images", "compare_docx_lines",
    "compare_docx_tables", "compare_font_names", "compare_init_lines", "compare_insert_equation",
    "compare_line_spacing", "compare_references", "compare_subscript_contains", "contains_page_break",
    "evaluate_conversion", "evaluate_spacing", "evaluate_strike_through_last_paragraph", "find_default_font",
    "has_page_numbers_in_footers", "is_first_line_centered",
]


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _docx(path: Any) -> Document | None:
    return read_or_none(path, lambda p: docx.Document(str(p)))


def _odt_paragraphs(path: Path) -> list[str]:
    return [teletype.extractText(p) for p in opendocument.load(str(path)).getElementsByType(P)]


#: How to read a file's paragraph texts, by extension (both files must have the same one).
_PARAGRAPH_READERS: Mapping[str, Callable[[Path], list[str]]] = {
    ".docx": lambda p: [para.text for para in docx.Document(str(p)).paragraphs],
    ".odt": _odt_paragraphs,
}


def _paragraphs(path: Any) -> list[str] | None:
    reader = None if path is None else _PARAGRAPH_READERS.get(Path(path).suffix.lower())
    return None if reader is None else read_or_none(path, reader)


def _flat(paragraphs: Iterable[str], ignore_case: bool) -> str:
    text = re.sub(r"\s+", " ", "\n".join(paragraphs)).strip()
    return text.lower() if ignore_case else text


@metric("compare_docx_files")
def compare_docx_files(result: Any, expected: Any, *, ignore_blanks: bool = True, ignore_case: bool = False,
                       ignore_order: bool = False, content_only: bool = False, fuzzy_match: bool = False,
                       delete_empty_lines: bool = False) -> float:
    """The two documents' paragraph texts (.docx or .odt, both the same kind) compared as the benchmark does.

    `content_only` or `ignore_blanks` + `fuzzy_match`: the similarity of the whole texts with whitespace runs
    collapsed; `ignore_blanks` (the default): those texts must be equal; otherwise paragraph by paragraph (the
    mean similarity with `fuzzy_match`). `ignore_order` sorts paragraphs, `delete_empty_lines` drops blank ones."""
    if result is None or expected is None or Path(result).suffix.lower() != Path(expected).suffix.lower():
        return 0.0
    have, want = _paragraphs(result), _paragraphs(expected)
    if have is None or want is None:
        return 0.0
    if ignore_order:
        have, want = sorted(have), sorted(want)
    if delete_empty_lines:
        have, want = [p for p in have if p.strip()], [p for p in want if p.strip()]
    if content_only or ignore_blanks:
        first, second = _flat(have, ignore_case), _flat(want, ignore_case)
        if content_only or fuzzy_match:
            return fuzz.ratio(first, second) / 100.0
        return float(first == second)
    if len(have) != len(want):
        return 0.0
    if ignore_case:
        have, want = [p.lower() for p in have], [p.lower() for p in want]
    if fuzzy_match:
        return sum(fuzz.ratio(a, b) / 100.0 for a, b in zip(have, want, strict=True)) / len(have) if have else 1.0
    return float(have == want)


def _both(result: Any, expected: Any, check: Callable[[Document, Document], bool]) -> float:
    first, second = _docx(result), _docx(expected)
    return 0.0 if first is None or second is None else float(check(first, second))


def _tables_equal(first: Document, second: Document) -> bool:
    if len(first.tables) != len(second.tables):
        return False
    for one, two in zip(first.tables, second.tables, strict=True):
        if len(one.rows) != len(two.rows) or len(one.columns) != len(two.columns):
            return False
        cells = ((i, j) for i in range(len(one.rows)) for j in range(len(one.columns)))
        if any(one.cell(i, j).text.strip() != two.cell(i, j).text.strip() for i, j in cells):
            return False
    return True


@metric("compare_docx_tables")
def compare_docx_tables(result: Any, expected: Any) -> float:
    """1.0 when both documents have the same tables: same count, shapes and cell texts (trimmed)."""
    return _both(result, expected, _tables_equal)


@metric("compare_line_spacing")
def compare_line_spacing(result: Any, expected: Any) -> float:
    """1.0 when the texts match (`compare_docx_files`' default) and every paragraph has the expected line spacing."""
    if compare_docx_files(result, expected) < 1.0:
        return 0.0
    return _both(result, expected, lambda a, b: len(a.paragraphs) == len(b.paragraphs) and all(
        p.paragraph_format.line_spacing == q.paragraph_format.line_spacing
        for p, q in zip(a.paragraphs, b.paragraphs, strict=True)))


def _images(document: Document) -> list[bytes]:
    return [Image.open(BytesIO(rel.target_part.blob)).tobytes()
            for rel in document.part.rels.values() if "image" in rel.reltype]


@metric("compare_docx_images")
def compare_docx_images(result: Any, expected: Any) -> float:
    """1.0 when both documents embed the same images (same count, same decoded pixels, in order)."""
    return _both(result, expected, lambda a, b: _images(a) == _images(b))


def _any_run_pair(check: Callable[[Any, Any], bool]) -> Callable[[Document, Document], bool]:
    def scan(first: Document, second: Document) -> bool:
        return any(check(r1, r2) for p1, p2 in zip(first.paragraphs, second.paragraphs)
                   for r1, r2 in zip(p1.runs, p2.runs))
    return scan


@metric("compare_subscript_contains")
def compare_subscript_contains(result: Any, expected: Any) -> float:
    """1.0 when some run is subscript in both documents at the same place."""
    return _both(result, expected, _any_run_pair(lambda a, b: bool(a.font.subscript and b.font.subscript)))


@metric("compare_insert_equation")
def compare_insert_equation(result: Any, expected: Any) -> float:
    """1.0 when the texts match and both documents hold an equation object in the same run."""
    if compare_docx_files(result, expected) < 1.0:
        return 0.0
    has_object = lambda run: bool(run.element.xpath(".//w:object | .//m:oMath"))  # noqa: E731
    return _both(result, expected, _any_run_pair(lambda a, b: has_object(a) and has_object(b)))


def _one(result: Any, check: Callable[[Document], bool]) -> float:
    document = _docx(result)
    return 0.0 if document is None else float(check(document))


@metric("compare_font_names")
def compare_font_names(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when every run in the document uses the font `rules["font_name"]`."""
    return _one(result, lambda d: all(run.font.name == rules["font_name"] for p in d.paragraphs for run in p.runs))


@metric("contains_page_break")
def contains_page_break(result: Any, rules: Mapping[str, Any] | None = None) -> float:
    """1.0 when the document has a page break (exactly `rules["page_break_count"]` of them when given)."""

    def count(document: Document) -> int:
        return sum(1 for p in document.paragraphs for run in p.runs
                   for br in run.element.iter(f"{_W}br") if br.get(f"{_W}type") == "page")

    wanted = (rules or {}).get("page_break_count")
    return _one(result, lambda d: count(d) > 0 and (wanted is None or count(d) == wanted))


@metric("has_page_numbers_in_footers")
def has_page_numbers_in_footers(result: Any) -> float:
    """1.0 when every section's footer shows a number (a page-number field leaves its digits in the text)."""

    def numbered(document: Document) -> bool:
        def footer_text(section: Any) -> str:
            paragraphs = section.footer.paragraphs
            if not paragraphs:
                return ""
            return "".join(node.text or "" for node in paragraphs[0]._p.iter(f"{_W}t"))  # noqa: SLF001
        return all(any(ch.isdigit() for ch in footer_text(s)) for s in document.sections)

    return _one(result, numbered)


@metric("is_first_line_centered")
def is_first_line_centered(result: Any) -> float:
    """1.0 when the first paragraph is centred."""
    return _one(result, lambda d: bool(d.paragraphs)
                and d.paragraphs[0].paragraph_format.alignment == WD_PARAGRAPH_ALIGNMENT.CENTER)


@metric("compare_init_lines")
def compare_init_lines(result: Any, expected: Any) -> float:
    """1.0 when the paragraphs the two documents share by position are equal (the shorter one is a prefix)."""
    return _both(result, expected, lambda a, b: all(
        p.text == q.text for p, q in zip(a.paragraphs, b.paragraphs)))


def _lines(document: Document) -> set[str]:
    return {p.text.strip() for p in document.paragraphs if p.text.strip()}


@metric("compare_docx_lines")
def compare_docx_lines(result: Any, expected: Any) -> float:
    """1.0 when both documents have the same set of non-empty lines, in any order."""
    return _both(result, expected, lambda a, b: _lines(a) == _lines(b))


@metric("compare_docx_files_and_ignore_new_lines")
def compare_docx_files_and_ignore_new_lines(result: Any, expected: Any, *, ignore_blanks: bool = True) -> float:
    """`compare_docx_files` over the non-empty paragraphs only (.docx)."""

    def texts(document: Document) -> list[str]:
        return [p.text for p in document.paragraphs if p.text != ""]

    def same(a: Document, b: Document) -> bool:
        return _flat(texts(a), False) == _flat(texts(b), False) if ignore_blanks else texts(a) == texts(b)

    return _both(result, expected, same)


@metric("compare_contains_image")
def compare_contains_image(result: Any, expected: Any) -> float:
    """1.0 when, run by run, the documents agree on where pictures are."""
    has_picture = lambda run: "graphicData" in run._element.xml  # noqa: E731, SLF001
    return _both(result, expected, lambda a, b: all(
        has_picture(r1) == has_picture(r2) for p1, p2 in zip(a.paragraphs, b.paragraphs)
        for r1, r2 in zip(p1.runs, p2.runs)))


@metric("compare_references")
def compare_references(result: Any, expected: Any, *, reference_indicator: str = "References",
                       reference_base_result: float = 0.5) -> float:
    """The similarity of the two reference lists (the non-empty paragraphs after a paragraph reading
    `reference_indicator`), rescaled so `reference_base_result` (+0.01) scores 0 and identical lists 1."""

    def references(document: Document) -> list[str] | None:
        texts = [p.text for p in document.paragraphs]
        if reference_indicator not in texts:
            return None
        return [t for t in texts[texts.index(reference_indicator) + 1:] if t.strip()]

    first, second = _docx(result), _docx(expected)
    if first is None or second is None:
        return 0.0
    mine, theirs = references(first), references(second)
    if mine is None or theirs is None:
        return float(mine is None and theirs is None)
    if len(mine) != len(theirs):
        return 0.0
    if not mine:
        return 1.0
    similarity = sum(fuzz.ratio(a, b) / 100.0 for a, b in zip(mine, theirs, strict=True)) / len(mine)
    base = float(reference_base_result)
    return (similarity - base) / (1 - base) if similarity >= base + 0.01 else 0.0


def _same_text_then(result: Any, expected: Any, check: Callable[[Document], bool]) -> float:
    """The benchmark's pattern for formatting tasks: the text must be unchanged, then `check` the result."""
    return 0.0 if compare_docx_files(result, expected) < 1.0 else _one(result, check)


@metric("evaluate_strike_through_last_paragraph")
def evaluate_strike_through_last_paragraph(result: Any, expected: Any) -> float:
    """1.0 when the text is unchanged and every run of the last paragraph is struck through."""
    return _same_text_then(result, expected, lambda d: bool(d.paragraphs)
                           and all(run.font.strike for run in d.paragraphs[-1].runs))


@metric("check_italic_font_size_14")
def check_italic_font_size_14(result: Any, expected: Any) -> float:
    """1.0 when the text is unchanged and every italic run is set in 14 pt."""
    return _same_text_then(result, expected, lambda d: all(
        run.font.size is not None and run.font.size.pt == 14
        for p in d.paragraphs for run in p.runs if run.italic))


def _all_runs(document: Document) -> Iterable[Any]:
    for table in document.tables:
        for row in table.rows:
            for cell in row.cells:
                for paragraph in cell.paragraphs:
                    yield from paragraph.runs
    for paragraph in document.paragraphs:
        yield from paragraph.runs


@metric("evaluate_conversion")
def evaluate_conversion(result: Any) -> float:
    """1.0 when no run (in tables or the body) is all upper case."""
    return _one(result, lambda d: not any(run.text.isupper() for run in _all_runs(d)))


@metric("evaluate_spacing")
def evaluate_spacing(result: Any) -> float:
    """1.0 when the first three paragraphs (introduction, body, conclusion) are spaced 1.0, 2.0 and 1.5."""
    return _one(result, lambda d: len(d.paragraphs) >= 3 and [
        p.paragraph_format.line_spacing for p in d.paragraphs[:3]] == [1.0, 2.0, 1.5])


@metric("find_default_font")
def find_default_font(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when Writer's default font in registrymodifications.xcu is `rules["font_name"]`."""
    return float(xcu_value(result, "/org.openoffice.Office.Writer/DefaultFont", "Standard") == rules["font_name"])


@metric("check_tabstops")
def check_tabstops(result: Any, expected: Any, *, word_number_split_by_tabstop: int | None = None,
                   index: int = 0) -> float:
    """How close the result's tab stops are to the expected ones, paragraph by paragraph (non-empty ones): 0 when a
    paragraph's count or alignment of stops differs, else 1 minus the mean stop offset over the text width.
    `word_number_split_by_tabstop` also wants that many words before (`index`) the tab of each paragraph."""
    first, second = _docx(result), _docx(expected)
    if first is None or second is None:
        return 0.0
    mine = [p for p in first.paragraphs if p.text.strip()]
    theirs = [p for p in second.paragraphs if p.text.strip()]
    if len(mine) != len(theirs) or not mine:
        return 0.0
    if word_number_split_by_tabstop is not None:
        for paragraph in mine:
            parts = paragraph.text.split("\t")
            if index >= len(parts) or len(parts[index].split()) != word_number_split_by_tabstop:
                return 0.0
    section = second.sections[0]
    width = section.page_width - section.left_margin - section.right_margin

    def stops(paragraph: Any) -> list[Any]:
        return [t for t in paragraph.paragraph_format.tab_stops
                if not (t.alignment == WD_TAB_ALIGNMENT.CLEAR or (t.alignment == WD_TAB_ALIGNMENT.LEFT
                                                                  and t.position == 0))]

    offset = 0.0
    for a, b in zip(mine, theirs, strict=True):
        sa, sb = stops(a), stops(b)
        if len(sa) != len(sb) or any(x.alignment != y.alignment for x, y in zip(sa, sb, strict=True)):
            return 0.0
        offset += sum(abs(x.position - y.position) for x, y in zip(sa, sb, strict=True)) / width
    return max(0.0, 1 - offset / len(mine))


def _highlighted_spans(path: Path) -> bool:
    """Whether an .odt has a text span whose automatic style paints a yellow (#ffff00) background."""
    document = opendocument.load(str(path))
    yellow = {style.getAttrNS(STYLENS, "name") for style in document.automaticstyles.childNodes
              if any(getattr(prop, "attributes", {}).get((FONS, "background-color")) == "#ffff00"
                     for prop in style.childNodes)}
    return any(span.getAttrNS(TEXTNS, "style-name") in yellow for span in document.getElementsByType(Span))


@metric("check_highlighted_words")
def check_highlighted_words(result: Any, expected: Any) -> float:
    """1.0 when the text is unchanged and no words are highlighted yellow any more (.odt)."""
    if compare_docx_files(result, expected) < 1.0:
        return 0.0
    highlighted = read_or_none(result, _highlighted_spans)
    return float(highlighted is False)


@metric("fuzzy_place_math")
def fuzzy_place_math(result: Any, rules: Mapping[str, Any]) -> float:
    """The document must hold exactly three words; the score is their mean best similarity to the accepted
    answers `rules["expected"]`."""
    document = _docx(result)
    if document is None:
        return 0.0
    words = [word for p in document.paragraphs for word in p.text.split()]
    if len(words) != 3:
        return 0.0
    return sum(max(fuzz.ratio(word, answer) / 100.0 for answer in rules["expected"]) for word in words) / 3


@metric("evaluate_alignment")
def evaluate_alignment(result: Any) -> float:
    """1.0 when, in every sentence of three words or more, the first three words come before the rest."""

    def aligned(document: Document) -> bool:
        for paragraph in document.paragraphs:
            for sentence in paragraph.text.split("."):
                words = sentence.strip().split()
                if len(words) < 3:
                    continue
                head, tail = " ".join(words[:3]), " ".join(words[3:])
                if head not in sentence or tail not in sentence or sentence.find(head) >= sentence.find(tail):
                    return False
        return True

    return _one(result, aligned)


def _train_records(document: Document) -> tuple[list[str], list[str]]:
    """The non-empty lines and, of those shaped "time, train id, station, platform", the train ids."""
    lines = [p.text.strip() for p in document.paragraphs if p.text.strip()]
    return lines, [line.split(",")[1].strip() for line in lines if len(line.split(",")) == 4]


@metric("check_no_duplicates")
def check_no_duplicates(initial: Any, processed: Any) -> float:
    """1.0 when the processed timetable lists each train of the initial one exactly once."""
    first, second = _docx(initial), _docx(processed)
    if first is None or second is None:
        return 0.0
    _lines, before = _train_records(first)
    _lines, after = _train_records(second)
    return float(len(after) == len(set(after)) == len(set(before)) and set(after) == set(before))


@metric("compare_unique_train_records")
def compare_unique_train_records(processed: Any, expected: Any) -> float:
    """`expected` is [gold, initial]: the processed lines all come from the initial file, no train twice, the
    same trains and line count as the gold file."""
    if not isinstance(expected, list) or len(expected) < 2:
        return 0.0
    documents = [_docx(path) for path in (processed, expected[0], expected[1])]
    if any(d is None for d in documents):
        return 0.0
    (lines, ids), (gold_lines, gold_ids), (initial_lines, _ids) = (_train_records(d) for d in documents)
    return float(set(lines) <= set(initial_lines) and len(ids) == len(set(ids)) and set(ids) == set(gold_ids)
                 and len(lines) == len(gold_lines))
