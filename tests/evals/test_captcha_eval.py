"""CAPTCHA Pass@1: the oracle's replies go through the model grammar, the 0–999 frame and the browser and pass every
family's grader; a policy that always clicks the screen centre scores low; replies that do not parse or point off
the screen fail their instance without stopping the run; a one-action-per-turn policy is fed its history.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from uivenus.actions.coords import Frame
from uivenus.actions.grammar import parse_response
from uivenus.actions.grounding import parse_grounding
from uivenus.actions.space import Click, Drag
from uivenus.agent.policies import (
    AnswerKey,
    AnswerKeyed,
    Message,
    Policy,
    PolicyBase,
    PolicyError,
    PolicyReply,
    PolicyRequest,
    PolicySpecError,
    policy_from_spec,
    with_answers,
)
from uivenus.agent.prompts import captcha_system_prompt
from uivenus.envs.browser import BrowserEnv
from uivenus.evals.captcha import (
    PLOT_FILE,
    RESULTS_FILE,
    evaluate_captchas,
)
from uivenus.synth.captcha import (
    FAMILIES,
    browser_config,
    generate_captchas,
    load_captchas,
)


class CentreClicker(PolicyBase):
    """The floor: clicks the middle of the screen whatever it shows."""

    name = "centre"

    def act(self, request: PolicyRequest) -> PolicyReply:
        return PolicyReply(text="<think>click the middle</think><action>Click(point=(500, 500))</action>")


class ScriptedReplies(PolicyBase):
    """Answers with a fixed text per CAPTCHA family (what a confused model might say)."""

    name = "scripted"

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies

    def act(self, request: PolicyRequest) -> PolicyReply:
        return PolicyReply(text=self.replies[request.context["family"]])


class OneActionPerTurn(PolicyBase):
    """Replays the reference it is told one action per turn, counting its own earlier replies in the conversation."""

    name = "stepwise"

    def __init__(self, key: AnswerKey | None = None) -> None:
        self.key = key

    def with_answers(self, key: AnswerKey) -> OneActionPerTurn:
        return OneActionPerTurn(key)

    def act(self, request: PolicyRequest) -> PolicyReply:
        done = sum(message.role == "assistant" for message in request.messages)
        return with_answers(policy_from_spec("oracle"), AnswerKey(actions=self.key.actions[done:done + 1])).act(request)


@pytest.fixture(scope="module")
def hard_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One hard instance per family: the tightest tolerances the relative frame must survive."""
    root = tmp_path_factory.mktemp("captcha-eval")
    generate_captchas(len(FAMILIES), root, seed=11, difficulty="hard")
    return root


@pytest.fixture(scope="module")
def small_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("captcha-small")
    generate_captchas(2, root, seed=12, families=["text", "slider"], difficulty="medium")
    return root


@pytest.fixture(scope="module")
def envs(hard_dir: Path) -> Iterator[dict[str, BrowserEnv]]:
    with BrowserEnv(browser_config(load_captchas(hard_dir)[0])) as env:
        yield {"desktop": env}


def test_oracle_passes_every_family_and_writes_results_and_plot(hard_dir: Path, tmp_path: Path, envs) -> None:
    results = evaluate_captchas(hard_dir, "oracle", tmp_path, progress=False, envs=envs)
    assert results["policy"] == "oracle" and results["n"] == len(FAMILIES)
    assert results["pass_at_1"] == 1.0, [(r["id"], r["reason"], r["error"]) for r in results["instances"]]
    assert set(results["per_family"]) == set(FAMILIES)
    assert all(entry["pass_at_1"] == 1.0 for entry in results["per_family"].values())
    assert results["per_difficulty"] == {"hard": {"n": len(FAMILIES), "passed": len(FAMILIES), "pass_at_1": 1.0}}
    written = json.loads((tmp_path / RESULTS_FILE).read_text())
    assert written["pass_at_1"] == 1.0 and len(written["instances"]) == len(FAMILIES)
    record = written["instances"][0]
    assert record["graded"] and record["error"] is None and len(record["turns"]) == 1
    assert "<action>" in record["turns"][0]["response"] and record["turns"][0]["actions"]
    with Image.open(tmp_path / PLOT_FILE) as plot:
        assert plot.size[0] > 400 and plot.size[1] > 200


def test_clicking_the_centre_scores_low(hard_dir: Path, tmp_path: Path, envs) -> None:
    results = evaluate_captchas(hard_dir, CentreClicker(), tmp_path, max_steps=2, progress=False, envs=envs)
    assert results["pass_at_1"] <= 0.25, results["per_family"]
    assert all(r["error"] is None for r in results["instances"])
    ungraded = [r for r in results["instances"] if not r["graded"]]
    assert ungraded and all(len(r["turns"]) == 2 for r in ungraded)
    assert (tmp_path / PLOT_FILE).is_file()


def test_bad_replies_fail_their_instance_without_stopping_the_run(small_dir: Path, tmp_path: Path, envs) -> None:
    policy = ScriptedReplies({"text": "I think the answer is probably written there.",
                              "slider": "<action>Click(point=(1500, 20))</action>"})
    results = evaluate_captchas(small_dir, policy, tmp_path, progress=False, envs=envs)
    errors = {r["family"]: r["error"] for r in results["instances"]}
    assert results["pass_at_1"] == 0.0
    assert errors["text"].startswith("ParseError") and errors["slider"].startswith("CoordinateError")


def test_history_carries_earlier_turns_so_one_action_per_turn_can_solve(small_dir: Path, tmp_path: Path,
                                                                          envs) -> None:
    solved = evaluate_captchas(small_dir, OneActionPerTurn(), tmp_path, max_steps=3, progress=False, envs=envs)
    turns = {r["family"]: len(r["turns"]) for r in solved["instances"]}
    assert solved["pass_at_1"] == 1.0 and turns == {"text": 3, "slider": 1}
    cut = evaluate_captchas(small_dir, OneActionPerTurn(), tmp_path, max_steps=2, progress=False, envs=envs)
    assert cut["per_family"]["text"]["pass_at_1"] == 0.0 and cut["per_family"]["slider"]["pass_at_1"] == 1.0


def test_the_system_prompt_allows_several_actions_in_the_relative_frame() -> None:
    prompt = captcha_system_prompt("web", Frame.relative(1280, 720))
    assert "CAPTCHA" in prompt and "separated by commas" in prompt and "999" in prompt


# --- the oracle on its own -------------------------------------------------------------------------

def _request(**context) -> PolicyRequest:
    return PolicyRequest(messages=(Message("user", ("find it",)),), context=context)


def _told(**answers) -> Policy:
    return with_answers(policy_from_spec("oracle"), AnswerKey(**answers))


def test_oracle_writes_the_answers_it_is_told_in_the_relative_frame() -> None:
    reply = _told(actions=(Click(point=(640, 360)), Drag(start=(0, 0), end=(1279, 719)))).act(
        _request(screen_size=(1280, 720)))
    assert parse_response(reply.text).actions == (Click(point=(500, 500)), Drag(start=(0, 0), end=(999, 999)))
    box = _told(box=(100, 100, 300, 200)).act(_request(screen_size=(1000, 500)))
    assert parse_grounding(box.text).point == (200, 300)
    refusal = _told(refusal=True, box=(1, 1, 2, 2)).act(_request(screen_size=(1000, 500)))
    assert parse_grounding(refusal.text).refused


def test_answers_reach_only_the_instance_told_them() -> None:
    oracle = policy_from_spec("oracle")
    told = with_answers(oracle, AnswerKey(box=(0, 0, 10, 10)))
    assert isinstance(oracle, AnswerKeyed) and told is not oracle
    assert parse_grounding(told.act(_request(screen_size=(10, 10))).text).point == (500, 500)
    with pytest.raises(PolicyError, match="told no answers"):
        oracle.act(_request(screen_size=(10, 10), reference_box=(0, 0, 10, 10)))  # a request cannot tell it
    centre = CentreClicker()
    assert with_answers(centre, AnswerKey(box=(0, 0, 10, 10))) is centre  # a policy that takes none is used as is


def test_oracle_says_what_it_needs() -> None:
    with pytest.raises(PolicyError, match="no ground truth"):
        _told().act(_request(screen_size=(10, 10)))
    with pytest.raises(PolicyError, match="screen_size"):
        _told(actions=(Click(point=(1, 1)),)).act(_request())
    with pytest.raises(PolicySpecError, match="no options"):
        policy_from_spec("oracle:fast")
