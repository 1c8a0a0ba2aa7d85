"""`uivenus actions parse|convert` and `uivenus demo` through the real CLI entry point."""

import json

from playwright.sync_api import sync_playwright
from typer.testing import CliRunner

from uivenus.cli import app
from uivenus.envs.browser_config import BrowserConfig
from uivenus.envs.chromium import CHROMIUM_ARGS

runner = CliRunner()


def test_parse_prints_screen_pixels_or_errors(tmp_path):
    responses = tmp_path / "responses.txt"
    responses.write_text(
        "<think>tap</think><action>Click(point=(500, 500))</action>\n"
        "<action>Click(point=(500, 500)</action>\n"
        "<action>Swipe(start=(0, 0), end=(999, 999))</action>\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["actions", "parse", "--frame", "rel", "--width", "1280", "--height", "720",
                                 str(responses)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert lines[0] == {"ok": True, "mode": "agent", "actions": [{"type": "Click", "point": [640, 360]}],
                        "think": "tap"}
    assert lines[1]["ok"] is False and "ParseError" in lines[1]["error"]
    assert lines[2]["actions"] == [{"type": "Swipe", "start": [0, 0], "end": [1279, 719]}]


def test_parse_smart_frame_and_json_list(tmp_path):
    responses = tmp_path / "responses.json"
    responses.write_text(json.dumps(["<action>Click(point=(966, 546))</action>",
                                     "<action>Click(point=(5000, 5))</action>"]))
    result = runner.invoke(app, ["actions", "parse", "--frame", "smart", "--factor", "28", "--width", "1920",
                                 "--height", "1080", str(responses)])
    assert result.exit_code == 0, result.output
    first, second = (json.loads(line) for line in result.output.splitlines())
    assert first["actions"] == [{"type": "Click", "point": [960, 540]}]
    assert second["ok"] is False and "off the 1920x1080 screen" in second["error"]


def test_parse_reads_grounding_answers_and_refusals(tmp_path):
    responses = tmp_path / "grounding.txt"
    responses.write_text("[523, 411]\n[-1,-1]\n(100, 200, 300, 400)\nThe button is at [250, 750].\n[1, 2, 3]\n",
                         encoding="utf-8")
    result = runner.invoke(app, ["actions", "parse", "--width", "1000", "--height", "2000", str(responses)])
    assert result.exit_code == 0, result.output
    point, refusal, box, prose, bad = (json.loads(line) for line in result.output.splitlines())
    assert point == {"ok": True, "mode": "grounding", "refused": False, "point": [523, 822]}
    assert refusal == {"ok": True, "mode": "grounding", "refused": True, "point": None}
    assert box["point"] == [200, 600] and box["box"] == [100, 400, 300, 800]
    assert prose["mode"] == "grounding" and prose["point"] == [250, 1500]
    assert bad["ok"] is False and "ParseError" in bad["error"]


def test_parse_mode_option_forces_one_reading(tmp_path):
    responses = tmp_path / "mixed.txt"
    responses.write_text("<action>Click(point=(500, 500))</action>\n[500, 500]\n", encoding="utf-8")
    agent = runner.invoke(app, ["actions", "parse", "--mode", "agent", str(responses)])
    grounding = runner.invoke(app, ["actions", "parse", "--mode", "grounding", str(responses)])
    auto = runner.invoke(app, ["actions", "parse", str(responses)])
    assert [json.loads(line)["ok"] for line in agent.output.splitlines()] == [True, False]
    assert [json.loads(line)["ok"] for line in grounding.output.splitlines()] == [True, True]  # last [x,y] of each
    assert [json.loads(line)["mode"] for line in auto.output.splitlines()] == ["agent", "grounding"]
    rejected = runner.invoke(app, ["actions", "parse", "--mode", "pixels", str(responses)])
    assert rejected.exit_code != 0


def test_parse_reads_a_json_list_of_grounding_strings(tmp_path):
    responses = tmp_path / "grounding.json"
    responses.write_text(json.dumps(["[10, 20]", "[-1, -1]"]), encoding="utf-8")
    result = runner.invoke(app, ["actions", "parse", "--frame", "abs", str(responses)])
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [row["point"] for row in rows] == [[10, 20], None]


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


def test_demo_runs_every_part_and_writes_a_report_whose_images_load(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may land in the caller's working directory
    result = runner.invoke(app, ["demo", "--out", "out"])
    assert result.exit_code == 0, result.output
    for source in ("ui-venus", "androidworld", "uitars", "guiowl", "opencua"):
        assert source in result.output
    assert "inputs mapped" in result.output
    assert "Verified with program + ocr judges: outcome success" in result.output
    assert "nano grounding accuracy" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    report = tmp_path / "out" / "report.html"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=BrowserConfig().executable, headless=True,
                                     args=list(CHROMIUM_ARGS))
        page = browser.new_page()
        page.goto(report.as_uri())
        headings = page.eval_on_selector_all("h2", "els => els.map(e => e.textContent)")
        images = page.eval_on_selector_all("img", "els => els.map(e => [e.complete, e.naturalWidth, e.alt])")
        browser.close()
    assert [h.split(" ·")[0] for h in headings] == ["Grounding", "Episode", "Verification"]
    assert len(images) >= 4 + 2  # 4 screens x 2 instructions, and one screenshot per episode step
    assert all(complete and width > 0 for complete, width, _ in images), images
    assert any(alt.startswith("step") for _, _, alt in images)


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
