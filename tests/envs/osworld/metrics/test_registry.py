"""The metric registry and its documentation agree: every registered metric is listed under its module in
docs/osworld-metrics.md, and every name listed there is registered."""

from __future__ import annotations

import re
from pathlib import Path

from uivenus.envs.osworld.metrics import METRICS

DOC = Path(__file__).resolve().parents[4] / "docs" / "osworld-metrics.md"


def _documented() -> dict[str, str]:
    """metric name -> module, from the rows of the "Implemented" table."""
    implemented = DOC.read_text().split("## Implemented", 1)[1].split("\n## ", 1)[0]
    found: dict[str, str] = {}
    for row in implemented.splitlines():
        cells = [c.strip() for c in row.strip("|").split("|")]
        if len(cells) == 3 and cells[0].endswith(".py`"):
            for name in re.findall(r"`(\w+)`", cells[2]):
                found[name] = cells[0].strip("`").removesuffix(".py")
    return found


def test_every_registered_metric_is_documented_under_its_module_and_nothing_else_is() -> None:
    registered = {name: fn.__module__.rsplit(".", 1)[1] for name, fn in METRICS.items()}
    assert _documented() == registered


def test_the_issue_s_metrics_are_all_registered() -> None:
    wanted = {"compare_table", "compare_pptx_files", "exact_match", "check_include_exclude", "check_direct_json_object",
              "compare_docx_files", "is_expected_url_pattern_match", "compare_pdfs", "check_list",
              "is_expected_active_tab", "check_json_settings", "compare_images", "compare_text_file",
              "is_extension_installed", "check_structure_sim", "check_config_status", "check_mp3_meta",
              "diff_text_file", "compare_csv", "is_expected_tabs", "compare_docx_tables", "check_thunderbird_prefs"}
    assert wanted <= set(METRICS)


def test_nothing_listed_as_left_out_is_registered() -> None:
    left_out = DOC.read_text().split("## Public metrics not implemented", 1)[1]
    first_cells = [row.strip("|").split("|")[0] for row in left_out.splitlines() if row.startswith("| ")]
    named = {name for cell in first_cells for name in re.findall(r"`(\w+)`", cell)}
    assert named, "the left-out table names nothing"
    assert not named & set(METRICS), named & set(METRICS)
