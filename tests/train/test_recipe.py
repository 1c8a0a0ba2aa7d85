"""The miniature recipe runs every stage end to end, per seed, and compares the students with the baselines as
mean ± sd over seeds; a rerun reads back what is done; weight averaging is the average it claims to be; curves are
plotted from a stage's metrics."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from uivenus.train.config import ConfigError, from_dict, load_config
from uivenus.train.merge import MergeError, average_checkpoints
from uivenus.train.plots import PlotError, plot_metrics, read_metrics
from uivenus.train.recipe import (
    MODELS, PLOT_FILE, RESULTS_FILE, TABLE_FILE, RecipeConfig, expert_sft_config, expert_sft_stage, results_table,
    run_recipe, summarise,
)
from uivenus.train.samples import Domain

TINY_RECIPE = {
    "seeds": [0, 1],
    "mixture": {"grounding": 0.5, "web": 0.5},
    "model": {"hidden": 64, "layers": 1, "vision_hidden": 32, "vision_layers": 1, "max_pixels": 128 * 128},
    "grounding": {"train_screens": 2, "eval_screens": 1, "per_sample": 2},
    "steps": {"train": 4, "eval": 2},
    "sft": {"lr": 0.002, "batch_size": 2, "max_steps": 2, "max_length": 2048, "log_every": 1},
    "expert": "sft",
    "expert_sft": {"max_steps": 2, "warmup_steps": 0},
    "expert_sft_by_domain": {"web": {"max_steps": 3}},
    "mopd": {"lr": 0.0002, "batch_size": 2, "max_steps": 1, "max_length": 2048,
             "sampling": {"k": 1, "max_new_tokens": 6}, "generation_batch": 4},
    "ship_dtype": "float16",
    "eval_max_new_tokens": 8,
    "progress": False,
}


@pytest.mark.slow
@pytest.mark.timeout(900)  # ~40 s of CPU; on a shared machine the wall time can be many times that
def test_tiny_recipe_runs_every_stage_per_seed_and_a_rerun_only_reads_back(tmp_path: Path) -> None:
    torch.set_num_threads(1)
    config = from_dict(RecipeConfig, {**TINY_RECIPE, "out_dir": str(tmp_path / "run"),
                                      "ship_to": str(tmp_path / "ship")})
    result = run_recipe(config, log=lambda line: None)

    run = tmp_path / "run"
    assert set(result.scores) == set(MODELS)
    assert set(result.scores["stage1"]) == {0}  # Stage I once
    for name in MODELS[1:]:
        assert set(result.scores[name]) == {0, 1}, name
        for seed, row in result.scores[name].items():
            assert 0.0 <= row["grounding_accuracy"] <= 1.0 and row["grounding_n"] == 2, name
            assert 0.0 <= row["step_accuracy"] <= 1.0 and row["step_n"] == 2, name
            assert (result.checkpoints[name][seed] / "config.json").is_file(), name
            assert str(run / f"seed-{seed}" / name) in str(result.checkpoints[name][seed])
    # mean ± sd over the seeds: the summary is what the per-seed scores say
    for name, row in result.summary.items():
        accuracy = [r["grounding_accuracy"] for r in result.scores[name].values()]
        assert row["grounding"]["mean"] == pytest.approx(statistics.fmean(accuracy))
        assert row["grounding"]["sd"] == pytest.approx(statistics.stdev(accuracy) if len(accuracy) > 1 else 0.0)
        assert row["mean"]["n"] == len(accuracy)
    saved = json.loads((run / RESULTS_FILE).read_text())
    assert saved["summary"] == json.loads(json.dumps(result.summary))
    assert saved["scores"]["mopd_student"].keys() == {"0", "1"}
    # the seeds differ in what they train on (data order, samples): the two seeds' multi-task models differ
    first, second = (load_file(str(result.checkpoints["multitask_sft"][s] / "model.safetensors")) for s in (0, 1))
    assert any(not torch.equal(first[k], second[k]) for k in first)
    # plain on-policy distillation ran without the action-aware weights: every completion token weighted
    plain = [json.loads(line) for line in (run / "seed-0" / "opd_student" / "metrics.jsonl").open()]
    assert all(r["weighted_tokens"] == 1.0 for r in plain if "weighted_tokens" in r)
    # each expert is domain SFT on its own domain only, with its own budget (web: 3 steps, grounding: the shared
    # 2); the multi-task baseline trains on for as many steps as the experts and a student took (2 + 3 + 1)
    expert = [json.loads(line) for line in (run / "seed-0" / "expert_web" / "metrics.jsonl").open()]
    assert max(r["step"] for r in expert) == 3 and all(r["nll_action_type"] > 0 for r in expert)
    grounding = [json.loads(line) for line in (run / "seed-0" / "expert_grounding" / "metrics.jsonl").open()]
    assert max(r["step"] for r in grounding) == 2
    assert all(r["nll_action_type"] == 0 for r in grounding)  # bare points: no action type in its data
    assert saved["budget_steps"]["stages_2_3"] == 6
    multitask = [json.loads(line) for line in (run / "seed-1" / "multitask_sft" / "metrics.jsonl").open()]
    assert max(r["step"] for r in multitask) == 6
    # the step evaluation keeps every reply with its verdict
    replies = [json.loads(line) for line in (run / "eval" / "seed-0" / "expert_web" / "steps" / "replies.jsonl").open()]
    assert len(replies) == 2 and {r["verdict"] for r in replies} <= {"correct", "param_wrong", "type_wrong",
                                                                       "unparseable"}
    table = (run / TABLE_FILE).read_text()
    assert all(f"| {name} |" in table for name in MODELS)
    mopd = result.summary["mopd_student"]["web"]
    assert f"{mopd['mean']:.3f} ± {mopd['sd']:.3f}" in table
    assert (run / PLOT_FILE).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert all((run / "plots" / f"{name}.png").stat().st_size > 1000
               for name in ("stage1", "expert_grounding", "expert_web", "mopd_student", "opd_student",
                            "multitask_sft"))
    # the experts moved away from Stage I, and the average lies between them
    experts = [load_file(str(result.checkpoints[n][0] / "model.safetensors")) for n in ("expert_grounding",
                                                                                       "expert_web")]
    average = load_file(str(result.checkpoints["weight_average"][0] / "model.safetensors"))
    name = next(k for k in average if "layers.0.mlp" in k)
    assert torch.allclose(average[name], (experts[0][name] + experts[1][name]) / 2, atol=1e-6)
    # the first seed's student is shipped in half precision, loadable by the hf backend on a CPU
    shipped = load_file(str(tmp_path / "ship" / "model.safetensors"))
    assert {t.dtype for t in shipped.values()} == {torch.float16}
    from uivenus.agent.policies.transformers_local import HFOptions, TransformersPolicy

    policy = TransformersPolicy(HFOptions(str(tmp_path / "ship"), device="cpu"))
    assert next(policy.model.parameters()).dtype == torch.float32

    # a rerun trains and evaluates nothing again: every stage and every score is read back
    stamps = {p: p.stat().st_mtime_ns for p in run.rglob("model.safetensors")}
    again = run_recipe(config, log=lambda line: None)
    assert again.scores == result.scores
    assert {p: p.stat().st_mtime_ns for p in run.rglob("model.safetensors") if "weight_average" not in str(p)} \
        == {p: t for p, t in stamps.items() if "weight_average" not in str(p)}


def test_summary_is_mean_and_sample_sd_over_seeds_per_domain_and_the_table_shows_it() -> None:
    scores = {"stage1": {0: {"grounding_accuracy": 0.5, "step_accuracy": 0.1}},
              "mopd_student": {0: {"grounding_accuracy": 0.6, "step_accuracy": 0.2},
                               1: {"grounding_accuracy": 0.8, "step_accuracy": 0.4},
                               2: {"grounding_accuracy": 0.7, "step_accuracy": 0.9}}}
    summary = summarise(scores)
    assert summary["stage1"]["grounding"] == {"mean": 0.5, "sd": 0.0, "n": 1}
    mopd = summary["mopd_student"]
    assert mopd["grounding"]["mean"] == pytest.approx(0.7) and mopd["grounding"]["sd"] == pytest.approx(0.1)
    assert mopd["web"]["mean"] == pytest.approx(0.5) and mopd["web"]["n"] == 3
    assert mopd["mean"]["mean"] == pytest.approx(0.6)  # the seeds' means over domains: 0.4, 0.6, 0.8
    assert mopd["mean"]["sd"] == pytest.approx(0.2)
    table = results_table(summary)
    assert "| stage1 | 0.500 ± 0.000 | 0.100 ± 0.000 | 0.300 ± 0.000 | 1 |" in table
    assert "| mopd_student | 0.700 ± 0.100 | 0.500 ± 0.361 | 0.600 ± 0.200 | 3 |" in table
    assert table.index("| stage1 |") < table.index("| mopd_student |")


def test_recipe_config_rejects_stage_keys_the_recipe_sets() -> None:
    with pytest.raises(ConfigError, match=r"sft must not set \['model'\]"):
        from_dict(RecipeConfig, {"sft": {"model": "runs/x", "lr": 1e-3}})
    with pytest.raises(ConfigError, match="unknown key"):
        from_dict(RecipeConfig, {"grounding": {"screens": 3}})
    with pytest.raises(ConfigError, match=r"rl_by_domain names \['captcha'\]"):
        from_dict(RecipeConfig, {"rl_by_domain": {"captcha": {"max_steps": 3}}})
    with pytest.raises(ConfigError, match=r"mixture must give every domain \(grounding, web\)"):
        from_dict(RecipeConfig, {"mixture": {"grounding": 1.0}})
    with pytest.raises(ConfigError, match=r"mixture names \['captcha'\]"):
        from_dict(RecipeConfig, {"mixture": {"captcha": 1.0}})
    with pytest.raises(ConfigError, match=r"rl_by_domain.web must not set \['domain'\]"):
        from_dict(RecipeConfig, {"rl_by_domain": {"web": {"domain": "web"}}})
    with pytest.raises(ConfigError, match=r"expert_sft must not set \['sources'\]"):
        from_dict(RecipeConfig, {"expert_sft": {"sources": []}})
    with pytest.raises(ConfigError, match=r"expert_sft_by_domain names \['captcha'\]; the recipe's domains are "
                                          r"grounding, web"):
        from_dict(RecipeConfig, {"expert_sft_by_domain": {"captcha": {"max_steps": 3}}})
    with pytest.raises(ConfigError, match=r"expert_sft_by_domain.web must not set \['seed'\]"):
        from_dict(RecipeConfig, {"expert_sft_by_domain": {"web": {"seed": 1}}})
    with pytest.raises(ConfigError, match=r"expert_sft_by_domain.grounding.*lr"):
        from_dict(RecipeConfig, {"expert_sft_by_domain": {"grounding": {"lr": "fast"}}})
    with pytest.raises(ConfigError, match="expert"):
        from_dict(RecipeConfig, {"expert": "merge"})
    with pytest.raises(ConfigError, match=r"mopd must not set \['seed'\]"):
        from_dict(RecipeConfig, {"mopd": {"seed": 3}})
    with pytest.raises(ConfigError, match="each once"):
        from_dict(RecipeConfig, {"seeds": [1, 1]})


def test_each_expert_gets_its_domains_sft_settings_over_the_shared_ones(tmp_path: Path) -> None:
    config = from_dict(RecipeConfig, {**TINY_RECIPE, "out_dir": str(tmp_path / "run"),
                                      "expert_sft": {"lr": 0.0003, "warmup_steps": 5, "batch_size": 8},
                                      "expert_sft_by_domain": {"grounding": {"max_steps": 1500},
                                                               "web": {"lr": 0.002, "max_steps": 150}}})
    source = {"kind": "steps", "steps": "data/steps.jsonl", "weight": 0.5}
    built = {d: expert_sft_config(config, d, tmp_path / "stage1", source, tmp_path / d.value, seed=3)
             for d in (Domain.GROUNDING, Domain.WEB)}
    grounding, web = built[Domain.GROUNDING], built[Domain.WEB]
    assert (grounding.lr, grounding.max_steps) == (0.0003, 1500)
    assert (web.lr, web.max_steps) == (0.002, 150)
    # what neither domain overrides comes from expert_sft, then from sft; the recipe's own keys from the recipe
    assert grounding.batch_size == web.batch_size == 8 and grounding.warmup_steps == web.warmup_steps == 5
    assert grounding.max_length == web.max_length == TINY_RECIPE["sft"]["max_length"]
    assert web.seed == 3 and web.out_dir == tmp_path / "web" and web.sources[0].weight is None
    train, steps = expert_sft_stage(config, Domain.WEB, tmp_path / "stage1", source, tmp_path / "web", seed=3)
    assert steps == 150 and callable(train)
    # the grounded config's experts: grounding 3e-4 × 1500, steps 2e-3 × 150; multi-task SFT at the shared 3e-4
    grounded = load_config(Path(__file__).parents[2] / "configs" / "nano_grounded.yaml", RecipeConfig)
    experts = {d: expert_sft_config(grounded, d, tmp_path, source, tmp_path, 0) for d in (Domain.GROUNDING, Domain.WEB)}
    assert {d: (c.lr, c.max_steps) for d, c in experts.items()} == {Domain.GROUNDING: (0.0003, 1500),
                                                                     Domain.WEB: (0.002, 150)}
    assert {**grounded.sft, **grounded.expert_sft}["lr"] == 0.0003


def _checkpoint(root: Path, tensors: dict[str, torch.Tensor]) -> Path:
    root.mkdir(parents=True)
    save_file(tensors, str(root / "model.safetensors"))
    (root / "config.json").write_text('{"model_type": "qwen3_vl"}')
    return root


def test_average_checkpoints_is_the_weighted_mean_and_keeps_the_config(tmp_path: Path) -> None:
    a = _checkpoint(tmp_path / "a", {"w": torch.tensor([1.0, 2.0]), "b": torch.tensor([[0.0]], dtype=torch.float16)})
    b = _checkpoint(tmp_path / "b", {"w": torch.tensor([3.0, 6.0]), "b": torch.tensor([[4.0]], dtype=torch.float16)})
    out = load_file(str(average_checkpoints([a, b], tmp_path / "avg") / "model.safetensors"))
    assert torch.equal(out["w"], torch.tensor([2.0, 4.0]))
    assert out["b"].dtype == torch.float16 and float(out["b"]) == 2.0
    assert (tmp_path / "avg" / "config.json").read_text() == '{"model_type": "qwen3_vl"}'
    weighted = load_file(str(average_checkpoints([a, b], tmp_path / "w", weights=[3, 1]) / "model.safetensors"))
    assert torch.equal(weighted["w"], torch.tensor([1.5, 3.0]))


def test_average_checkpoints_refuses_different_architectures(tmp_path: Path) -> None:
    a = _checkpoint(tmp_path / "a", {"w": torch.zeros(2)})
    other_shape = _checkpoint(tmp_path / "b", {"w": torch.zeros(3)})
    other_names = _checkpoint(tmp_path / "c", {"v": torch.zeros(2)})
    with pytest.raises(MergeError, match=r"w is \(3,\)"):
        average_checkpoints([a, other_shape], tmp_path / "out")
    with pytest.raises(MergeError, match="different tensors"):
        average_checkpoints([a, other_names], tmp_path / "out")
    with pytest.raises(MergeError, match="no \\*.safetensors"):
        average_checkpoints([a, tmp_path], tmp_path / "out")
    with pytest.raises(MergeError, match="one non-negative weight"):
        average_checkpoints([a, a], tmp_path / "out", weights=[1.0])


def test_plot_metrics_draws_each_series_from_jsonl(tmp_path: Path) -> None:
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text("".join(json.dumps({"step": s, "loss": 2.0 / s, "lr": 1e-3, "eval/loss": 1.5 / s} if s % 2
                                          else {"step": s, "loss": 2.0 / s, "lr": 1e-3}) + "\n" for s in range(1, 9)))
    series = read_metrics(metrics)
    assert series["loss"][0] == list(range(1, 9)) and series["eval/loss"][0] == [1, 3, 5, 7]
    png = plot_metrics(metrics, tmp_path / "plots" / "curves.png", title="sft")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    with pytest.raises(PlotError, match="no metric"):
        plot_metrics(metrics, tmp_path / "x.png", metrics=["reward"])
    with pytest.raises(PlotError, match="does not exist"):
        read_metrics(tmp_path / "missing.jsonl")
