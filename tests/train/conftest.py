"""Fixtures shared by the training tests: small grounding screens the tiny model reads in milliseconds."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

#: The colours of the squares, in turn; each instruction names its square's colour.
COLOURS = ("red", "blue", "green", "orange")
#: The most screens `grounding_squares` makes (the squares step right and down until the edge).
MAX_SCREENS = 9


def _grounding_squares(root: Path, n: int = 4) -> Path:
    if not 1 <= n <= MAX_SCREENS:
        raise ValueError(f"grounding_squares makes 1 to {MAX_SCREENS} screens, not {n}")
    (root / "images").mkdir(parents=True)
    records = []
    for i in range(n):
        image = Image.new("RGB", (64, 64), "white")
        x, y = 10 + 4 * i, 12 + 3 * i
        ImageDraw.Draw(image).rectangle([x, y, x + 16, y + 16], fill=COLOURS[i % 4])
        image.save(root / "images" / f"g{i}.png")
        records.append({"id": f"g{i}", "img_filename": f"g{i}.png", "bbox": [x, y, x + 16, y + 16],
                        "instruction": f"the {COLOURS[i % 4]} square"})
    (root / "annotations.json").write_text(json.dumps(records))
    return root / "annotations.json"


@pytest.fixture
def grounding_squares() -> Callable[..., Path]:
    """`make(root, n=4)`: n ScreenSpot-style records under `root` (64×64 screens, one coloured 16-pixel square each),
    returning the annotations path. Every target centre has three digits per coordinate in the relative frame, so
    replies to every screen are the same number of tokens (the two-process test needs equal-length replies)."""
    return _grounding_squares
