"""The agent loop end to end on real sandbox apps in real Chromium, recorded in a real trajectory store.

The oracle (the tasks' reference solutions answering in the model grammar) must pass each task's checker
through the full loop; a tiny random Qwen3-VL must run to the step budget with every malformed reply on
record; a scripted policy exercises re-asks and fed-back errors; a run killed with SIGKILL keeps its steps.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from uivenus.actions.coords import Frame
from uivenus.actions.grammar import parse_response
from uivenus.actions.space import Click, Finished, PressRecent
from uivenus.actions.syntax import ParseError
from uivenus.agent.loop import LoopConfig, run_episode
from uivenus.agent.policies import Sampling, policy_from_spec
from uivenus.agent.policies.script import AfterScript, ScriptedPolicy
from uivenus.cli import app
from uivenus.envs.checks import UnknownCheckKind
from uivenus.envs.sandbox import check_spec, get_task
from uivenus.records import Outcome
from uivenus.store import TrajectoryStore, read_episode, read_run

REPO = Path(__file__).resolve().parents[2]
ENV_FIXTURES = {"web": "web_env", "phone": "phone_env"}  # layout -> the session browser of tests/conftest.py


@pytest.mark.parametrize(("task_id", "layout"), [
    ("contacts/add_contact", "web"),
    ("settings/wifi_off_bluetooth_on", "phone"),
    ("mail/archive_newsletter", "phone"),
])
def test_oracle_passes_sandbox_tasks_through_the_loop(request, sandbox_server, tmp_path, task_id, layout) -> None:
    env = request.getfixturevalue(ENV_FIXTURES[layout])
    spec = get_task(task_id).spec(sandbox_server.base_url, layout)
    writer = TrajectoryStore(tmp_path).episode("run", "ep", spec)
    trajectory = run_episode(env, policy_from_spec("oracle"), spec, writer=writer)
    assert trajectory.outcome is Outcome.FINISHED and isinstance(trajectory.steps[-1].action, Finished)
    assert check_spec(spec, env.app_state()).passed
    assert trajectory.verdicts["sandbox"]["passed"]
    stored = read_episode(tmp_path / "run" / "ep")
    assert stored.steps == trajectory.steps and stored.outcome is Outcome.FINISHED
    frame = Frame.relative(*env.screen_size)
    for step in stored.steps:
        with Image.open(tmp_path / "run" / "ep" / step.screen) as screen:
            assert screen.size == env.screen_size
        # the raw reply is on record and is what produced the stored action (in screen pixels)
        assert frame.action_to_screen(parse_response(step.response).actions[0]) == step.action
        assert len(step.info["attempts"]) == 1 and step.info["guard"]["runs"]
        assert set(step.timings) == {"policy_s", "parse_s", "guard_s", "env_s", "record_s"}
        assert step.executed and step.error is None
        if isinstance(step.action, Click):  # the env records what the click hit, for verifiers without OCR
            assert step.info["env"]["hit"]["tag"] and "nth" in step.info["env"]["hit"]


@pytest.mark.usefixtures("torch_single_thread")
def test_tiny_random_model_runs_to_the_budget_recording_malformed_replies(web_env, sandbox_server, tmp_path,
                                                                          tiny_qwen3_vl):
    import torch

    torch.manual_seed(0)
    spec = get_task("contacts/add_contact").spec(sandbox_server.base_url, "web")
    writer = TrajectoryStore(tmp_path).episode("run", "ep", spec)
    config = LoopConfig(max_steps=3, max_reasks=1, sampling=Sampling(temperature=1.0, max_new_tokens=24, thinking=True))
    with policy_from_spec(f"hf:{tiny_qwen3_vl}?device=cpu&dtype=float32") as policy:
        trajectory = run_episode(web_env, policy, spec, config=config, writer=writer)
    assert trajectory.outcome is Outcome.MAX_STEPS and len(trajectory.steps) == 3
    stored = read_episode(tmp_path / "run" / "ep")
    assert stored.steps == trajectory.steps
    malformed = 0
    for step in stored.steps:
        for attempt in step.info["attempts"]:
            try:
                parse_response(attempt["response"], lenient=True)
            except ParseError as exc:
                malformed += 1
                assert attempt["error"] == f"ParseError: {exc}"
            else:
                assert attempt["error"] is None
        if step.action is None:  # no usable reply after the re-ask: the last error is the step's
            assert len(step.info["attempts"]) == 2 and step.error == step.info["attempts"][-1]["error"]
            assert step.response == step.info["attempts"][-1]["response"] and not step.executed
    assert malformed >= 3


REPLIES = [
    "I think I should open the menu",  # no action at all
    "<action>PressRecent()</action>",  # parses, but phones only
    "<action>Click(point=(1500, 10))</action>",  # off the 0-999 frame
    "<think>enough</think><action>Finished(content='done')</action>",
]


def test_bad_replies_are_reasked_and_rejected_actions_fed_back(web_env, sandbox_server, tmp_path) -> None:
    spec = get_task("notes/create_note").spec(sandbox_server.base_url, "web")
    script = ScriptedPolicy(REPLIES, after=AfterScript.ERROR)
    trajectory = run_episode(web_env, script, spec, writer=TrajectoryStore(tmp_path).episode("r", "e", spec))
    first, second, third = trajectory.steps
    # step 0: the unparseable reply was answered with its error and asked again; the second try parsed
    assert [a["response"] for a in first.info["attempts"]] == REPLIES[:2]
    assert first.info["attempts"][0]["error"].startswith("ParseError") and first.info["attempts"][1]["error"] is None
    reask = script.requests[1].messages
    assert reask[-2].role == "assistant" and reask[-2].text == "I think I should open the menu"
    assert "could not be used" in reask[-1].text and "expected" in reask[-1].text
    # ... but PressRecent does not exist on the web: rejected, recorded, and told to the model next turn
    assert isinstance(first.action, PressRecent) and not first.executed and "PlatformMismatchError" in first.error
    assert "PressRecent() was rejected" in script.requests[2].messages[-1].text
    # step 1: a point off the relative frame is an error, not a clamp
    assert second.action is None and second.error.startswith("CoordinateError") and not second.executed
    assert "was not executed" in script.requests[3].messages[-1].text
    assert third.executed and trajectory.outcome is Outcome.FINISHED and trajectory.answer == "done"
    assert not trajectory.verdicts["sandbox"]["passed"]  # finishing without doing the task fails the checker


def test_a_failing_policy_ends_the_episode_as_error_without_losing_steps(web_env, sandbox_server, tmp_path) -> None:
    spec = get_task("notes/create_note").spec(sandbox_server.base_url, "web")
    script = ScriptedPolicy(["<action>Click(point=(500, 500))</action>"], after=AfterScript.ERROR)
    trajectory = run_episode(web_env, script, spec, writer=TrajectoryStore(tmp_path).episode("r", "e", spec))
    assert trajectory.outcome is Outcome.ERROR and "no reply for turn 2" in trajectory.metadata["error"]
    stored = read_episode(tmp_path / "r" / "e")
    assert [s.executed for s in stored.steps] == [True, False]
    assert isinstance(stored.steps[0].action, Click) and stored.steps[1].error.startswith("PolicyError")
    assert (tmp_path / "r" / "e" / stored.steps[1].screen).is_file()


def test_a_task_whose_check_kind_has_no_checker_fails_loudly(web_env, sandbox_server, tmp_path) -> None:
    """Not a missing verdict: the episode never starts, and the store says why."""
    spec = replace(get_task("notes/create_note").spec(sandbox_server.base_url, "web"), check={"kind": "pixels"})
    script = ScriptedPolicy(["<action>Finished(content='done')</action>"], after=AfterScript.ERROR)
    with pytest.raises(UnknownCheckKind, match=r"no checker for check kind 'pixels' \(known: .*sandbox"):
        run_episode(web_env, script, spec, writer=TrajectoryStore(tmp_path).episode("r", "e", spec))
    assert script.requests == []
    stored = read_episode(tmp_path / "r" / "e")
    assert stored.outcome is Outcome.ERROR and "UnknownCheckKind" in stored.metadata["error"]


_KILLABLE = """
import sys
from uivenus.agent.loop import LoopConfig, run_episode
from uivenus.agent.policies import policy_from_spec
from uivenus.envs.registry import make_env
from uivenus.envs.sandbox import get_task
from uivenus.store import TrajectoryStore

task = get_task("shop/buy_blue_mugs")
with make_env("sandbox:shop") as env:
    spec = task.spec(env.base_url, env.layout)
    writer = TrajectoryStore(sys.argv[1]).episode("run", "ep", spec)
    run_episode(env, policy_from_spec("oracle"), spec, config=LoopConfig(guard="allow"), writer=writer)
"""


def test_a_run_killed_mid_episode_keeps_its_completed_steps(tmp_path) -> None:
    process = subprocess.Popen([sys.executable, "-c", _KILLABLE, str(tmp_path)], cwd=REPO, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    steps_file = tmp_path / "run" / "ep" / "steps.jsonl"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if steps_file.exists() and steps_file.read_bytes().count(b"\n") >= 2:
                break
            time.sleep(0.05)
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the loop and its Chromium, mid-episode
        process.wait()
    trajectory = read_episode(tmp_path / "run" / "ep")
    assert trajectory.outcome is Outcome.INCOMPLETE and not (tmp_path / "run" / "ep" / "episode.json").exists()
    assert 2 <= len(trajectory.steps) < 20
    for step in trajectory.steps:
        assert step.action is not None and step.response and (tmp_path / "run" / "ep" / step.screen).is_file()


def test_cli_runs_a_bundled_task_and_prints_the_verdict(tmp_path) -> None:
    result = CliRunner().invoke(app, ["run", "--task", "sandbox:contacts/add_contact", "--policy", "oracle",
                                      "--out", str(tmp_path), "--run-id", "r1", "--max-steps", "12"])
    assert result.exit_code == 0, result.output
    assert "sandbox checker PASSED" in result.output and "outcome finished" in result.output
    (trajectory,) = read_run(tmp_path / "r1")
    assert trajectory.outcome is Outcome.FINISHED and trajectory.verdicts["sandbox"]["passed"]
    assert trajectory.metadata["config"]["max_steps"] == 12

    bad = CliRunner().invoke(app, ["run", "--task", "sandbox:contacts/nope", "--policy", "oracle",
                                   "--out", str(tmp_path)])
    assert bad.exit_code == 1 and "no sandbox task" in bad.output


def test_precheck_flags_and_resends_an_action_before_it_runs(web_env, sandbox_server, tmp_path) -> None:
    from uivenus.agent.loop import LoopError
    from uivenus.agent.precheck import PrecheckMode
    from uivenus.verify.step import StepPrecheck

    spec = get_task("notes/create_note").spec(sandbox_server.base_url, "web")
    blank = "<think>I open the new note form.</think><action>Click(point=(995, 995))</action>"
    done = "<think>stop</think><action>Finished(content='done')</action>"
    with pytest.raises(LoopError, match="needs a precheck"):
        run_episode(web_env, ScriptedPolicy([done], after=AfterScript.ERROR), spec,
                    config=LoopConfig(precheck=PrecheckMode.FLAG))
    # flag: the decision is recorded, the action still runs (and the env records what the click hit)
    flag = LoopConfig(precheck=PrecheckMode.FLAG)
    script = ScriptedPolicy([blank, done], after=AfterScript.ERROR)
    trajectory = run_episode(web_env, script, spec, config=flag, precheck=StepPrecheck.for_env(web_env),
                             writer=TrajectoryStore(tmp_path).episode("flag", "e", spec))
    first = read_episode(tmp_path / "flag" / "e").steps[0]
    (decision,) = first.info["precheck"]
    assert decision["flagged"] and decision["label"] == "ineffective" and decision["reason"].startswith("missed")
    assert first.executed and first.info["env"]["hit"] == {"tag": None, "text": ""} and "precheck_s" in first.timings
    assert trajectory.steps[1].info.get("precheck") is None  # a terminal action is not prechecked
    # resend: the flagged click goes back to the model with the reason; its new answer is what happens
    script = ScriptedPolicy([blank, done], after=AfterScript.ERROR)
    resend = LoopConfig(precheck=PrecheckMode.RESEND)
    trajectory = run_episode(web_env, script, spec, config=resend, precheck=StepPrecheck.for_env(web_env))
    assert len(trajectory.steps) == 1 and isinstance(trajectory.steps[0].action, Finished)
    assert "was checked and flagged as ineffective" in script.requests[1].messages[-1].text
    assert [a["response"] for a in trajectory.steps[0].info["attempts"]] == [blank, done]
    assert trajectory.steps[0].info["precheck"][0]["flagged"] and trajectory.outcome is Outcome.FINISHED
