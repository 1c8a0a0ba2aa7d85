"""The miniature recipe: the three training stages, end to end on a CPU, on the project's own synthetic data.

A tiny Qwen3-VL is built from its config; Stage I trains it on grounding and CAPTCHA samples together; Stage II
trains one expert per domain from Stage I; Stage III distils both experts into one student (from Stage I). Two
baselines get the same data: the naive weight average of the experts, and one multi-task SFT model trained on
for as many more steps as Stages II and III took (the same total step budget). Every model is scored on
held-out generated data with the real harnesses (grounding accuracy, CAPTCHA Pass@1 in Chromium), and the
student can be shipped as the bundled `nano` policy.

    uivenus train recipe --config configs/nano.yaml [key=value ...]
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from uivenus.train.config import ConfigError, check_settings, from_dict, save_config
from uivenus.train.mopd import MOPDConfig
from uivenus.train.rl import RLConfig
from uivenus.train.samples import Domain
from uivenus.train.sft import SFTConfig

__all__ = ["CaptchaData", "GroundingData", "RecipeConfig", "RecipeResult", "TinyModelSpec", "results_table",
           "run_recipe", "ship_checkpoint"]

RESULTS_FILE = "recipe_results.json"
TABLE_FILE = "recipe_table.md"
#: The models the recipe compares, in table order.
MODELS = ("stage1", "expert_grounding", "expert_captcha", "mopd_student", "weight_average", "multitask_sft")
#: The Stage II experts, one per domain of the recipe's data.
EXPERT_DOMAINS = (Domain.GROUNDING, Domain.CAPTCHA)
#: Keys of a stage's settings the recipe sets itself (a config that sets them is rejected, not silently overridden).
_RECIPE_KEYS = ("model", "out_dir", "sources", "domain", "teachers", "eval_sources", "progress")


@dataclass(frozen=True)
class TinyModelSpec:
    """The size of the model built for Stage I (`uivenus.train.tiny.build_tiny_qwen3_vl`)."""

    hidden: int = 256
    layers: int = 4
    vision_hidden: int = 128
    vision_layers: int = 2
    vocab_size: int = 2000
    max_pixels: int = 224 * 224
    seed: int = 0


@dataclass(frozen=True)
class GroundingData:
    """Simple synthetic screens (`per_sample` instructions each) for training, and held-out ones from another seed."""

    train_screens: int = 60
    eval_screens: int = 20
    size: tuple[int, int] = (224, 224)
    per_sample: int = 5
    seed: int = 0
    eval_seed: int = 10_000


@dataclass(frozen=True)
class CaptchaData:
    """CAPTCHA instances of a few families for training, held-out ones from another seed; `max_steps` replies each."""

    train: int = 40
    eval: int = 12
    families: tuple[str, ...] = ("odd_one_out", "slider")
    difficulty: str = "easy"
    layouts: tuple[str, ...] = ("desktop",)
    seed: int = 0
    eval_seed: int = 10_000
    max_steps: int = 1


@dataclass(frozen=True)
class RecipeConfig:
    """The whole recipe. `sft`, `rl` and `mopd` are the stages' own settings (SFTConfig, RLConfig, MOPDConfig
    fields such as lr, batch_size, max_steps, sampling) without the model, data and output paths the recipe sets.
    `rl_by_domain` overrides `rl` keys for one expert (a shallow merge), since experts differ in cost: a CAPTCHA
    prompt carries the whole agent prompt, a grounding prompt a few lines. `ship_to` (optional) receives the MOPD
    student in `ship_dtype`. Evaluation replies are cut at
    `eval_max_new_tokens` (the targets are a few dozen tokens; an untrained model would ramble to the harness's
    1,024-token agentic limit)."""

    out_dir: Path = Path("runs/nano")
    model: TinyModelSpec = TinyModelSpec()
    grounding: GroundingData = GroundingData()
    captcha: CaptchaData = CaptchaData()
    sft: Mapping[str, Any] = field(default_factory=dict)
    rl: Mapping[str, Any] = field(default_factory=dict)
    rl_by_domain: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    mopd: Mapping[str, Any] = field(default_factory=dict)
    ship_to: Path | None = None
    ship_dtype: Literal["float32", "bfloat16", "float16"] = "float16"
    eval_max_new_tokens: int = 64
    progress: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "out_dir", Path(self.out_dir))
        unknown = sorted(set(self.rl_by_domain) - {d.value for d in EXPERT_DOMAINS})
        if unknown:
            raise ConfigError(f"rl_by_domain names {unknown}; the recipe's experts are "
                              f"{', '.join(d.value for d in EXPERT_DOMAINS)}")
        stages = {"sft": (SFTConfig, self.sft), "rl": (RLConfig, self.rl), "mopd": (MOPDConfig, self.mopd),
                  **{f"rl_by_domain.{d}": (RLConfig, settings) for d, settings in self.rl_by_domain.items()}}
        for stage, (cls, settings) in stages.items():
            taken = sorted(set(settings) & set(_RECIPE_KEYS))
            if taken:
                raise ConfigError(f"{stage} must not set {taken}: the recipe sets them for every stage")
            check_settings(cls, settings, stage)


@dataclass(frozen=True)
class RecipeResult:
    """Where everything went, each model's held-out scores, and how long each part took."""

    out_dir: Path
    checkpoints: Mapping[str, Path]
    scores: Mapping[str, Mapping[str, float]]
    seconds: Mapping[str, float]
    shipped: Path | None = None


# --- data -----------------------------------------------------------------------------------------

def _grounding(spec: GroundingData, out: Path, train: bool) -> Path:
    from uivenus.synth.grounding import generate_grounding

    annotations = out / "annotations.json"
    if not annotations.is_file():
        generate_grounding(spec.train_screens if train else spec.eval_screens, out,
                           seed=spec.seed if train else spec.eval_seed, sizes=[spec.size], simple=True,
                           per_sample=spec.per_sample, progress=False)
    return annotations


def _captchas(spec: CaptchaData, out: Path, train: bool) -> Path:
    from uivenus.synth.captcha import INDEX_FILE, generate_captchas

    if not (out / INDEX_FILE).is_file():
        generate_captchas(spec.train if train else spec.eval, out, seed=spec.seed if train else spec.eval_seed,
                          families=spec.families, difficulty=spec.difficulty, layouts=spec.layouts)
    return out


def _data(config: RecipeConfig) -> dict[str, Path]:
    root = config.out_dir / "data"
    return {
        "grounding_train": _grounding(config.grounding, root / "grounding_train", train=True),
        "grounding_eval": _grounding(config.grounding, root / "grounding_eval", train=False),
        "captcha_train": _captchas(config.captcha, root / "captcha_train", train=True),
        "captcha_eval": _captchas(config.captcha, root / "captcha_eval", train=False),
    }


def _has_screens(captcha_dir: Path) -> bool:
    """Every instance's first screen is already captured (a rerun of the recipe reuses them)."""
    from uivenus.synth.captcha import SCREENS_DIR, load_captchas

    return all((captcha_dir / SCREENS_DIR / f"{i.id}.png").is_file() for i in load_captchas(captcha_dir))


def _browsers(stack: ExitStack, captcha_dir: Path) -> dict[str, Any]:
    """One browser per layout, shared by the screen capture and every CAPTCHA evaluation."""
    from uivenus.envs.browser import BrowserEnv
    from uivenus.synth.captcha import browser_config, load_captchas

    envs: dict[str, Any] = {}
    for instance in load_captchas(captcha_dir):
        if instance.layout not in envs:
            envs[instance.layout] = stack.enter_context(BrowserEnv(browser_config(instance)))
    return envs


# --- stages ---------------------------------------------------------------------------------------

def _stage(cls: type, settings: Mapping[str, Any], where: str, **recipe: Any) -> Any:
    """A stage config: its settings from the recipe file plus what the recipe sets (model, data, out_dir)."""
    return from_dict(cls, {**settings, **recipe}, where)


def ship_checkpoint(source: Path | str, dest: Path | str, dtype: str = "float16") -> Path:
    """Copy a checkpoint (weights cast to `dtype`, processor files alongside) to `dest`, replacing what was there."""
    import shutil

    import torch

    from uivenus.agent.policies.transformers_local import load_processor
    from uivenus.train.trainer import load_model

    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    model = load_model(source, "float32").to(getattr(torch, dtype))
    model.save_pretrained(dest)
    load_processor(str(source)).save_pretrained(dest)
    return dest


def _timed(seconds: dict[str, float], name: str, fn: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    try:
        return fn()
    finally:
        seconds[name] = round(time.perf_counter() - started, 1)


class _CappedPolicy:
    """A policy whose replies stop after `max_new_tokens`, whatever the harness's sampling preset asks for."""

    def __init__(self, policy: Any, max_new_tokens: int, name: str) -> None:
        self.policy, self.max_new_tokens, self.name = policy, max_new_tokens, name

    def _capped(self, request: Any) -> Any:
        import dataclasses

        limit = min(request.sampling.max_new_tokens, self.max_new_tokens)
        return dataclasses.replace(request, sampling=dataclasses.replace(request.sampling, max_new_tokens=limit))

    def act(self, request: Any) -> Any:
        return self.policy.act(self._capped(request))

    def act_batch(self, requests: Any) -> list[Any]:
        return self.policy.act_batch([self._capped(r) for r in requests])

    def close(self) -> None:
        self.policy.close()


def _evaluate(name: str, checkpoint: Path, data: Mapping[str, Path], config: RecipeConfig, out: Path,
              envs: Mapping[str, Any]) -> dict[str, float]:
    from uivenus.agent.policies.transformers_local import HFOptions, TransformersPolicy
    from uivenus.evals.captcha import evaluate_captchas
    from uivenus.evals.grounding import evaluate_grounding
    from uivenus.evals.grounding_data import load_grounding

    policy = _CappedPolicy(TransformersPolicy(HFOptions(str(checkpoint), device="cpu", dtype="float32",
                                                        batch_size=16)), config.eval_max_new_tokens, name)
    try:
        grounding = evaluate_grounding(load_grounding(data["grounding_eval"]), policy, out / name / "grounding",
                                       batch_size=16, progress=config.progress)
        captcha = evaluate_captchas(data["captcha_eval"], policy, out / name / "captcha",
                                    max_steps=config.captcha.max_steps, progress=config.progress, envs=envs)
    finally:
        policy.close()
    return {"grounding_accuracy": grounding["accuracy"], "grounding_n": grounding["n"],
            "captcha_pass_at_1": captcha["pass_at_1"], "captcha_n": captcha["n"]}


def results_table(scores: Mapping[str, Mapping[str, float]]) -> str:
    """The comparison as a markdown table: one row per model, held-out grounding accuracy and CAPTCHA Pass@1."""
    lines = ["| model | grounding acc (held out) | CAPTCHA Pass@1 (held out) |", "|---|---|---|"]
    for name in [m for m in MODELS if m in scores] + [m for m in scores if m not in MODELS]:
        row = scores[name]
        lines.append(f"| {name} | {row['grounding_accuracy']:.3f} (n={int(row['grounding_n'])}) | "
                     f"{row['captcha_pass_at_1']:.3f} (n={int(row['captcha_n'])}) |")
    return "\n".join(lines) + "\n"


def run_recipe(config: RecipeConfig, *, log: Callable[[str], None] = print) -> RecipeResult:
    """Run every stage, both baselines and every evaluation; write `recipe_results.json`, the table and the plots."""
    from uivenus.synth.captcha import capture_captcha_screens
    from uivenus.train.merge import average_checkpoints
    from uivenus.train.mopd import train_mopd
    from uivenus.train.plots import plot_metrics
    from uivenus.train.rl import train_rl
    from uivenus.train.sft import train_sft
    from uivenus.train.tiny import build_tiny_qwen3_vl

    out = config.out_dir
    out.mkdir(parents=True, exist_ok=True)
    save_config(config, out / "recipe.yaml")
    seconds: dict[str, float] = {}
    ckpt: dict[str, Path] = {}
    with ExitStack() as stack:
        paths = _timed(seconds, "data", lambda: _data(config))
        envs = _browsers(stack, paths["captcha_train"])
        if not _has_screens(paths["captcha_train"]):
            _timed(seconds, "captcha_screens", lambda: capture_captcha_screens(paths["captcha_train"], envs=envs))
        grounding_src = {"kind": "grounding", "annotations": str(paths["grounding_train"]), "frame_kind": "rel"}
        captcha_src = {"kind": "captcha", "data_dir": str(paths["captcha_train"])}
        mix = [grounding_src, captcha_src]
        model_spec = config.model
        base = _timed(seconds, "build", lambda: build_tiny_qwen3_vl(
            out / "base", hidden=model_spec.hidden, layers=model_spec.layers, vision_hidden=model_spec.vision_hidden,
            vision_layers=model_spec.vision_layers, vocab_size=model_spec.vocab_size,
            max_pixels=model_spec.max_pixels, seed=model_spec.seed))

        log("Stage I: SFT on the grounding + CAPTCHA mix")
        sft = _stage(SFTConfig, config.sft, "sft", model=str(base), out_dir=str(out / "stage1"), sources=mix,
                     progress=config.progress)
        ckpt["stage1"] = _timed(seconds, "stage1", lambda: train_sft(sft))
        budget = 0
        for domain, source in zip(EXPERT_DOMAINS, (grounding_src, captcha_src), strict=True):
            name = f"expert_{domain.value}"
            log(f"Stage II: RL expert for {domain.value}")
            settings = {**config.rl, **config.rl_by_domain.get(domain.value, {})}
            rl = _stage(RLConfig, settings, f"rl ({domain.value})", model=str(ckpt["stage1"]),
                        out_dir=str(out / name), sources=[source], domain=domain.value, progress=config.progress)
            ckpt[name] = _timed(seconds, name, lambda rl=rl: train_rl(rl))
            budget += rl.max_steps or 0
        log("Stage III: MOPD student distilled from both experts")
        mopd = _stage(MOPDConfig, config.mopd, "mopd", model=str(ckpt["stage1"]), out_dir=str(out / "mopd_student"),
                      sources=mix, progress=config.progress,
                      teachers={Domain.GROUNDING.value: str(ckpt["expert_grounding"]),
                                Domain.CAPTCHA.value: str(ckpt["expert_captcha"])})
        ckpt["mopd_student"] = _timed(seconds, "mopd_student", lambda: train_mopd(mopd))
        budget += mopd.max_steps or 0
        log("Baselines: weight average of the experts; multi-task SFT for the same step budget")
        ckpt["weight_average"] = _timed(seconds, "weight_average", lambda: average_checkpoints(
            [ckpt["expert_grounding"], ckpt["expert_captcha"]], out / "weight_average"))
        multitask = _stage(SFTConfig, {**config.sft, "max_steps": budget, "warmup_steps": 0}, "sft",
                           model=str(ckpt["stage1"]), out_dir=str(out / "multitask_sft"), sources=mix,
                           progress=config.progress)
        ckpt["multitask_sft"] = _timed(seconds, "multitask_sft", lambda: train_sft(multitask))

        scores: dict[str, dict[str, float]] = {}
        for name in MODELS:
            log(f"Evaluating {name} on held-out grounding and CAPTCHAs")
            scores[name] = _timed(seconds, f"eval_{name}", lambda name=name: _evaluate(
                name, ckpt[name], paths, config, out / "eval", envs))
    for name in ("stage1", "expert_grounding", "expert_captcha", "mopd_student", "multitask_sft"):
        plot_metrics(out / name / "metrics.jsonl", out / "plots" / f"{name}.png", title=name)
    shipped = ship_checkpoint(ckpt["mopd_student"], config.ship_to, config.ship_dtype) if config.ship_to else None
    table = results_table(scores)
    (out / TABLE_FILE).write_text(table, encoding="utf-8")
    payload = {"scores": scores, "seconds": seconds, "checkpoints": {k: str(v) for k, v in ckpt.items()},
               "budget_steps": {"stage1": sft.max_steps, "stages_2_3": budget, "multitask_sft_extra": budget},
               "shipped": str(shipped) if shipped else None}
    (out / RESULTS_FILE).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return RecipeResult(out, ckpt, scores, seconds, shipped)
