"""The miniature recipe: the three training stages, end to end on a CPU, on the project's own synthetic data.

A tiny Qwen3-VL is built from its config; Stage I trains it once, briefly, on both domains together (its checkpoint
is reused when the recipe runs again): grounding by colour and shape (`uivenus.synth.shapes`, a bare point) and
single sandbox steps (`uivenus.synth.sandbox_steps`, an action type and its parameters). Then, for every seed:
one expert per domain from Stage I (domain SFT on generator data, or Stage II RL: `expert`); Stage III distils
both experts into one student from Stage I, action-aware with the teacher hint (MOPD), and, as a baseline, plainly
(every token weighted 1, no hint); the other baselines are the naive weight average of the experts and one
multi-task SFT model trained on from Stage I for as many steps as the experts and a student took. Every model is
scored on held-out generated data (another seed): grounding accuracy with the grounding harness, step accuracy
(type and parameters right) on the sandbox steps; the comparison is each model's mean ± sd over the seeds per
domain, as JSON, a markdown table and a bar plot with error bars. Every stage resumes from its own checkpoints
and every evaluation is kept, so a rerun (or a run that stopped) does only what is left. The first seed's MOPD
student can be shipped as the `nano` policy.

    uivenus train recipe --config configs/nano.yaml [key=value ...]
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from uivenus.files import write_text
from uivenus.train.config import ConfigError, check_settings, from_dict, save_config
from uivenus.train.mopd import MOPDConfig
from uivenus.train.rl import RLConfig
from uivenus.train.samples import Domain
from uivenus.train.sft import SFTConfig

__all__ = ["EXPERT_STAGES", "RecipeConfig", "RecipeResult", "ShapesData", "StepsData", "TinyModelSpec",
           "evaluate_model", "expert_rl_stage", "expert_sft_config", "expert_sft_stage", "recipe_data",
           "results_table", "run_recipe", "ship_checkpoint", "stage_config", "summarise"]

RESULTS_FILE = "recipe_results.json"
TABLE_FILE = "recipe_table.md"
PLOT_FILE = "recipe_scores.png"
SCORES_FILE = "scores.json"
#: The models the recipe compares, in table order.
MODELS = ("stage1", "expert_grounding", "expert_web", "mopd_student", "opd_student", "weight_average",
          "multitask_sft")
#: The experts, one per domain of the recipe's data (the sandbox steps are web steps).
EXPERT_DOMAINS = (Domain.GROUNDING, Domain.WEB)
#: Each domain's held-out score (a key of an evaluation's scores): what the comparison reports.
DOMAIN_SCORES = {Domain.GROUNDING.value: "grounding_accuracy", Domain.WEB.value: "step_accuracy"}
#: The Stage III students: MOPD as configured, and plain on-policy distillation (every token weighted 1, no hint).
STUDENTS = {"mopd_student": {}, "opd_student": {"action_aware": False, "hint": False}}
#: Keys of a stage's settings the recipe sets itself (a config that sets them is rejected, not silently overridden).
_RECIPE_KEYS = ("model", "out_dir", "sources", "domain", "teachers", "eval_sources", "progress", "seed", "resume")


@dataclass(frozen=True)
class TinyModelSpec:
    """The size of the model built for Stage I (`uivenus.train.tiny.build_tiny_qwen3_vl`)."""

    hidden: int = 256
    layers: int = 4
    vision_hidden: int = 128
    vision_layers: int = 2
    vocab_size: int = 2000
    max_pixels: int = 128 * 128
    seed: int = 0
    vision_pos_scale: float = 1.0


@dataclass(frozen=True)
class ShapesData:
    """Coloured-shape screens (`uivenus.synth.shapes`, `per_sample` instructions each, `shapes` (min, max) per
    screen, named by colour and kind, by colour alone, or not at all when `anonymous`: one shape, "click the shape")
    for training, and held-out ones from another seed."""

    train_screens: int = 600
    eval_screens: int = 60
    grid: int = 4
    shapes: tuple[int, int] = (4, 7)
    per_sample: int = 3
    name_kind: bool = True
    anonymous: bool = False
    seed: int = 0
    eval_seed: int = 10_000


@dataclass(frozen=True)
class StepsData:
    """Sandbox steps (`uivenus.synth.sandbox_steps`) for training, and held-out ones from another seed."""

    train: int = 1800
    eval: int = 180
    seed: int = 0
    eval_seed: int = 10_000


@dataclass(frozen=True)
class RecipeConfig:
    """The whole recipe. `seeds`: the experts, Stage III and the baselines run once per seed (Stage I once, with
    `model.seed`). `sft`, `rl` and `mopd` are the stages' own settings (SFTConfig, RLConfig, MOPDConfig
    fields such as lr, batch_size, max_steps, sampling) without the model, data and output paths the recipe sets.
    `expert` says how an expert is made from Stage I: `sft` (domain SFT on generator data, `expert_sft` over
    `sft`) or `rl` (Stage II, `rl`); the multi-task baseline trains with the expert SFT settings on the mix.
    `mixture` (optional) gives each domain's share of the mixed stream (Stage I, Stage III, multi-task SFT), e.g.
    `{grounding: 0.5, web: 0.5}`; without it each sample comes once per epoch, so the domain with more samples
    dominates. `rl_by_domain` and `expert_sft_by_domain` override `rl` / `expert_sft` keys for one expert (a
    shallow merge: the domains need different budgets); the multi-task baseline takes `expert_sft` without them.
    `ship_to` (optional) receives the MOPD student in `ship_dtype`. Evaluation replies are cut at
    `eval_max_new_tokens` (the targets are a few tokens; an untrained model would ramble)."""

    out_dir: Path = Path("runs/nano")
    seeds: tuple[int, ...] = (0, 1, 2)
    model: TinyModelSpec = TinyModelSpec()
    grounding: ShapesData = ShapesData()
    steps: StepsData = StepsData()
    sft: Mapping[str, Any] = field(default_factory=dict)
    expert: Literal["sft", "rl"] = "sft"
    expert_sft: Mapping[str, Any] = field(default_factory=dict)
    rl: Mapping[str, Any] = field(default_factory=dict)
    rl_by_domain: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    expert_sft_by_domain: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    mixture: Mapping[str, float] = field(default_factory=dict)
    mopd: Mapping[str, Any] = field(default_factory=dict)
    ship_to: Path | None = None
    ship_dtype: Literal["float32", "bfloat16", "float16"] = "float16"
    eval_max_new_tokens: int = 24
    progress: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "out_dir", Path(self.out_dir))
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ConfigError(f"seeds must name at least one seed, each once; got {list(self.seeds)}")
        domains = {d.value for d in EXPERT_DOMAINS}
        for key, named in (("rl_by_domain", set(self.rl_by_domain)),
                           ("expert_sft_by_domain", set(self.expert_sft_by_domain)), ("mixture", set(self.mixture))):
            if named - domains:
                raise ConfigError(f"{key} names {sorted(named - domains)}; the recipe's domains are "
                                  f"{', '.join(sorted(domains))}")
        if self.mixture and (set(self.mixture) != domains or min(self.mixture.values()) <= 0):
            raise ConfigError(f"mixture must give every domain ({', '.join(sorted(domains))}) a positive share, "
                              f"got {dict(self.mixture)}")
        stages = {"sft": (SFTConfig, self.sft), "expert_sft": (SFTConfig, {**self.sft, **self.expert_sft}),
                  "rl": (RLConfig, self.rl), "mopd": (MOPDConfig, self.mopd),
                  **{f"rl_by_domain.{d}": (RLConfig, settings) for d, settings in self.rl_by_domain.items()},
                  **{f"expert_sft_by_domain.{d}": (SFTConfig, {**self.sft, **self.expert_sft, **settings})
                     for d, settings in self.expert_sft_by_domain.items()}}
        for stage, (cls, settings) in stages.items():
            taken = sorted(set(settings) & set(_RECIPE_KEYS))
            if taken:
                raise ConfigError(f"{stage} must not set {taken}: the recipe sets them for every stage")
            check_settings(cls, settings, stage)


@dataclass(frozen=True)
class RecipeResult:
    """Where everything went, each model's held-out scores per seed (`scores[model][seed]`; Stage I, trained once,
    under `model.seed`), their mean ± sd per domain (`summary`, see `summarise`), and how long each part
    took."""

    out_dir: Path
    checkpoints: Mapping[str, Mapping[int, Path]]
    scores: Mapping[str, Mapping[int, Mapping[str, float]]]
    summary: Mapping[str, Mapping[str, Mapping[str, float]]]
    seconds: Mapping[str, float]
    shipped: Path | None = None


# --- data -----------------------------------------------------------------------------------------

def _shapes(spec: ShapesData, out: Path, train: bool) -> Path:
    from uivenus.synth.shapes import generate_shapes

    annotations = out / "annotations.json"
    if not annotations.is_file():
        generate_shapes(spec.train_screens if train else spec.eval_screens, out,
                        seed=spec.seed if train else spec.eval_seed, grid=spec.grid, shapes=spec.shapes,
                        per_sample=spec.per_sample, name_kind=spec.name_kind, anonymous=spec.anonymous)
    return annotations


def _steps(spec: StepsData, out: Path, train: bool) -> Path:
    from uivenus.synth.sandbox_steps import STEPS_FILE, generate_steps

    if not (out / STEPS_FILE).is_file():
        generate_steps(spec.train if train else spec.eval, out, seed=spec.seed if train else spec.eval_seed)
    return out / STEPS_FILE


def recipe_data(config: RecipeConfig) -> dict[str, Path]:
    """The recipe's generated data under `out_dir/data` (made on first use, reused after): paths of the grounding
    and sandbox-step sets, `grounding_train`, `grounding_eval`, `steps_train`, `steps_eval`."""
    root = config.out_dir / "data"
    return {
        "grounding_train": _shapes(config.grounding, root / "grounding_train", train=True),
        "grounding_eval": _shapes(config.grounding, root / "grounding_eval", train=False),
        "steps_train": _steps(config.steps, root / "steps_train", train=True),
        "steps_eval": _steps(config.steps, root / "steps_eval", train=False),
    }


# --- stages ---

def stage_config(cls: type, settings: Mapping[str, Any], where: str, **recipe: Any) -> Any:
    """A stage config: its settings from the recipe file plus what the recipe sets (model, data, out_dir, seed),
    resuming from the stage's own checkpoints (a finished stage returns its final model at once)."""
    return from_dict(cls, {**settings, "resume": "auto", **recipe}, where)


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


def _step_accuracy(policy: Any, steps: Path, out: Path, batch_size: int = 16) -> dict[str, float]:
    """The share of held-out sandbox steps whose greedy reply has the reference's type and every parameter right
    (a point inside the target button, the exact word and direction); each reply and its verdict go to
    `out/replies.jsonl`."""
    from uivenus.agent.policies.base import Mode, PolicyRequest
    from uivenus.train.losses import ActionCorrectness
    from uivenus.train.mopd import action_correctness
    from uivenus.train.sources.datasets import step_samples

    samples = list(step_samples(steps))
    verdicts = []
    for start in range(0, len(samples), batch_size):
        chunk = samples[start:start + batch_size]
        replies = policy.act_batch([PolicyRequest(messages=s.messages, mode=Mode.GROUNDING) for s in chunk])
        verdicts += [(s, r.text, action_correctness(r.text, s.reference)) for s, r in zip(chunk, replies, strict=True)]
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "replies.jsonl", "".join(json.dumps({"id": s.id, "kind": s.meta["kind"], "target": s.target,
                                                          "reply": text, "verdict": v.value}) + "\n"
                                              for s, text, v in verdicts))
    right = sum(v is ActionCorrectness.CORRECT for _, _, v in verdicts)
    return {"accuracy": right / len(verdicts) if verdicts else 0.0, "n": len(verdicts)}


def evaluate_model(name: str, checkpoint: Path, data: Mapping[str, Path], config: RecipeConfig,
                   out: Path) -> dict[str, float]:
    """The model's held-out scores, kept in `out/scores.json` (a rerun reads them instead of evaluating again)."""
    from uivenus.agent.policies.transformers_local import HFOptions, TransformersPolicy
    from uivenus.evals.grounding import evaluate_grounding
    from uivenus.evals.grounding_data import load_grounding

    kept = out / SCORES_FILE
    if kept.is_file():
        return json.loads(kept.read_text(encoding="utf-8"))
    policy = _CappedPolicy(TransformersPolicy(HFOptions(str(checkpoint), device="cpu", dtype="float32",
                                                        batch_size=16)), config.eval_max_new_tokens, name)
    try:
        grounding = evaluate_grounding(load_grounding(data["grounding_eval"]), policy, out / "grounding",
                                       batch_size=16, progress=config.progress)
        steps = _step_accuracy(policy, data["steps_eval"], out / "steps")
    finally:
        policy.close()
    scores = {"grounding_accuracy": grounding["accuracy"], "grounding_n": grounding["n"],
              "step_accuracy": steps["accuracy"], "step_n": steps["n"]}
    write_text(kept, json.dumps(scores) + "\n")
    return scores


# --- the comparison -------------------------------------------------------------------------------

def _mean_sd(values: list[float]) -> dict[str, float]:
    return {"mean": statistics.fmean(values), "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "n": len(values)}


def summarise(scores: Mapping[str, Mapping[int, Mapping[str, float]]]) -> dict[str, dict[str, dict[str, float]]]:
    """Per model, each domain's held-out score and their mean over domains as {mean, sd, n}: the sample standard
    deviation over the n seeds the model ran with (sd 0 for one)."""
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for name, by_seed in scores.items():
        runs = list(by_seed.values())
        summary[name] = {domain: _mean_sd([row[key] for row in runs]) for domain, key in DOMAIN_SCORES.items()}
        summary[name]["mean"] = _mean_sd([statistics.fmean(row[key] for key in DOMAIN_SCORES.values())
                                          for row in runs])
    return summary


def _ordered(names: Any) -> list[str]:
    return [m for m in MODELS if m in names] + [m for m in names if m not in MODELS]


def results_table(summary: Mapping[str, Mapping[str, Mapping[str, float]]]) -> str:
    """The comparison as a markdown table: one row per model, each domain's held-out score and the mean over
    domains as mean ± sd over the seeds."""
    columns = [*DOMAIN_SCORES, "mean"]
    lines = ["| model | " + " | ".join(f"{c} (mean ± sd)" for c in columns) + " | seeds |",
             "|---" * (len(columns) + 2) + "|"]
    for name in _ordered(summary):
        row = summary[name]
        cells = [f"{row[c]['mean']:.3f} ± {row[c]['sd']:.3f}" for c in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {int(row['mean']['n'])} |")
    return "\n".join(lines) + "\n"


def _plot(summary: Mapping[str, Mapping[str, Mapping[str, float]]], out: Path) -> Path:
    """Grouped bars: every model's score per domain (and the mean over domains), error bars one sd over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    columns = [*DOMAIN_SCORES, "mean"]
    names = _ordered(summary)
    width = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(2.6 * len(columns) + 2, 4))
    for i, name in enumerate(names):
        xs = [c + (i - (len(names) - 1) / 2) * width for c in range(len(columns))]
        ax.bar(xs, [summary[name][c]["mean"] for c in columns], width,
               yerr=[summary[name][c]["sd"] for c in columns], capsize=3, label=name)
    ax.set_xticks(range(len(columns)), [DOMAIN_SCORES.get(c, "mean over domains") for c in columns])
    ax.set_ylabel("held-out score (mean ± sd over seeds)")
    ax.set_ylim(0, 1)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


# --- the run --------------------------------------------------------------------------------------

def expert_sft_config(config: RecipeConfig, domain: Domain, stage1: Path, source: Mapping[str, Any], out: Path,
                      seed: int) -> SFTConfig:
    """The domain-SFT expert's stage config: `expert_sft_by_domain` over `expert_sft` over `sft`, from `stage1` on
    `source` alone."""
    settings = {**config.sft, **config.expert_sft, **config.expert_sft_by_domain.get(domain.value, {})}
    return stage_config(SFTConfig, settings, f"expert_sft ({domain.value})", model=str(stage1), out_dir=str(out),
                        sources=[{k: v for k, v in source.items() if k != "weight"}], seed=seed,
                        progress=config.progress)


def expert_sft_stage(config: RecipeConfig, domain: Domain, stage1: Path, source: Mapping[str, Any], out: Path,
                     seed: int) -> tuple[Callable[[], Path], int]:
    """A domain-SFT expert (`expert_sft_config`): the run to call and its optimizer steps, so a caller can time it
    and count the budget."""
    from uivenus.train.sft import train_sft

    sft = expert_sft_config(config, domain, stage1, source, out, seed)
    return lambda: train_sft(sft), sft.max_steps or 0


def expert_rl_stage(config: RecipeConfig, domain: Domain, stage1: Path, source: Mapping[str, Any], out: Path,
                    seed: int) -> tuple[Callable[[], Path], int]:
    """A Stage II RL expert from `stage1` on `source` (`rl`, with `rl_by_domain` over it): the run and its steps."""
    from uivenus.train.rl import train_rl

    settings = {**config.rl, **config.rl_by_domain.get(domain.value, {})}
    rl = stage_config(RLConfig, settings, f"rl ({domain.value})", model=str(stage1), out_dir=str(out),
                      sources=[source], domain=domain.value, seed=seed, progress=config.progress)
    return lambda: train_rl(rl), rl.max_steps or 0


#: How an expert is made from Stage I (`RecipeConfig.expert`): the run to call and its optimizer steps.
EXPERT_STAGES: Mapping[str, Callable[..., tuple[Callable[[], Path], int]]] = {"sft": expert_sft_stage,
                                                                               "rl": expert_rl_stage}


def _seed_models(config: RecipeConfig, seed: int, stage1: Path, sources: Mapping[Domain, Mapping[str, Any]],
                 seconds: dict[str, float], log: Callable[[str], None]) -> tuple[dict[str, Path], int]:
    """The experts, Stage III and the baselines from Stage I under one seed; returns the checkpoints and the
    multi-task baseline's budget: as many steps as the experts and one student took."""
    from uivenus.train.merge import average_checkpoints
    from uivenus.train.mopd import train_mopd
    from uivenus.train.sft import train_sft

    out = config.out_dir / f"seed-{seed}"
    mix = list(sources.values())
    ckpt: dict[str, Path] = {}
    budget = 0
    for domain in EXPERT_DOMAINS:
        name = f"expert_{domain.value}"
        log(f"seed {seed}: {config.expert} expert for {domain.value}")
        train, steps = EXPERT_STAGES[config.expert](config, domain, stage1, sources[domain], out / name, seed)
        ckpt[name] = _timed(seconds, f"seed-{seed}/{name}", train)
        budget += steps
    teachers = {d.value: str(ckpt[f"expert_{d.value}"]) for d in EXPERT_DOMAINS}
    for name, variant in STUDENTS.items():
        log(f"seed {seed}, Stage III: {name} distilled from both experts")
        mopd = stage_config(MOPDConfig, {**config.mopd, **variant}, "mopd", model=str(stage1),
                            out_dir=str(out / name), sources=mix, teachers=teachers, seed=seed,
                            progress=config.progress)
        ckpt[name] = _timed(seconds, f"seed-{seed}/{name}", lambda mopd=mopd: train_mopd(mopd))
    budget += mopd.max_steps or 0
    log(f"seed {seed}, baselines: weight average of the experts; multi-task SFT for {budget} steps")
    ckpt["weight_average"] = _timed(seconds, f"seed-{seed}/weight_average", lambda: average_checkpoints(
        [ckpt[f"expert_{d.value}"] for d in EXPERT_DOMAINS], out / "weight_average"))
    multitask = stage_config(SFTConfig, {**config.sft, **config.expert_sft, "max_steps": budget}, "sft",
                             model=str(stage1), out_dir=str(out / "multitask_sft"), sources=mix, seed=seed,
                             progress=config.progress)
    ckpt["multitask_sft"] = _timed(seconds, f"seed-{seed}/multitask_sft", lambda: train_sft(multitask))
    return ckpt, budget


def run_recipe(config: RecipeConfig, *, log: Callable[[str], None] = print) -> RecipeResult:
    """Run Stage I once, then every seed's stages, baselines and evaluations; write `recipe_results.json`, the
    table, the comparison plot and the first seed's training curves."""
    from uivenus.train.plots import plot_metrics
    from uivenus.train.sft import train_sft
    from uivenus.train.tiny import build_tiny_qwen3_vl

    out = config.out_dir
    out.mkdir(parents=True, exist_ok=True)
    save_config(config, out / "recipe.yaml")
    seconds: dict[str, float] = {}
    ckpt: dict[str, dict[int, Path]] = {name: {} for name in MODELS}
    scores: dict[str, dict[int, dict[str, float]]] = {name: {} for name in MODELS}
    paths = _timed(seconds, "data", lambda: recipe_data(config))
    sources = {Domain.GROUNDING: {"kind": "grounding", "annotations": str(paths["grounding_train"]),
                                  "frame_kind": "rel"},
               Domain.WEB: {"kind": "steps", "steps": str(paths["steps_train"])}}
    sources = {d: {**source, "weight": config.mixture[d.value]} if config.mixture else source
               for d, source in sources.items()}
    spec = config.model
    base = out / "base"
    if not (base / "config.json").is_file():
        _timed(seconds, "build", lambda: build_tiny_qwen3_vl(
            base, hidden=spec.hidden, layers=spec.layers, vision_hidden=spec.vision_hidden,
            vision_layers=spec.vision_layers, vocab_size=spec.vocab_size, max_pixels=spec.max_pixels,
            seed=spec.seed, vision_pos_scale=spec.vision_pos_scale))

    log("Stage I: SFT on the mix of both domains (once; reused by every seed and every rerun)")
    sft = stage_config(SFTConfig, config.sft, "sft", model=str(base), out_dir=str(out / "stage1"),
                       sources=list(sources.values()), seed=spec.seed, progress=config.progress)
    stage1 = _timed(seconds, "stage1", lambda: train_sft(sft))
    log("Evaluating stage1 on held-out shapes and sandbox steps")
    stage1_scores = _timed(seconds, "eval_stage1", lambda: evaluate_model(
        "stage1", stage1, paths, config, out / "eval" / "stage1"))
    ckpt["stage1"][spec.seed], scores["stage1"][spec.seed] = stage1, stage1_scores
    budget = 0
    for seed in config.seeds:
        models, budget = _seed_models(config, seed, stage1, sources, seconds, log)
        for name, path in models.items():
            ckpt[name][seed] = path
            log(f"seed {seed}: evaluating {name} on held-out shapes and sandbox steps")
            where = out / "eval" / f"seed-{seed}" / name
            scores[name][seed] = _timed(seconds, f"seed-{seed}/eval_{name}", lambda n=name, p=path, w=where:
                                        evaluate_model(n, p, paths, config, w))
    first = config.seeds[0]
    for name in MODELS:  # the first seed's curves (the other seeds' metrics.jsonl are beside their checkpoints)
        if name != "weight_average":
            path = ckpt[name][spec.seed if name == "stage1" else first]
            plot_metrics(path.parents[2] / "metrics.jsonl", out / "plots" / f"{name}.png", title=name)
    shipped = (ship_checkpoint(ckpt["mopd_student"][first], config.ship_to, config.ship_dtype)
               if config.ship_to else None)
    summary = summarise(scores)
    write_text(out / TABLE_FILE, results_table(summary))
    _plot(summary, out / PLOT_FILE)
    def by_seed(table: Mapping[str, Mapping[int, Any]]) -> dict[str, dict[str, Any]]:
        return {name: {str(seed): value for seed, value in rows.items()} for name, rows in table.items()}

    payload = {"seeds": list(config.seeds), "summary": summary, "scores": by_seed(scores), "seconds": seconds,
               "checkpoints": by_seed({name: {s: str(p) for s, p in rows.items()} for name, rows in ckpt.items()}),
               "budget_steps": {"stage1": sft.max_steps, "stages_2_3": budget, "multitask_sft_extra": budget,
                                "each_student": config.mopd.get("max_steps")},
               "shipped": str(shipped) if shipped else None}
    write_text(out / RESULTS_FILE, json.dumps(payload, indent=2) + "\n")
    return RecipeResult(out, ckpt, scores, summary, seconds, shipped)
