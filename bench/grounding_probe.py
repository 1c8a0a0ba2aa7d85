"""A short probe of the miniature recipe's grounding domain: does a domain-SFT grounding expert really ground?

With the committed recipe config (configs/nano.yaml) and dotted KEY=VALUE overrides of its grounding data and stage
settings (e.g. grounding.grid=2 expert_sft.max_steps=400), into runs/probes/NAME: the recipe's data, its Stage I
on the mix (from the committed run's base model, or one built to `model.*` when those are overridden), the
grounding expert from that Stage I, and the recipe's held-out evaluation of both. Prints each model's grounding
accuracy and the distribution of the grid cells its points fall in, because a model that answers one constant
cell scores the share of targets in that cell, not grounding.

    OMP_NUM_THREADS=1 python bench/grounding_probe.py grid2 grounding.grid=2 grounding.shapes=[2,4]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import torch

from uivenus.synth.shapes import CELL
from uivenus.train.config import load_config
from uivenus.train.recipe import RecipeConfig, evaluate_model, expert_sft_stage, recipe_data, stage_config
from uivenus.train.samples import Domain
from uivenus.train.sft import SFTConfig, train_sft
from uivenus.train.tiny import build_tiny_qwen3_vl

BASE = Path("runs/recipe-shapes/base")


def cells(results: Path, grid: int) -> dict[str, int]:
    """How many held-out points fall in each grid cell ("row,col"; "none" for no point)."""
    items = json.loads(results.read_text(encoding="utf-8"))["items"]
    counts = Counter("none" if item["point"] is None else
                     f"{min(int(item['point'][1]) // CELL, grid - 1)},{min(int(item['point'][0]) // CELL, grid - 1)}"
                     for item in items)
    return dict(counts.most_common())


def main(name: str, overrides: list[str], base: Path = BASE) -> None:
    torch.set_num_threads(1)
    out = Path("runs/probes") / name
    config = load_config("configs/nano.yaml", RecipeConfig, [*overrides, f"out_dir={out}", "seeds=[0]"])
    paths = recipe_data(config)
    if any(o.startswith("model.") for o in overrides):  # another size: its own base model, as the recipe builds it
        spec, base = config.model, out / "base"
        if not (base / "config.json").is_file():
            build_tiny_qwen3_vl(base, hidden=spec.hidden, layers=spec.layers, vision_hidden=spec.vision_hidden,
                                vision_layers=spec.vision_layers, vocab_size=spec.vocab_size,
                                max_pixels=spec.max_pixels, seed=spec.seed, vision_pos_scale=spec.vision_pos_scale)
    grounding = {"kind": "grounding", "annotations": str(paths["grounding_train"]), "frame_kind": "rel",
                 "weight": config.mixture["grounding"]}
    web = {"kind": "steps", "steps": str(paths["steps_train"]), "weight": config.mixture["web"]}
    stage1 = train_sft(stage_config(SFTConfig, config.sft, "sft", model=str(base), out_dir=str(out / "stage1"),
                                    sources=[grounding, web], seed=config.model.seed, progress=False))
    train, _ = expert_sft_stage(config, Domain.GROUNDING, stage1, grounding, out / "expert_grounding", 0)
    expert = train()
    report = {"overrides": overrides}
    for model, checkpoint in (("stage1", stage1), ("expert_grounding", expert)):
        scores = evaluate_model(model, checkpoint, paths, config, out / "eval" / model)
        report[model] = {"grounding": scores["grounding_accuracy"], "steps": scores["step_accuracy"],
                         "cells": cells(out / "eval" / model / "grounding" / "grounding_results.json",
                                        config.grounding.grid)}
    report["targets"] = cells_of_targets(paths["grounding_eval"], config.grounding.grid)
    (out / "probe.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(name, json.dumps(report), flush=True)


def cells_of_targets(annotations: Path, grid: int) -> dict[str, int]:
    """How many held-out targets lie in each grid cell: what a constant answer would score, cell by cell."""
    records = json.loads(annotations.read_text(encoding="utf-8"))
    counts = Counter(f"{min((r['bbox'][1] + r['bbox'][3]) // 2 // CELL, grid - 1)},"
                     f"{min((r['bbox'][0] + r['bbox'][2]) // 2 // CELL, grid - 1)}" for r in records)
    return dict(counts.most_common())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the probe's directory under runs/probes/")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="recipe settings to change (dotted)")
    parser.add_argument("--base", type=Path, default=BASE, help="the untrained model Stage I starts from")
    args = parser.parse_intermixed_args()
    main(args.name, args.overrides, args.base)
