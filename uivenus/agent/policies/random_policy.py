"""`random`: a seeded policy that answers every request with a random, valid action — the floor of every evaluation.

It reads no pixels. It picks an action type the request's platform allows (`context["platform"]`, web when
absent), weighted toward what makes progress on GUI tasks (clicks first, then typing), fills its parameters at
random in the relative 0–999 frame, and answers the full `<action>…</action>` text a model would. Text it
types is a word of the task's instruction (`context["instruction"]`) or of a small fixed vocabulary. The same
seed gives the same stream of answers; `random` is seed 0, `random:SEED` any other.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType

from uivenus.actions.grammar import format_response
from uivenus.actions.registries import check_covers
from uivenus.actions.space import (
    Action, ActionType, Click, Direction, DoubleClick, Drag, Hotkey, Hover, LongPress, Platform, PressBack,
    PressEnter, RightClick, Scroll, SelectOption, Swipe, TripleClick, Type, Wait, actions_for,
)
from uivenus.agent.policies.base import PolicyBase, PolicyReply, PolicyRequest, PolicySpecError, register_policy

A = ActionType

#: The relative frame's divisor: points are integers 0..FRAME_DIVISOR-1 on both axes.
FRAME_DIVISOR = 1000

#: How often each action type is drawn (only the types the platform allows take part). Types that leave the
#: task (terminal actions, Launch, app switching) or need knowledge (Answer, TakeNote) are never drawn.
ACTION_WEIGHTS: Mapping[ActionType, float] = MappingProxyType({
    A.CLICK: 50.0,
    A.TYPE: 15.0,
    A.DOUBLE_CLICK: 4.0,
    A.DRAG: 4.0,
    A.SCROLL: 4.0,
    A.SWIPE: 4.0,
    A.PRESS_ENTER: 3.0,
    A.HOTKEY: 3.0,
    A.SELECT_OPTION: 3.0,
    A.TRIPLE_CLICK: 2.0,
    A.HOVER: 2.0,
    A.LONG_PRESS: 2.0,
    A.RIGHT_CLICK: 1.0,
    A.PRESS_BACK: 1.0,
    A.WAIT: 1.0,
})

#: Words typed when the request carries no instruction (or an instruction with no words).
VOCABULARY = ("hello", "yes", "no", "ok", "submit", "search", "name", "blue", "42", "2024", "alice", "test")
#: Hotkeys a browser or desktop understands without leaving the page.
HOTKEYS = (("ctrl", "a"), ("ctrl", "c"), ("ctrl", "v"), ("tab",), ("backspace",), ("escape",), ("down",), ("up",))
_WORD = re.compile(r"[\w@.'-]+")


def _point(rng: random.Random) -> tuple[int, int]:
    return rng.randrange(FRAME_DIVISOR), rng.randrange(FRAME_DIVISOR)


def _words(context: Mapping[str, object]) -> tuple[str, ...]:
    instruction = context.get("instruction")
    words = tuple(_WORD.findall(instruction)) if isinstance(instruction, str) else ()
    return words or VOCABULARY


#: One maker per drawable type: (rng, request context) -> an action in the relative frame.
_MAKERS: Mapping[ActionType, Callable[[random.Random, Mapping[str, object]], Action]] = MappingProxyType({
    A.CLICK: lambda rng, _: Click(point=_point(rng)),
    A.TYPE: lambda rng, ctx: Type(content=" ".join(rng.choices(_words(ctx), k=rng.randint(1, 2)))),
    A.DOUBLE_CLICK: lambda rng, _: DoubleClick(point=_point(rng)),
    A.DRAG: lambda rng, _: Drag(start=_point(rng), end=_point(rng)),
    A.SCROLL: lambda rng, _: Scroll(direction=rng.choice(list(Direction)), point=_point(rng), amount=rng.randint(1, 3)),
    A.SWIPE: lambda rng, _: Swipe(start=_point(rng), end=_point(rng)),
    A.PRESS_ENTER: lambda rng, _: PressEnter(),
    A.HOTKEY: lambda rng, _: Hotkey(keys=rng.choice(HOTKEYS)),
    A.SELECT_OPTION: lambda rng, _: SelectOption(index=rng.randrange(5), point=_point(rng)),
    A.TRIPLE_CLICK: lambda rng, _: TripleClick(point=_point(rng)),
    A.HOVER: lambda rng, _: Hover(point=_point(rng)),
    A.LONG_PRESS: lambda rng, _: LongPress(point=_point(rng)),
    A.RIGHT_CLICK: lambda rng, _: RightClick(point=_point(rng)),
    A.PRESS_BACK: lambda rng, _: PressBack(),
    A.WAIT: lambda rng, _: Wait(seconds=0.5),
})
check_covers("_MAKERS needs a maker for every type in ACTION_WEIGHTS", _MAKERS, ACTION_WEIGHTS)


class RandomPolicy(PolicyBase):
    """Random valid actions from one seeded stream (`reset()` rewinds it to the start)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.name = f"random:{seed}"
        self._rng = random.Random(seed)

    def reset(self) -> None:
        self._rng = random.Random(self.seed)

    def draw(self, platform: Platform, context: Mapping[str, object] = MappingProxyType({})) -> Action:
        """One random action `platform` allows, in the relative frame."""
        allowed = set(actions_for(Platform(platform)))
        types = [t for t in ACTION_WEIGHTS if t in allowed]
        kind = self._rng.choices(types, weights=[ACTION_WEIGHTS[t] for t in types])[0]
        return _MAKERS[kind](self._rng, context)

    def act(self, request: PolicyRequest) -> PolicyReply:
        started = time.perf_counter()
        platform = request.context.get("platform", Platform.WEB)
        text = format_response(self.draw(Platform(platform), request.context))
        return PolicyReply(text=text, latency_s=time.perf_counter() - started)


@register_policy("random")
def _random_policy(spec: str) -> RandomPolicy:
    if not spec:
        return RandomPolicy()
    try:
        return RandomPolicy(int(spec))
    except ValueError:
        raise PolicySpecError(f"random spec takes an integer seed: random or random:SEED, got random:{spec}") from None
