"""Is the target's cell *in* the model at the answer position? A linear read-out of each layer's hidden state.

A grounding model that answers one constant cell either never carries the screen's answer to the position where
it predicts the first digit of x, or carries it and does not use it. For each checkpoint this fits a softmax
classifier (cell of the one shape, on fresh anonymous one-shape screens that no model trained on) on every
layer's hidden state there, and prints its held-out accuracy beside the majority-cell baseline, and how far the
state moves between screens against its size (standardising features lets a read-out use even tiny moves).

    OMP_NUM_THREADS=1 python bench/cell_probe.py runs/recipe-shapes/base runs/probes/g2-a1-e600/stage1/...model
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path

import torch

from uivenus.agent.policies.transformers_local import load_processor
from uivenus.synth.shapes import CELL, generate_shapes
from uivenus.train.image_probe import answer_states
from uivenus.train.sources.datasets import grounding_samples
from uivenus.train.trainer import load_model


def read_out(train: torch.Tensor, train_cells: torch.Tensor, test: torch.Tensor, test_cells: torch.Tensor,
             classes: int) -> float:
    """Held-out accuracy of a softmax classifier on standardised features (full batch, Adam, weight decay)."""
    torch.manual_seed(0)
    mean, std = train.mean(0), train.std(0) + 1e-6
    train, test = (train - mean) / std, (test - mean) / std
    head = torch.nn.Linear(train.shape[1], classes)
    optimizer = torch.optim.AdamW(head.parameters(), lr=0.05, weight_decay=0.01)
    for _ in range(300):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(head(train), train_cells).backward()
        optimizer.step()
    with torch.no_grad():
        return float((head(test).argmax(-1) == test_cells).float().mean())


def main(checkpoints: list[Path], grid: int, screens: int, held_out: int, reply_tokens: int) -> None:
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        annotations = generate_shapes(screens, tmp, seed=20_000, grid=grid, shapes=(1, 1), per_sample=1,
                                      anonymous=True)
        records = json.loads(annotations.read_text(encoding="utf-8"))
        samples = list(grounding_samples(annotations))
        cells = torch.tensor([((r["bbox"][1] + r["bbox"][3]) // 2 // CELL) * grid + (r["bbox"][0] + r["bbox"][2]) // 2
                              // CELL for r in records])
        split = screens - held_out
        majority = Counter(cells[split:].tolist()).most_common(1)[0][1] / held_out
        for checkpoint in checkpoints:
            model, processor = load_model(checkpoint, "float32"), load_processor(str(checkpoint))
            states = answer_states(model, processor, samples, reply_tokens)
            accuracy = [round(read_out(states[:split, layer], cells[:split], states[split:, layer], cells[split:],
                                       grid * grid), 3) for layer in range(states.shape[1])]
            # how much the state moves between screens, against its size (a read-out standardises this away)
            spread = (states - states.mean(0)).norm(dim=-1).mean(0) / states.norm(dim=-1).mean(0)
            print(json.dumps({"checkpoint": str(checkpoint), "train": split, "held_out": held_out,
                              "majority": round(majority, 3), "accuracy_by_layer": accuracy,
                              "relative_spread_by_layer": [round(float(v), 5) for v in spread]}), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", type=Path)
    parser.add_argument("--grid", type=int, default=2)
    parser.add_argument("--screens", type=int, default=400)
    parser.add_argument("--held-out", type=int, default=100)
    parser.add_argument("--reply-tokens", type=int, default=1, help="where: after this many target tokens (1: the "
                        "first digit of x, after '[')")
    args = parser.parse_args()
    main(args.checkpoints, args.grid, args.screens, args.held_out, args.reply_tokens)
