"""`uivenus synth captcha` then `uivenus eval captcha` with the oracle: every instance passes its own grader."""

import json

from typer.testing import CliRunner

from uivenus.cli import app

runner = CliRunner()


def test_synth_then_eval_captcha_with_oracle(tmp_path):
    data = tmp_path / "captcha"
    result = runner.invoke(app, ["synth", "captcha", "--out", str(data), "--n", "3", "--seed", "7",
                                 "--families", "text,slider,grid", "--difficulty", "easy"])
    assert result.exit_code == 0, result.output
    assert len((data / "instances.jsonl").read_text().splitlines()) == 3
    out = tmp_path / "eval"
    result = runner.invoke(app, ["eval", "captcha", "--data", str(data), "--policy", "oracle", "--out", str(out)])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "captcha_results.json").read_text())
    assert results["pass_at_1"] == 1.0 and set(results["per_family"]) == {"text", "slider", "grid"}
    assert "all (micro)" in result.output


def test_synth_captcha_rejects_unknown_family(tmp_path):
    result = runner.invoke(app, ["synth", "captcha", "--out", str(tmp_path / "c"), "--families", "sudoku"])
    assert result.exit_code != 0
