"""The Writer metrics on real documents: .docx written by python-docx, the same documents turned into .odt by
LibreOffice headless (one conversion), plus damaged files that must score 0.0."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import docx
import pytest
from docx.enum.text import WD_BREAK, WD_COLOR_INDEX, WD_PARAGRAPH_ALIGNMENT
from PIL import Image

from uivenus.envs.osworld.metrics import metric_for


def _document(path: Path, lines: Sequence[str], *, table: Sequence[Sequence[str]], spacing: float, centered: bool,
              font: str, page_break: bool, footer: str, color: str, highlight: bool = False) -> Path:
    document = docx.Document()
    for i, line in enumerate(lines):
        paragraph = document.add_paragraph()
        run = paragraph.add_run(line)
        run.font.name = font
        if highlight and i == 1:
            run.font.highlight_color = WD_COLOR_INDEX.YELLOW
        paragraph.paragraph_format.line_spacing = spacing
        if i == 0 and centered:
            paragraph.alignment = WD_PARAGRAPH_ALIGNMENT.CENTER
    if page_break:
        document.paragraphs[-1].runs[-1].add_break(WD_BREAK.PAGE)
    grid = document.add_table(rows=len(table), cols=len(table[0]))
    for r, row in enumerate(table):
        for c, text in enumerate(row):
            grid.cell(r, c).text = text
    picture = path.with_suffix(".png")
    Image.new("RGB", (8, 8), color).save(picture)
    document.add_picture(str(picture))
    document.paragraphs[-1].runs[-1].font.name = font  # the metric wants every run in the font, the picture's too
    document.sections[0].footer.paragraphs[0].text = footer
    document.save(path)
    return path


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory,
         soffice_convert: Callable[[Sequence[Path], str], list[Path]]) -> dict[str, Path]:
    raw = tmp_path_factory.mktemp("docs")
    table = [["Item", "Qty"], ["Pens", "3"]]
    made = {
        "gold": _document(raw / "gold.docx", ["Quarterly report", "Sales  rose.", "Costs fell."], table=table,
                          spacing=1.5, centered=True, font="Liberation Serif", page_break=True, footer="Page 1",
                          color="red", highlight=True),
        "same": _document(raw / "same.docx", ["Quarterly report", "Sales rose.", "Costs fell."], table=table,
                          spacing=1.5, centered=True, font="Liberation Serif", page_break=True, footer="Page 1",
                          color="red"),
        "other": _document(raw / "other.docx", ["Quarterly Report", "Costs fell.", "Sales rose"],
                           table=[["Item", "Qty"], ["Pens", "4"]], spacing=1.0, centered=False,
                           font="DejaVu Sans", page_break=False, footer="Page", color="blue"),
    }
    odt = {f"{p.stem}-odt": p for p in soffice_convert([made["gold"], made["other"], made["same"]], "odt")}
    return made | odt


def test_compare_docx_files_default_ignores_blank_runs_only(docs: dict[str, Path]) -> None:
    compare = metric_for("compare_docx_files")
    assert compare(docs["same"], docs["gold"]) == 1.0  # "Sales  rose." vs "Sales rose.": blanks collapse
    assert compare(docs["other"], docs["gold"]) == 0.0
    assert compare(docs["same"], docs["gold"], ignore_blanks=False) == 0.0  # now the double space counts


def test_compare_docx_files_options(docs: dict[str, Path]) -> None:
    compare = metric_for("compare_docx_files")
    assert 0.6 < compare(docs["other"], docs["gold"], fuzzy_match=True) < 1.0
    assert 0.6 < compare(docs["other"], docs["gold"], content_only=True) < 1.0
    per_paragraph = compare(docs["other"], docs["gold"], ignore_blanks=False, fuzzy_match=True, ignore_case=True)
    assert 0.0 < per_paragraph < 1.0


def test_compare_docx_files_reads_odt_made_by_libreoffice(docs: dict[str, Path]) -> None:
    compare = metric_for("compare_docx_files")
    assert compare(docs["gold-odt"], docs["gold-odt"]) == 1.0
    assert compare(docs["other-odt"], docs["gold-odt"]) == 0.0
    assert compare(docs["gold-odt"], docs["gold"]) == 0.0  # .odt against .docx is not a comparison


def test_tables_spacing_images_and_single_document_checks(docs: dict[str, Path]) -> None:
    assert metric_for("compare_docx_tables")(docs["same"], docs["gold"]) == 1.0
    assert metric_for("compare_docx_tables")(docs["other"], docs["gold"]) == 0.0
    assert metric_for("compare_line_spacing")(docs["same"], docs["gold"]) == 1.0
    assert metric_for("compare_docx_images")(docs["same"], docs["gold"]) == 1.0
    assert metric_for("compare_docx_images")(docs["other"], docs["gold"]) == 0.0
    assert metric_for("is_first_line_centered")(docs["gold"]) == 1.0
    assert metric_for("is_first_line_centered")(docs["other"]) == 0.0
    assert metric_for("compare_font_names")(docs["gold"], {"font_name": "Liberation Serif"}) == 1.0
    assert metric_for("compare_font_names")(docs["other"], {"font_name": "Liberation Serif"}) == 0.0
    assert metric_for("contains_page_break")(docs["gold"], {"page_break_count": 1}) == 1.0
    assert metric_for("contains_page_break")(docs["gold"], {"page_break_count": 2}) == 0.0
    assert metric_for("contains_page_break")(docs["other"], {}) == 0.0
    assert metric_for("has_page_numbers_in_footers")(docs["gold"]) == 1.0
    assert metric_for("has_page_numbers_in_footers")(docs["other"]) == 0.0


def test_missing_and_corrupt_documents_score_zero(tmp_path: Path, docs: dict[str, Path]) -> None:
    corrupt_docx, corrupt_odt = tmp_path / "bad.docx", tmp_path / "bad.odt"
    corrupt_docx.write_bytes(b"PK\x03\x04garbage")
    corrupt_odt.write_text("<not a zip/>")
    for name in ("compare_docx_files", "compare_docx_tables", "compare_line_spacing", "compare_docx_images"):
        for result in (None, tmp_path / "absent.docx", corrupt_docx):
            assert metric_for(name)(result, docs["gold"]) == 0.0, (name, result)
    assert metric_for("compare_docx_files")(corrupt_odt, docs["gold-odt"]) == 0.0
    assert metric_for("is_first_line_centered")(corrupt_docx) == 0.0
    assert metric_for("has_page_numbers_in_footers")(None) == 0.0


def test_check_highlighted_words_reads_libreoffice_odt(docs: dict[str, Path]) -> None:
    check = metric_for("check_highlighted_words")
    assert check(docs["same-odt"], docs["gold-odt"]) == 1.0  # same text, nothing highlighted
    assert check(docs["gold-odt"], docs["same-odt"]) == 0.0  # a yellow word is left
    assert check(docs["other-odt"], docs["gold-odt"]) == 0.0  # the text changed


def _plain(path: Path, paragraphs: Sequence[str], *, strike_last: bool = False, italic_pt: int | None = None,
           spacing: Sequence[float] = (), upper: bool = False) -> Path:
    document = docx.Document()
    for i, text in enumerate(paragraphs):
        paragraph = document.add_paragraph()
        run = paragraph.add_run(text.upper() if upper else text)
        if strike_last and i == len(paragraphs) - 1:
            run.font.strike = True
        if italic_pt is not None and i == 0:
            run.italic = True
            run.font.size = docx.shared.Pt(italic_pt)
        if i < len(spacing):
            paragraph.paragraph_format.line_spacing = spacing[i]
    document.save(path)
    return path


def test_formatting_checks_want_the_text_unchanged_and_the_format_right(tmp_path: Path) -> None:
    lines = ["Intro text", "Body text", "Conclusion"]
    plain = _plain(tmp_path / "plain.docx", lines)
    struck = _plain(tmp_path / "struck.docx", lines, strike_last=True)
    assert metric_for("evaluate_strike_through_last_paragraph")(struck, plain) == 1.0
    assert metric_for("evaluate_strike_through_last_paragraph")(plain, plain) == 0.0
    assert metric_for("check_italic_font_size_14")(_plain(tmp_path / "i14.docx", lines, italic_pt=14), plain) == 1.0
    assert metric_for("check_italic_font_size_14")(_plain(tmp_path / "i12.docx", lines, italic_pt=12), plain) == 0.0
    assert metric_for("evaluate_spacing")(_plain(tmp_path / "sp.docx", lines, spacing=(1.0, 2.0, 1.5))) == 1.0
    assert metric_for("evaluate_spacing")(plain) == 0.0
    assert metric_for("evaluate_conversion")(plain) == 1.0
    assert metric_for("evaluate_conversion")(_plain(tmp_path / "up.docx", lines, upper=True)) == 0.0


def test_line_and_reference_comparisons(tmp_path: Path) -> None:
    a = _plain(tmp_path / "a.docx", ["one", "", "two", "References", "Doe, J. (2020). A paper.", "Roe, R. (2019)."])
    b = _plain(tmp_path / "b.docx", ["two", "one", "References", "Doe, J. (2020). A paper.", "Roe, R. (2019)."])
    c = _plain(tmp_path / "c.docx", ["one", "", "two", "References", "Smith (1999). Other.", "Jones (2001)."])
    assert metric_for("compare_docx_lines")(a, b) == 1.0
    assert metric_for("compare_docx_lines")(a, c) == 0.0
    assert metric_for("compare_init_lines")(a, a) == 1.0
    assert metric_for("compare_init_lines")(a, b) == 0.0
    assert metric_for("compare_docx_files_and_ignore_new_lines")(a, c) == 0.0
    assert metric_for("compare_docx_files_and_ignore_new_lines")(a, a) == 1.0
    assert metric_for("compare_references")(a, b) == 1.0
    assert metric_for("compare_references")(c, a) == 0.0
    assert metric_for("compare_contains_image")(a, a) == 1.0


def test_default_font_and_tab_stops(tmp_path: Path) -> None:
    xcu = tmp_path / "registrymodifications.xcu"
    xcu.write_text('<?xml version="1.0"?><oor:items xmlns:oor="http://openoffice.org/2001/registry">'
                   '<item oor:path="/org.openoffice.Office.Writer/DefaultFont"><prop oor:name="Standard" '
                   'oor:op="fuse"><value>Liberation Sans</value></prop></item></oor:items>')
    assert metric_for("find_default_font")(xcu, {"font_name": "Liberation Sans"}) == 1.0
    assert metric_for("find_default_font")(xcu, {"font_name": "DejaVu Serif"}) == 0.0

    def tabbed(path: Path, position_cm: float) -> Path:
        document = docx.Document()
        paragraph = document.add_paragraph("Name\tValue")
        paragraph.paragraph_format.tab_stops.add_tab_stop(docx.shared.Cm(position_cm))
        document.save(path)
        return path

    gold = tabbed(tmp_path / "tab-gold.docx", 5)
    assert metric_for("check_tabstops")(gold, gold, word_number_split_by_tabstop=1) == 1.0
    near = metric_for("check_tabstops")(tabbed(tmp_path / "tab-near.docx", 6), gold)
    assert 0.0 < near < 1.0
    assert metric_for("check_tabstops")(_plain(tmp_path / "notab.docx", ["Name\tValue"]), gold) == 0.0


def test_one_task_document_checks(tmp_path: Path) -> None:
    answers = {"expected": ["Einstein", "Curie", "Newton"]}
    assert metric_for("fuzzy_place_math")(_plain(tmp_path / "w.docx", ["Einstein Curie", "Newton"]), answers) == 1.0
    assert metric_for("fuzzy_place_math")(_plain(tmp_path / "x.docx", ["Einstein"]), answers) == 0.0
    partly = metric_for("fuzzy_place_math")(_plain(tmp_path / "y.docx", ["Einstien Curie Newtn"]), answers)
    assert 0.8 < partly < 1.0
    assert metric_for("evaluate_alignment")(_plain(tmp_path / "al.docx", ["One two three\tfour five."])) == 1.0
    initial = _plain(tmp_path / "initial.docx", ["08:00:00, T1, S1, 1", "08:05:00, T2, S1, 2", "08:00:00, T1, S1, 1"])
    unique = _plain(tmp_path / "unique.docx", ["08:00:00, T1, S1, 1", "08:05:00, T2, S1, 2"])
    dropped = _plain(tmp_path / "dropped.docx", ["08:00:00, T1, S1, 1"])
    assert metric_for("check_no_duplicates")(initial, unique) == 1.0
    assert metric_for("check_no_duplicates")(initial, initial) == 0.0
    assert metric_for("check_no_duplicates")(initial, dropped) == 0.0
    records = metric_for("compare_unique_train_records")
    assert records(unique, [unique, initial]) == 1.0
    assert records(dropped, [unique, initial]) == 0.0
    assert records(unique, unique) == 0.0  # the expected side must be [gold, initial]
