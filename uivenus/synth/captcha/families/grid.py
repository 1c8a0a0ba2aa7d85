"""Grid selection: tiles showing marks; select every tile with an X (and only those), then Verify."""

from __future__ import annotations

from uivenus.actions.space import Click
from uivenus.synth.captcha.base import Challenge, Level, Rng, register_family
from uivenus.synth.captcha.card import CANVAS_WIDTH, Controls, layout_card

GAP = 4
#: Marks on the other tiles: plain shapes when easy, strokes that resemble an X when hard.
DISTRACTORS = (
    (0.3, ("circle", "square", "heart", "triangle")),
    (0.7, ("cross", "ring", "triangle", "vee")),
    (1.0, ("cross", "slash", "vee", "ell")),
)


@register_family("grid", "select every tile that shows an X, then Verify")
def grid(rng: Rng, level: Level) -> Challenge:
    size = 3 if level.distractors < 6 else 4
    cell = (CANVAS_WIDTH - (size + 1) * GAP) / size
    card = layout_card(CANVAS_WIDTH, Controls.VERIFY)
    assert card.submit is not None
    tiles = size * size
    marked = sorted(rng.sample(range(tiles), rng.randint(2, size + 1)))
    pool = next(shapes for limit, shapes in DISTRACTORS if level.distortion <= limit)
    jitter = 4 + 14 * level.distortion  # degrees; an X stays near 45, a plus near 0, so they never meet
    cells = [{"shape": "xmark" if i in marked else rng.choice(pool), "rot": round(rng.uniform(-jitter, jitter), 1)}
             for i in range(tiles)]

    def centre(i: int) -> tuple[float, float]:
        col, row = i % size, i // size
        return (round(card.canvas.x + GAP + col * (cell + GAP) + cell / 2, 2),
                round(card.canvas.y + GAP + row * (cell + GAP) + cell / 2, 2))

    verify = Click(point=card.submit.centre)
    return Challenge(
        prompt="Select all squares with", emphasis="an X mark", hint="Click Verify once none are left.",
        instruction="Complete the security check: select every square that shows an X mark, then press Verify.",
        card=card, script="grid",
        config={"size": size, "gap": GAP, "cell": cell, "cells": cells, "answer": marked},
        solution=(*(Click(point=centre(i)) for i in marked), verify),
        near_miss=(*(Click(point=centre(i)) for i in marked[:-1]), verify),
        answer={"tiles": marked, "size": size},
    )
