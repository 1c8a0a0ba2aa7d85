"""The `random` floor: parseable, platform-valid answers in the relative frame, the same stream for the same seed."""

from __future__ import annotations

from collections import Counter

import pytest

from uivenus.actions.grammar import parse_response
from uivenus.actions.points import iter_points
from uivenus.actions.space import ActionType, Platform, Type, check_platform
from uivenus.agent.policies import PolicyRequest, PolicySpecError, policy_from_spec
from uivenus.agent.policies.random_policy import FRAME_DIVISOR, RandomPolicy


def request(platform: Platform, instruction: str | None = None) -> PolicyRequest:
    context = {"platform": platform, "screen_size": (160, 210)}
    if instruction is not None:
        context["instruction"] = instruction
    return PolicyRequest(messages=(), context=context)


@pytest.mark.parametrize("platform", list(Platform))
def test_answers_parse_into_actions_the_platform_accepts(platform: Platform) -> None:
    policy = policy_from_spec("random:5")
    kinds: Counter[ActionType] = Counter()
    for _ in range(300):
        action = parse_response(policy.act(request(platform)).text).action
        check_platform(action, platform)  # raises for an action of another platform
        assert not action.is_terminal
        for _, (x, y) in iter_points(action):
            assert 0 <= x < FRAME_DIVISOR and 0 <= y < FRAME_DIVISOR
        kinds[action.type] += 1
    assert kinds.most_common(1)[0][0] is ActionType.CLICK, "clicks should be drawn most often"
    assert kinds[ActionType.TYPE] > 0 and len(kinds) >= 6


def test_the_same_seed_gives_the_same_answers_and_another_seed_others() -> None:
    def answers(spec: str) -> list[str]:
        policy = policy_from_spec(spec)
        return [policy.act(request(Platform.WEB)).text for _ in range(20)]

    assert answers("random:3") == answers("random:3")
    assert answers("random") == answers("random:0")
    assert answers("random:3") != answers("random:4")
    policy = RandomPolicy(9)
    first = [policy.act(request(Platform.MOBILE)).text for _ in range(5)]
    policy.reset()
    assert [policy.act(request(Platform.MOBILE)).text for _ in range(5)] == first


def test_typed_text_comes_from_the_instruction() -> None:
    policy = RandomPolicy(1)
    typed = [a for a in (policy.draw(Platform.WEB, {"instruction": "Enter Zelda here"}) for _ in range(200))
             if isinstance(a, Type)]
    assert typed and all(set(t.content.split()) <= {"Enter", "Zelda", "here"} for t in typed)


def test_a_bad_seed_is_a_spec_error() -> None:
    with pytest.raises(PolicySpecError, match="random:SEED"):
        policy_from_spec("random:abc")
