"""One ablation of the miniature recipe's MOPD student (docs/results/recipe-shapes/README.md), into
RUN/ablations/NAME (`--run`, default runs/recipe-shapes, trained with `--config`, default configs/nano.yaml; or
OUT/NAME with `--out OUT`, to leave a run that is not yours read-only), then the recipe's own held-out evaluation.
Needs the finished run there.

By default a MOPD student: the committed run's `mopd` settings with KEY=VALUE overrides, from Stage I (the committed
run's, or another with --stage1), seed 0's experts as teachers (or `--teachers DIR`, which holds `expert_grounding`
and `expert_web`). `--train-stage1` trains a Stage I instead (the committed `sft` settings with the overrides, from
the run's base model, on the same mix), and `--train-expert DOMAIN` one domain-SFT expert from --stage1 (the
recipe's own expert stage), so that students and teachers can start from a stronger Stage I. `seed=N` sets the
stage's seed (default: the config's model seed, 0). Stage I and the experts are each stage's last checkpoint.

    OMP_NUM_THREADS=1 python bench/recipe_ablation.py T0.3-lr1e-4 sampling.temperature=0.3 lr=0.0001
    OMP_NUM_THREADS=1 python bench/recipe_ablation.py --train-stage1 stage1-150 max_steps=150
    OMP_NUM_THREADS=1 python bench/recipe_ablation.py s150-mopd \
        --stage1 runs/recipe-shapes/ablations/stage1-150/checkpoints/step-0000150/model
    OMP_NUM_THREADS=1 python bench/recipe_ablation.py --config configs/nano_grounded.yaml \
        --run runs/recipe-grounded T0.3 sampling.temperature=0.3
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import torch
import yaml

from uivenus.train.config import from_dict
from uivenus.train.mopd import MOPDConfig, train_mopd
from uivenus.train.recipe import RecipeConfig, evaluate_model, expert_sft_stage, recipe_data, stage_config
from uivenus.train.samples import Domain
from uivenus.train.sft import SFTConfig, train_sft



def _last_checkpoint(stage: Path) -> Path:
    """The model of a stage's last checkpoint (`stage/checkpoints/step-N/model`)."""
    steps = sorted((stage / "checkpoints").glob("step-*"))
    if not steps:
        raise SystemExit(f"no checkpoint under {stage}/checkpoints: train that stage first")
    return steps[-1] / "model"


def _override(settings: dict[str, Any], overrides: dict[str, object]) -> dict[str, Any]:
    """A copy of a stage's settings with dotted KEY=VALUE overrides applied."""
    settings = json.loads(json.dumps(settings))
    for key, value in overrides.items():
        *parents, last = key.split(".")
        target = settings
        for parent in parents:
            target = target.setdefault(parent, {})
        target[last] = value
    return settings


def main(name: str, overrides: dict[str, object], config_path: Path, run: Path, stage1: Path | None,
         teachers: Path | None, train_stage1: bool, train_expert: str | None, out_root: Path | None = None) -> None:
    torch.set_num_threads(1)
    config = from_dict(RecipeConfig, yaml.safe_load(config_path.read_text()) | {"out_dir": str(run)})
    stage1 = stage1 or _last_checkpoint(run / "stage1")
    teachers = teachers or run / "seed-0"
    paths = recipe_data(config)
    sources = {"grounding": {"kind": "grounding", "annotations": str(paths["grounding_train"]), "frame_kind": "rel",
                             "weight": config.mixture["grounding"]},
               "web": {"kind": "steps", "steps": str(paths["steps_train"]), "weight": config.mixture["web"]}}
    out = (out_root or run / "ablations") / name
    seed = int(overrides.pop("seed", config.model.seed))
    if train_stage1:
        sft = stage_config(SFTConfig, _override(dict(config.sft), overrides), "sft", model=str(run / "base"),
                           out_dir=str(out), sources=list(sources.values()), seed=seed, progress=False)
        checkpoint = train_sft(sft)
    elif train_expert:
        train, _ = expert_sft_stage(config, Domain(train_expert), stage1, sources[train_expert], out, seed)
        checkpoint = train()
    else:
        experts = {d: str(_last_checkpoint(teachers / f"expert_{d}")) for d in sources}
        mopd = stage_config(MOPDConfig, _override(dict(config.mopd), overrides), "mopd", model=str(stage1),
                            out_dir=str(out), sources=list(sources.values()), teachers=experts, seed=seed,
                            progress=False)
        checkpoint = train_mopd(mopd)
    scores = evaluate_model(name, checkpoint, paths, config, out / "eval")
    print(name, overrides, f"seed {seed}", scores, flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the ablation's directory under RUN/ablations/")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="the stage's settings to change")
    parser.add_argument("--config", type=Path, default=Path("configs/nano.yaml"), help="the run's recipe config")
    parser.add_argument("--run", type=Path, default=Path("runs/recipe-shapes"), help="the finished recipe run")
    parser.add_argument("--stage1", type=Path, help="the student's (or expert's) starting model (default: the run's "
                        "Stage I)")
    parser.add_argument("--out", type=Path, help="where NAME goes (default: RUN/ablations)")
    parser.add_argument("--teachers", type=Path, help="holds expert_grounding, expert_web (default: RUN/seed-0)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--train-stage1", action="store_true", help="train a Stage I instead of a student")
    what.add_argument("--train-expert", choices=("grounding", "web"), help="train this domain's expert instead")
    args = parser.parse_intermixed_args()
    main(args.name, {k: yaml.safe_load(v) for k, v in (a.split("=", 1) for a in args.overrides)}, args.config,
         args.run, args.stage1, args.teachers, args.train_stage1, args.train_expert, args.out)
