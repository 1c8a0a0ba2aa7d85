"""The shipped training configs load with their stage's config class, chain into one another (Stage I → II → III),
agree with the launch commands in their headers and in docs/training.md, and save and load back unchanged; a wrong
value, an unknown key or a bad `key=value` override is refused with the file and the key it is at."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from uivenus.train.config import (
    SHIPPED_CONFIGS, ConfigError, find_config, from_dict, load_config, save_config, validate_options,
)
from uivenus.train.mopd import MOPDConfig
from uivenus.train.recipe import RecipeConfig
from uivenus.train.rl import RLConfig
from uivenus.train.samples import Domain
from uivenus.train.sft import SFTConfig
from uivenus.train.sources import SOURCES, SourceSpec
from uivenus.train.sources.trajectories import VerdictPolicy
from uivenus.train.trainer import CHECKPOINTS, TrainConfig, stream_for

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"
VENUS = CONFIGS / "venus"
#: The config class of a YAML under configs/, by the first word of its file name.
CLASSES: dict[str, type] = {"sft": SFTConfig, "rl": RLConfig, "mopd": MOPDConfig, "nano": RecipeConfig}
#: The module each stage class is launched with.
MODULES = {SFTConfig: "uivenus.train.sft", RLConfig: "uivenus.train.rl", MOPDConfig: "uivenus.train.mopd"}
SERVER = "openai:http://127.0.0.1:8000/v1#ui-venus"


def class_of(path: Path) -> type:
    return CLASSES[path.stem.split("_")[0]]


def training_yamls() -> list[Path]:
    return sorted(p for p in CONFIGS.rglob("*.yaml") if "accelerate" not in p.relative_to(CONFIGS).parts)


def stage_yamls() -> list[Path]:
    return [p for p in training_yamls() if class_of(p) is not RecipeConfig]


def load(path: Path, overrides: tuple[str, ...] = ()) -> Any:
    return load_config(path, class_of(path), overrides)


def source_options(spec: SourceSpec, where: str) -> dict[str, Any]:
    """A source's options checked as `samples_from_spec` checks them, without building the source (which reads
    the data the config points at)."""
    return validate_options(SOURCES[spec.kind], spec.options, where)


def final_model(config: TrainConfig) -> str:
    """Where a run with `max_steps` leaves its model (the directory `Trainer.train` returns)."""
    return str(config.out_dir / CHECKPOINTS / f"step-{config.max_steps:07d}" / "model")


def venus() -> dict[str, Any]:
    return {p.stem: load(p) for p in sorted(VENUS.glob("*.yaml"))}


def test_every_training_yaml_has_a_config_class() -> None:
    names = [p.relative_to(CONFIGS).as_posix() for p in training_yamls()]
    assert {"sft_tiny.yaml", "nano.yaml", "venus/sft.yaml", "venus/mopd.yaml"} <= set(names)
    assert any(n.startswith("venus/rl_") for n in names)
    for path in training_yamls():
        assert path.stem.split("_")[0] in CLASSES, f"{path}: name it <stage>_....yaml ({', '.join(CLASSES)})"


@pytest.mark.parametrize("path", stage_yamls(), ids=lambda p: p.relative_to(CONFIGS).as_posix())
def test_stage_config_loads_and_its_sources_take_their_options(path: Path) -> None:
    config = load(path)
    assert type(config) is class_of(path)
    assert config.sources
    specs = [*config.sources, *getattr(config, "eval_sources", ())]
    for index, spec in enumerate(specs):
        options = source_options(spec, f"{path.name} source {index}")
        if spec.kind in ("trajectories", "parquet"):
            assert isinstance(options["verdict_policy"], VerdictPolicy)


def test_loading_does_not_need_the_checkpoints_or_data(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    config = load(VENUS / "mopd.yaml", (f"model={missing}", f"teachers.web={missing}", f"out_dir={missing}"))
    assert config.model == str(missing) and config.teachers[Domain.WEB] == str(missing)
    assert not missing.exists()


def test_venus_configs_train_an_8b_checkpoint_in_bf16() -> None:
    configs = venus()
    assert {"sft", "mopd"} <= set(configs) and any(name.startswith("rl_") for name in configs)
    for name, config in configs.items():
        assert config.dtype == "bfloat16" and config.gradient_checkpointing, name
        assert config.max_steps and config.resume == "auto" and config.save_every > 0, name
        assert config.lr <= 1e-5 and config.max_grad_norm == 1.0, name
    sft = configs["sft"]
    assert sft.model == "checkpoints/UI-Venus-1.5-8B"
    assert sft.max_length >= 32768 and sft.grad_accum * sft.batch_size * 8 == 128
    assert sft.eval_sources and sft.eval_every > 0


def test_trajectory_sources_are_weighted_by_verdict() -> None:
    sft = venus()["sft"]
    policies = [source_options(spec, "sft")["verdict_policy"] for spec in sft.sources
                if spec.kind in ("trajectories", "parquet")]
    assert len(policies) >= 2
    for policy in policies:
        assert policy.success == 1.0 and 0 < policy.partial < 1
        assert policy.failed is None and policy.unknown is None and "incorrect" in policy.drop_steps


def test_rl_and_mopd_sample_from_a_vllm_server_or_in_process() -> None:
    for name, config in venus().items():
        if isinstance(config, (RLConfig, MOPDConfig)):
            assert config.sampling.server == SERVER, name
            assert config.sampling.temperature == 1.0, name
            local = load(VENUS / f"{name}.yaml", ("sampling.server=null",))
            assert local.sampling.server is None and local.sampling.k == config.sampling.k


def test_stages_chain_from_sft_through_the_experts_to_the_student() -> None:
    configs = venus()
    sft, mopd = configs["sft"], configs["mopd"]
    experts = {c.domain: c for n, c in configs.items() if n.startswith("rl_")}
    assert Domain.GROUNDING in experts and len(experts) >= 2
    assert all(expert.model == final_model(sft) for expert in experts.values())
    assert mopd.model == final_model(sft)
    # one teacher per expert trained here, each the final model of its Stage II run
    assert dict(mopd.teachers) == {domain: final_model(expert) for domain, expert in experts.items()}
    assert len({str(c.out_dir) for c in configs.values()}) == len(configs)


def test_each_venus_config_header_launches_itself_with_its_stage_module() -> None:
    for path in sorted(VENUS.glob("*.yaml")):
        header = " ".join(line.lstrip("#").strip().rstrip("\\").strip()  # continued lines joined
                          for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#"))
        module = MODULES[class_of(path)]
        launch = rf"accelerate launch --config_file configs/accelerate/\w+\.yaml .*?-m {re.escape(module)} "
        assert re.search(launch + rf"configs/venus/{re.escape(path.name)}", header), path.name
        for mentioned in re.findall(r"configs/[\w/]+\.yaml", header):
            assert (ROOT / mentioned).is_file(), f"{path.name} names {mentioned}"


def test_nano_recipe_loads_and_its_stage_settings_are_stage_fields() -> None:
    recipe = load_config(CONFIGS / "nano.yaml", RecipeConfig)
    assert isinstance(recipe, RecipeConfig) and recipe.model.vocab_size > 0
    source = [{"kind": "grounding", "annotations": "data/g/annotations.json"}]
    sft = from_dict(SFTConfig, {**recipe.sft, "model": "m", "sources": source}, "sft")
    rl = from_dict(RLConfig, {**recipe.rl, "model": "m", "sources": source, "domain": "grounding"}, "rl")
    mopd = from_dict(MOPDConfig, {**recipe.mopd, "model": "m", "sources": source, "teachers": {"grounding": "t"}},
                     "mopd")
    assert sft.max_steps and rl.sampling.k >= 2 and mopd.sampling.k >= 1
    assert all(c.dtype == "float32" for c in (sft, rl, mopd))  # the miniature recipe runs on a CPU


@pytest.mark.parametrize("path", training_yamls(), ids=lambda p: p.relative_to(CONFIGS).as_posix())
def test_config_saves_and_loads_back_unchanged(path: Path, tmp_path: Path) -> None:
    config = load(path)
    saved = save_config(config, tmp_path / path.name)
    assert load_config(saved, class_of(path)) == config


def _with(tmp_path: Path, path: Path, text: str) -> Path:
    """A copy of a shipped config with `text` appended (a later YAML key replaces an earlier one)."""
    copy = tmp_path / path.name
    copy.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    return copy


def test_source_mixture_weights_are_read_and_checked() -> None:
    config = load(VENUS / "sft.yaml")
    assert [s.weight for s in config.sources] == [0.3, 0.2, 0.15, 0.25, 0.1]
    assert all("weight" not in s.options for s in config.sources)  # not passed on as a reader's option
    with pytest.raises(ConfigError, match="sources.1: a source's weight must be a positive number, got -1"):
        load(VENUS / "sft.yaml", ("sources.1.weight=-1",))
    partial = (SourceSpec("grounding", {"annotations": "a.json"}, weight=2.0), SourceSpec("captcha", {"data_dir": "c"}))
    with pytest.raises(ConfigError, match="1 of 2 sources have a weight; give every source a mixture weight or none"):
        stream_for(config, partial, processor=None)


def test_a_value_of_the_wrong_type_names_the_file_and_the_key(tmp_path: Path) -> None:
    stage = _with(tmp_path, VENUS / "rl_web.yaml", "lr: fast\n")
    wrong = rf"^{re.escape(str(stage))}: lr: Input should be a valid number.*, got 'fast'$"
    with pytest.raises(ConfigError, match=wrong):
        load_config(stage, RLConfig)
    # the recipe's stage settings are checked against the stage's fields when the recipe file loads
    recipe = _with(tmp_path, CONFIGS / "nano.yaml", "mopd: {lr: fast}\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(recipe))}: mopd.lr: Input should be a valid number"):
        load_config(recipe, RecipeConfig)


def test_an_unknown_key_is_refused_with_the_close_match_or_the_known_keys(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"sampling.temprature: unknown key; did you mean 'temperature'\?"):
        load_config(_with(tmp_path, VENUS / "mopd.yaml", "sampling: {k: 1, temprature: 0.7}\n"), MOPDConfig)
    with pytest.raises(ConfigError, match=r"rl_by_domain.web.max_step: unknown key; did you mean 'max_steps'"):
        load(CONFIGS / "nano.yaml", ("rl_by_domain.web.max_step=3",))
    with pytest.raises(ConfigError) as refused:
        load(CONFIGS / "sft_tiny.yaml", ("frobnicate=1",))
    assert "frobnicate: unknown key; use one of [" in str(refused.value)
    assert all(f"'{name}'" in str(refused.value) for name in ("lr", "sources", "span_weights"))


def test_a_nested_override_is_applied_and_validated() -> None:
    path = VENUS / "rl_grounding.yaml"
    config = load(path, ("sampling.max_new_tokens=32", "reward.format=0.2", "sources.0.frame_kind=abs"))
    assert (config.sampling.max_new_tokens, config.sampling.k, config.reward.format) == (32, 8, 0.2)
    assert config.sources[0].options["frame_kind"] == "abs"
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: sampling.k: Input should be a valid integer"):
        load(path, ("sampling.k=eight",))
    with pytest.raises(ConfigError, match=r"sampling.k must be >= 2"):  # the class's own check, after the types
        load(path, ("sampling.k=1",))
    recipe = load(CONFIGS / "nano.yaml", ("rl_by_domain.web.max_steps=5",))
    assert recipe.rl_by_domain["web"]["max_steps"] == 5
    with pytest.raises(ConfigError, match=r"nano.yaml: rl_by_domain.web.max_steps: Input should be a valid int"):
        load(CONFIGS / "nano.yaml", ("rl_by_domain.web.max_steps=many",))


@pytest.mark.parametrize(("name", "kind"), [("ddp", "MULTI_GPU"), ("fsdp", "FSDP")])
def test_accelerate_configs_launch_eight_processes(name: str, kind: str) -> None:
    settings = yaml.safe_load((CONFIGS / "accelerate" / f"{name}.yaml").read_text(encoding="utf-8"))
    assert settings["num_processes"] == 8 and settings["num_machines"] == 1
    assert settings["distributed_type"] == kind and settings["mixed_precision"] == "bf16"


def test_training_doc_names_only_files_and_modules_that_exist() -> None:
    doc = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    configs = set(re.findall(r"configs/[\w/]+\.yaml", doc))
    assert {f"configs/venus/{p.name}" for p in VENUS.glob("*.yaml")} <= configs
    assert {"configs/accelerate/ddp.yaml", "configs/accelerate/fsdp.yaml", "configs/nano.yaml"} <= configs
    for mentioned in configs:
        assert (ROOT / mentioned).is_file(), mentioned
    modules = set(re.findall(r"-m (uivenus\.[\w.]+)", doc))
    assert set(MODULES.values()) <= modules
    for module in modules:
        assert importlib.util.find_spec(module) is not None, module
    for stage in re.findall(r"uivenus train (\w+)", doc):
        assert stage in ("sft", "rl", "mopd", "recipe"), stage


# --- finding a config ------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling, name", [("configs/sft_tiny.yaml", "sft_tiny.yaml"), ("sft_tiny", "sft_tiny.yaml"),
                                            ("nano.yaml", "nano.yaml"), ("configs/venus/sft.yaml", "venus/sft.yaml"),
                                            ("venus/mopd", "venus/mopd.yaml")])
def test_a_config_not_in_the_working_directory_is_found_among_the_shipped_ones(spelling, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a directory without configs/: the README's `--config configs/…` from anywhere
    assert SHIPPED_CONFIGS == CONFIGS
    assert find_config(spelling) == CONFIGS / name
    assert load_config(spelling, CLASSES[Path(name).name.split("_")[0].split(".")[0]]) is not None


def test_a_config_in_the_working_directory_wins_and_a_missing_one_names_every_path_tried(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "sft_tiny.yaml").write_text((CONFIGS / "sft_tiny.yaml").read_text().replace(
        "max_steps:", "max_steps: 7 #"))
    assert find_config("configs/sft_tiny.yaml") == Path("configs/sft_tiny.yaml")
    assert load_config("configs/sft_tiny.yaml", SFTConfig).max_steps == 7
    with pytest.raises(ConfigError) as missing:
        load_config("configs/no_such", SFTConfig)
    message = str(missing.value)
    assert "'configs/no_such'" in message and str(CONFIGS / "no_such") in message
    assert str(CONFIGS / "no_such.yaml") in message
    with pytest.raises(ConfigError, match=r"tried /nowhere/x\.yaml$"):  # an absolute path is taken as written
        find_config("/nowhere/x.yaml")
