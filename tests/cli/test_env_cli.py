"""`uivenus env shot|play|solve` against the real sandbox apps in real Chromium."""

import json

from PIL import Image
from typer.testing import CliRunner

from uivenus.cli import app
from uivenus.store import read_run

runner = CliRunner()


def test_shot_writes_a_screen_sized_png(tmp_path):
    out = tmp_path / "shot.png"
    result = runner.invoke(app, ["env", "shot", "--env", "sandbox-phone:settings", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert Image.open(out).size == (412, 915)


def test_play_records_each_action_and_refusals(tmp_path):
    actions = tmp_path / "actions.json"
    actions.write_text(json.dumps([{"type": "Click", "point": [10, 10]}, {"type": "Type", "content": "hi"},
                                   {"type": "PressRecent"}]))
    result = runner.invoke(app, ["env", "play", "--env", "sandbox:notes", "--actions", str(actions),
                                 "--out", str(tmp_path / "runs"), "--run-id", "r1"])
    assert result.exit_code == 0, result.output
    (trajectory,) = read_run(tmp_path / "runs" / "r1")
    assert [s.action.type.value for s in trajectory.steps] == ["Click", "Type", "PressRecent"]
    assert trajectory.steps[0].executed and trajectory.steps[0].screen == "screens/0.png"
    assert "PlatformMismatchError" in trajectory.steps[2].error and not trajectory.steps[2].executed
    assert trajectory.outcome.value == "error"


def test_solve_runs_the_reference_solution():
    result = runner.invoke(app, ["env", "solve", "sandbox:settings/wifi_off_bluetooth_on"])
    assert result.exit_code == 0, result.output
    assert "PASSED" in result.output


def test_solve_rejects_unknown_tasks():
    result = runner.invoke(app, ["env", "solve", "sandbox:notes/fly_to_mars"])
    assert result.exit_code != 0
