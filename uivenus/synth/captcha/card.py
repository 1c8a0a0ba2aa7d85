"""The challenge card every family shares (header, canvas, controls, footer): its geometry and its HTML.

Geometry is decided here, once, in CSS pixels; the HTML places every element absolutely at those numbers,
so the solution a family computes in Python lands exactly where the browser draws the control.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from html import escape

from uivenus.synth.captcha.base import Box, Card, Challenge

CARD_WIDTH = 340
PAD = 20
HEADER_HEIGHT = 76
CANVAS_TOP = HEADER_HEIGHT + 14
CANVAS_WIDTH = CARD_WIDTH - 2 * PAD
ROW_GAP = 12
FOOTER_HEIGHT = 52
INPUT_HEIGHT = 40
TRACK_HEIGHT = 44
KNOB_WIDTH = 52
SUBMIT_WIDTH = 98
LONG_EMPHASIS = 22  # characters; a longer header line (a list of icon names) is set smaller to fit the card


class Controls(StrEnum):
    """What sits under the canvas: an answer field, a slider, a Verify button in the footer, or nothing."""

    TYPED = "typed"
    SLIDER = "slider"
    VERIFY = "verify"
    NONE = "none"


def layout_card(canvas_height: int, controls: Controls) -> Card:
    """The card's boxes for a canvas of `canvas_height` and the given controls."""
    canvas = Box(PAD, CANVAS_TOP, CANVAS_WIDTH, canvas_height)
    y = CANVAS_TOP + canvas_height + ROW_GAP
    parts: dict[str, Box] = {}
    if controls is Controls.TYPED:
        parts["input"] = Box(PAD, y, CANVAS_WIDTH - SUBMIT_WIDTH - 10, INPUT_HEIGHT)
        parts["submit"] = Box(CARD_WIDTH - PAD - SUBMIT_WIDTH, y, SUBMIT_WIDTH, INPUT_HEIGHT)
        y += INPUT_HEIGHT + ROW_GAP
    elif controls is Controls.SLIDER:
        parts["track"] = Box(PAD, y, CANVAS_WIDTH, TRACK_HEIGHT)
        parts["knob"] = Box(PAD, y, KNOB_WIDTH, TRACK_HEIGHT)
        y += TRACK_HEIGHT + ROW_GAP
    if controls is Controls.VERIFY:
        parts["submit"] = Box(CARD_WIDTH - PAD - SUBMIT_WIDTH, y + 8, SUBMIT_WIDTH, FOOTER_HEIGHT - 16)
    return Card(width=CARD_WIDTH, height=y + FOOTER_HEIGHT, canvas=canvas, footer_y=y, **parts)


def slider_travel(card: Card) -> float:
    """How far the knob can move along its track."""
    assert card.track is not None and card.knob is not None
    return card.track.w - card.knob.w


def _input(box: Box) -> str:
    return (f'<input id="cap-input" class="cap-input" style="{box.css()}" type="text" autocomplete="off" '
            'spellcheck="false" placeholder="Enter the answer" aria-label="CAPTCHA answer">')


def _submit(box: Box) -> str:
    return f'<button id="cap-submit" class="cap-submit" style="{box.css()}" type="button">Verify</button>'


def _slider(track: Box, knob: Box) -> str:
    return (f'<div id="cap-track" class="cap-track" style="{track.css()}"><span>Slide to complete</span>'
            f'<div id="cap-fill" class="cap-fill" style="width:{knob.w:g}px"></div></div>'
            f'<div id="cap-knob" class="cap-knob" style="{knob.css()}"><i></i><i></i><i></i></div>')


#: How each control box is drawn (an entry per `Card` box besides the canvas).
_CONTROL_HTML: Mapping[str, Callable[[Card], str]] = {
    "input": lambda card: _input(card.input),
    "submit": lambda card: _submit(card.submit),
    "track": lambda card: _slider(card.track, card.knob),
}


def card_html(challenge: Challenge, left: float, top: float, brand: str) -> str:
    """The card at page position (left, top): header with the prompt, the canvas stage, controls, footer."""
    card = challenge.card
    controls = "".join(render(card) for name, render in _CONTROL_HTML.items() if name in card.boxes())
    hint = f'<div class="cap-hint">{escape(challenge.hint)}</div>' if challenge.hint else ""
    emphasis_class = "cap-emph cap-long" if len(challenge.emphasis) > LONG_EMPHASIS else "cap-emph"
    return (
        f'<section id="captcha" class="cap-card" role="dialog" aria-label="Security check" '
        f'style="{Box(left, top, card.width, card.height).css()}">'
        f'<header class="cap-head" style="height:{HEADER_HEIGHT}px">'
        f'<div class="cap-prompt">{escape(challenge.prompt)}</div>'
        f'<div class="{emphasis_class}">{escape(challenge.emphasis)}</div>{hint}</header>'
        f'<div id="cap-stage" class="cap-stage" style="{card.canvas.css()}"></div>'
        f"{controls}"
        f'<footer class="cap-foot" style="top:{card.footer_y}px;height:{FOOTER_HEIGHT}px">'
        '<span class="cap-icon" title="Get a new challenge">&#x21bb;</span>'
        '<span class="cap-icon" title="Audio challenge">&#x266b;</span>'
        '<span class="cap-icon" title="Help">?</span>'
        f'<span class="cap-brand">{escape(brand)} Guard</span></footer>'
        '<div id="cap-result" class="cap-result" hidden></div>'
        "</section>"
    )
