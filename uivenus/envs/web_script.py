"""Scripted reference solutions for web tasks (check kind `scripted`): what the oracle plays on a live page.

Public web task sets have no checker and no reference solution; a set that wants an oracle ceiling (our local
test site, a user's own regression suite) gives each task a `reference`: a list of one-key steps acted on by
CSS selector, so the script survives layout changes that pixel coordinates would not:

    [{"click": "#q"}, {"type": "blue kettle"}, {"press": "enter"}, {"click": "a.product"}, {"finished": "done"}]

Step kinds (`STEP_KINDS`): `click` (a selector, scrolled into view first), `type` (text into the focused field),
`press` (`enter`), `scroll` (`up` / `down`), `back`, `wait` (seconds), `finished` (a message) and `answer` (the
answer text). The kind has no verdict of its own (`passed` is None): whether the goal was met is the trace
judges' call, as on any live site.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from uivenus.actions.space import (
    Action, Answer, Click, Direction, Finished, PressBack, PressEnter, Scroll, Type, Wait,
)
from uivenus.envs.base import Env
from uivenus.envs.checks import Checker, CheckOutcome, register_checker
from uivenus.envs.sandbox.solving import SolverError, reveal
from uivenus.records import TaskSpec

__all__ = ["SCRIPTED", "SCRIPTED_KIND", "STEP_KINDS", "ScriptError", "check_steps"]

SCRIPTED_KIND = "scripted"


class ScriptError(ValueError):
    """A reference script is malformed; the message names the step."""


def _click(env: Any, selector: str) -> Iterator[Action]:
    point = yield from reveal(env, selector)
    yield Click(point=point)


#: Each step kind: how its value becomes actions on the live page (the env answers DOM queries).
STEP_KINDS: Mapping[str, Callable[[Any, Any], Iterator[Action]]] = {
    "click": _click,
    "type": lambda env, text: iter((Type(content=str(text)),)),
    "press": lambda env, key: iter((PressEnter(),)),
    "scroll": lambda env, way: iter((Scroll(direction=Direction(str(way))),)),
    "back": lambda env, _: iter((PressBack(),)),
    "wait": lambda env, seconds: iter((Wait(seconds=float(seconds)),)),
    "finished": lambda env, message: iter((Finished(content=str(message) if message else None),)),
    "answer": lambda env, text: iter((Answer(content=str(text)),)),
}


def check_steps(steps: Any) -> list[dict[str, Any]]:
    """The script as plain data, or ScriptError naming the first bad step."""
    if not isinstance(steps, Sequence) or isinstance(steps, (str, bytes)) or not steps:
        raise ScriptError("a reference is a non-empty list of steps like {\"click\": \"#search\"}")
    out = []
    for i, step in enumerate(steps, 1):
        if not isinstance(step, Mapping) or len(step) != 1 or next(iter(step)) not in STEP_KINDS:
            raise ScriptError(f"reference step {i} must be one of {{{', '.join(STEP_KINDS)}: value}}, got {step!r}")
        kind, value = next(iter(step.items()))
        if kind == "press" and str(value).lower() != "enter":
            raise ScriptError(f"reference step {i}: press takes 'enter', got {value!r}")
        if kind == "scroll" and value not in ("up", "down"):
            raise ScriptError(f"reference step {i}: scroll takes 'up' or 'down', got {value!r}")
        out.append({kind: value})
    return out


def _verdict(env: Env, task: TaskSpec) -> Mapping[str, Any]:
    return {"passed": None, "reason": "a scripted reference has no checker: the trace judges decide"}


def _from_state(task: TaskSpec, state: Mapping[str, Any]) -> CheckOutcome:
    return CheckOutcome(None, "a scripted reference has no checker: the trace judges decide")


def _solver(env: Env, task: TaskSpec) -> Iterator[Action]:
    """The task's script, step by step on the live page (selectors are looked up as each step comes)."""
    for step in check_steps((task.check or {}).get("steps")):
        kind, value = next(iter(step.items()))
        try:
            yield from STEP_KINDS[kind](env, value)
        except SolverError as exc:
            raise SolverError(f"task {task.id}: reference step {step!r}: {exc}") from None


SCRIPTED = register_checker(Checker(SCRIPTED_KIND, _verdict, _from_state, _solver))
