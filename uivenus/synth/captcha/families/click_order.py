"""Click in order: characters or icons scattered over a busy picture; click the named ones in the given order."""

from __future__ import annotations

from uivenus.actions.space import Click
from uivenus.synth.captcha.base import Challenge, Level, Rng, register_family, scatter
from uivenus.synth.captcha.card import CANVAS_WIDTH, Controls, layout_card

CANVAS_HEIGHT = 210
MARGIN = 24
#: Characters that read unambiguously at any angle (no 6/9, M/W, N/Z, 0/O, 1/I).
GLYPHS = "ABCDEFGHJKLPQRTUVXY2345789"
#: Icon shapes (page shape names) and what the prompt calls them.
ICONS = {"star5": "star", "heart": "heart", "moon": "moon", "bolt": "bolt", "triangle": "triangle",
         "square": "square", "circle": "circle", "cross": "plus", "ring": "ring", "poly6": "hexagon",
         "arrow": "arrow"}


@register_family("click_order", "click characters or icons in a given order, then Verify")
def click_order(rng: Rng, level: Level) -> Challenge:
    targets = 3 if level.distractors < 3 else 4
    count = targets + level.distractors
    card = layout_card(CANVAS_HEIGHT, Controls.VERIFY)
    assert card.submit is not None
    points = scatter(rng, count, (MARGIN, CANVAS_WIDTH - MARGIN), (MARGIN, CANVAS_HEIGHT - MARGIN), 48)
    if rng.random() < 0.5:
        labels = rng.sample(GLYPHS, count)
        items = [{"x": x, "y": y, "label": label} for (x, y), label in zip(points, labels)]
        names = labels[:targets]
        emphasis, kind = "  ".join(names), "characters"
    else:
        icons = rng.sample(sorted(ICONS), count)
        items = [{"x": x, "y": y, "icon": icon} for (x, y), icon in zip(points, icons)]
        names = [ICONS[icon] for icon in icons[:targets]]
        emphasis, kind = ", ".join(names), "icons"
    ox, oy = card.canvas.x, card.canvas.y
    order = [(ox + x, oy + y) for x, y in points[:targets]]
    swapped = [order[1], order[0], *order[2:]]
    radius = level.tolerance_px + 12
    return Challenge(
        prompt="Click in this order:", emphasis=emphasis, hint="Then press Verify.",
        instruction=f"Complete the security check: click the {kind} {', '.join(names)} in this order, "
                    "then press Verify.",
        card=card, script="click_order",
        config={"items": items, "targets": [[x, y] for x, y in points[:targets]], "radius": radius},
        solution=(*(Click(point=p) for p in order), Click(point=card.submit.centre)),
        near_miss=(*(Click(point=p) for p in swapped), Click(point=card.submit.centre)),
        answer={"order": names, "kind": kind, "radius": radius},
    )
