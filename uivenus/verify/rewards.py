"""Rewards: trace rewards from verdicts, step rewards from labels, and action rewards against a reference.

Small pure functions, so every number can be checked by hand and the trainers (Stage II RL) reuse them as they are.
The action reward follows the step-level GUI rewards of GUI-R1 / UI-R1 / InfiGUI-R1 / UI-Venus: format, then the
action type, then the parameters — a point scored inside its target box or by a Gaussian around the box centre
with σ = half the box size on each axis (GUI-G²), text by token F1 ≥ 0.5, scrolls and swipes by direction — and a
refusal `[-1,-1]` is what earns the reward on a negative item (the target is not on screen).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, TypeAlias

from uivenus.actions.grammar import parse_response
from uivenus.actions.grounding import GroundingAnswer, parse_grounding
from uivenus.actions.registries import check_covers
from uivenus.actions.space import (
    ACTION_CLASSES, Action, ActionType, Click, Direction, Point, Scroll, Swipe, is_action,
)
from uivenus.actions.syntax import ParseError
from uivenus.actions.values import ActionError
from uivenus.verify.base import StepLabel, TraceOutcome, VerifyError
from uivenus.verify.voting import VoteResult

__all__ = [
    "Box", "POINT_SCORERS", "Prediction", "ReferenceAction", "RewardBreakdown", "RewardError", "RewardWeights",
    "StepRewards", "TraceRewards", "action_reward", "direction_reward", "format_reward", "gaussian_point_reward",
    "grounding_reward", "point_in_box", "read_prediction", "refusal_reward", "step_reward", "swipe_direction",
    "text_f1", "text_reward", "trace_reward", "type_reward", "verification_value", "vote_reward",
]

Box: TypeAlias = tuple[float, float, float, float]  # (x1, y1, x2, y2), same frame as the points scored in it

#: The least token F1 at which a typed text counts as right.
TEXT_F1_THRESHOLD = 0.5


class RewardError(VerifyError):
    """A reward cannot be computed from what was given (a degenerate box, a reference point without a box)."""


# --- trace and step rewards ---------------------------------------------------------------------

@dataclass(frozen=True)
class TraceRewards:
    """Reward per trace outcome; `unknown` (no judge decided) must earn less than success."""

    success: float = 1.0
    partial: float = 0.3
    failed: float = 0.0
    unknown: float = 0.0

    def __post_init__(self) -> None:
        if not self.unknown < self.success:
            raise RewardError(f"an unknown outcome must earn less than success, got unknown={self.unknown}, "
                              f"success={self.success}")


@dataclass(frozen=True)
class StepRewards:
    """Reward per step label, ordered correct ≥ exploratory ≥ ineffective ≥ incorrect."""

    correct: float = 1.0
    exploratory: float = 0.2
    ineffective: float = 0.0
    incorrect: float = -1.0

    def __post_init__(self) -> None:
        if not self.correct >= self.exploratory >= self.ineffective >= self.incorrect:
            raise RewardError(f"step rewards must be ordered correct >= exploratory >= ineffective >= incorrect, "
                              f"got {self}")


def trace_reward(outcome: TraceOutcome | str, rewards: TraceRewards = TraceRewards()) -> float:
    return float(getattr(rewards, TraceOutcome(outcome).value))


def vote_reward(result: VoteResult, rewards: TraceRewards = TraceRewards()) -> float:
    """The trace reward of a vote over judges (unknown earns `rewards.unknown`, never success)."""
    return trace_reward(result.outcome.trace_outcome, rewards)


def step_reward(label: StepLabel | str, rewards: StepRewards = StepRewards()) -> float:
    return float(getattr(rewards, StepLabel(label).value))


def verification_value(label: StepLabel | str | None, outcome: TraceOutcome | str | None,
                       steps: StepRewards = StepRewards(), traces: TraceRewards = TraceRewards()) -> float | None:
    """What verification says of a recorded step, in [-1, 1] with the default rewards: the mean of its step reward
    and its trace reward centred between failed (-1) and success (+1); None when neither is known (an unknown
    outcome says nothing)."""
    parts = []
    if label is not None:
        parts.append(step_reward(label, steps))
    if outcome is not None and TraceOutcome(outcome) is not TraceOutcome.UNKNOWN:
        span = traces.success - traces.failed
        parts.append(2 * (trace_reward(outcome, traces) - traces.failed) / span - 1 if span > 0 else 0.0)
    return sum(parts) / len(parts) if parts else None


# --- pieces of the action reward ----------------------------------------------------------------

def _check_box(box: Box, *, sized: bool) -> tuple[float, float, float, float]:
    if len(box) != 4 or not all(math.isfinite(float(v)) for v in box):
        raise RewardError(f"a box is four finite numbers (x1, y1, x2, y2), got {box!r}")
    x1, y1, x2, y2 = map(float, box)
    if (x2 <= x1 or y2 <= y1) if sized else (x2 < x1 or y2 < y1):
        rule = "x1 < x2 and y1 < y2" if sized else "x1 <= x2 and y1 <= y2"
        raise RewardError(f"box {box!r} needs {rule}")
    return x1, y1, x2, y2


def point_in_box(point: Point, box: Box) -> bool:
    """Edges included."""
    x1, y1, x2, y2 = _check_box(box, sized=False)
    return x1 <= point[0] <= x2 and y1 <= point[1] <= y2


def gaussian_point_reward(point: Point, box: Box) -> float:
    """exp(−½((x−cx)²/σx² + (y−cy)²/σy²)) with σx = ½·width, σy = ½·height (GUI-G²): 1 at the centre."""
    x1, y1, x2, y2 = _check_box(box, sized=True)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    sx, sy = 0.5 * (x2 - x1), 0.5 * (y2 - y1)
    return math.exp(-0.5 * (((point[0] - cx) / sx) ** 2 + ((point[1] - cy) / sy) ** 2))


#: How a predicted point is scored against its target box.
POINT_SCORERS: Mapping[str, Callable[[Point, Box], float]] = MappingProxyType({
    "gaussian": gaussian_point_reward,
    "box": lambda point, box: float(point_in_box(point, box)),
})


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def text_f1(pred: str, ref: str) -> float:
    """Token F1 (case-folded word tokens, multiset overlap); two empty texts agree."""
    p, r = _tokens(pred), _tokens(ref)
    if not p or not r:
        return float(p == r)
    overlap = sum((Counter(p) & Counter(r)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(p), overlap / len(r)
    return 2 * precision * recall / (precision + recall)


def text_reward(pred: str, ref: str, threshold: float = TEXT_F1_THRESHOLD) -> float:
    return float(text_f1(pred, ref) >= threshold)


def swipe_direction(start: Point, end: Point) -> Direction | None:
    """Which way the finger moves (the dominant axis); None for no movement or an exact diagonal."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    if abs(dx) == abs(dy):
        return None
    if abs(dx) > abs(dy):
        return Direction.RIGHT if dx > 0 else Direction.LEFT
    return Direction.DOWN if dy > 0 else Direction.UP


def direction_reward(pred: Scroll | Swipe, ref: Scroll | Swipe) -> float:
    """Scrolls by their direction, swipes by the direction the finger moves; 1 when they agree."""
    def way(action: Scroll | Swipe) -> Direction | None:
        return action.direction if isinstance(action, Scroll) else swipe_direction(action.start, action.end)

    wanted = way(ref)
    if wanted is None:
        raise RewardError(f"the reference {ref} has no direction (start and end coincide or lie on a diagonal)")
    return float(way(pred) == wanted)


def refusal_reward(refused: bool, negative: bool) -> float:
    """1 for refusing (`[-1,-1]`) an item whose target is not on screen; 0 for anything else."""
    return float(refused and negative)


def type_reward(pred: Action, ref: Action) -> float:
    return float(pred.type == ref.type)


# --- predictions and references -----------------------------------------------------------------

@dataclass(frozen=True)
class Prediction:
    """A model's answer read strictly: an action, a refusal, or malformed (`well_formed` False)."""

    well_formed: bool
    action: Action | None = None
    refused: bool = False
    error: str = ""


_STRICT_GROUNDING = re.compile(r"\s*[\[(]\s*-?[\d.eE+-]+(?:\s*,\s*-?[\d.eE+-]+){1,3}\s*[\])]\s*")


def read_prediction(pred: str | Action | GroundingAnswer) -> Prediction:
    """An action response (`<action>…</action>`, strict grammar) or a bare grounding answer (`[x,y]`, `[-1,-1]`,
    `[x1,y1,x2,y2]`, nothing around it); a grounding point becomes a Click there."""
    if is_action(pred):
        return Prediction(True, action=pred)  # type: ignore[arg-type]
    if isinstance(pred, GroundingAnswer):
        return Prediction(True, refused=True) if pred.refused else Prediction(True, action=Click(point=pred.point))
    if not isinstance(pred, str):
        raise RewardError(f"a prediction is model text, an action or a GroundingAnswer, got {type(pred).__name__}")
    try:
        return Prediction(True, action=parse_response(pred).action)
    except (ParseError, ActionError) as exc:
        action_error = str(exc)
    if _STRICT_GROUNDING.fullmatch(pred):
        try:
            return read_prediction(parse_grounding(pred))
        except (ParseError, ActionError) as exc:
            return Prediction(False, error=str(exc))
    return Prediction(False, error=action_error)


def format_reward(text: str) -> float:
    """1 when `text` is a well-formed action response or a bare grounding answer under the strict grammar."""
    return float(read_prediction(text).well_formed)


@dataclass(frozen=True)
class ReferenceAction:
    """The right answer for one step: an action and the target box of each point it scores, or a negative item.

    `boxes` are keyed by the point's path: "point", "start", "end", and "<i>.point" for member i of a Sequence.
    """

    action: Action | None
    boxes: Mapping[str, Box] = field(default_factory=dict)
    negative: bool = False

    def __post_init__(self) -> None:
        if self.negative != (self.action is None):
            raise RewardError("a reference is either negative (no action: the target is not on screen) or has an "
                              f"action; got negative={self.negative} with action {self.action!r}")
        object.__setattr__(self, "boxes", MappingProxyType(dict(self.boxes)))


@dataclass(frozen=True)
class RewardWeights:
    """total = format·r_format + type·r_type + params·r_params; weights that sum to 1 keep total in [0, 1]."""

    format: float = 0.1
    type: float = 0.3
    params: float = 0.6

    def __post_init__(self) -> None:
        if any(getattr(self, f.name) < 0 for f in fields(self)):
            raise RewardError(f"reward weights must be non-negative, got {self}")


@dataclass(frozen=True)
class RewardBreakdown:
    total: float
    format: float
    type: float
    params: float
    detail: Mapping[str, Any] = field(default_factory=dict)


# --- parameters -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Scoring:
    boxes: Mapping[str, Box]
    point: Callable[[Point, Box], float]
    text_threshold: float
    prefix: str = ""


FieldScorer = Callable[[Any, Any, str, _Scoring], float]


def _score_point(pred: Any, ref: Any, path: str, ctx: _Scoring) -> float:
    box = ctx.boxes.get(path)
    if box is None:
        raise RewardError(f"the reference has a point at {path!r} but no target box for it; pass "
                          f"boxes={{{path!r}: (x1, y1, x2, y2)}}")
    return 0.0 if pred is None else ctx.point(pred, box)


def _score_text(pred: Any, ref: Any, path: str, ctx: _Scoring) -> float:
    return text_reward(pred or "", ref, ctx.text_threshold)


def _score_keys(pred: Any, ref: Any, path: str, ctx: _Scoring) -> float:
    return float(pred is not None and {k.lower() for k in pred} == {k.lower() for k in ref})


def _score_name(pred: Any, ref: Any, path: str, ctx: _Scoring) -> float:
    return float(pred is not None and pred.strip().casefold() == ref.strip().casefold())


def _score_url(pred: Any, ref: Any, path: str, ctx: _Scoring) -> float:
    return float(pred is not None and pred.strip().rstrip("/") == ref.strip().rstrip("/"))


def _score_equal(pred: Any, ref: Any, path: str, ctx: _Scoring) -> float:
    return float(pred == ref)


#: How each parameter is scored, by field name. Magnitudes (`duration`, `seconds`, `amount`, `repeat`) are not
#: scored: step-level rewards judge what is acted on and how, not how long or how often. `actions` (Sequence)
#: is scored member by member in `TYPE_SCORERS`.
FIELD_SCORERS: Mapping[str, FieldScorer | None] = MappingProxyType({
    "point": _score_point, "start": _score_point, "end": _score_point,
    "content": _score_text, "keys": _score_keys, "app": _score_name, "url": _score_url,
    "index": _score_equal, "direction": _score_equal,
    "duration": None, "seconds": None, "amount": None, "repeat": None, "actions": None,
})
check_covers("FIELD_SCORERS needs an entry for every action field (and no other)", FIELD_SCORERS,
             (f.name for cls in ACTION_CLASSES.values() for f in fields(cls)))


def _fields_score(pred: Action, ref: Action, ctx: _Scoring) -> tuple[float, dict[str, float]]:
    """Mean over the reference's set parameters (unset optional ones are not scored); 1 with none to score."""
    detail: dict[str, float] = {}
    for f in fields(ref):  # type: ignore[arg-type]
        wanted = getattr(ref, f.name)
        if wanted is None:
            continue
        scorer = FIELD_SCORERS[f.name]
        if scorer is not None:
            detail[ctx.prefix + f.name] = scorer(getattr(pred, f.name), wanted, ctx.prefix + f.name, ctx)
    return (sum(detail.values()) / len(detail) if detail else 1.0), detail


def _direction_score(pred: Action, ref: Action, ctx: _Scoring) -> tuple[float, dict[str, float]]:
    score = direction_reward(pred, ref)  # type: ignore[arg-type]
    return score, {ctx.prefix + "direction": score}


def _sequence_score(pred: Action, ref: Action, ctx: _Scoring) -> tuple[float, dict[str, float]]:
    """Member by member (same length, same types), each scored as its own action; the mean of the members."""
    pred_actions, ref_actions = pred.actions, ref.actions  # type: ignore[union-attr]
    if len(pred_actions) != len(ref_actions):
        return 0.0, {ctx.prefix + "length": 0.0}
    detail: dict[str, float] = {}
    scores = []
    for i, (p, r) in enumerate(zip(pred_actions, ref_actions, strict=True)):
        member = _Scoring(ctx.boxes, ctx.point, ctx.text_threshold, prefix=f"{ctx.prefix}{i}.")
        score, inner = _params(p, r, member) if p.type == r.type else (0.0, {f"{member.prefix}type": 0.0})
        scores.append(score)
        detail.update(inner)
    return sum(scores) / len(scores), detail


ParamScorer = Callable[[Action, Action, _Scoring], tuple[float, dict[str, float]]]
#: Action types scored otherwise than field by field: scrolls and swipes by direction, sequences member-wise.
TYPE_SCORERS: Mapping[ActionType, ParamScorer] = MappingProxyType({
    ActionType.SCROLL: _direction_score,
    ActionType.SWIPE: _direction_score,
    ActionType.SEQUENCE: _sequence_score,
})


def _params(pred: Action, ref: Action, ctx: _Scoring) -> tuple[float, dict[str, float]]:
    return TYPE_SCORERS.get(ref.type, _fields_score)(pred, ref, ctx)


# --- the action reward --------------------------------------------------------------------------

def action_reward(pred: str | Action | GroundingAnswer, reference: ReferenceAction,
                  weights: RewardWeights = RewardWeights(), *, point: str = "gaussian",
                  text_threshold: float = TEXT_F1_THRESHOLD) -> RewardBreakdown:
    """Format, type and parameter rewards of one answer against the reference, and their weighted total.

    A malformed answer earns nothing; a wrong type earns no parameter reward. On a negative item the refusal is
    both the right type and the right parameters; on a positive item a refusal earns neither.
    `point` chooses how points are scored: "gaussian" (default) or "box" (1 inside the target box).
    """
    point_scorer = POINT_SCORERS.get(point)
    if point_scorer is None:
        raise RewardError(f"unknown point scoring {point!r}; use one of {', '.join(POINT_SCORERS)}")
    read = read_prediction(pred)
    detail: dict[str, Any] = {}
    if not read.well_formed:
        r_format = r_type = r_params = 0.0
        detail["error"] = read.error
    elif reference.negative or read.refused:
        r_format = 1.0
        r_type = r_params = refusal_reward(read.refused, reference.negative)
        detail["refused"] = read.refused
    else:
        r_format = 1.0
        r_type = type_reward(read.action, reference.action)  # type: ignore[arg-type]
        r_params = 0.0
        if r_type:
            ctx = _Scoring(reference.boxes, point_scorer, text_threshold)
            r_params, detail = _params(read.action, reference.action, ctx)  # type: ignore[arg-type]
    total = weights.format * r_format + weights.type * r_type + weights.params * r_params
    return RewardBreakdown(total=total, format=r_format, type=r_type, params=r_params,
                           detail=MappingProxyType(detail))


def grounding_reward(answer: str | GroundingAnswer, target: Box | None, weights: RewardWeights = RewardWeights(),
                     *, point: str = "gaussian") -> RewardBreakdown:
    """A grounding answer against its target box, or against `None` for a negative item (refusal expected)."""
    if target is None:
        reference = ReferenceAction(None, negative=True)
    else:
        x1, y1, x2, y2 = _check_box(target, sized=False)
        reference = ReferenceAction(Click(point=((x1 + x2) / 2, (y1 + y2) / 2)), boxes={"point": target})
    return action_reward(answer, reference, weights, point=point)
