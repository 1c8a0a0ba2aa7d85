"""Does the screen move a checkpoint's answer? `image_sensitivity` averaged over pairs of held-out grounding screens.

For each checkpoint: the next-token change at the first digit of the reply's x (after "[") when only the screen changes
and when only the instruction changes (mean over pairs of consecutive distinct screens), and the visual tokens' spread
and scale against the text embeddings, as the language model receives them.

    OMP_NUM_THREADS=1 python bench/image_sensitivity.py runs/recipe-shapes/base runs/recipe-shapes/stage1/...model
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import torch

from uivenus.agent.policies.transformers_local import load_processor
from uivenus.train.image_probe import image_sensitivity
from uivenus.train.sources.datasets import grounding_samples
from uivenus.train.trainer import load_model

ANNOTATIONS = Path("runs/recipe-shapes/data/grounding_eval/annotations.json")


def main(checkpoints: list[Path], annotations: Path, pairs: int, reply_tokens: int) -> None:
    torch.set_num_threads(1)
    records = json.loads(annotations.read_text(encoding="utf-8"))
    samples = list(grounding_samples(annotations))
    firsts, seen = [], set()  # one instruction per screen, so every pair swaps two different screens
    for record, sample in zip(records, samples, strict=True):
        if record["img_filename"] not in seen:
            seen.add(record["img_filename"])
            firsts.append(sample)
    for checkpoint in checkpoints:
        model, processor = load_model(checkpoint, "float32"), load_processor(str(checkpoint))
        figures = [dataclasses.asdict(image_sensitivity(model, processor, firsts[i], firsts[i + 1], reply_tokens))
                   for i in range(min(pairs, len(firsts) - 1))]
        mean = {name: round(sum(f[name] for f in figures) / len(figures), 6) for name in figures[0]}
        print(json.dumps({"checkpoint": str(checkpoint), "pairs": len(figures), "reply_tokens": reply_tokens,
                          **mean}), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", type=Path)
    parser.add_argument("--annotations", type=Path, default=ANNOTATIONS)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--reply-tokens", type=int, default=1, help="where: after this many target tokens (1: the "
                        "first digit of x, after '[')")
    args = parser.parse_args()
    main(args.checkpoints, args.annotations, args.pairs, args.reply_tokens)
