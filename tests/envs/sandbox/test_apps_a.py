"""The launcher, settings, notes and contacts apps and their tasks, in real Chromium.

Every task's reference solution must pass its checker on the desktop web and on the touch phone; a
solution cut short before its last effective step must fail; the app state must round-trip through
`setup` and `state`. Reference runs are shared between tests (module cache) to keep the file fast.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from uivenus.actions.space import Action, Finished, Platform, Scroll, Swipe
from uivenus.envs.sandbox import SandboxTask, tasks_of
from uivenus.envs.sandbox.runner import ReferenceRun, run_actions, run_reference
from uivenus.envs.sandbox.solving import SolverError, expect_records, fill, tap, tid
from uivenus.envs.sandbox.suites import settings as settings_suite

APPS = ("launcher", "settings", "notes", "contacts")
LAYOUTS = ("web", "phone")
TASKS = [task for app in APPS for task in tasks_of(app)]


def _ids(task: SandboxTask) -> str:
    return task.id


@pytest.fixture(scope="module")
def reference_runs() -> dict[tuple[str, str], ReferenceRun]:
    return {}


def _env(request: pytest.FixtureRequest, layout: str):
    return request.getfixturevalue(f"{layout}_env")


def _reference(request: pytest.FixtureRequest, runs: dict, task: SandboxTask, layout: str) -> ReferenceRun:
    key = (task.id, layout)
    if key not in runs:
        base_url = request.getfixturevalue("sandbox_server").base_url
        runs[key] = run_reference(task, _env(request, layout), base_url, layout)
    return runs[key]


def _act(env, moves: Iterator[Action]) -> None:
    """Execute a solver move's actions one by one (it reads the page between them)."""
    for action in moves:
        assert env.step(action).executed


def test_every_app_has_four_to_six_tasks_with_several_phrasings() -> None:
    for app in APPS:
        tasks = tasks_of(app)
        assert 4 <= len(tasks) <= 6, app
        for task in tasks:
            assert len(task.instructions) >= 2 and len(set(task.instructions)) == len(task.instructions), task.id


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("task", TASKS, ids=_ids)
def test_reference_solution_passes_and_its_last_step_is_needed(request, reference_runs, task, layout) -> None:
    run = _reference(request, reference_runs, task, layout)
    assert run.error is None, run.error
    assert run.finished and isinstance(run.actions[-1], Finished)
    assert all(result.executed for result in run.results)
    assert run.check.passed, f"{run.check.reason}; actions: {run.actions}"
    assert run.spec.platform is (Platform.WEB if layout == "web" else Platform.MOBILE)
    # the state just before the last step fails the checker, and that step changed the state
    assert run.effective_steps()[-1] == len(run.results) - 1
    assert not task.check(run.states[-2] or {}).passed


#: The tasks whose last step is consequential (delete, clear, reset): replayed without it, in turn per layout.
CONSEQUENTIAL = ["launcher/clear_recents", "settings/reset_all", "notes/delete_note", "contacts/delete_contact"]


@pytest.mark.parametrize(("task_id", "layout"), [(t, LAYOUTS[i % 2]) for i, t in enumerate(CONSEQUENTIAL)])
def test_replayed_solution_without_its_consequential_step_fails(request, reference_runs, sandbox_server, task_id,
                                                                layout) -> None:
    task = next(t for t in TASKS if t.id == task_id)
    reference = _reference(request, reference_runs, task, layout)
    steps = [a for a in reference.actions if not a.is_terminal]
    wrong = run_actions(task, _env(request, layout), sandbox_server.base_url, layout, steps[:-1])
    assert wrong.error is None and not wrong.finished
    assert wrong.states == reference.states[:-1]  # the replay retraces the reference run exactly
    assert not wrong.check.passed


@pytest.mark.parametrize("task", TASKS, ids=_ids)
def test_doing_nothing_fails(task: SandboxTask) -> None:
    # every setup is the app's whole state (test_state_round_trips checks that per app)
    assert not task.check(task.setup).passed


#: A state per app unlike any task's setup (unicode, empty lists, duplicates, extreme values).
EDITED = {
    "launcher": {"opened": ["files", "files", "mail"]},
    "settings": {**settings_suite.DEFAULTS, "brightness": 0, "language": "it", "device_name": "Çà & \"ß\""},
    "notes": {"notes": []},
    "contacts": {"contacts": [{"id": "c9", "name": "Zoë Ångström", "phone": "+46 8 123 456", "email": "",
                               "favorite": True}]},
}


def _with_state(spec, app_state):
    return dataclasses.replace(spec, setup={**spec.setup, "app_state": app_state})


@pytest.mark.parametrize("app", APPS)
def test_state_round_trips_through_setup(web_env, sandbox_server, app: str) -> None:
    spec = tasks_of(app)[-1].spec(sandbox_server.base_url, "web")
    web_env.reset(spec)
    assert web_env.app_state() == dict(spec.setup["app_state"])  # setups hold the whole state
    web_env.reset(_with_state(spec, EDITED[app]))
    assert web_env.app_state() == EDITED[app]


def test_settings_defaults_match_the_app_and_dark_mode_applies_a_theme(web_env, sandbox_server) -> None:
    spec = tasks_of("settings")[0].spec(sandbox_server.base_url, "web")
    web_env.reset(_with_state(spec, {}))
    assert web_env.app_state() == dict(settings_suite.DEFAULTS)
    assert not web_env.exists("html.dark")
    web_env.reset(_with_state(spec, {"dark_mode": True}))
    assert web_env.exists("html.dark")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_launcher_opens_apps_in_its_own_layout(request, reference_runs, layout: str) -> None:
    run = _reference(request, reference_runs, next(t for t in tasks_of("launcher") if t.name == "open_notes"), layout)
    opened_url = run.results[0].observation.url
    assert opened_url.endswith(f"/notes/index.html?layout={layout}")
    assert run.results[-1].observation.url == run.spec.setup["home_url"]


@pytest.mark.parametrize(("layout", "gesture"), [("web", Scroll), ("phone", Swipe)])
def test_targets_below_the_fold_are_scrolled_into_view(request, reference_runs, layout, gesture) -> None:
    for name in ("notes/pin_note", "contacts/favorite_contact"):
        run = _reference(request, reference_runs, next(t for t in TASKS if t.id == name), layout)
        assert isinstance(run.actions[0], gesture), run.actions  # the target row starts off-screen


def test_contact_form_keeps_save_disabled_until_the_phone_is_valid(phone_env, sandbox_server) -> None:
    task = next(t for t in tasks_of("contacts") if t.name == "add_contact")
    phone_env.reset(task.spec(sandbox_server.base_url, "phone"))
    save_disabled = tid("save-contact") + ":disabled"
    _act(phone_env, tap(phone_env, tid("add-contact")))
    _act(phone_env, fill(phone_env, tid("contact-name"), "Ana Lima"))
    assert phone_env.exists(save_disabled)
    _act(phone_env, fill(phone_env, tid("contact-phone"), "55-01"))
    assert phone_env.exists(save_disabled)
    assert "7 to 15 digits" in phone_env.text(tid("phone-error"))
    _act(phone_env, fill(phone_env, tid("contact-phone"), "555-0101"))
    assert not phone_env.exists(save_disabled)
    assert phone_env.text(tid("phone-error")) == ""


def test_delete_waits_for_confirmation(web_env, sandbox_server) -> None:
    task = next(t for t in tasks_of("notes") if t.name == "delete_note")
    web_env.reset(task.spec(sandbox_server.base_url, "web"))
    _act(web_env, tap(web_env, tid("note-row", title="Groceries")))
    _act(web_env, tap(web_env, tid("delete-note")))
    assert web_env.center(tid("confirm-dialog")) is not None
    assert len(web_env.app_state()["notes"]) == len(task.setup["notes"])
    _act(web_env, tap(web_env, tid("confirm-cancel")))
    assert web_env.center(tid("confirm-dialog")) is None
    assert web_env.app_state()["notes"] == task.setup["notes"]


def test_a_missing_element_is_a_solver_error(web_env, sandbox_server) -> None:
    web_env.reset(tasks_of("notes")[0].spec(sandbox_server.base_url, "web"))
    with pytest.raises(SolverError, match="no element matches"):
        next(tap(web_env, tid("no-such-button")))


def test_expect_records_names_each_kind_of_difference() -> None:
    original = [{"id": "a", "name": "Ana", "n": 1}, {"id": "b", "name": "Bo", "n": 2}]
    ok = expect_records([{"id": "a", "name": "Ana", "n": 5}, {"id": "c", "name": "Cy", "n": 0}], original,
                        changed={"a": {"n": 5}}, removed=["b"], added=[{"name": "Cy"}])
    assert ok.passed
    assert "still there" in expect_records(original, original, removed=["b"]).reason
    assert "was deleted" in expect_records(original[:1], original).reason
    assert "expected {'n': 9}" in expect_records(original, original, changed={"b": {"n": 9}}).reason
    assert "expected 1 new" in expect_records(original, original, added=[{"name": "Cy"}]).reason
    assert "right app" in expect_records(None, original).reason
