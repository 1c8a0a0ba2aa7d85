"""The MiniWoB++ evaluation through the agent loop: the records are the pages' own rewards, written as JSON.

A policy that reads the page (through the env the test gives it) and clicks the asked-for
button must earn the page's +1 every time, and one that clicks another button its -1: the evaluation reports
what the page decided, not what the policy said.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from uivenus.actions.grammar import format_response
from uivenus.actions.space import Click
from uivenus.agent.policies import PolicyBase, PolicyReply, PolicyRequest
from uivenus.envs.miniwob import MiniWoBEnv, MiniWoBError, miniwob_task
from uivenus.evals.miniwob import EPISODES_FILE, PLOT_FILE, RESULTS_FILE, evaluate_miniwob, resolve_tasks, summarise
from uivenus.store import read_run

THREE = ["click-test", "click-button", "enter-text"]


@pytest.fixture(scope="module")
def env() -> Iterator[MiniWoBEnv]:
    with MiniWoBEnv() as env:
        yield env


class ButtonPolicy(PolicyBase):
    """Clicks the button the instruction quotes (or, with `right=False`, a button with another label)."""

    def __init__(self, env: MiniWoBEnv, right: bool) -> None:
        self.env, self.right = env, right
        self.name = "right-button" if right else "wrong-button"

    def act(self, request: PolicyRequest) -> PolicyReply:
        frame = request.context["frame"]
        label = re.search(r'"([^"]+)"', request.context["instruction"]).group(1)

        def nodes(node):
            yield node
            for child in node.get("children", ()):
                yield from nodes(child)

        button = next(n for n in nodes(self.env.dom())
                      if n["tag"] == "BUTTON" and (n.get("text") == label) == self.right)
        point = (button["left"] + button["width"] / 2, button["top"] + button["height"] / 2)
        return PolicyReply(format_response(Click(point=frame.to_model(point))))


def test_random_on_three_tasks_reports_the_pages_rewards(env: MiniWoBEnv, tmp_path: Path) -> None:
    results = evaluate_miniwob(THREE, "random:0", episodes=2, seed=0, out_dir=tmp_path, max_steps=2,
                               progress=False, record=True, env=env)
    records = results["records"]
    assert [(r["task"], r["seed"]) for r in records] == [(t, s) for t in THREE for s in (0, 1)]
    for record in records:
        assert record["error"] is None and 1 <= record["steps"] <= 2
        assert -1 <= record["raw_reward"] <= 1 and -1 <= record["reward"] <= 1
        assert record["success"] == (record["raw_reward"] > 0)
        if not record["done"]:
            assert record["raw_reward"] == 0 and record["outcome"] == "max_steps"
    env.reset(miniwob_task("click-button", seed=1))
    assert records[3]["utterance"] == env.task.instruction  # the seed fixes the problem

    stored = {t.task.id + f"#{t.metadata['seed']}": t for t in read_run(tmp_path / "runs" / "miniwob-random_0-seed0")}
    for record in records:
        verdict = stored[f"miniwob/{record['task']}#{record['seed']}"].verdicts["miniwob"]
        assert (verdict["raw_reward"], verdict["reward"], verdict["done"]) == (
            record["raw_reward"], record["reward"], record["done"])

    written = json.loads((tmp_path / RESULTS_FILE).read_text())
    assert written["records"] == records and written["policy"] == "random:0"
    assert set(written["per_task"]) == set(THREE) and all(t["n"] == 2 for t in written["per_task"].values())
    assert written["success_rate"] == sum(t["success_rate"] for t in written["per_task"].values()) / 3
    assert [json.loads(line) for line in (tmp_path / EPISODES_FILE).read_text().splitlines()] == records
    assert (tmp_path / PLOT_FILE).stat().st_size > 1000


@pytest.mark.parametrize(("right", "raw"), [(True, 1), (False, -1)])
def test_the_pages_verdict_not_the_policys_word_is_reported(env: MiniWoBEnv, tmp_path: Path, right: bool,
                                                            raw: int) -> None:
    results = evaluate_miniwob(["click-button"], ButtonPolicy(env, right), episodes=2, seed=3, out_dir=tmp_path,
                               max_steps=4, progress=False, env=env)
    for record in results["records"]:
        assert record["done"] and record["raw_reward"] == raw and record["success"] is right
        # the click ends the loop: the page has graded the episode
        assert record["outcome"] == "ended_by_env" and record["steps"] == 1
    assert results["success_rate"] == (1.0 if right else 0.0)
    assert results["per_task"]["click-button"]["mean_raw_reward"] == raw


def test_task_lists_and_summaries() -> None:
    assert len(resolve_tasks("all")) == 130
    assert resolve_tasks(" click-test , flight.AA") == ("click-test", "flight.AA")
    with pytest.raises(MiniWoBError, match="no-such-task"):
        resolve_tasks("click-test,no-such-task")
    records = [{"task": "a", "success": True, "raw_reward": 1, "reward": 0.5, "done": True, "error": None},
               {"task": "b", "success": False, "raw_reward": -1, "reward": -1, "done": True, "error": None},
               {"task": "b", "success": False, "raw_reward": 0, "reward": 0, "done": False, "error": None},
               {"task": "b", "success": True, "raw_reward": 1, "reward": 0.8, "done": True, "error": None}]
    summary = summarise(records)
    assert summary["per_task"]["b"]["success_rate"] == pytest.approx(1 / 3)
    assert summary["success_rate"] == pytest.approx((1 + 1 / 3) / 2)  # mean of the per-task rates
    assert summary["episodes"]["success_rate"] == 0.5 and summary["episodes"]["done_rate"] == 0.75
