"""`script:FILE` replies in order through the real parser and loop, and fails clearly on a bad file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uivenus.actions.grammar import parse_response
from uivenus.actions.space import Finished
from uivenus.agent.policies import PolicyError, PolicyRequest, PolicySpecError, policy_from_spec
from uivenus.agent.policies.script import AfterScript, ScriptedPolicy

REQUEST = PolicyRequest(messages=())


def script_file(tmp_path: Path, replies: object) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies))
    return str(path)


def test_a_script_file_replies_in_order_then_repeats_its_last_reply(tmp_path: Path) -> None:
    replies = ["<action>Wait()</action>", "<action>Finished()</action>"]
    policy = policy_from_spec("script:" + script_file(tmp_path, replies))
    texts = [policy.act(REQUEST).text for _ in range(4)]
    assert texts == ["<action>Wait()</action>"] + ["<action>Finished()</action>"] * 3
    assert isinstance(parse_response(texts[-1]).action, Finished)
    assert len(policy.requests) == 4


def test_after_cycle_and_after_error(tmp_path: Path) -> None:
    path = script_file(tmp_path, ["a", "b"])
    cycling = policy_from_spec(f"script:{path}?after=cycle")
    assert [cycling.act(REQUEST).text for _ in range(5)] == ["a", "b", "a", "b", "a"]
    ending = policy_from_spec(f"script:{path}?after=error")
    assert [ending.act(REQUEST).text for _ in range(2)] == ["a", "b"]
    with pytest.raises(PolicyError, match="no reply for turn 3"):
        ending.act(REQUEST)


def test_an_exception_in_the_script_is_raised_in_its_turn() -> None:
    policy = ScriptedPolicy(["ok", PolicyError("server down"), "again"], after=AfterScript.ERROR)
    assert policy.act(REQUEST).text == "ok"
    with pytest.raises(PolicyError, match="server down"):
        policy.act(REQUEST)
    assert policy.act(REQUEST).text == "again"


@pytest.mark.parametrize("content, message", [
    ("{not json", "JSON list of reply texts"),
    ("[]", "non-empty JSON list"),
    ('["ok", 3]', "non-empty JSON list"),
])
def test_a_bad_script_file_is_a_clear_spec_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(PolicySpecError, match=message):
        policy_from_spec(f"script:{path}")


def test_bad_specs_name_the_fix(tmp_path: Path) -> None:
    with pytest.raises(PolicySpecError, match="needs a file"):
        policy_from_spec("script:")
    with pytest.raises(PolicySpecError, match="missing.json"):
        policy_from_spec(f"script:{tmp_path / 'missing.json'}")
    path = script_file(tmp_path, ["a"])
    with pytest.raises(PolicySpecError, match="choose one of repeat, cycle, error"):
        policy_from_spec(f"script:{path}?after=forever")
    with pytest.raises(PolicySpecError, match="unknown script option 'speed'"):
        policy_from_spec(f"script:{path}?speed=2")
