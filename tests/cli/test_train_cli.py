"""`uivenus train sft|rl|mopd|recipe`: configs are checked before anything runs, a stage trains and leaves its metrics,
TensorBoard logs and a plot of its curves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from PIL import Image, ImageDraw
from typer.testing import CliRunner

from uivenus.cli.train import app

pytestmark = pytest.mark.usefixtures("torch_single_thread")
runner = CliRunner()


def _grounding(root: Path) -> Path:
    (root / "images").mkdir(parents=True)
    records = []
    for i, colour in enumerate(("red", "blue")):
        image = Image.new("RGB", (64, 64), "white")
        ImageDraw.Draw(image).rectangle([8 + 20 * i, 20, 28 + 20 * i, 40], fill=colour)
        image.save(root / "images" / f"g{i}.png")
        records.append({"id": f"g{i}", "img_filename": f"g{i}.png", "bbox": [8 + 20 * i, 20, 28 + 20 * i, 40],
                        "instruction": f"the {colour} square"})
    (root / "annotations.json").write_text(json.dumps(records))
    return root / "annotations.json"


def _config(tmp_path: Path, model: Path, **extra: object) -> Path:
    data = {"model": str(model), "out_dir": str(tmp_path / "out"), "lr": 0.002, "batch_size": 2, "max_steps": 2,
            "max_length": 1024, "log_every": 1, "resume": None,
            "sources": [{"kind": "grounding", "annotations": str(_grounding(tmp_path / "g"))}], **extra}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_train_sft_writes_metrics_tensorboard_and_curves(tmp_path: Path, tiny_qwen3_vl: Path) -> None:
    result = runner.invoke(app, ["sft", "--config", str(_config(tmp_path, tiny_qwen3_vl)), "max_steps=3"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    steps = [json.loads(line)["step"] for line in (out / "metrics.jsonl").open()]
    assert steps == [1, 2, 3]  # the override won over the file's max_steps=2
    assert any((out / "tensorboard").rglob("events.out.tfevents.*"))
    assert (out / "curves.png").read_bytes()[:4] == b"\x89PNG"
    assert "final model:" in result.output


def test_train_commands_reject_bad_configs_before_running(tmp_path: Path, tiny_qwen3_vl: Path) -> None:
    config = _config(tmp_path, tiny_qwen3_vl, learning_rate=0.1)
    for command in ("sft", "rl", "mopd"):
        result = runner.invoke(app, [command, "--config", str(config)])
        assert result.exit_code == 2 and "unknown key" in result.output, (command, result.output)
    assert not (tmp_path / "out").exists()
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump({"rl": {"domain": "grounding"}}))
    result = runner.invoke(app, ["recipe", "--config", str(recipe)])
    assert result.exit_code == 2 and "the recipe sets them" in result.output


def test_train_rl_needs_a_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = runner.invoke(app, ["rl", "--config", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2 and f"tried {tmp_path / 'missing.yaml'}" in " ".join(result.output.split())
    monkeypatch.chdir(tmp_path)  # a relative name is also looked for among the shipped configs, and both are named
    result = runner.invoke(app, ["rl", "--config", "configs/missing.yaml"])
    shipped = Path(__file__).resolve().parents[2] / "configs" / "missing.yaml"
    assert result.exit_code == 2 and f"tried configs/missing.yaml, {shipped}" in "".join(result.output.split("\n"))
    assert not (tmp_path / "out").exists()
