"""Typed-answer families: distorted text (read it) and arithmetic (read it and compute). Both are graded on
what is typed, so they share the card (canvas, answer field, Verify) and the solution shape."""

from __future__ import annotations

from uivenus.actions.space import Click, Type
from uivenus.synth.captcha.base import Challenge, Level, Rng, register_family
from uivenus.synth.captcha.card import Controls, layout_card

#: Characters that stay distinguishable under distortion (no 0/O, 1/I, no lower case).
CHARSET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CANVAS_HEIGHT = 100


def _typed(*, drawn: str, answer: str, wrong: str, prompt: str, emphasis: str,
           hint: str, instruction: str, meta: dict[str, object]) -> Challenge:
    card = layout_card(CANVAS_HEIGHT, Controls.TYPED)
    assert card.input is not None and card.submit is not None

    def attempt(text: str) -> tuple:
        return (Click(point=card.input.centre), Type(content=text), Click(point=card.submit.centre))

    return Challenge(
        prompt=prompt, emphasis=emphasis, hint=hint, instruction=instruction, card=card, script="typed",
        config={"text": drawn, "answer": answer}, solution=attempt(answer), near_miss=attempt(wrong),
        answer={**meta, "typed": answer},
    )


@register_family("text", "read distorted characters and type them")
def text(rng: Rng, level: Level) -> Challenge:
    length = 4 + round(2 * level.distortion)
    answer = "".join(rng.choice(CHARSET) for _ in range(length))
    position = rng.randint(0, length - 1)
    replacement = rng.choice([c for c in CHARSET if c != answer[position]])
    wrong = answer[:position] + replacement + answer[position + 1:]
    return _typed(drawn=answer, answer=answer, wrong=wrong,
                  prompt="Type the characters you see", emphasis="in the picture below",
                  hint="Letters are not case-sensitive.",
                  instruction="Complete the security check: type the characters shown in the picture and press Verify.",
                  meta={"text": answer})


def _sum(rng: Rng, level: Level) -> tuple[str, int]:
    """An expression (as drawn) and its value; harder levels use bigger numbers, subtraction and products."""
    if level.distortion < 0.3:
        a, b = rng.randint(1, 9), rng.randint(1, 9)
        return f"{a} + {b}", a + b
    if level.distortion < 0.7:
        a, b = rng.randint(12, 49), rng.randint(2, 11)
        return (f"{a} + {b}", a + b) if rng.random() < 0.5 else (f"{a} - {b}", a - b)
    a, b = rng.randint(2, 9), rng.randint(3, 9)
    if rng.random() < 0.5:
        return f"{a} × {b}", a * b
    c = rng.randint(1, a + b - 1)
    return f"{a} + {b} - {c}", a + b - c


@register_family("arithmetic", "solve a distorted arithmetic problem and type the result")
def arithmetic(rng: Rng, level: Level) -> Challenge:
    expression, value = _sum(rng, level)
    return _typed(drawn=f"{expression} = ?", answer=str(value), wrong=str(value + 1),
                  prompt="Solve the problem in the picture", emphasis="and type the result",
                  hint="Enter digits only.",
                  instruction="Complete the security check: solve the arithmetic problem in the picture, type the "
                              "result and press Verify.",
                  meta={"expression": expression, "value": value})
