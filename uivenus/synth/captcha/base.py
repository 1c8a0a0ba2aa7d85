"""The CAPTCHA records: difficulty levels, the seeded generator, a challenge, an instance and a family registry.

A family turns a seeded generator and a difficulty level into a `Challenge`: what the page draws (a JSON
config its script reads), the card's geometry, and the verified solution as unified actions in the card's
own pixels. The page composer then places the card on a realistic page and shifts the solution to screen
pixels, giving an `Instance`. Every family adds one entry to `FAMILIES`; nothing switches on names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, TypeVar

from uivenus.actions.points import map_points
from uivenus.actions.space import Action, Platform, action_from_dict

T = TypeVar("T")


class CaptchaError(ValueError):
    """A CAPTCHA request or file is malformed (unknown family or difficulty, a bad instances.jsonl)."""


class Difficulty(StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


@dataclass(frozen=True)
class Level:
    """What a difficulty means: visual noise and distortion (0–1), distractor count and grading tolerances."""

    noise: float
    distortion: float
    distractors: int
    tolerance_px: int  # slider offset; click radius and drop radius grow from it
    tolerance_deg: int  # rotation


LEVELS: Mapping[Difficulty, Level] = MappingProxyType({
    Difficulty.EASY: Level(noise=0.15, distortion=0.15, distractors=1, tolerance_px=10, tolerance_deg=14),
    Difficulty.MEDIUM: Level(noise=0.5, distortion=0.5, distractors=3, tolerance_px=7, tolerance_deg=10),
    Difficulty.HARD: Level(noise=0.9, distortion=0.9, distractors=6, tolerance_px=5, tolerance_deg=7),
})


class Rng:
    """mulberry32, the same generator the pages run in JavaScript: stable across Python versions by construction."""

    def __init__(self, seed: int) -> None:
        self._state = seed & 0xFFFFFFFF

    def random(self) -> float:
        self._state = (self._state + 0x6D2B79F5) & 0xFFFFFFFF
        t = self._state
        t = _imul(t ^ (t >> 15), t | 1)
        t ^= (t + _imul(t ^ (t >> 7), t | 61)) & 0xFFFFFFFF
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296

    def uniform(self, low: float, high: float) -> float:
        return low + (high - low) * self.random()

    def randint(self, low: int, high: int) -> int:
        """An integer in [low, high], both ends included."""
        return low + int(self.random() * (high - low + 1))

    def choice(self, items: Sequence[T]) -> T:
        return items[int(self.random() * len(items))]

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        pool = list(items)
        self.shuffle(pool)
        return pool[:k]

    def shuffle(self, items: list[Any]) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = int(self.random() * (i + 1))
            items[i], items[j] = items[j], items[i]


def _imul(a: int, b: int) -> int:
    return (a * b) & 0xFFFFFFFF


def derive_seed(*parts: object) -> int:
    """A 31-bit seed from any parts (master seed, index, purpose), so sub-streams never overlap."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def scatter(rng: Rng, count: int, xs: tuple[float, float], ys: tuple[float, float],
            min_distance: float) -> list[tuple[float, float]]:
    """`count` points in the ranges, at least `min_distance` apart (relaxed by 10% whenever a pass fails)."""
    while True:
        points: list[tuple[float, float]] = []
        for _ in range(400 * count):
            x, y = round(rng.uniform(*xs), 1), round(rng.uniform(*ys), 1)
            if all((x - px) ** 2 + (y - py) ** 2 >= min_distance ** 2 for px, py in points):
                points.append((x, y))
                if len(points) == count:
                    return points
        min_distance *= 0.9


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle in CSS pixels (left, top, width, height)."""

    x: float
    y: float
    w: float
    h: float

    @property
    def centre(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h / 2)

    def shifted(self, dx: float, dy: float) -> Box:
        return Box(self.x + dx, self.y + dy, self.w, self.h)

    def css(self) -> str:
        return f"left:{_px(self.x)};top:{_px(self.y)};width:{_px(self.w)};height:{_px(self.h)}"


def _px(value: float) -> str:
    return f"{round(value, 2):g}px"


@dataclass(frozen=True)
class Card:
    """The challenge card's geometry in its own pixels (the composer places it on the page)."""

    width: int
    height: int
    canvas: Box
    submit: Box | None = None  # Verify button (typed families: beside the input; click families: footer)
    input: Box | None = None
    track: Box | None = None  # slider track and its knob at rest
    knob: Box | None = None
    footer_y: int = 0

    def boxes(self) -> dict[str, Box]:
        return {name: box for name in ("canvas", "submit", "input", "track", "knob")
                if (box := getattr(self, name)) is not None}


@dataclass(frozen=True)
class Challenge:
    """One family's challenge before placement: everything in the card's own pixels."""

    prompt: str  # the card header's first line ("Select all squares with")
    emphasis: str  # its large second line ("an X")
    instruction: str  # the task as the agent is told it
    card: Card
    script: str  # the page script that draws and grades it (js/<script>.js)
    config: Mapping[str, Any]  # what that script reads (geometry in canvas pixels, the answer to grade)
    solution: tuple[Action, ...]
    near_miss: tuple[Action, ...]  # a plausible attempt the grader must reject
    answer: Mapping[str, Any]
    hint: str = ""  # the header's small third line


def shift_actions(actions: Sequence[Action], dx: float, dy: float) -> tuple[Action, ...]:
    """Actions moved by (dx, dy): card pixels to page pixels."""
    return tuple(map_points(a, lambda p: (round(p[0] + dx, 2), round(p[1] + dy, 2))) for a in actions)


@dataclass(frozen=True)
class Family:
    """A CAPTCHA family: its name, what it asks, and how to build a challenge at a difficulty level."""

    name: str
    summary: str
    build: Callable[[Rng, Level], Challenge]


#: Every CAPTCHA family by name; a module adds itself with `@register_family(...)`.
FAMILIES: dict[str, Family] = {}


def register_family(name: str, summary: str
                    ) -> Callable[[Callable[[Rng, Level], Challenge]], Callable[[Rng, Level], Challenge]]:
    def decorate(build: Callable[[Rng, Level], Challenge]) -> Callable[[Rng, Level], Challenge]:
        FAMILIES[name] = Family(name, summary, build)
        return build

    return decorate


@dataclass(frozen=True)
class Instance:
    """One generated CAPTCHA page with its verified solution (screen pixels of `viewport`)."""

    id: str
    family: str
    difficulty: Difficulty
    seed: int
    layout: str  # "desktop" or "phone" (BrowserConfig mode)
    viewport: tuple[int, int]
    platform: Platform
    scene: str  # the page around the challenge: login, checkout, signup, comment
    instruction: str
    solution: tuple[Action, ...]
    near_miss: tuple[Action, ...]
    answer: Mapping[str, Any]
    page: str  # file name of the page inside the data directory
    html: str = field(default="", repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "difficulty", Difficulty(self.difficulty))
        object.__setattr__(self, "platform", Platform(self.platform))
        object.__setattr__(self, "viewport", tuple(self.viewport))
        object.__setattr__(self, "answer", MappingProxyType(dict(self.answer)))

    def to_dict(self) -> dict[str, Any]:
        """The instances.jsonl line (the HTML lives in its own file)."""
        return {
            "id": self.id, "family": self.family, "difficulty": self.difficulty.value, "seed": self.seed,
            "layout": self.layout, "viewport": list(self.viewport), "platform": self.platform.value,
            "scene": self.scene, "instruction": self.instruction,
            "solution": [a.to_dict() for a in self.solution],
            "near_miss": [a.to_dict() for a in self.near_miss],
            "answer": _plain(self.answer), "page": self.page,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], html: str = "") -> Instance:
        try:
            fields = dict(data)
            fields["solution"] = tuple(action_from_dict(a) for a in data["solution"])
            fields["near_miss"] = tuple(action_from_dict(a) for a in data["near_miss"])
            return cls(html=html, **fields)
        except (KeyError, TypeError, ValueError) as exc:
            raise CaptchaError(f"bad instance record {str(data.get('id', '?'))!r}: {exc}; "
                               "regenerate the directory with generate_captchas") from None


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
