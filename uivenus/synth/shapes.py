"""Grounding by what a tiny vision encoder can see: "click the blue triangle" among a few large coloured shapes.

The miniature recipe needs a grounding domain a ~1M-parameter Qwen3-VL learns in minutes of CPU; reading small
text labels is beyond it, colour and outline at one shape per 32x32 image token is not. Each screen is a grid of
32-pixel cells (one merged Qwen3-VL image token each), some holding one shape whose colour-and-kind pair is
unique on the screen, so every instruction has exactly one answer. Written as the `uivenus` grounding format
(`annotations.json` + `images/`), which the `grounding` training source and `uivenus.evals.grounding` read.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from uivenus.synth.grounding.export import write_annotations

__all__ = ["CELL", "COLOURS", "SHAPES", "generate_shapes"]

#: Pixels per grid cell: one merged image token of Qwen3-VL (patch 16, merge 2).
CELL = 32
COLOURS: Mapping[str, tuple[int, int, int]] = {
    "red": (220, 40, 40), "green": (40, 170, 60), "blue": (40, 80, 220), "yellow": (235, 200, 30),
    "purple": (150, 60, 190), "orange": (245, 130, 20),
}
Box = tuple[int, int, int, int]
#: How each kind of shape is drawn inside its box.
SHAPES: Mapping[str, Callable[[ImageDraw.ImageDraw, Box, tuple[int, int, int]], None]] = {
    "circle": lambda d, b, c: d.ellipse(b, fill=c),
    "square": lambda d, b, c: d.rectangle(b, fill=c),
    "triangle": lambda d, b, c: d.polygon([((b[0] + b[2]) / 2, b[1]), (b[2], b[3]), (b[0], b[3])], fill=c),
}


def _screen(rng: random.Random, grid: int, count: int, name_kind: bool) -> list[tuple[str, str, Box]]:
    """`count` shapes in distinct cells, no two with the same colour and kind (the same colour, without
    `name_kind`)."""
    pairs = (rng.sample([(c, s) for c in COLOURS for s in SHAPES], count) if name_kind
             else [(c, rng.choice(list(SHAPES))) for c in rng.sample(list(COLOURS), count)])
    placed = []
    for (colour, kind), cell in zip(pairs, rng.sample(range(grid * grid), count), strict=True):
        size = rng.randint(CELL - 10, CELL - 4)
        x = (cell % grid) * CELL + rng.randint(2, CELL - size - 2)
        y = (cell // grid) * CELL + rng.randint(2, CELL - size - 2)
        placed.append((colour, kind, (x, y, x + size, y + size)))
    return placed


def generate_shapes(n: int, out: Path | str, *, seed: int = 0, grid: int = 4, shapes: tuple[int, int] = (4, 7),
                    per_sample: int = 3, name_kind: bool = True, anonymous: bool = False) -> Path:
    """`n` screens of `grid` x `grid` cells (`CELL` pixels each) with `shapes` (min, max) shapes, `per_sample`
    instructions each (distinct targets); returns the `annotations.json` path. The same seed gives the same files.
    `name_kind` False names the colour alone ("click the blue shape"; colours then differ on a screen): one
    visual attribute instead of two, the easier task. `anonymous` says only "click the shape" and needs one shape
    per screen: the answer then depends on the image alone, the simplest screen-dependent task."""
    if anonymous and shapes[1] != 1:
        raise ValueError("anonymous instructions need exactly one shape per screen (shapes=(1, 1)); "
                         f"got shapes={shapes}")
    most = min(grid * grid, len(COLOURS) if not name_kind else len(COLOURS) * len(SHAPES))
    if not (1 <= shapes[0] <= shapes[1] <= most) or not 1 <= per_sample <= shapes[0]:
        raise ValueError(f"need 1 <= min shapes <= max shapes <= {most} and 1 <= per_sample <= min shapes; got "
                         f"shapes={shapes}, per_sample={per_sample}")
    out = Path(out)
    (out / "images").mkdir(parents=True, exist_ok=True)
    side = grid * CELL
    records: list[dict[str, Any]] = []
    for index in range(n):
        rng = random.Random(f"shapes:{seed}:{index}")
        placed = _screen(rng, grid, rng.randint(*shapes), name_kind)
        image = Image.new("RGB", (side, side), (245, 245, 245))
        draw = ImageDraw.Draw(image)
        for colour, kind, box in placed:
            SHAPES[kind](draw, box, COLOURS[colour])
        name = f"shapes_{seed}_{index:06d}"
        image.save(out / "images" / f"{name}.png")
        for k, (colour, kind, box) in enumerate(rng.sample(placed, per_sample)):
            instruction = "click the shape" if anonymous else f"click the {colour} {kind if name_kind else 'shape'}"
            records.append({"id": f"{name}_{k}", "img_filename": f"{name}.png", "bbox": list(box),
                            "instruction": instruction, "data_type": "icon",
                            "platform": "web", "img_size": [side, side], "instruction_kind": "visual",
                            "negative": False})
    return write_annotations(out, records)
