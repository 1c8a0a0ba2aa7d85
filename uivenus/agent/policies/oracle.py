"""The oracle policy: answers with what the harness already knows to be right, the ceiling every eval is checked
against.

It is told the answers out of band: for each item or episode the harness asks it for an instance with that item's
`AnswerKey` (`with_answers`); requests carry none, so no policy under test can read them. It never reads the
messages, and writes its answer in the model grammar so it runs through exactly the parsing and coordinate
conversion a real model's reply does. Each kind of ground truth is one entry of `ORACLE_SOURCES`, keyed by the
`AnswerKey` field that holds it and tried in registry order; an entry returns None when its field is set but does
not apply (`refusal=False`). Coordinates go out in the request's frame (`request_frame`: the context's `frame`,
else relative 0–999 over `screen_size`).

Sandbox and desktop tasks: the agent loop starts the task's reference solver on the live env and hands it over as
`AnswerKey.solver`; the oracle pulls one action from it per request, so the solver reads the page the previous
step left, exactly as `envs.sandbox.runner` drives it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import fields
from typing import Any

from uivenus.actions.coords import CoordinateError
from uivenus.actions.grammar import format_response
from uivenus.actions.grounding import format_grounding
from uivenus.actions.space import Action
from uivenus.agent.policies.base import (
    AnswerKey, PolicyBase, PolicyError, PolicyReply, PolicyRequest, PolicySpecError, register_policy, request_frame,
)

#: (the AnswerKey field's value, the request's context) -> the reply, or None when the value does not apply.
OracleSource = Callable[[Any, Mapping[str, Any]], str | None]

#: AnswerKey field -> how the oracle answers from it (first applicable entry wins).
ORACLE_SOURCES: dict[str, OracleSource] = {}

_KEY_FIELDS = frozenset(f.name for f in fields(AnswerKey))


def oracle_source(name: str) -> Callable[[OracleSource], OracleSource]:
    """Register how the oracle answers when its answer key sets the field `name`."""
    if name not in _KEY_FIELDS:
        raise ValueError(f"AnswerKey has no field {name!r}; its fields are {', '.join(sorted(_KEY_FIELDS))}")

    def decorate(source: OracleSource) -> OracleSource:
        ORACLE_SOURCES[name] = source
        return source

    return decorate


@oracle_source("actions")
def _reference_actions(actions: tuple[Action, ...], context: Mapping[str, Any]) -> str:
    """A reference action sequence (CAPTCHA solutions, scripted tasks): all of it, comma-joined."""
    frame = request_frame(context)
    try:
        return format_response([frame.action_to_model(action) for action in actions])
    except CoordinateError as exc:
        raise PolicyError(f"the reference action lies off the screen: {exc}") from None


@oracle_source("refusal")
def _refusal(refusal: bool, context: Mapping[str, Any]) -> str | None:
    """A grounding item whose target is absent: refuse."""
    return format_grounding(None) if refusal else None


@oracle_source("box")
def _reference_box(box: tuple[float, float, float, float], context: Mapping[str, Any]) -> str:
    """A grounding item's target box: its centre."""
    x1, y1, x2, y2 = box
    try:
        return format_grounding(request_frame(context).to_model(((x1 + x2) / 2, (y1 + y2) / 2)))
    except CoordinateError as exc:
        raise PolicyError(f"the reference box lies off the screen: {exc}") from None


def polygon_interior_point(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """A point well inside a polygon (the middle of the widest inside run of a few horizontal scanlines), since its
    bounding-box centre may lie outside; ValueError when the outline encloses no area."""
    if len(points) < 3:
        raise ValueError(f"a polygon needs at least 3 points, got {len(points)}")
    edges = list(zip(points, [*points[1:], points[0]]))
    ys = [y for _, y in points]
    best: tuple[float, tuple[float, float]] | None = None
    for fraction in (0.5, 0.25, 0.75, 0.125, 0.375, 0.625, 0.875):
        y = min(ys) + fraction * (max(ys) - min(ys))
        crossings = sorted(xi + (y - yi) * (xj - xi) / (yj - yi)
                           for (xi, yi), (xj, yj) in edges if (yi > y) != (yj > y))
        for left, right in zip(crossings[::2], crossings[1::2]):
            if best is None or right - left > best[0]:
                best = (right - left, ((left + right) / 2, y))
    if best is None:
        raise ValueError(f"the polygon {tuple(points)} encloses no area")
    return best[1]


@oracle_source("polygon")
def _reference_polygon(points: Sequence[tuple[float, float]], context: Mapping[str, Any]) -> str:
    """A grounding item's target outline (OSWorld-G): a point inside it."""
    try:
        return format_grounding(request_frame(context).to_model(polygon_interior_point(points)))
    except (CoordinateError, ValueError) as exc:
        raise PolicyError(f"the reference polygon has no on-screen interior point: {exc}") from None


@oracle_source("solver")
def _sandbox_step(solver: Iterator[Action], context: Mapping[str, Any]) -> str:
    """The next move of a task's live reference solver (an iterator of actions in screen pixels)."""
    from uivenus.envs.base import EnvError
    from uivenus.envs.sandbox.solving import SolverError

    try:
        action = next(solver)
    except StopIteration:
        raise PolicyError("the task's reference solution ended without a terminal action") from None
    except (SolverError, EnvError) as exc:
        raise PolicyError(f"the reference solution cannot go on from this page: {exc}") from None
    try:
        model_action = request_frame(context).action_to_model(action)
    except CoordinateError as exc:
        raise PolicyError(f"the reference solution acts off the screen: {exc}") from None
    return format_response(model_action, think=f"The reference solution's next step is a {action.type.value}.")


class OraclePolicy(PolicyBase):
    """Replies with the answers its harness told it through `with_answers`; untold, it has nothing to say."""

    name = "oracle"

    def __init__(self, key: AnswerKey | None = None) -> None:
        self.key = key

    def with_answers(self, key: AnswerKey) -> OraclePolicy:
        return OraclePolicy(key)

    def act(self, request: PolicyRequest) -> PolicyReply:
        if self.key is None:
            raise PolicyError("the oracle was told no answers: a harness gives them per item with "
                              "with_answers(policy, AnswerKey(...)); requests never carry them")
        for name, source in ORACLE_SOURCES.items():
            value = getattr(self.key, name)
            if value is not None and (text := source(value, request.context)) is not None:
                return PolicyReply(text=text)
        raise PolicyError("the oracle holds no ground truth for this task: it replays a task's reference solution "
                          "or its known target, so run it on a bundled task (uivenus run --task sandbox:APP/TASK) "
                          f"or a generated dataset (its answer key reads one of {', '.join(ORACLE_SOURCES)})")


@register_policy("oracle")
def _oracle(spec: str) -> OraclePolicy:
    if spec:
        raise PolicySpecError(f"the oracle takes no options, got 'oracle:{spec}'; use plain 'oracle'")
    return OraclePolicy()
