"""TaskSpec, Step and Trajectory: validated, frozen, and JSON round-trippable."""

import json

import pytest

from uivenus.actions.space import ActionSequence, Click, Finished, Platform, Type
from uivenus.records import Outcome, RecordError, Step, TaskSpec, Trajectory


def make_task(**overrides):
    fields = dict(id="notes/create", instruction="Create a note", platform="web", url="http://127.0.0.1/",
                  setup={"app_state": {"notes": []}}, check={"kind": "sandbox", "task": "notes/create"})
    fields.update(overrides)
    return TaskSpec(**fields)


def test_taskspec_round_trip_and_freezing():
    task = make_task()
    assert task.platform is Platform.WEB
    again = TaskSpec.from_dict(json.loads(json.dumps(task.to_dict())))
    assert again.to_dict() == task.to_dict()
    with pytest.raises(TypeError):
        task.setup["x"] = 1  # type: ignore[index]


@pytest.mark.parametrize(
    "overrides, message",
    [({"platform": "tv"}, "platform"), ({"id": ""}, "id"), ({"max_steps": 0}, "max_steps")],
)
def test_taskspec_rejects_bad_fields(overrides, message):
    with pytest.raises(RecordError, match=message):
        make_task(**overrides)


def test_taskspec_from_dict_rejects_unknown_fields():
    with pytest.raises(RecordError, match="unknown field"):
        TaskSpec.from_dict({**make_task().to_dict(), "colour": "red"})


def test_step_round_trip_with_sequence():
    action = ActionSequence(actions=(Click(point=(1, 2)), Type(content="é"), Finished()))
    step = Step(index=3, screen="screens/3.png", response="<action>…</action>", action=action,
                executed=True, timings={"policy_s": 0.5}, info={"url": "http://x/"})
    assert Step.from_dict(json.loads(json.dumps(step.to_dict()))) == step
    with pytest.raises(RecordError):
        Step(index=-1)


def test_trajectory_summary():
    traj = Trajectory(task=make_task(), steps=(Step(index=0, action=Click(point=(1, 1))),), outcome="finished")
    assert traj.complete and traj.outcome is Outcome.FINISHED
    assert traj.summary_dict()["n_steps"] == 1
    assert not Trajectory(task=make_task()).complete
