"""The mail, shop, files and calendar apps: every bundled task is solvable and its checker is strict.

Each task's reference solver drives real Chromium in both layouts (desktop web and touch phone) and must
pass the task's checker. A wrong solution must fail it: the reference's actions with every typed text
reversed, or, for a solution that types nothing, cut just before its last effective step (the Archive,
Delete, confirm or Remove that commits the change). Wrong solutions run in one layout per task,
alternating between the two, to keep the file fast.
"""

from __future__ import annotations

import dataclasses

import pytest

from uivenus.actions.space import Action, Click, Finished, TakeNote, Type
from uivenus.envs.sandbox import SandboxTask, tasks_of
from uivenus.envs.sandbox.runner import ReferenceRun, run_actions, run_reference
from uivenus.envs.sandbox.suites.mail import INJECTION_ADDRESS

APPS = ("mail", "shop", "files", "calendar")
LAYOUTS = ("web", "phone")
TASKS = [task for app in APPS for task in tasks_of(app)]
#: Each wrong solution runs in one layout: the tasks alternate between them.
WRONG_LAYOUT = {task.id: LAYOUTS[i % 2] for i, task in enumerate(TASKS)}


def _ids(task: SandboxTask) -> str:
    return task.id


@pytest.fixture(scope="module")
def references() -> dict[tuple[str, str], ReferenceRun]:
    """Reference runs by (task id, layout), shared by the tests that need the reference's actions."""
    return {}


@pytest.fixture
def reference(request, sandbox_server, references):
    """reference(task, layout) -> the task's reference run in that layout (run once per module)."""

    def get(task: SandboxTask, layout: str) -> ReferenceRun:
        key = (task.id, layout)
        if key not in references:
            references[key] = run_reference(task, env_for(request, layout), sandbox_server.base_url, layout)
        return references[key]

    return get


def env_for(request, layout: str):
    return request.getfixturevalue("web_env" if layout == "web" else "phone_env")


def test_each_app_bundles_four_to_six_tasks_with_several_phrasings():
    for app in APPS:
        tasks = tasks_of(app)
        assert 4 <= len(tasks) <= 6, f"{app} has {len(tasks)} tasks"
        for task in tasks:
            assert len(set(task.instructions)) >= 2, f"{task.id} needs at least two phrasings"
    mail_setups = [str(task.setup) for task in tasks_of("mail")]
    assert all(INJECTION_ADDRESS in setup for setup in mail_setups), "every mailbox carries the injected message"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("task", TASKS, ids=_ids)
def test_reference_solution_passes(task, layout, reference):
    run = reference(task, layout)
    assert run.error is None, run.error
    assert run.finished and isinstance(run.actions[-1], Finished)
    assert run.check.passed, run.check.reason
    assert all(result.executed for result in run.results)


def wrong_solution(actions: tuple[Action, ...]) -> tuple[str, list[Action]]:
    """The reference with every typed text reversed, or, if it types nothing, cut before its last effective step."""
    if any(isinstance(a, Type) for a in actions):
        return "every typed text reversed", [
            dataclasses.replace(a, content=a.content[::-1] + "x") if isinstance(a, Type) else a for a in actions]
    effective = [a for a in actions if not a.is_terminal]
    while isinstance(effective[-1], TakeNote):  # a note changes nothing on the page
        effective.pop()
    return "its last effective step left out", [*effective[:-1], Finished()]


@pytest.mark.parametrize("task", TASKS, ids=_ids)
def test_wrong_solution_fails(task, request, sandbox_server, reference):
    layout = WRONG_LAYOUT[task.id]
    how, actions = wrong_solution(reference(task, layout).actions)
    run = run_actions(task, env_for(request, layout), sandbox_server.base_url, layout, actions)
    assert not run.check.passed, f"{task.id} passed with {how}: {run.check.reason}"
    assert run.check.reason


def test_wrong_solution_cuts_the_commit_step_of_a_solution_that_types_nothing():
    actions = (Click(point=(1, 1)), TakeNote(content="seen"), Click(point=(2, 2)), TakeNote(content="x"), Finished())
    assert wrong_solution(actions)[1] == [Click(point=(1, 1)), TakeNote(content="seen"), Finished()]
