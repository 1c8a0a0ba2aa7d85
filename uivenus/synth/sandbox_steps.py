"""Single-step navigation on a fixed sandbox page: from the instruction, the action type and its parameters.

The miniature recipe's action domain: a search box, a list and a few coloured buttons, and an instruction that
asks for one action of five types (Type the word, Scroll up or down, Click a button by colour, PressEnter,
PressBack). A tiny model learns the type and most parameters from the text and the button from the pixels, and
its replies (`<action>…</action>`) differ from grounding's bare points, so the two domains can interfere.
Written as `steps.json` (records with the action in screen pixels and the target's half-size) + `images/`,
which the `steps` training source reads.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from uivenus.actions.grammar import format_response
from uivenus.actions.space import Action, Click, PressBack, PressEnter, Scroll, Type
from uivenus.files import write_text
from uivenus.synth.shapes import COLOURS

__all__ = ["STEPS_FILE", "STEP_KINDS", "WORDS", "generate_steps"]

STEPS_FILE = "steps.json"
SIDE = 128
#: What the Type instructions ask to type.
WORDS = ("cat", "dog", "red", "sun", "map", "tea", "car", "box", "pen", "key", "bus", "hat")
_BUTTON = (28, 20)  # width, height
_SLOTS = (4, 36, 68, 100)  # a button's left edge, one per slot on the bottom row
Button = tuple[str, tuple[int, int, int, int]]
def _type(rng: random.Random, buttons: list[Button]) -> tuple[str, Action]:
    word = rng.choice(WORDS)
    return rng.choice(("type {}", "search for {}", "enter {} in the box")).format(word), Type(content=word)


def _scroll(rng: random.Random, buttons: list[Button]) -> tuple[str, Action]:
    direction = rng.choice(("up", "down"))
    return f"scroll the list {direction}", Scroll(direction=direction)


def _click(rng: random.Random, buttons: list[Button]) -> tuple[str, Action]:
    colour, (x1, y1, x2, y2) = rng.choice(buttons)
    return f"click the {colour} button", Click(point=((x1 + x2) // 2, (y1 + y2) // 2))


def _enter(rng: random.Random, buttons: list[Button]) -> tuple[str, Action]:
    return rng.choice(("press enter", "submit the search")), PressEnter()


def _back(rng: random.Random, buttons: list[Button]) -> tuple[str, Action]:
    return rng.choice(("go back", "return to the previous page")), PressBack()


#: Each step kind: the instruction and the action (screen pixels) on a screen with these buttons.
STEP_KINDS: Mapping[str, Callable[[random.Random, list[Button]], tuple[str, Action]]] = {
    "type": _type, "scroll": _scroll, "click": _click, "enter": _enter, "back": _back,
}


def _draw(rng: random.Random) -> tuple[Image.Image, list[Button]]:
    image = Image.new("RGB", (SIDE, SIDE), (250, 250, 250))
    draw = ImageDraw.Draw(image)
    draw.rectangle((4, 4, SIDE - 5, 24), outline=(90, 90, 90), fill=(255, 255, 255))  # the search box
    for row in range(rng.randint(3, 6)):  # the list
        y = 32 + row * 10
        draw.rectangle((8, y, rng.randint(60, SIDE - 12), y + 5), fill=(170, 170, 170))
    buttons = []
    for colour, left in zip(rng.sample(list(COLOURS), rng.randint(2, 3)), rng.sample(_SLOTS, 3), strict=False):
        box = (left, 100, left + _BUTTON[0], 100 + _BUTTON[1])
        draw.rectangle(box, fill=COLOURS[colour])
        buttons.append((colour, box))
    return image, buttons


def generate_steps(n: int, out: Path | str, *, seed: int = 0) -> Path:
    """`n` sandbox screens, one instruction each (kinds drawn evenly at random); returns the `steps.json` path.
    The same seed gives the same files."""
    out = Path(out)
    (out / "images").mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    for index in range(n):
        rng = random.Random(f"steps:{seed}:{index}")
        image, buttons = _draw(rng)
        kind = rng.choice(list(STEP_KINDS))
        instruction, action = STEP_KINDS[kind](rng, buttons)
        name = f"step_{seed}_{index:06d}"
        image.save(out / "images" / f"{name}.png")
        records.append({"id": name, "image": f"images/{name}.png", "instruction": instruction, "kind": kind,
                        "action": format_response([action]), "radius": [_BUTTON[0] / 2, _BUTTON[1] / 2],
                        "img_size": [SIDE, SIDE]})
    return write_text(out / STEPS_FILE, "[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
