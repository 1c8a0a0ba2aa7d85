"""The oracle policy: answers with what the harness already knows to be right, the ceiling every eval is checked against.

It reads only `request.context`, never the messages, and writes its answer in the model grammar so it runs
through exactly the parsing and coordinate conversion a real model's reply does. Each kind of ground truth is
one entry of `ORACLE_SOURCES`, keyed by the context key that carries it and tried in registry order; an entry
returns None when its key is present but does not apply (e.g. `reference_refusal=False`). Coordinates go out
in the request's frame (`request_frame`: the context's `frame`, else relative 0–999 over `screen_size`).

Sandbox tasks: the agent loop puts the task's reference solver, started on the live env, under
`sandbox_solver`; the oracle pulls one action from it per request, so the solver reads the page the previous
step left, exactly as `envs.sandbox.runner` drives it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from uivenus.actions.coords import CoordinateError
from uivenus.actions.grammar import format_grounding, format_response
from uivenus.actions.space import Action, is_action
from uivenus.agent.policies.base import (
    PolicyBase, PolicyError, PolicyReply, PolicyRequest, PolicySpecError, register_policy, request_frame,
)

OracleSource = Callable[[Mapping[str, Any]], str | None]

#: Context key -> how the oracle answers from it (first applicable entry wins).
ORACLE_SOURCES: dict[str, OracleSource] = {}


def oracle_source(key: str) -> Callable[[OracleSource], OracleSource]:
    """Register how the oracle answers when the request context carries `key`."""
    def decorate(source: OracleSource) -> OracleSource:
        ORACLE_SOURCES[key] = source
        return source

    return decorate


@oracle_source("reference")
def _reference_actions(context: Mapping[str, Any]) -> str:
    """A reference action sequence in screen pixels (CAPTCHA solutions, scripted tasks): all of it, comma-joined."""
    reference = context["reference"]
    actions = (reference,) if is_action(reference) else tuple(reference)
    frame = request_frame(context)
    try:
        return format_response([frame.action_to_model(action) for action in actions])
    except CoordinateError as exc:
        raise PolicyError(f"the reference action lies off the screen: {exc}") from None


@oracle_source("reference_refusal")
def _refusal(context: Mapping[str, Any]) -> str | None:
    """A grounding item whose target is absent: refuse."""
    return format_grounding(None) if context["reference_refusal"] else None


@oracle_source("reference_box")
def _reference_box(context: Mapping[str, Any]) -> str:
    """A grounding item's target box (x1, y1, x2, y2) in screen pixels, or anything with such a `.box`: its centre."""
    value = context["reference_box"]
    x1, y1, x2, y2 = getattr(value, "box", value)
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


@oracle_source("reference_polygon")
def _reference_polygon(context: Mapping[str, Any]) -> str:
    """A grounding item's target outline (points in screen pixels, OSWorld-G): a point inside it."""
    points = [(float(x), float(y)) for x, y in context["reference_polygon"]]
    try:
        return format_grounding(request_frame(context).to_model(polygon_interior_point(points)))
    except (CoordinateError, ValueError) as exc:
        raise PolicyError(f"the reference polygon has no on-screen interior point: {exc}") from None


@oracle_source("sandbox_solver")
def _sandbox_step(context: Mapping[str, Any]) -> str:
    """The next move of a sandbox task's live reference solver (an iterator of actions in screen pixels)."""
    from uivenus.envs.sandbox.solving import SolverError

    try:
        action: Action = next(context["sandbox_solver"])
    except StopIteration:
        raise PolicyError("the sandbox task's reference solution ended without a terminal action") from None
    except SolverError as exc:
        raise PolicyError(f"the reference solution cannot go on from this page: {exc}") from None
    try:
        model_action = request_frame(context).action_to_model(action)
    except CoordinateError as exc:
        raise PolicyError(f"the reference solution acts off the screen: {exc}") from None
    return format_response(model_action, think=f"The reference solution's next step is a {action.type.value}.")


class OraclePolicy(PolicyBase):
    """Replies with the reference answer the request's context carries."""

    name = "oracle"

    def act(self, request: PolicyRequest) -> PolicyReply:
        for key, source in ORACLE_SOURCES.items():
            if key in request.context and (text := source(request.context)) is not None:
                return PolicyReply(text=text)
        raise PolicyError(f"the oracle found no ground truth in the request context; it reads one of "
                          f"{', '.join(ORACLE_SOURCES)}")


@register_policy("oracle")
def _oracle(spec: str) -> OraclePolicy:
    if spec:
        raise PolicySpecError(f"the oracle takes no options, got 'oracle:{spec}'; use plain 'oracle'")
    return OraclePolicy()
