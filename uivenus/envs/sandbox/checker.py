"""The bundled sandbox apps' check kind ("sandbox"): each task's exact checker over the app's state, and its
reference solution, registered with the one check registry (`uivenus.envs.checks`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from uivenus.actions.space import Action
from uivenus.envs.base import Env, EnvError
from uivenus.envs.checks import Checker, CheckOutcome, register_checker
from uivenus.envs.sandbox.solving import SolverError
from uivenus.envs.sandbox.tasks import check_spec, get_task
from uivenus.records import TaskSpec

#: The live page queries the sandbox reference solutions read.
DOM_QUERY = ("center", "exists", "text", "app_state")


def sandbox_verdict(env: Env, task: TaskSpec) -> Mapping[str, Any]:
    """The task's checker over the app state the live page reports."""
    try:
        state = env.app_state()  # type: ignore[attr-defined]
    except (EnvError, AttributeError) as exc:
        return {"passed": False, "reason": f"no app state to check ({exc})"}
    result = check_spec(task, state)
    return {"passed": result.passed, "reason": result.reason}


def sandbox_state_check(task: TaskSpec, state: Mapping[str, Any]) -> CheckOutcome:
    """The task's checker over `state["app_state"]` (BrowserEnv.state() on a sandbox page); SandboxTaskError for a
    check naming no task."""
    app_state = state.get("app_state")
    if app_state is None:
        return CheckOutcome(None, "the final page is no sandbox app (state has no app_state)")
    result = check_spec(task, app_state)
    return CheckOutcome(result.passed, result.reason)


def sandbox_solver(env: Env, task: TaskSpec) -> Iterator[Action]:
    """A sandbox task's reference solution, live on `env`; it reads the page through the env's DOM queries."""
    if not all(callable(getattr(env, name, None)) for name in DOM_QUERY):
        raise SolverError(f"{type(env).__name__} cannot query the page's DOM, which the sandbox solutions read")
    return get_task(task.check["task"]).solve(env)  # type: ignore[arg-type, index]


SANDBOX = register_checker(Checker("sandbox", sandbox_verdict, sandbox_state_check, sandbox_solver))
