"""Drag to match: drop the piece on the outline of the same shape, among distractor outlines."""

from __future__ import annotations

from uivenus.actions.space import Drag
from uivenus.synth.captcha.base import Challenge, Level, Rng, register_family, scatter
from uivenus.synth.captcha.card import CANVAS_WIDTH, Controls, layout_card

CANVAS_HEIGHT = 230
TRAY_WIDTH = 96
SHAPES = ("star5", "heart", "moon", "bolt", "triangle", "poly6", "cross", "arrow", "square", "circle")
#: Outlines that are easy to confuse with each shape (used from medium difficulty up).
LOOKALIKES = {"star5": "star6", "poly6": "poly5", "square": "poly6", "circle": "ring", "heart": "moon",
              "triangle": "arrow", "arrow": "triangle", "bolt": "arrow", "moon": "heart", "cross": "star6"}


@register_family("drag_match", "drag the piece onto the outline of the same shape")
def drag_match(rng: Rng, level: Level) -> Challenge:
    outlines = 1 + min(level.distractors, 4)
    radius = 26 if outlines <= 3 else 23
    card = layout_card(CANVAS_HEIGHT, Controls.NONE)
    shape = rng.choice(SHAPES)
    others = [s for s in SHAPES if s != shape]
    distractors = rng.sample(others, outlines - 1)
    if level.distortion >= 0.3 and LOOKALIKES[shape] not in distractors:
        distractors[0] = LOOKALIKES[shape]
    spots = scatter(rng, outlines, (TRAY_WIDTH + radius + 8, CANVAS_WIDTH - radius - 6),
                    (radius + 6, CANVAS_HEIGHT - radius - 6), 2 * radius + 14)
    rot = round(rng.uniform(-20, 20), 1)
    shapes = [shape, *distractors]
    placed = [{"x": x, "y": y, "shape": s, "rot": rot if s == shape else round(rng.uniform(-20, 20), 1)}
              for (x, y), s in zip(spots, shapes)]
    piece = {"x": TRAY_WIDTH / 2, "y": round(rng.uniform(radius + 20, CANVAS_HEIGHT - radius - 20), 1),
             "shape": shape, "rot": rot}
    rng.shuffle(placed)
    target = next(o for o in placed if o["shape"] == shape)
    decoy = next(o for o in placed if o["shape"] != shape)
    ox, oy = card.canvas.x, card.canvas.y
    start = (ox + piece["x"], oy + piece["y"])
    tolerance = level.tolerance_px + 6
    return Challenge(
        prompt="Drag the piece onto", emphasis="its matching outline", hint="Release it to check.",
        instruction="Complete the security check: drag the coloured piece on the left onto the outline of the same "
                    "shape.",
        card=card, script="drag_match",
        config={"outlines": placed, "piece": piece, "target": [target["x"], target["y"]], "r": radius,
                "tolerance": tolerance, "tray_width": TRAY_WIDTH},
        solution=(Drag(start=start, end=(ox + target["x"], oy + target["y"])),),
        near_miss=(Drag(start=start, end=(ox + decoy["x"], oy + decoy["y"])),),
        answer={"shape": shape, "tolerance": tolerance},
    )
