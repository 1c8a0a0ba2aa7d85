"""Slider puzzle: drag the knob until the piece cut from the picture fills its gap (within a pixel tolerance)."""

from __future__ import annotations

from uivenus.actions.space import Drag
from uivenus.synth.captcha.base import Challenge, Level, Rng, register_family
from uivenus.synth.captcha.card import (
    CANVAS_WIDTH,
    Controls,
    layout_card,
    slider_travel,
)

CANVAS_HEIGHT = 170
PIECE = 44
START_X = 8  # the piece's resting left edge
TAB = 0.17 * PIECE  # the piece's round tabs stick out this far (top and right)


@register_family("slider", "slide the puzzle piece into its gap")
def slider(rng: Rng, level: Level) -> Challenge:
    card = layout_card(CANVAS_HEIGHT, Controls.SLIDER)
    assert card.knob is not None
    travel = slider_travel(card)
    gap_x = round(rng.uniform(START_X + 60, min(START_X + travel, CANVAS_WIDTH - PIECE - TAB - 8)), 1)
    gap_y = round(rng.uniform(TAB + 10, CANVAS_HEIGHT - PIECE - 10), 1)
    decoys = []
    for _ in range(level.distractors // 3):  # fainter gaps elsewhere, never overlapping the real one
        x = rng.uniform(START_X + PIECE + 10, CANVAS_WIDTH - PIECE - TAB - 4)
        if abs(x - gap_x) > PIECE + 12:
            decoys.append([round(x, 1), round(rng.uniform(TAB + 6, CANVAS_HEIGHT - PIECE - 6), 1)])
    shift = gap_x - START_X
    miss = level.tolerance_px + 6
    wrong = shift + miss if shift + miss <= travel else shift - miss
    kx, ky = card.knob.centre
    return Challenge(
        prompt="Drag the slider to fit", emphasis="the puzzle piece", hint="Release when the piece fills the gap.",
        instruction="Complete the security check: drag the slider so the puzzle piece fits exactly into its gap.",
        card=card, script="slider",
        config={"gap": [gap_x, gap_y], "size": PIECE, "start_x": START_X, "decoys": decoys,
                "tolerance": level.tolerance_px, "travel": travel},
        solution=(Drag(start=(kx, ky), end=(round(kx + shift, 2), ky)),),
        near_miss=(Drag(start=(kx, ky), end=(round(kx + wrong, 2), ky)),),
        answer={"offset_px": shift, "tolerance_px": level.tolerance_px},
    )
