"""How fast `parse_response` reads typical model responses, against baselines timed in the same run.

Run: `.venv/bin/python bench/parse.py [--seconds 1.0]`. Baselines: `json.loads` of the same content written as JSON
(think text included) and a bare `ast.parse` of the action call; the ratios say what the grammar's safety costs.
"""

from __future__ import annotations

import argparse
import ast
import json
import time
from collections.abc import Callable

from uivenus.actions.grammar import format_response, parse_response
from uivenus.actions.space import (
    ActionSequence,
    Click,
    Finished,
    Hotkey,
    Scroll,
    Swipe,
    Type,
)

THINK = (
    "The task asks for flights from Hangzhou to Beijing next Friday. The screen shows the airline's search form: "
    "departure is already Hangzhou, the arrival field is empty and a date picker sits below it. I should fill in "
    "the arrival city first, then pick the date, and finally press the blue Search button at the bottom right."
)
ACTIONS = [
    (Click(point=(897, 937)),),
    (Type(content="Beijing Capital International Airport"),),
    (Hotkey(keys=("ctrl", "shift", "t")),),
    (Swipe(start=(500, 800), end=(500, 200)),),
    (Scroll(direction="down", point=(640, 400), amount=3),),
    (ActionSequence(actions=(Click(point=(120, 44)), Type(content="flights to Beijing"), Hotkey(keys=("enter",)))),),
    (Click(point=(101, 202)), Click(point=(303, 404)), Click(point=(505, 606))),  # a CAPTCHA answer
    (Finished(content="Found 12 flights; the cheapest leaves at 07:05."),),
]


def _responses() -> list[str]:
    texts = [format_response(actions, think=THINK) for actions in ACTIONS]
    texts[-1] = format_response(ACTIONS[-1], think=THINK, conclusion="Searched and reported the cheapest flight.")
    texts.append(texts[0].replace("\n", "\n\n  ") + "\n")  # loose whitespace
    texts.append("<action>Click(box=[897, 937])</action>")  # thinking off, older spelling
    return texts


def _json_equivalents(texts: list[str]) -> list[str]:
    out = []
    for text in texts:
        response = parse_response(text)
        out.append(json.dumps({"think": response.think, "actions": [a.to_dict() for a in response.actions],
                               "conclusion": response.conclusion}))
    return out


def _calls(texts: list[str]) -> list[str]:
    return [text.split("<action>", 1)[1].split("</action>", 1)[0].strip() for text in texts]


def _rates(cases: dict[str, tuple[Callable[[str], object], list[str]]], seconds: float) -> dict[str, float]:
    """Items per second for each case: short bursts taken in turn (so load on the machine hits all alike), best kept."""
    best = dict.fromkeys(cases, 0.0)
    rounds = 15
    for _ in range(rounds):
        for name, (fn, items) in cases.items():
            done, start = 0, time.perf_counter()
            while (elapsed := time.perf_counter() - start) < seconds / rounds:
                for item in items:
                    fn(item)
                done += len(items)
            best[name] = max(best[name], done / elapsed)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="time spent on each measurement")
    seconds = parser.parse_args().seconds

    texts = _responses()
    broken = [t + " I hope that worked." for t in texts]  # junk after </action>: strict fails, lenient recovers
    assert all(parse_response(t, lenient=True).recovered for t in broken)
    mean_chars = sum(map(len, texts)) / len(texts)
    print(f"{len(texts)} typical responses, mean {mean_chars:.0f} chars (think text {len(THINK)} chars)")

    rates = _rates({
        "parse_response (strict)": (parse_response, texts),
        "parse_response (lenient, recovering)": (lambda t: parse_response(t, lenient=True), broken),
        "baseline: json.loads of the same as JSON": (json.loads, _json_equivalents(texts)),
        "baseline: bare ast.parse of the call": (lambda c: ast.parse(c, mode="eval"), _calls(texts)),
    }, seconds)
    strict = rates["parse_response (strict)"]
    for name, rate in rates.items():
        print(f"{name:<42} {rate:>12,.0f} responses/s   {rate / strict:6.2f}x strict")
    for name, rate in rates.items():
        if name.startswith("baseline: "):
            print(f"ratio parse_response / {name.removeprefix('baseline: ')}: {strict / rate:.3f}")


if __name__ == "__main__":
    main()
