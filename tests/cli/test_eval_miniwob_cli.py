"""The `miniwob` eval command (registered by the lead as `uivenus eval miniwob`), on one task page in real Chromium."""

import json

import typer
from typer.testing import CliRunner

from uivenus.cli.eval_miniwob import miniwob

app = typer.Typer()
app.command()(miniwob)
runner = CliRunner()


def test_miniwob_command_writes_results_and_reports_the_rate(tmp_path):
    result = runner.invoke(app, ["--tasks", "click-button", "--policy", "random:2", "--episodes", "1", "--seed", "3",
                                 "--out", str(tmp_path), "--max-steps", "2", "--record", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "random:2: success" in result.output and "over 1 tasks" in result.output
    results = json.loads((tmp_path / "miniwob_results.json").read_text())
    assert results["tasks"] == ["click-button"] and results["records"][0]["seed"] == 3
    assert (tmp_path / "runs").is_dir()


def test_miniwob_command_refuses_unknown_tasks(tmp_path):
    result = runner.invoke(app, ["--tasks", "no-such-task", "--out", str(tmp_path), "--no-progress"])
    assert result.exit_code == 1 and "unknown MiniWoB task" in result.output
