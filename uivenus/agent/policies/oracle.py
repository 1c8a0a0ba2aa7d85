"""The oracle policy: answers with what the harness already knows to be right, the ceiling every eval is checked against.

It reads only `request.context`, never the messages, and writes its answer in the model grammar so it runs
through exactly the parsing and coordinate conversion a real model's reply does. Each kind of ground truth is
one entry of `ORACLE_SOURCES`, keyed by the context key that carries it and tried in registry order; an entry
returns None when its key is present but does not apply (e.g. `reference_refusal=False`). Coordinates go out
in the relative 0–999 frame of `context["screen_size"]` unless the context supplies its own `frame`.

Sandbox tasks: the agent loop puts the task's reference solver, started on the live env, under
`sandbox_solver`; the oracle pulls one action from it per request, so the solver reads the page the previous
step left, exactly as `envs.sandbox.runner` drives it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from uivenus.actions.coords import CoordinateError, Frame
from uivenus.actions.grammar import format_grounding, format_response
from uivenus.actions.space import Action, is_action
from uivenus.agent.policies.base import (
    PolicyBase, PolicyError, PolicyReply, PolicyRequest, PolicySpecError, register_policy,
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


def _frame(context: Mapping[str, Any]) -> Frame:
    frame = context.get("frame")
    if frame is not None:
        return frame
    if "screen_size" not in context:
        raise PolicyError("the oracle needs context['screen_size'] (or a 'frame') to write coordinates")
    width, height = context["screen_size"]
    return Frame.relative(int(width), int(height))


@oracle_source("reference")
def _reference_actions(context: Mapping[str, Any]) -> str:
    """A reference action sequence in screen pixels (CAPTCHA solutions, scripted tasks): all of it, comma-joined."""
    reference = context["reference"]
    actions = (reference,) if is_action(reference) else tuple(reference)
    frame = _frame(context)
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
        return format_grounding(_frame(context).to_model(((x1 + x2) / 2, (y1 + y2) / 2)))
    except CoordinateError as exc:
        raise PolicyError(f"the reference box lies off the screen: {exc}") from None


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
        model_action = _frame(context).action_to_model(action)
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
