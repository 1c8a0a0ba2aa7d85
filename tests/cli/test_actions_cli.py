"""`uivenus actions parse|convert` and `uivenus demo` through the real CLI entry point."""

import json

from typer.testing import CliRunner

from uivenus.cli import app

runner = CliRunner()


def test_parse_prints_screen_pixels_or_errors(tmp_path):
    responses = tmp_path / "responses.txt"
    responses.write_text(
        "<think>tap</think><action>Click(point=(500, 500))</action>\n"
        "<action>Click(point=(500, 500)</action>\n"
        "<action>Swipe(start=(0, 0), end=(999, 999))</action>\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["actions", "parse", "--frame", "rel", "--width", "1280", "--height", "720", str(responses)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert lines[0] == {"ok": True, "actions": [{"type": "Click", "point": [640, 360]}], "think": "tap"}
    assert lines[1]["ok"] is False and "ParseError" in lines[1]["error"]
    assert lines[2]["actions"] == [{"type": "Swipe", "start": [0, 0], "end": [1279, 719]}]


def test_parse_smart_frame_and_json_list(tmp_path):
    responses = tmp_path / "responses.json"
    responses.write_text(json.dumps(["<action>Click(point=(966, 546))</action>", "<action>Click(point=(5000, 5))</action>"]))
    result = runner.invoke(app, ["actions", "parse", "--frame", "smart", "--factor", "28", "--width", "1920",
                                 "--height", "1080", str(responses)])
    assert result.exit_code == 0, result.output
    first, second = (json.loads(line) for line in result.output.splitlines())
    assert first["actions"] == [{"type": "Click", "point": [960, 540]}]
    assert second["ok"] is False and "off the 1920x1080 screen" in second["error"]


def test_convert_uitars(tmp_path):
    path = tmp_path / "uitars.txt"
    path.write_text("click(point='<point>200 300</point>')\n\nhotkey(key='ctrl c')\n", encoding="utf-8")
    result = runner.invoke(app, ["actions", "convert", "--from", "uitars", str(path)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert rows[0]["actions"] == [{"type": "Click", "point": [200, 300]}]
    assert rows[1]["actions"] == [{"type": "Hotkey", "keys": ["ctrl", "c"]}]


def test_convert_unknown_format_is_a_clear_error(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("click()")
    result = runner.invoke(app, ["actions", "convert", "--from", "selenium", str(path)])
    assert result.exit_code != 0
    assert "unknown action format" in result.output


def test_demo_maps_every_format():
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0, result.output
    for source in ("ui-venus", "androidworld", "uitars", "guiowl", "opencua"):
        assert source in result.output
    assert "inputs mapped" in result.output


def test_convert_androidworld_scroll_needs_and_takes_a_screen(tmp_path):
    path = tmp_path / "aw.jsonl"
    path.write_text('{"action_type": "scroll", "direction": "down"}\n', encoding="utf-8")
    without = runner.invoke(app, ["actions", "convert", "--from", "androidworld", str(path)])
    assert json.loads(without.output)["ok"] is False and "screen" in json.loads(without.output)["error"]
    result = runner.invoke(app, ["actions", "convert", "--from", "androidworld", "--screen", "1080x2400", str(path)])
    row = json.loads(result.output)
    assert row["ok"] and row["actions"][0]["type"] == "Swipe"
    start, end = row["actions"][0]["start"], row["actions"][0]["end"]
    assert end[1] < start[1]  # scrolling down moves the finger up
