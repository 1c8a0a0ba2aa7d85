"""Run a sandbox task's reference solution (or any given actions) in an environment and check the result.

This is how the bundled tasks prove they are solvable in both layouts, how wrong solutions prove the
checkers strict, and how later parts collect successful demonstrations. The solver is a generator that
reads the live page before each move, so it is driven one action at a time: execute, then resume it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from uivenus.actions.space import Action
from uivenus.envs.base import Env, EnvError, StepResult
from uivenus.envs.sandbox.solving import SolverError
from uivenus.envs.sandbox.tasks import CheckResult, DomQuery, SandboxTask, check_spec
from uivenus.records import TaskSpec


class SandboxEnv(Env, DomQuery, Protocol):
    """An environment that also answers DOM queries (BrowserEnv is one)."""


@dataclass(frozen=True)
class ReferenceRun:
    """What a run did and how its task's checker judged the final app state."""

    spec: TaskSpec
    actions: tuple[Action, ...]  # every action taken, the terminal one (e.g. Finished) included
    results: tuple[StepResult, ...]  # one per executed (non-terminal) action
    states: tuple[Mapping[str, Any] | None, ...]  # app state before the first step, then after each (None: no app)
    app_state: Mapping[str, Any]
    check: CheckResult
    error: str | None = None  # why the run stopped early: a failed step, a solver that got lost, the bound
    finished: bool = field(default=False)  # the solver ended with a terminal action

    @property
    def passed(self) -> bool:
        return self.check.passed and self.error is None

    def effective_steps(self) -> tuple[int, ...]:
        """Indices of the executed steps that changed the app state (what step labels and truncations use)."""
        return tuple(i for i in range(len(self.results)) if self.states[i + 1] != self.states[i])


def run_reference(task: SandboxTask, env: SandboxEnv, base_url: str, layout: str = "web", *,
                  phrasing: int = 0) -> ReferenceRun:
    """Reset `env` to `task` served from `base_url` in `layout` and let its reference solver drive."""
    spec = task.spec(base_url, layout, phrasing)
    env.reset(spec)
    return _drive(spec, env, task.solve(env))


def run_actions(task: SandboxTask, env: SandboxEnv, base_url: str, layout: str,
                actions: Iterable[Action]) -> ReferenceRun:
    """Reset `env` to `task` and execute `actions` as given (e.g. a truncated or wrong solution)."""
    spec = task.spec(base_url, layout)
    env.reset(spec)
    return _drive(spec, env, iter(actions))


def _drive(spec: TaskSpec, env: SandboxEnv, moves: Iterable[Action]) -> ReferenceRun:
    taken: list[Action] = []
    results: list[StepResult] = []
    states: list[Mapping[str, Any] | None] = [_app_state(env)]
    error: str | None = None
    finished = False
    moves = iter(moves)
    while True:
        try:
            action = next(moves)  # the solver reads the page the previous step left
        except StopIteration:
            break
        except SolverError as exc:
            error = f"solver: {exc}"
            break
        if not action.is_terminal and len(results) >= spec.max_steps:
            error = f"no terminal action within {spec.max_steps} steps"
            break
        taken.append(action)
        if action.is_terminal:
            finished = True
            break
        result = env.step(action)
        results.append(result)
        states.append(_app_state(env))
        if not result.executed:
            error = f"step {len(results) - 1} ({action.type}) did not execute: {result.error}"
            break
    app_state = states[-1]
    if app_state is None:  # the run ended on a page that is no sandbox app: nothing to check passes
        app_state, error = {}, error or "the last page has no app state to check"
    return ReferenceRun(
        spec=spec, actions=tuple(taken), results=tuple(results), states=tuple(states), app_state=app_state,
        check=check_spec(spec, app_state), error=error, finished=finished,
    )


def _app_state(env: SandboxEnv) -> Mapping[str, Any] | None:
    """The page's app state, or None on a page that is no sandbox app (e.g. mid-way in another site)."""
    try:
        return env.app_state()
    except EnvError:
        return None
