"""compare_table and compare_csv on real workbooks: written by openpyxl, then saved by LibreOffice headless (which
computes the formulas, as Calc does when the agent saves), so the metric reads what a task really leaves behind."""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import openpyxl
import pytest
from openpyxl.chart import BarChart, Reference
from openpyxl.styles import Font
from openpyxl.worksheet.datavalidation import DataValidation

from uivenus.envs.osworld.metrics import metric_for
from uivenus.envs.osworld.metrics.matching import UnknownMatchMethod
from uivenus.envs.osworld.metrics.tables import TableRuleError

compare_table = metric_for("compare_table")


def _book(path: Path, *, second_score: float, total: object, bold: bool, freeze: bool, note: str) -> Path:
    book = openpyxl.Workbook()
    data = book.active
    data.title = "Data"
    for row in (("Name", "Score"), ("Ann", 3), ("Bob", second_score), ("Total", total)):
        data.append(row)
    data["A1"].font = Font(bold=bold)
    if freeze:
        data.freeze_panes = "A2"
    data.sheet_view.zoomScale = 150
    check = DataValidation(type="list", formula1='"yes,no"')
    data.add_data_validation(check)
    check.add("C2:C3")
    chart = BarChart()
    chart.title = "Scores"
    chart.add_data(Reference(data, min_col=2, min_row=2, max_row=3))
    data.add_chart(chart, "E2")
    book.create_sheet("Notes")["A1"] = note
    book.save(path)
    return path


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory,
          soffice_convert: Callable[[Sequence[Path], str], list[Path]]) -> dict[str, Path]:
    raw = tmp_path_factory.mktemp("raw")
    made = [
        _book(raw / "made.xlsx", second_score=4.5, total="=SUM(B2:B3)", bold=True, freeze=True, note="12 Main Rd."),
        _book(raw / "gold.xlsx", second_score=4.5, total=7.5, bold=True, freeze=True, note="12 Main Road"),
        _book(raw / "wrong.xlsx", second_score=5, total="=SUM(B2:B3)", bold=False, freeze=False, note="7 Side St"),
    ]
    saved = {p.stem: p for p in soffice_convert(made, "xlsx")}
    return saved | {f"raw-{p.stem}": p for p in made}  # headless LibreOffice drops view settings (freeze, zoom)


def _data(rule: str, **more: object) -> dict[str, object]:
    return {"type": rule, "sheet_idx0": 0, "sheet_idx1": "EI0", **more}


def test_sheet_data_compares_saved_values_so_a_formula_equals_its_typed_result(books: dict[str, Path]) -> None:
    assert compare_table(books["made"], books["gold"], rules=[_data("sheet_data")]) == 1.0
    assert compare_table(books["wrong"], books["gold"], rules=[_data("sheet_data")]) == 0.0
    by_name = {"type": "sheet_data", "sheet_idx0": "RNData", "sheet_idx1": "ENData"}
    assert compare_table(books["made"], books["gold"], rules=[by_name, {"type": "sheet_name"}]) == 1.0


def test_every_rule_must_hold(books: dict[str, Path]) -> None:
    assert compare_table(books["raw-made"], books["raw-gold"], rules=[_data("freeze"), _data("style", props=[
        "font_bold", "font_name"])]) == 1.0
    assert compare_table(books["raw-wrong"], books["raw-gold"], rules=[_data("freeze")]) == 0.0
    assert compare_table(books["made"], books["gold"], rules=[_data("sheet_data"), _data("style", props=[
        "font_bold"])]) == 1.0
    assert compare_table(books["wrong"], books["gold"], rules=[_data("sheet_name"), _data("style", props=[
        "font_bold"])]) == 0.0


def test_check_cell_matches_values_and_styles_with_the_rule_language(books: dict[str, Path]) -> None:
    rule = {"type": "check_cell", "sheet_idx": 0, "coordinate": "B4",
            "props": {"value": {"method": "approx:0.01", "ref": 7.5}}}
    assert compare_table(books["made"], rules=[rule]) == 1.0
    assert compare_table(books["wrong"], rules=[rule]) == 0.0
    bold = {"type": "check_cell", "sheet_idx": "RNData", "coordinate": "A1",
            "props": {"font_bold": {"method": "eq", "ref": True}, "value": {"method": "re.I", "ref": "^name$"}}}
    assert compare_table(books["made"], rules=[bold]) == 1.0
    assert compare_table(books["wrong"], rules=[bold]) == 0.0


def test_zoom_validation_and_chart(books: dict[str, Path]) -> None:
    zoom = {"type": "zoom", "sheet_idx": 0, "method": "ge", "ref": 150}
    assert compare_table(books["raw-made"], rules=[zoom]) == 1.0
    assert compare_table(books["raw-made"], rules=[{**zoom, "method": "lt"}]) == 0.0
    validation = {"type": "data_validation", "sheet_idx": 0,
                  "dv_props": [{"type": {"method": "eq", "ref": "list"}, "formula1": {"method": "re", "ref": "yes"}}]}
    assert compare_table(books["made"], rules=[validation]) == 1.0
    other = {**validation, "dv_props": [{"type": {"method": "eq", "ref": "whole"}}]}
    assert compare_table(books["made"], rules=[other]) == 0.0
    chart = _data("chart", chart_props=["title", "type"])
    assert compare_table(books["made"], books["gold"], rules=[chart]) == 1.0


def test_sheet_fuzzy_normalises_before_comparing(books: dict[str, Path]) -> None:
    fuzzy = {"type": "sheet_fuzzy", "sheet_idx0": "RNNotes", "sheet_idx1": "ENNotes",
             "rules": [{"range": ["A1:A1"], "type": "exact_match", "normalization": [["Rd.", "Road"]]}]}
    assert compare_table(books["made"], books["gold"], rules=[fuzzy]) == 1.0
    assert compare_table(books["wrong"], books["gold"], rules=[fuzzy]) == 0.0
    loose = {**fuzzy, "rules": [{"range": ["A1"], "type": "fuzzy_match", "threshold": 80}]}
    assert compare_table(books["made"], books["gold"], rules=[loose]) == 1.0


def test_sheet_print_reads_the_csv_the_task_printed_beside_each_book(tmp_path: Path, books: dict[str, Path]) -> None:
    result, gold = tmp_path / "out.xlsx", tmp_path / "gold.xlsx"
    result.write_bytes(books["made"].read_bytes())
    gold.write_bytes(books["gold"].read_bytes())
    (tmp_path / "out-Data.csv").write_text("Name,Score\nAnn,3\n\n\n")
    (tmp_path / "gold-Data.csv").write_text("NAME,Score\nAnn,3\n")
    rule = _data("sheet_print", ignore_case=True)
    assert compare_table(result, gold, rules=[rule]) == 1.0
    assert compare_table(result, gold, rules=[{**rule, "ignore_case": False}]) == 0.0
    (tmp_path / "out-Data.csv").unlink()
    assert compare_table(result, gold, rules=[rule]) == 0.0


def test_a_missing_or_corrupt_result_scores_zero(tmp_path: Path, books: dict[str, Path]) -> None:
    corrupt = tmp_path / "broken.xlsx"
    corrupt.write_bytes(b"PK\x03\x04 not really a zip")
    for result in (None, tmp_path / "absent.xlsx", corrupt):
        assert compare_table(result, books["gold"], rules=[_data("sheet_data")]) == 0.0


def test_an_unknown_rule_or_method_raises_naming_it(books: dict[str, Path]) -> None:
    with pytest.raises(TableRuleError, match="'pivot_table' is not implemented; implemented: sheet_name"):
        compare_table(books["made"], books["gold"], rules=[_data("pivot_table")])
    with pytest.raises(TableRuleError, match="sheet index 'XX0'"):
        compare_table(books["made"], books["gold"], rules=[{"type": "sheet_data", "sheet_idx0": "XX0",
                                                             "sheet_idx1": 0}])
    with pytest.raises(TableRuleError, match="sheet index 'RIx'"):
        compare_table(books["made"], rules=[{"type": "zoom", "sheet_idx": "RIx", "method": "eq", "ref": 1}])
    with pytest.raises(TypeError, match="rules"):
        compare_table(books["made"], books["gold"])  # a compare_table without rules is a broken task
    with pytest.raises(UnknownMatchMethod, match="'about'"):
        compare_table(books["made"], rules=[{"type": "zoom", "sheet_idx": 0, "method": "about", "ref": 1}])


def test_compare_csv(tmp_path: Path) -> None:
    compare_csv = metric_for("compare_csv")
    (tmp_path / "a.csv").write_text("Name,Age\nann,3\n")
    (tmp_path / "b.csv").write_text("name,age \nANN,3\n")
    assert compare_csv(tmp_path / "a.csv", tmp_path / "a.csv") == 1.0
    assert compare_csv(tmp_path / "a.csv", tmp_path / "b.csv") == 0.0
    assert compare_csv(tmp_path / "a.csv", tmp_path / "b.csv", strict=False, ignore_case=True) == 1.0
    assert compare_csv(None, tmp_path / "b.csv") == 0.0


def _with_sparkline(source: Path, target: Path, data_range: str) -> Path:
    """`source` with a sparkline in Data!D2 over `data_range` (openpyxl cannot write one: the XML goes in by hand,
    as Excel and Calc write it, in the sheet's extension list)."""
    ext = ('<extLst><ext uri="{05C60535-1F16-4fd2-B633-F4F36F0B64E0}" '
           'xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main"><x14:sparklineGroups '
           'xmlns:xm="http://schemas.microsoft.com/office/excel/2006/main"><x14:sparklineGroup><x14:sparklines>'
           f'<x14:sparkline><xm:f>{data_range}</xm:f><xm:sqref>D2</xm:sqref></x14:sparkline></x14:sparklines>'
           '</x14:sparklineGroup></x14:sparklineGroups></ext></extLst>')
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.infolist():
            data = old.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b"</worksheet>", ext.encode() + b"</worksheet>")
            new.writestr(item, data)
    return target


def test_sparklines_are_read_from_the_sheet_xml(tmp_path: Path, books: dict[str, Path]) -> None:
    gold = _with_sparkline(books["raw-gold"], tmp_path / "gold.xlsx", "Data!B2:B3")
    same = _with_sparkline(books["raw-made"], tmp_path / "same.xlsx", "Data!B2:B3")
    other = _with_sparkline(books["raw-made"], tmp_path / "other.xlsx", "Data!B2:B4")
    rule = _data("sparkline")
    assert compare_table(same, gold, rules=[rule]) == 1.0
    assert compare_table(other, gold, rules=[rule]) == 0.0
    assert compare_table(books["raw-made"], gold, rules=[rule]) == 0.0  # no sparkline at all
