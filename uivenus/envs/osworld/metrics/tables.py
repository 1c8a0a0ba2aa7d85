"""Spreadsheet metrics: `compare_table` (a result workbook against an expected one, or alone, under a list of
rules) and `compare_csv`.

`compare_table`'s `rules` is a sequence of `{"type": ..., ...}` checks, all of which must hold. A sheet is named by
an index into the result (`0`, `"RI0"`), a name in the result (`"RNSheet1"`) or the same in the expected book
(`"EI0"`, `"ENSheet1"`). Implemented types are the keys of `TABLE_RULES`; any other type raises `TableRuleError`,
naming it (a task we cannot judge must not look failed or passed). Cell values are the values LibreOffice saved
(openpyxl's `data_only` view); numbers compare as floats, as the benchmark reads them from the file's XML.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
from openpyxl.cell.cell import Cell
from openpyxl.utils import get_column_letter
from openpyxl.workbook.workbook import Workbook
from openpyxl.worksheet.cell_range import MultiCellRange
from openpyxl.worksheet.worksheet import Worksheet
from rapidfuzz import fuzz

from uivenus.envs.osworld.metrics.matching import match_value
from uivenus.envs.osworld.metrics.readers import read_or_none, read_text
from uivenus.envs.osworld.metrics.registry import metric

__all__ = ["TABLE_RULES", "TableRuleError", "compare_conference_city_in_order", "compare_csv", "compare_table"]


class TableRuleError(ValueError):
    """A `compare_table` rule we cannot apply (unknown type, bad sheet index); the message names it."""


@dataclass
class _Book:
    """One workbook file, each reader opened on first use (a rule that only needs values never parses styles)."""

    path: Path

    @cached_property
    def styled(self) -> Workbook | None:
        return read_or_none(self.path, openpyxl.load_workbook)

    @cached_property
    def values(self) -> Workbook | None:
        return read_or_none(self.path, lambda p: openpyxl.load_workbook(p, data_only=True))

    @cached_property
    def frames(self) -> pd.ExcelFile | None:
        return read_or_none(self.path, pd.ExcelFile)

    @cached_property
    def sheet_names(self) -> list[str]:
        return [] if self.frames is None else [str(name) for name in self.frames.sheet_names]

    def sheet(self, name: str, *, values: bool = False) -> Worksheet | None:
        book = self.values if values else self.styled
        return book[name] if book is not None and name in book.sheetnames else None

    def frame(self, name: str) -> pd.DataFrame | None:
        if self.frames is None or name not in self.sheet_names:
            return None
        return read_or_none(self.path, lambda _p: pd.read_excel(self.frames, name))

    def sparklines(self, name: str) -> dict[str, str] | None:
        """The sheet's sparklines, cell -> data range (openpyxl drops them, so they are read from the sheet's XML)."""
        return read_or_none(self.path, lambda p: _sparklines(p, name))

    def printed(self, name: str) -> list[str] | None:
        """The sheet as LibreOffice printed it to CSV: the task's own steps write `<stem>-<sheet>.csv` beside the
        book (the benchmark's convention); trailing blank lines do not count."""
        text = read_text(self.path.with_name(f"{self.path.stem}-{name}.csv"))
        if text is None:
            return None
        lines = [line.strip() for line in text.splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        return lines


@dataclass(frozen=True)
class _Pair:
    result: _Book
    expected: _Book | None

    def locate(self, index: Any) -> tuple[_Book, str]:
        """The book and sheet name an OSWorld sheet index names ("" when an index is past the last sheet)."""
        text = str(index)
        if isinstance(index, int):
            book, how, key = self.result, "I", str(index)
        elif text[:2] in ("RN", "EN") or (text[:2] in ("RI", "EI") and text[2:].isdigit()):
            book = self.result if text[0] == "R" else self.expected
            how, key = text[1], text[2:]
        else:
            raise TableRuleError(f"compare_table: sheet index {index!r} is not an int or RI<n>/RN<name>/EI<n>/EN<name>")
        if book is None:
            raise TableRuleError(f"compare_table: sheet index {index!r} names the expected book, and there is none")
        if how == "N":
            return book, key
        names = book.sheet_names
        return book, names[int(key)] if int(key) < len(names) else ""


_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_RELS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_X14 = "{http://schemas.microsoft.com/office/spreadsheetml/2009/9/main}"
_XM = "{http://schemas.microsoft.com/office/excel/2006/main}"


def _sparklines(path: Path, sheet: str) -> dict[str, str]:
    """Sparklines of `sheet` in an .xlsx: the sheet's part is found through the workbook's relationships."""
    with zipfile.ZipFile(path) as book:
        workbook = ET.fromstring(book.read("xl/workbook.xml"))
        rel_id = next(s.get(f"{_RELS}id") for s in workbook.iter(f"{_MAIN}sheet") if s.get("name") == sheet)
        rels = ET.fromstring(book.read("xl/_rels/workbook.xml.rels"))
        target = next(r.get("Target") for r in rels if r.get("Id") == rel_id)
        part = ET.fromstring(book.read(target.lstrip("/") if target.startswith("/") else f"xl/{target}"))
    return {line.findtext(f"{_XM}sqref"): line.findtext(f"{_XM}f") for line in part.iter(f"{_X14}sparkline")}


def _number_as_float(value: Any) -> Any:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _cell_value(book: _Book, sheet: str, coordinate: str) -> Any:
    found = book.sheet(sheet, values=True)
    return None if found is None else _number_as_float(found[coordinate].value)


def _fill_color(which: str) -> Callable[[Cell], Any]:
    def read(cell: Cell) -> Any:
        return getattr(getattr(cell.fill, which, None), "rgb", None)
    return read


def _if_filled(read: Callable[[Cell], Any]) -> Callable[[Cell], Any]:
    return lambda cell: read(cell) if cell.value is not None else None


#: The cell styles a `style` or `check_cell` rule may name (the benchmark's names), read from a formatted cell.
CELL_STYLES: Mapping[str, Callable[[Cell], Any]] = {
    "number_format": lambda c: c.number_format if c.value is not None and c.data_type == "n" else None,
    "font_name": _if_filled(lambda c: c.font.name), "font_family": _if_filled(lambda c: c.font.family),
    "font_color": _if_filled(lambda c: c.font.color.rgb if c.font.color is not None else None),
    "font_bold": _if_filled(lambda c: c.font.bold), "font_italic": _if_filled(lambda c: c.font.italic),
    "font_underline": _if_filled(lambda c: c.font.underline), "font_size": _if_filled(lambda c: c.font.size),
    "fill_type": lambda c: getattr(c.fill, "tagname", None),
    "bgcolor": _fill_color("bgColor"), "fgcolor": _fill_color("fgColor"),
    "hyperlink": _if_filled(lambda c: (c.hyperlink.target or "") if c.hyperlink is not None else ""),
}


def _style_of(name: str, cell: Cell) -> Any:
    read = CELL_STYLES.get(name)
    if read is None:
        raise TableRuleError(f"compare_table: unknown cell style {name!r}; known: {', '.join(CELL_STYLES)}")
    return read(cell)


def _two_sheets(pair: _Pair, rule: Mapping[str, Any]) -> tuple[tuple[_Book, str], tuple[_Book, str]]:
    return pair.locate(rule["sheet_idx0"]), pair.locate(rule["sheet_idx1"])


def _sheet_name(pair: _Pair, _rule: Mapping[str, Any]) -> bool:
    return pair.expected is not None and pair.result.sheet_names == pair.expected.sheet_names


def _sheet_data(pair: _Pair, rule: Mapping[str, Any]) -> bool:
    (book0, name0), (book1, name1) = _two_sheets(pair, rule)
    first, second = book0.frame(name0), book1.frame(name1)
    if first is None or second is None:
        return False
    digits = int(rule.get("precision", 4))
    return bool(first.round(digits).equals(second.round(digits)))


def _sheet_print(pair: _Pair, rule: Mapping[str, Any]) -> bool:
    (book0, name0), (book1, name1) = _two_sheets(pair, rule)
    first, second = book0.printed(name0), book1.printed(name1)
    if first is None or second is None:
        return False
    if rule.get("ignore_case", False):
        first, second = [line.lower() for line in first], [line.lower() for line in second]
    return first == second


def _normalise(text: str, rule: Mapping[str, Any]) -> str:
    for old, new in rule.get("normalization", []):
        text = text.replace(old, new)
    if "trim_leadings" in rule:
        text = text.lstrip(rule["trim_leadings"])
    if "trim_trailings" in rule:
        text = text.rstrip(rule["trim_trailings"])
    if "ignore_chars" in rule:
        text = "".join(ch for ch in text if ch not in set(rule["ignore_chars"]))
    return text.lower() if rule.get("ignore_case", False) else text


_FUZZY_TESTS: Mapping[str, Callable[[str, str, Mapping[str, Any]], bool]] = {
    "includes": lambda a, b, _r: b in a,
    "included_by": lambda a, b, _r: a in b,
    "fuzzy_match": lambda a, b, r: fuzz.ratio(a, b) >= float(r.get("threshold", 85.0)),
    "exact_match": lambda a, b, _r: a == b,
}


def _sheet_fuzzy(pair: _Pair, rule: Mapping[str, Any]) -> bool:
    """Per cell of each sub-rule's ranges: normalise both texts, then includes/included_by/fuzzy_match/exact_match."""
    (book0, name0), (book1, name1) = _two_sheets(pair, rule)
    for sub in rule["rules"]:
        test = _FUZZY_TESTS.get(sub["type"])
        if test is None:
            raise TableRuleError(f"compare_table: sheet_fuzzy type {sub['type']!r} is not one of "
                                 f"{', '.join(_FUZZY_TESTS)}")
        ranges = sub["range"] if isinstance(sub["range"], list) else [sub["range"]]
        for cell_range in MultiCellRange(" ".join(ranges)):
            for row, col in cell_range.cells:
                where = f"{get_column_letter(col)}{row}"
                first = _normalise(str(_cell_value(book0, name0, where)), sub)
                second = _normalise(str(_cell_value(book1, name1, where)), sub)
                if not test(first, second, sub):
                    return False
    return True


def _sparkline(pair: _Pair, rule: Mapping[str, Any]) -> bool:
    (book0, name0), (book1, name1) = _two_sheets(pair, rule)
    first, second = book0.sparklines(name0), book1.sparklines(name1)
    return first is not None and first == second


def _compare_sheet_property(read: Callable[[Worksheet, Mapping[str, Any]], Any]) -> Callable[[_Pair, Mapping], bool]:
    """A rule that reads one property from two sheets (formatted view) and wants it equal; a missing sheet fails."""

    def check(pair: _Pair, rule: Mapping[str, Any]) -> bool:
        (book0, name0), (book1, name1) = _two_sheets(pair, rule)
        first, second = book0.sheet(name0), book1.sheet(name1)
        return first is not None and second is not None and read(first, rule) == read(second, rule)

    return check


def _styles(sheet: Worksheet, rule: Mapping[str, Any]) -> dict[str, list[Any]]:
    props = list(rule.get("props", []))
    return {cell.coordinate: [_style_of(p, cell) for p in props] for column in sheet.iter_cols() for cell in column}


def _dimensions(kind: str) -> Callable[[Worksheet, Mapping[str, Any]], dict[Any, dict[str, Any]]]:
    def read(sheet: Worksheet, rule: Mapping[str, Any]) -> dict[Any, dict[str, Any]]:
        held = sheet.row_dimensions if kind == "row" else sheet.column_dimensions
        return {key: {p: getattr(dims, p) for p in rule.get("props", [])} for key, dims in held.items()}
    return read


def _title_text(title: Any) -> str | None:
    try:
        return title.tx.rich.p[0].r[0].t
    except (AttributeError, IndexError, TypeError):
        return None


def _reference(data: Any) -> str:
    for kind in ("numRef", "strRef"):
        ref = getattr(getattr(data, kind, None), "f", None)
        if ref:
            return str(ref)
    return ""


_CHART_PROPS: Mapping[str, Callable[[Any], Any]] = {
    "title": lambda ch: _title_text(ch.title),
    "legend": lambda ch: ch.legend.position if ch.legend is not None else None,
    "anchor": lambda ch: [ch.anchor.editAs, ch.anchor._from.col, ch.anchor.to.row, ch.anchor.to.col,  # noqa: SLF001
                          ch.anchor.to.row],
    "width": lambda ch: ch.width, "height": lambda ch: ch.height, "type": lambda ch: ch.tagname,
    "direction": lambda ch: getattr(ch, "barDir", None),
    "xtitle": lambda ch: _title_text(getattr(ch.x_axis, "title", None)),
    "ytitle": lambda ch: _title_text(getattr(ch.y_axis, "title", None)),
    "ztitle": lambda ch: _title_text(getattr(getattr(ch, "z_axis", None), "title", None)),
}


def _charts(sheet: Worksheet, rule: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Charts keyed by their series' data ranges ("values,categories;..."), with the properties the rule names."""
    props = list(rule.get("chart_props", []))
    unknown = [p for p in props if p not in _CHART_PROPS]
    if unknown:
        raise TableRuleError(f"compare_table: unknown chart_props {unknown}; known: {', '.join(_CHART_PROPS)}")
    return {";".join(f"{_reference(s.val)},{_reference(s.cat)}" for s in chart.series):
            {p: _CHART_PROPS[p](chart) for p in props}
            for chart in sheet._charts}  # noqa: SLF001 - openpyxl keeps the charts it read there


def _filters(sheet: Worksheet, _rule: Mapping[str, Any]) -> dict[str, Any]:
    auto = sheet.auto_filter
    columns = []
    for col in auto.filterColumn:
        entry: dict[str, Any] = {"col_id": col.colId, "hidden_button": col.hiddenButton, "show_button": col.showButton}
        if col.filters is not None:
            entry |= {"filters_blank": col.filters.blank, "filters": set(col.filters.filter)}
        if col.customFilters is not None:
            entry |= {"custom_filters_op": col.customFilters._and,  # noqa: SLF001 - openpyxl's name for "and"
                      "custom_filters": {(f.operator, f.val) for f in col.customFilters.customFilter}}
        columns.append(entry)
    found: dict[str, Any] = {"ref": auto.ref, "filter_column": sorted(columns, key=lambda e: e["col_id"])}
    sort = auto.sortState
    if sort is not None:
        found["sort_state"] = {"sort": sort.columnSort, "case": sort.caseSensitive, "method": sort.sortMethod,
                               "ref": sort.ref, "condition": [{"descending": c.descending, "key": c.sortBy,
                                                               "ref": c.ref} for c in sort.sortCondition]}
    return found


def _one_sheet(pair: _Pair, rule: Mapping[str, Any], *, values: bool = False) -> tuple[_Book, str, Worksheet | None]:
    book, name = pair.locate(rule["sheet_idx"])
    return book, name, book.sheet(name, values=values)


def _zoom(pair: _Pair, rule: Mapping[str, Any]) -> bool:
    _book, _name, sheet = _one_sheet(pair, rule)
    return sheet is not None and match_value(sheet.sheet_view.zoomScale or 100.0, rule)


def _check_cell(pair: _Pair, rule: Mapping[str, Any]) -> bool:
    """`props` maps "value" or a cell style to a `{"method", "ref"}` rule, all of which must hold."""
    book, name, sheet = _one_sheet(pair, rule)
    if sheet is None:
        return False
    cell = sheet[rule["coordinate"]]
    for prop, wanted in rule["props"].items():
        value = _cell_value(book, name, rule["coordinate"]) if prop == "value" else _style_of(prop, cell)
        if not match_value(value, wanted):
            return False
    return True


def _data_validation(pair: _Pair, rule: Mapping[str, Any]) -> bool:
    """At least as many validations as `dv_props`, and each validation matches one of the `dv_props` entries
    (each entry maps a DataValidation attribute such as "type", "formula1" or "sqref" to a rule)."""
    _book, _name, sheet = _one_sheet(pair, rule)
    if sheet is None:
        return False
    wanted = list(rule["dv_props"])
    found = sheet.data_validations.dataValidation
    return len(found) >= len(wanted) and all(
        any(all(match_value(getattr(dv, attr), how) for attr, how in props.items()) for props in wanted)
        for dv in found)


#: compare_table's rule types and their checks (each returns whether the rule holds).
TABLE_RULES: Mapping[str, Callable[[_Pair, Mapping[str, Any]], bool]] = {
    "sheet_name": _sheet_name, "sheet_data": _sheet_data, "sheet_print": _sheet_print, "sheet_fuzzy": _sheet_fuzzy,
    "style": _compare_sheet_property(_styles), "freeze": _compare_sheet_property(lambda s, _r: s.freeze_panes),
    "row_props": _compare_sheet_property(_dimensions("row")),
    "col_props": _compare_sheet_property(_dimensions("column")),
    "chart": _compare_sheet_property(_charts), "filter": _compare_sheet_property(_filters),
    "zoom": _zoom, "check_cell": _check_cell, "data_validation": _data_validation, "sparkline": _sparkline,
}


@metric("compare_table")
def compare_table(result: Any, expected: Any = None, *, rules: list[Mapping[str, Any]]) -> float:
    """1.0 when the result workbook is readable and every rule holds (see the module docstring)."""
    for rule in rules:
        if rule.get("type") not in TABLE_RULES:
            raise TableRuleError(f"compare_table: rule type {rule.get('type')!r} is not implemented; "
                                 f"implemented: {', '.join(TABLE_RULES)}")
    if result is None or not Path(result).is_file():
        return 0.0
    pair = _Pair(_Book(Path(result)), None if expected is None else _Book(Path(expected)))
    if pair.result.frames is None:
        return 0.0
    return float(all(TABLE_RULES[rule["type"]](pair, rule) for rule in rules))


@metric("compare_csv")
def compare_csv(result: Any, expected: Any, *, strict: bool = True, ignore_case: bool = False) -> float:
    """1.0 when the two CSV files have the same lines (`strict=False` strips each line; `ignore_case` lowers)."""
    have, want = read_text(result), read_text(expected)
    if have is None or want is None:
        return 0.0

    def lines(text: str) -> list[str]:
        out = text.splitlines() if strict else [line.strip() for line in text.splitlines()]
        return [line.lower() for line in out] if ignore_case else out

    return float(lines(have) == lines(want))


@metric("compare_conference_city_in_order")
def compare_conference_city_in_order(result: Any, expected: Mapping[str, Any]) -> float:
    """1.0 when each of the active sheet's cells C2:C22 contains its expected city, in order (an entry of
    `expected["expected"]` may be a list of accepted spellings)."""
    book = read_or_none(result, openpyxl.load_workbook)
    if book is None:
        return 0.0
    cells = [row[0].value for row in book.active["C2:C22"]]
    wanted = expected["expected"]
    if len(wanted) < len(cells):
        return 0.0
    return float(all(isinstance(have, str) and any(option in have for option in ([want] if isinstance(want, str)
                                                                                 else want))
                     for have, want in zip(cells, wanted)))
