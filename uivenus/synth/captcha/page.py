"""Compose a self-contained CAPTCHA page: a realistic scene, the challenge card placed on it, and the scripts.

The page has no external resources: CSS, the shared runtime, the family's script and its JSON config are
inlined, and all drawing is seeded, so the same inputs give the same bytes. The card sits at a position the
composer chooses in Python (inline beside the form, or as a modal over a dimmed page), which is what lets
the verified solution be computed in Python and executed as screen pixels.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from html import escape
from importlib import resources
from typing import Any

from uivenus.actions.space import Platform
from uivenus.synth.captcha.base import Card, Challenge, Rng
from uivenus.synth.captcha.card import card_html
from uivenus.synth.captcha.scenes import BRANDS, SCENES, Brand


@dataclass(frozen=True)
class Layout:
    """A page design size: the browser mode that shows it, its viewport and the platform it counts as."""

    name: str  # BrowserConfig mode
    viewport: tuple[int, int]
    platform: Platform


#: The viewports pages are designed for (BrowserEnv's desktop and phone modes).
LAYOUTS: Mapping[str, Layout] = {
    "desktop": Layout("desktop", (1280, 720), Platform.WEB),
    "phone": Layout("phone", (412, 915), Platform.MOBILE),
}

_DESKTOP_COLUMN_X = 660  # the form column ends left of this; inline cards go right of it
_PHONE_CONTENT_TOP = 310  # inline cards on a phone start below the heading and first fields
_PHONE_BUTTON_SPACE = 88  # the scene's primary button is pinned to the bottom of a phone screen


def _between(rng: Rng, low: float, high: float) -> int:
    return round(rng.uniform(low, max(low, high)))


def _inline(rng: Rng, layout: Layout, card: Card) -> tuple[int, int]:
    width, height = layout.viewport
    if layout.name == "phone":
        return (_between(rng, 12, width - card.width - 12),
                _between(rng, _PHONE_CONTENT_TOP, height - card.height - _PHONE_BUTTON_SPACE))
    return (_between(rng, _DESKTOP_COLUMN_X, width - card.width - 56),
            _between(rng, 84, height - card.height - 20))


def _modal(rng: Rng, layout: Layout, card: Card) -> tuple[int, int]:
    width, height = layout.viewport
    cx, cy = (width - card.width) / 2, (height - card.height) / 2
    jitter_x = min(40, cx - 8)
    return (_between(rng, cx - jitter_x, cx + jitter_x),
            _between(rng, max(8, cy - 24), min(height - card.height - 8, cy + 24)))


#: Where a card goes on the page: beside the form, or in a dialog over the dimmed page.
PLACEMENTS: Mapping[str, Callable[[Rng, Layout, Card], tuple[int, int]]] = {
    "inline": _inline,
    "modal": _modal,
}


@dataclass(frozen=True)
class Page:
    html: str
    origin: tuple[int, int]  # the card's top-left corner on the page
    scene: str
    placement: str
    brand: str


@cache
def asset(name: str) -> str:
    """A bundled asset (CSS or a page script) as text."""
    return resources.files("uivenus.synth.captcha").joinpath("assets", name).read_text(encoding="utf-8")


def _json_script(data: Mapping[str, Any]) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def compose(challenge: Challenge, rng: Rng, layout: Layout, config: Mapping[str, Any]) -> Page:
    """The page HTML for `challenge` with its scene, brand and placement drawn from `rng`."""
    scene_name = rng.choice(sorted(SCENES))
    brand: Brand = rng.choice(BRANDS)
    placement = "modal" if rng.random() < 0.3 else "inline"
    scene = SCENES[scene_name](rng, brand)
    left, top = PLACEMENTS[placement](rng, layout, challenge.card)
    width, height = layout.viewport
    page_config = {**config, **challenge.config, "script": challenge.script,
                   "canvas": [challenge.card.canvas.w, challenge.card.canvas.h],
                   "knob_left": challenge.card.knob.x if challenge.card.knob else None}
    shade = '<div class="cap-shade"></div>' if placement == "modal" else ""
    html = (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta name="viewport" content="width={width}, initial-scale=1">'
        f"<title>{escape(scene.title)}</title><style>{asset('page.css')}</style></head>\n"
        f'<body class="layout-{layout.name} place-{placement} scene-{scene_name}" '
        f'style="width:{width}px;height:{height}px;--accent:{brand.accent};--card-top:{top}px">\n'
        f"{scene.body}\n{shade}\n{card_html(challenge, left, top, brand.name)}\n"
        f'<script id="captcha-config" type="application/json">{_json_script(page_config)}</script>\n'
        f"<script>{asset('runtime.js')}</script>\n<script>{asset(challenge.script + '.js')}</script>\n"
        "<script>CaptchaKit.start();</script>\n</body></html>\n"
    )
    return Page(html, (left, top), scene_name, placement, brand.name)
