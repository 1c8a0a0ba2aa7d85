"""CAPTCHA Pass@1 on a site that grades itself, in Open CaptchaWorld's shape (tests/evals/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from uivenus.actions.grammar import format_response
from uivenus.actions.space import Click
from uivenus.agent.policies.base import PolicyBase, PolicyReply, PolicyRequest, request_frame
from uivenus.evals.captcha_site import (
    CaptchaSiteError, DomVerdict, ResponseVerdict, evaluate_captcha_site, site_puzzle_urls, verdict_source,
)

if TYPE_CHECKING:
    from uivenus.envs.browser import BrowserEnv


class FirstButton(PolicyBase):
    """Clicks the first answer button of the mimic (left 100 px, top 300 px, 150 x 80): right on Easy_Pick only."""

    name = "first-button"

    def act(self, request: PolicyRequest) -> PolicyReply:
        return PolicyReply(format_response(request_frame(request.context).action_to_model(Click(point=(175, 340)))))


def test_verdict_specs_parse_into_their_sources_or_say_the_shape() -> None:
    assert verdict_source("response:/api/check_answer#correct") == ResponseVerdict("/api/check_answer", "correct")
    assert verdict_source("response:*/check?x=#a#result.ok") == ResponseVerdict("*/check?x=#a", "result.ok")
    assert verdict_source("dom:#result") == DomVerdict("#result")
    for bad in ("response:/api/check_answer", "dom:", "xpath://p", "correct"):
        with pytest.raises(CaptchaSiteError):
            verdict_source(bad)
    assert site_puzzle_urls("http://h:1/?lang=en", ["A", "B"], 2)[2] == ("B", "http://h:1/?lang=en&type=B")
    with pytest.raises(CaptchaSiteError, match="http"):
        site_puzzle_urls("file:///x", [], 1)


@pytest.fixture(scope="module")
def capturing_env() -> Iterator[BrowserEnv]:
    """One browser for the module that keeps the puzzle and verdict responses."""
    from uivenus.envs.browser import BrowserEnv
    from uivenus.envs.browser_config import BrowserConfig

    with BrowserEnv(BrowserConfig(capture_responses=("*/api/*",))) as env:
        yield env


@pytest.mark.parametrize("verdict", ["response:/api/check_answer#correct", "dom:#result"])
def test_pass_at_1_by_type_comes_from_the_site_s_own_verdict(captcha_site: str, tmp_path: Path, verdict: str,
                                                             capturing_env: BrowserEnv) -> None:
    results = evaluate_captcha_site(captcha_site, verdict, FirstButton(), tmp_path, types=["Easy_Pick", "Hard_Pick"],
                                    n=1, max_steps=2, env=capturing_env)
    assert results["per_type"] == {"Easy_Pick": {"n": 1, "passed": 1, "pass_at_1": 1.0},
                                   "Hard_Pick": {"n": 1, "passed": 0, "pass_at_1": 0.0}}
    assert results["pass_at_1"] == 0.5 and all(r["graded"] for r in results["instances"])
    hard = results["instances"][-1]
    assert len(hard["turns"]) == 1  # the first verdict is final: no second try after "Incorrect"
    stored = json.loads(Path(results["results_path"]).read_text(encoding="utf-8"))
    assert stored["per_type"] == results["per_type"] and Path(results["plot_path"]).exists()


def test_eval_captcha_site_command_with_a_policy_that_never_answers(captcha_site: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from uivenus.cli import app

    result = CliRunner().invoke(app, ["eval", "captcha", "--site", captcha_site, "--policy", "oracle", "--n", "1",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    stored = json.loads((tmp_path / "captcha_site_results.json").read_text(encoding="utf-8"))
    # the site chose the type itself (Easy_Pick by default) and reported it; the oracle has no answers: 0 passed
    assert stored["per_type"] == {"Easy_Pick": {"n": 1, "passed": 0, "pass_at_1": 0.0}}
    assert all("PolicyError" in r["error"] for r in stored["instances"])
    both = CliRunner().invoke(app, ["eval", "captcha", "--site", captcha_site, "--data", str(tmp_path)])
    assert both.exit_code != 0 and "either --data" in both.output
