"""The CAPTCHA families; importing this package registers each of them in `FAMILIES`."""

from uivenus.synth.captcha.families import (
    click_order,
    drag_match,
    grid,
    odd_one_out,
    rotate,
    slider,
    typed,
)

__all__ = ["click_order", "drag_match", "grid", "odd_one_out", "rotate", "slider", "typed"]
