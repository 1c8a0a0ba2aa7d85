"""One ablation of the miniature recipe's MOPD student (docs/results/recipe-shapes/README.md): seed 0's experts as
teachers, from Stage I, the committed run's `mopd` settings with KEY=VALUE overrides, then the recipe's own held-out
evaluation. Needs the finished run in runs/recipe-shapes.

    OMP_NUM_THREADS=1 python bench/recipe_ablation.py T0.3-lr1e-4 sampling.temperature=0.3 lr=0.0001
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import yaml

from uivenus.train.config import from_dict
from uivenus.train.mopd import MOPDConfig, train_mopd
from uivenus.train.recipe import RecipeConfig, _data, _evaluate, _stage

RUN = Path("runs/recipe-shapes")
STAGE1 = RUN / "stage1" / "checkpoints" / "step-0000040" / "model"


def main(name: str, overrides: dict[str, object]) -> None:
    torch.set_num_threads(1)
    config = from_dict(RecipeConfig, yaml.safe_load(Path("configs/nano.yaml").read_text()) | {"out_dir": str(RUN)})
    paths = _data(config)
    sources = [{"kind": "grounding", "annotations": str(paths["grounding_train"]), "frame_kind": "rel",
                "weight": config.mixture["grounding"]},
               {"kind": "steps", "steps": str(paths["steps_train"]), "weight": config.mixture["web"]}]
    teachers = {d: str(RUN / "seed-0" / f"expert_{d}" / "checkpoints" / "step-0000150" / "model")
                for d in ("grounding", "web")}
    settings = json.loads(json.dumps(dict(config.mopd)))
    for key, value in overrides.items():
        *parents, last = key.split(".")
        target = settings
        for parent in parents:
            target = target.setdefault(parent, {})
        target[last] = value
    mopd = _stage(MOPDConfig, settings, "mopd", model=str(STAGE1), out_dir=str(RUN / "ablations" / name),
                  sources=sources, teachers=teachers, seed=0, progress=False)
    checkpoint = train_mopd(mopd)
    print(name, overrides, _evaluate(name, checkpoint, paths, config, RUN / "ablations" / name / "eval"), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], {k: yaml.safe_load(v) for k, v in (a.split("=", 1) for a in sys.argv[2:])})
