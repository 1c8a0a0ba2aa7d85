"""Check kind "osworld": the verdict is the task's own OSWorld evaluator run on the live desktop.

The solver plays the task's stored solution: our extension field `"uivenus": {"reference": [...], "wrong": [...]}`
of the task JSON holds action calls in our text grammar (`uivenus.actions.calls`), parsed as data and never
executed; `task.check["solution"]` picks the list (default "reference"), and `Finished()` follows unless the
list already ends the episode (an infeasible task's `CallUser`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from uivenus.actions.calls import parse_action
from uivenus.actions.space import Action, Finished
from uivenus.envs.base import Env
from uivenus.envs.checks import Checker, register_checker
from uivenus.envs.desktop import DesktopEnv
from uivenus.envs.osworld.evaluator import evaluate
from uivenus.envs.sandbox.solving import SolverError
from uivenus.records import TaskSpec

__all__ = ["OSWORLD_CHECKER", "solution", "verdict"]


def verdict(env: Env, task: TaskSpec) -> Mapping[str, Any]:
    """The task's evaluator on the env's live OSWorld session: passed, reason, score, error."""
    session = getattr(env, "osworld", None)
    if session is None:
        return {"passed": False, "reason": "the env runs no OSWorld task (reset it with this task first)",
                "score": 0.0, "error": "no OSWorld session"}
    evaluator = (task.check or {}).get("evaluator", session.task_json.get("evaluator"))
    result = evaluate(evaluator, session.context, last_action=getattr(env, "last_action", None))
    return {"passed": result.success, **result.to_dict()}


def solution(task: TaskSpec) -> list[Action]:
    """The actions of the task's stored solution (`check["solution"]`, default "reference"), ending the episode."""
    which = (task.check or {}).get("solution", "reference")
    stored = task.metadata.get("osworld", {}).get("uivenus", {})
    calls = stored.get(which) if isinstance(stored, Mapping) else None
    if not isinstance(calls, list) or not all(isinstance(c, str) for c in calls):
        raise SolverError(f"task {task.id} has no {which!r} solution: its JSON needs \"uivenus\": "
                          f"{{\"{which}\": [<action calls>]}}")
    actions = [parse_action(call) for call in calls]
    if not actions or not actions[-1].is_terminal:
        actions.append(Finished())
    return actions


def _solver(env: Env, task: TaskSpec) -> Iterator[Action]:
    return iter(solution(task))


def _ended(env: Env, action: Action) -> None:
    """The agent loop hands over the terminal action (a `CallUser` refuses), which no env step ever ran."""
    if isinstance(env, DesktopEnv):
        env.last_action = action


OSWORLD_CHECKER = register_checker(Checker("osworld", verdict, solver=_solver, on_terminal=_ended))
