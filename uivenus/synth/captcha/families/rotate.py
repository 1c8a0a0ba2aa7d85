"""Rotate to upright: drag the knob (its full travel turns the picture once around) until the picture stands upright."""

from __future__ import annotations

from uivenus.actions.space import Drag
from uivenus.synth.captcha.base import Challenge, Level, Rng, register_family
from uivenus.synth.captcha.card import Controls, layout_card, slider_travel

CANVAS_HEIGHT = 210
DIAMETER = 180


@register_family("rotate", "turn a picture upright with the slider")
def rotate(rng: Rng, level: Level) -> Challenge:
    card = layout_card(CANVAS_HEIGHT, Controls.SLIDER)
    assert card.knob is not None
    travel = slider_travel(card)
    theta = round(rng.uniform(40, 320), 1)  # how far the picture is turned clockwise from upright
    turn = (360 - theta) % 360

    def knob_to(degrees: float) -> Drag:
        kx, ky = card.knob.centre
        return Drag(start=(kx, ky), end=(round(kx + degrees * travel / 360, 2), ky))

    miss = level.tolerance_deg + 8
    wrong = turn + miss if turn + miss <= 360 else turn - miss
    return Challenge(
        prompt="Drag the slider to turn", emphasis="the picture upright", hint="Release when it stands upright.",
        instruction="Complete the security check: drag the slider until the picture is upright.",
        card=card, script="rotate",
        config={"theta": theta, "tolerance": level.tolerance_deg, "travel": travel, "diameter": DIAMETER},
        solution=(knob_to(turn),), near_miss=(knob_to(wrong),),
        answer={"rotated_deg": theta, "turn_deg": turn, "tolerance_deg": level.tolerance_deg},
    )
