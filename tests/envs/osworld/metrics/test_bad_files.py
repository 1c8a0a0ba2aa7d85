"""The promise every file metric keeps: a result that is not there (None, a missing path, a directory, an empty or
garbage file) scores 0.0 and never raises, whatever the metric and however valid the rest of the task is."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from uivenus.envs.osworld.metrics import METRICS

#: A valid second argument for the metrics whose second argument is a rules mapping, not a file.
RULES: dict[str, Any] = {
    "check_config_status": {"key": "k", "value": "v"},
    "check_csv": {"expect": [{"a": "1"}]},
    "check_html_background_image": {"value": "bg.png"},
    "check_image_file_size": {"max_size": 0},  # the benchmark checks only the size: nothing is under 0
    "check_image_size": {"width": 1},
    "check_json": {"expect": [{"key": ["a"], "method": "eq", "ref": 1}]},
    "check_json_keybindings": {"expected": {"key": "ctrl+j"}},
    "check_json_settings": {"expected": {"a": 1}},
    "check_line_number": {"expected": 1},
    "check_list": {"expect": ["^never there$"]},
    "check_mp3_meta": {"title": {"method": "eq", "ref": ""}},
    "check_thunderbird_filter": {"expect": [{"name": "x"}]},
    "check_thunderbird_prefs": {"expect": {"a": {"method": "eq", "ref": 1}}},
    "check_qt_slider_colours": {"type": "blackish"},
    "compare_conference_city_in_order": {"expected": ["x"] * 21},
    "compare_config": {"expected": "x"},
    "compare_font_names": {"font_name": "x"},
    "contains_page_break": {},
    "file_contains": {"expected": ["never there"]},
    "find_default_font": {"font_name": "x"},
    "is_vlc_playing": {"type": "file_name", "file_name": "x"},
    "is_vlc_recordings_folder": {"recording_file_path": "/x"},
    "compare_terminal_and_txt": "x",
    # an empty vlcrc means VLC's defaults, so each asks for a value other than the default
    **{f"check_{key}": {field: value} for key, field, value in (
        ("qt_bgcone", "expected_qt_bgcone", "0"), ("qt_max_volume", "expected_qt_max_volume", "200"),
        ("qt_minimal_view", "expected_qt_minimal_view", "1"),
        ("global_key_play_pause", "expected_global_key_play_pause", "1"),
        ("one_instance_when_started_from_file", "expected_one_instance_when_started_from_file", "0"),
        ("play_and_exit", "expected_play_and_exit", "1"))},
}
OPTIONS: dict[str, dict[str, Any]] = {"compare_table": {"rules": [{"type": "sheet_data", "sheet_idx0": 0,
                                                                    "sheet_idx1": "EI0"}]}}
#: Metrics over values handed over by getters (tab info, command output), not over files.
VALUE_MODULES = {"general", "web", "system"}
FILE_METRICS = sorted(name for name, fn in METRICS.items() if fn.__module__.rsplit(".", 1)[1] not in VALUE_MODULES)


def _call(name: str, result: Any, other_file: Path) -> float:
    fn = METRICS[name]
    positional = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty]
    args = [result] if len(positional) == 1 else [result, RULES.get(name, other_file)]
    return fn(*args, **OPTIONS.get(name, {}))


@pytest.mark.parametrize("name", FILE_METRICS)
def test_an_absent_or_broken_result_scores_zero(name: str, tmp_path: Path) -> None:
    other = tmp_path / "expected.txt"
    other.write_text("x\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "empty.dat").write_bytes(b"")
    (tmp_path / "garbage.dat").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "fake.zip").write_bytes(b"PK\x03\x04" + bytes(60))
    for result in (None, tmp_path / "absent.xlsx", tmp_path / "folder", tmp_path / "empty.dat",
                   tmp_path / "garbage.dat", tmp_path / "fake.zip"):
        assert _call(name, result, other) == 0.0, result


def test_the_table_covers_every_file_metric() -> None:
    assert len(FILE_METRICS) > 70
    assert set(RULES) <= set(METRICS)
