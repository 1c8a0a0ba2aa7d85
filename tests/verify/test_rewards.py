"""Rewards against values computed by hand."""

from __future__ import annotations

import math

import pytest

from uivenus.actions.space import ActionSequence, Click, Drag, Finished, Hotkey, LaunchApp, Scroll, Swipe, Type, Wait
from uivenus.verify.base import StepLabel, TraceOutcome, Verdict, Vote
from uivenus.verify.rewards import (
    ReferenceAction, RewardError, RewardWeights, StepRewards, TraceRewards, action_reward, direction_reward,
    format_reward, gaussian_point_reward, grounding_reward, point_in_box, read_prediction, refusal_reward,
    step_reward, swipe_direction, text_f1, text_reward, trace_reward, type_reward, vote_reward,
)
from uivenus.verify.voting import aggregate

BOX = (100, 200, 140, 220)  # centre (120, 210), width 40 -> sigma_x 20, height 20 -> sigma_y 10


def test_gaussian_is_one_at_the_centre_and_exp_minus_half_one_sigma_away() -> None:
    assert gaussian_point_reward((120, 210), BOX) == 1.0
    assert gaussian_point_reward((140, 210), BOX) == pytest.approx(math.exp(-0.5))  # cx + sigma_x
    assert gaussian_point_reward((120, 200), BOX) == pytest.approx(math.exp(-0.5))  # cy - sigma_y
    assert gaussian_point_reward((140, 220), BOX) == pytest.approx(math.exp(-1.0))  # one sigma on both axes
    assert gaussian_point_reward((160, 210), BOX) == pytest.approx(math.exp(-2.0))  # two sigma_x


def test_point_in_box_includes_edges() -> None:
    assert point_in_box((100, 200), BOX) and point_in_box((140, 220), BOX) and point_in_box((120, 210), BOX)
    assert not point_in_box((99.9, 210), BOX) and not point_in_box((120, 221), BOX)


def _edge_points(box, edge: str):
    """(a point on `edge`, one a hair outside it, one half a pixel outside it), midway along the edge."""
    x1, y1, x2, y2 = box
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    on, outward = {"left": ((x1, cy), (-1, 0)), "right": ((x2, cy), (1, 0)),
                   "top": ((cx, y1), (0, -1)), "bottom": ((cx, y2), (0, 1))}[edge]
    hair = tuple(math.nextafter(c, c + d * math.inf) if d else c for c, d in zip(on, outward))
    half = tuple(c + d * 0.5 for c, d in zip(on, outward))
    return on, hair, half


EDGES = ("left", "right", "top", "bottom")


@pytest.mark.parametrize("edge", EDGES)
def test_point_in_box_holds_on_each_edge_and_not_just_outside_it(edge: str) -> None:
    on, hair, half = _edge_points(BOX, edge)
    inside = tuple((c + m) / 2 for c, m in zip(on, (120, 210)))  # halfway to the centre
    assert point_in_box(on, BOX) and point_in_box(inside, BOX)
    assert not point_in_box(hair, BOX) and not point_in_box(half, BOX)


@pytest.mark.parametrize("edge", EDGES)
def test_box_scored_click_reward_is_one_on_each_edge_and_zero_just_outside_it(edge: str) -> None:
    ref = ReferenceAction(Click(point=(120, 210)), boxes={"point": BOX})
    on, hair, half = _edge_points(BOX, edge)
    assert action_reward(Click(point=on), ref, W, point="box").params == 1.0
    for outside in (hair, half):
        scored = action_reward(Click(point=outside), ref, W, point="box")
        assert (scored.type, scored.params) == (1.0, 0.0), outside
    assert grounding_reward(f"[{half[0]},{half[1]}]", BOX, W, point="box").params == 0.0
    assert grounding_reward(f"[{on[0]},{on[1]}]", BOX, W, point="box").params == 1.0


def test_degenerate_boxes_are_errors() -> None:
    with pytest.raises(RewardError, match="x1 < x2"):
        gaussian_point_reward((1, 1), (5, 5, 5, 9))
    with pytest.raises(RewardError, match="x1 <= x2"):
        point_in_box((1, 1), (9, 0, 5, 5))


def test_text_f1_by_hand() -> None:
    # pred tokens: send, the, report ; ref: send, the, final, report, now -> overlap 3, P = 1, R = 3/5, F1 = 0.75
    assert text_f1("Send the report", "send the final report now") == pytest.approx(0.75)
    # overlap 1 of 3 and 1 of 3 -> F1 = 1/3 < 0.5
    assert text_f1("hello big world", "hello small planet") == pytest.approx(1 / 3)
    assert text_reward("Send the report", "send the final report now") == 1.0
    assert text_reward("hello big world", "hello small planet") == 0.0
    assert text_f1("555-0101", "555 0101") == 1.0
    assert text_f1("", "") == 1.0 and text_f1("a", "") == 0.0
    # half the tokens right: P = R = 1/2 -> F1 = 0.5, exactly at the threshold
    assert text_reward("blue mug", "blue cup") == 1.0


def test_directions() -> None:
    assert swipe_direction((200, 800), (200, 300)) is not None
    assert swipe_direction((200, 800), (200, 300)).value == "up"
    assert swipe_direction((100, 100), (400, 120)).value == "right"
    assert swipe_direction((5, 5), (5, 5)) is None
    up = Swipe(start=(200, 800), end=(210, 300))
    assert direction_reward(Swipe(start=(50, 900), end=(60, 100)), up) == 1.0
    assert direction_reward(Swipe(start=(50, 100), end=(60, 900)), up) == 0.0
    assert direction_reward(Scroll(direction="down"), Scroll(direction="down", point=(3, 4))) == 1.0
    assert direction_reward(Scroll(direction="up"), Scroll(direction="down")) == 0.0


def test_refusal_reward_only_on_negatives() -> None:
    assert refusal_reward(True, True) == 1.0
    assert refusal_reward(True, False) == 0.0
    assert refusal_reward(False, True) == 0.0
    assert refusal_reward(False, False) == 0.0


def test_format_reward_uses_the_strict_grammar() -> None:
    assert format_reward("<think>go</think>\n<action>Click(point=(10, 20))</action>") == 1.0
    assert format_reward("[12,34]") == 1.0 and format_reward("[-1,-1]") == 1.0
    assert format_reward("I would click (10, 20)") == 0.0
    assert format_reward("<action>Click(point=(10, 20))</action> and then more") == 0.0  # lenient would accept
    assert format_reward("The answer is [12,34]") == 0.0
    assert format_reward("<action>Clack(point=(1, 2))</action>") == 0.0


def test_type_reward() -> None:
    assert type_reward(Click(point=(1, 2)), Click(point=(9, 9))) == 1.0
    assert type_reward(Click(point=(1, 2)), Type(content="x")) == 0.0


W = RewardWeights(format=0.1, type=0.3, params=0.6)


def test_click_reward_combines_format_type_and_gaussian_point() -> None:
    ref = ReferenceAction(Click(point=(120, 210)), boxes={"point": BOX})
    at_sigma = action_reward("<action>Click(point=(140, 210))</action>", ref, W)
    assert (at_sigma.format, at_sigma.type) == (1.0, 1.0)
    assert at_sigma.params == pytest.approx(math.exp(-0.5))
    assert at_sigma.total == pytest.approx(0.1 + 0.3 + 0.6 * math.exp(-0.5))
    in_box = action_reward("<action>Click(point=(140, 210))</action>", ref, W, point="box")
    assert in_box.params == 1.0 and in_box.total == pytest.approx(1.0)
    outside = action_reward(Click(point=(300, 210)), ref, W, point="box")
    assert outside.params == 0.0 and outside.total == pytest.approx(0.4)


def test_wrong_type_earns_no_parameter_reward_and_malformed_earns_nothing() -> None:
    ref = ReferenceAction(Click(point=(120, 210)), boxes={"point": BOX})
    wrong = action_reward("<action>DoubleClick(point=(120, 210))</action>", ref, W)
    assert (wrong.format, wrong.type, wrong.params) == (1.0, 0.0, 0.0)
    assert wrong.total == pytest.approx(0.1)
    garbage = action_reward("click the save button", ref, W)
    assert (garbage.format, garbage.type, garbage.params, garbage.total) == (0.0, 0.0, 0.0, 0.0)
    assert "expected" in garbage.detail["error"]


def test_type_text_by_token_f1() -> None:
    ref = ReferenceAction(Type(content="send the final report now"))
    good = action_reward(Type(content="Send the report"), ref, W)
    assert good.params == 1.0 and good.total == pytest.approx(1.0)
    bad = action_reward(Type(content="hello"), ref, W)
    assert bad.params == 0.0 and bad.total == pytest.approx(0.4)


def test_scroll_and_swipe_by_direction() -> None:
    scroll = ReferenceAction(Scroll(direction="down", point=(5, 5)))
    assert action_reward(Scroll(direction="down", point=(900, 900), amount=7), scroll, W).params == 1.0
    assert action_reward(Scroll(direction="up"), scroll, W).params == 0.0
    swipe = ReferenceAction(Swipe(start=(200, 800), end=(200, 300)))
    assert action_reward(Swipe(start=(10, 700), end=(12, 100)), swipe, W).total == pytest.approx(1.0)


def test_drag_scores_each_reference_point() -> None:
    ref = ReferenceAction(Drag(start=(120, 210), end=(520, 210)),
                          boxes={"start": BOX, "end": (500, 200, 540, 220)})
    result = action_reward(Drag(start=(120, 210), end=(540, 210)), ref, W)
    assert result.detail["start"] == 1.0 and result.detail["end"] == pytest.approx(math.exp(-0.5))
    assert result.params == pytest.approx((1.0 + math.exp(-0.5)) / 2)


def test_other_parameters() -> None:
    assert action_reward(Hotkey(keys=("Ctrl", "c")), ReferenceAction(Hotkey(keys=("ctrl", "c"))), W).params == 1.0
    assert action_reward(Hotkey(keys=("ctrl", "v")), ReferenceAction(Hotkey(keys=("ctrl", "c"))), W).params == 0.0
    assert action_reward(LaunchApp(app="settings"), ReferenceAction(LaunchApp(app="Settings")), W).params == 1.0
    assert action_reward(Wait(seconds=9), ReferenceAction(Wait(seconds=1)), W).params == 1.0  # durations unscored
    assert action_reward(Finished(content="done"), ReferenceAction(Finished()), W).params == 1.0


def test_sequence_member_by_member() -> None:
    ref = ReferenceAction(ActionSequence(actions=(Click(point=(120, 210)), Click(point=(520, 210)))),
                          boxes={"0.point": BOX, "1.point": (500, 200, 540, 220)})
    both = action_reward("<action>Click(point=(120, 210)), Click(point=(520, 210))</action>", ref, W)
    assert both.params == 1.0
    swapped = action_reward("<action>Click(point=(520, 210)), Click(point=(120, 210))</action>", ref, W, point="box")
    assert swapped.params == 0.0
    short = action_reward(Click(point=(120, 210)), ref, W)
    assert short.type == 0.0


def test_reference_point_without_box_is_an_error() -> None:
    with pytest.raises(RewardError, match="no target box"):
        action_reward(Click(point=(1, 1)), ReferenceAction(Click(point=(1, 1))), W)
    with pytest.raises(RewardError, match="either negative"):
        ReferenceAction(None)


def test_refusal_on_negative_and_positive_items() -> None:
    negative = ReferenceAction(None, negative=True)
    refused = action_reward("[-1,-1]", negative, W)
    assert (refused.format, refused.type, refused.params, refused.total) == (1.0, 1.0, 1.0, pytest.approx(1.0))
    pointed = action_reward("[120,210]", negative, W)
    assert pointed.total == pytest.approx(0.1)
    positive = ReferenceAction(Click(point=(120, 210)), boxes={"point": BOX})
    assert action_reward("[-1,-1]", positive, W).total == pytest.approx(0.1)


def test_grounding_reward() -> None:
    assert grounding_reward("[120,210]", BOX, W).total == pytest.approx(1.0)
    assert grounding_reward("[140,210]", BOX, W).params == pytest.approx(math.exp(-0.5))
    assert grounding_reward("[100,200,140,220]", BOX, W).params == 1.0  # a box answer is scored by its centre
    assert grounding_reward("[-1,-1]", None, W).total == pytest.approx(1.0)
    assert grounding_reward("[5,5]", None, W).params == 0.0
    assert grounding_reward("somewhere near [5,5]", BOX, W).format == 0.0
    assert read_prediction("[-1,-1]").refused


def test_trace_and_step_rewards() -> None:
    assert [trace_reward(o) for o in TraceOutcome] == [1.0, 0.3, 0.0, 0.0]
    assert trace_reward(TraceOutcome.PARTIAL, TraceRewards(partial=0.5)) == 0.5
    assert [step_reward(label) for label in StepLabel] == [1.0, 0.2, 0.0, -1.0]
    assert step_reward("incorrect", StepRewards(incorrect=-0.5)) == -0.5
    with pytest.raises(RewardError):
        StepRewards(exploratory=2.0)
    with pytest.raises(RewardError):
        TraceRewards(unknown=1.0)


def test_vote_rewards_never_pay_unknown_as_success() -> None:
    abstain = Verdict("vlm", Vote.ABSTAIN, 0.0)
    assert vote_reward(aggregate([abstain, abstain], "majority")) == 0.0
    tie = [Verdict("a", Vote.SUCCESS), Verdict("b", Vote.FAILURE)]
    assert vote_reward(aggregate(tie, "majority")) == 0.0
    assert vote_reward(aggregate([Verdict("a", Vote.SUCCESS), abstain], "majority")) == 1.0


def test_verification_value_signs_steps_by_label_and_outcome() -> None:
    from uivenus.verify.rewards import verification_value

    assert verification_value("correct", "success") == 1.0
    assert verification_value("incorrect", "failed") == -1.0
    assert verification_value(None, "failed") == -1.0 and verification_value("exploratory", None) == 0.2
    assert verification_value(None, "unknown") is None and verification_value(None, None) is None
    assert verification_value("correct", "partial") < verification_value("correct", "success")
