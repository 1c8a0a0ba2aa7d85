"""Odd one out: a grid of shapes that agree but for one; click the one that differs."""

from __future__ import annotations

from uivenus.actions.space import Click
from uivenus.synth.captcha.base import Challenge, Level, Rng, register_family
from uivenus.synth.captcha.card import CANVAS_WIDTH, Controls, layout_card

#: (common shape, odd shape, odd is the common one turned upside down) by how alike they are.
EASY_SHAPES = ("circle", "square", "triangle", "star5", "heart", "cross", "moon")
MEDIUM_PAIRS = (("star5", "poly5"), ("square", "poly6"), ("heart", "moon"), ("triangle", "arrow"),
                ("circle", "ring"), ("bolt", "arrow"))
HARD_PAIRS = (("star5", "star6"), ("poly5", "poly6"), ("arrow", "arrow"), ("heart", "heart"))
#: Degrees of tilt allowed when orientation is what tells the shapes apart.
TILT = 15


def _pair(rng: Rng, level: Level) -> tuple[str, str]:
    if level.distortion < 0.3:
        common, odd = rng.sample(EASY_SHAPES, 2)
    else:
        common, odd = rng.choice(MEDIUM_PAIRS if level.distortion < 0.7 else HARD_PAIRS)
    return (common, odd) if rng.random() < 0.5 or common == odd else (odd, common)


@register_family("odd_one_out", "click the one shape that differs from the others")
def odd_one_out(rng: Rng, level: Level) -> Challenge:
    count = 4 if level.distractors < 3 else 6 if level.distractors < 6 else 9
    cols = 2 if count == 4 else 3
    rows = count // cols
    height = 200 if rows == 2 else 270
    radius = 30 if count <= 6 else 26
    card = layout_card(height, Controls.NONE)
    common, odd = _pair(rng, level)
    flipped = common == odd  # told apart by orientation alone
    odd_index = rng.randint(0, count - 1)
    cell_w, cell_h = CANVAS_WIDTH / cols, height / rows
    spread = 0.12 * level.distortion
    items = []
    for i in range(count):
        x = (i % cols + 0.5 + rng.uniform(-spread, spread)) * cell_w
        y = (i // cols + 0.5 + rng.uniform(-spread, spread)) * cell_h
        rot = rng.uniform(-TILT, TILT) if flipped else rng.uniform(0, 360)
        if flipped and i == odd_index:
            rot += 180
        items.append({"x": round(x, 1), "y": round(y, 1), "r": radius, "rot": round(rot, 1),
                      "shape": odd if i == odd_index else common})
    ox, oy = card.canvas.x, card.canvas.y
    target = items[odd_index]
    other = items[(odd_index + 1) % count]
    return Challenge(
        prompt="Click the shape that is", emphasis="different from the others", hint="Your first click counts.",
        instruction="Complete the security check: click the one shape that is different from all the others.",
        card=card, script="odd_one_out",
        config={"items": items, "odd": [target["x"], target["y"]], "radius": radius + 4,
                "one_colour": level.noise < 0.3},
        solution=(Click(point=(ox + target["x"], oy + target["y"])),),
        near_miss=(Click(point=(ox + other["x"], oy + other["y"])),),
        answer={"index": odd_index, "shape": odd, "others": common, "upside_down": flipped},
    )
