"""The judges on real sandbox episodes (Chromium), real OCR, scripted policies and a tiny random model served
through `uivenus serve`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from uivenus.agent.policies import PolicyError, policy_from_spec
from uivenus.agent.policies.script import AfterScript, ScriptedPolicy
from uivenus.agent.serve import ServerThread, create_app
from uivenus.envs.checks import check_kinds
from uivenus.records import TaskSpec
from uivenus.verify.base import Evidence, StepEvidence, VerifyError, Vote
from uivenus.verify.judges import (
    OcrJudge, ProgramJudge, VlmJudge, VlmOptions, collect_verdicts, judge_from_spec, parse_verdict_text,
)
from uivenus.verify.keypoints import extract_key_points, key_point_texts
from uivenus.verify.rewards import vote_reward
from uivenus.verify.voting import Decision, aggregate, aggregate_by_judge

from .conftest import Episode


def evidence(ep: Episode, *, final: bool = True, texts: bool = True, **extra: object) -> Evidence:
    """The episode as a judge sees it: the first screen, plus the last one when `final`."""
    shots = (ep.first, ep.last) if final else (ep.first,)
    states = (ep.first_state, ep.last_state) if final else (ep.first_state,)
    return Evidence(
        task=ep.spec, key_points=key_point_texts(extract_key_points(ep.spec.instruction)),
        history=ep.history if final else (), screenshots=shots, final_state=states[-1],
        screen_texts=tuple(s["text"] for s in states) if texts else (), extra=extra,
    )


# --- programmatic judge -------------------------------------------------------------------------

@pytest.mark.parametrize("task_id", ["contacts/add_contact", "settings/wifi_off_bluetooth_on",
                                     "contacts/delete_contact"])
def test_program_judge_on_real_final_and_initial_states(episodes: Mapping[str, Episode], task_id: str) -> None:
    judge = judge_from_spec("program")
    assert isinstance(judge, ProgramJudge)
    done = judge.judge(evidence(episodes[task_id]))
    assert done.vote is Vote.SUCCESS and done.confidence == 1.0
    untouched = judge.judge(evidence(episodes[task_id], final=False))
    assert untouched.vote is Vote.FAILURE
    assert untouched.reason  # the checker says what is missing


def test_program_judge_abstains_without_check_or_state(episodes: Mapping[str, Episode]) -> None:
    ep = episodes["contacts/add_contact"]
    judge = ProgramJudge()
    base = evidence(ep)
    no_check = Evidence(task=TaskSpec(id="free", instruction="x", platform="web"), key_points=(), history=(),
                        screenshots=(), final_state=ep.last_state)
    assert judge.judge(no_check).vote is Vote.ABSTAIN
    no_state = Evidence(task=ep.spec, key_points=(), history=(), screenshots=(), final_state=None)
    assert judge.judge(no_state).vote is Vote.ABSTAIN
    off_app = Evidence(task=ep.spec, key_points=(), history=(), screenshots=(),
                       final_state={**base.final_state, "app_state": None})
    assert "no sandbox app" in judge.judge(off_app).reason
    other_kind = Evidence(task=TaskSpec(id="t", instruction="x", platform="web", check={"kind": "no-such-kind"}),
                          key_points=(), history=(), screenshots=(), final_state={})
    assert "no checker for check kind 'no-such-kind'" in judge.judge(other_kind).reason


def test_program_judge_miniwob_kind_reads_the_page_grade() -> None:
    assert {"sandbox", "miniwob"} <= set(check_kinds())
    task = TaskSpec(id="miniwob/click-test", instruction="", platform="web", check={"kind": "miniwob"})

    def vote(state: dict) -> Vote:
        return ProgramJudge().judge(Evidence(task=task, key_points=(), history=(), screenshots=(),
                                             final_state=state)).vote

    assert vote({"done": True, "raw_reward": 1.0, "reward": 0.8}) is Vote.SUCCESS
    assert vote({"done": True, "raw_reward": -1.0}) is Vote.FAILURE
    assert vote({"done": False, "raw_reward": 0}) is Vote.FAILURE
    assert vote({"url": "about:blank"}) is Vote.ABSTAIN


def test_program_judge_rejects_a_check_naming_no_task(episodes: Mapping[str, Episode]) -> None:
    ep = episodes["contacts/add_contact"]
    bad = Evidence(task=TaskSpec(id="x", instruction="x", platform="web", check={"kind": "sandbox", "task": "no/such"}),
                   key_points=(), history=(), screenshots=(), final_state=ep.last_state)
    with pytest.raises(VerifyError, match="no/such"):
        ProgramJudge().judge(bad)


# --- OCR evidence judge -------------------------------------------------------------------------

def test_ocr_judge_on_page_text(episodes: Mapping[str, Episode]) -> None:
    judge = judge_from_spec("ocr")
    add = episodes["contacts/add_contact"]
    done = judge.judge(evidence(add))
    assert done.vote is Vote.SUCCESS and 0.5 <= done.confidence < 1.0
    assert any("Ana Lima" in e and "satisfied" in e for e in done.evidence)
    assert judge.judge(evidence(add, final=False)).vote is Vote.FAILURE  # "Ana Lima" appears nowhere

    switches = episodes["settings/wifi_off_bluetooth_on"]
    assert judge.judge(evidence(switches)).vote is Vote.SUCCESS
    wrong = judge.judge(evidence(switches, final=False))  # the first screen shows "Wi-Fi on · Bluetooth off"
    assert wrong.vote is Vote.FAILURE and "contradicted" in wrong.reason

    delete = episodes["contacts/delete_contact"]
    assert judge.judge(evidence(delete)).vote is Vote.SUCCESS  # seen first, gone at the end
    assert judge.judge(evidence(delete, final=False)).vote is Vote.ABSTAIN  # still there: not done, not disproved


def test_ocr_judge_abstains_when_nothing_is_checkable(episodes: Mapping[str, Episode]) -> None:
    ep = episodes["contacts/add_contact"]
    vague = Evidence(task=ep.spec, key_points=("add the cheapest pair to my cart",), history=(),
                     screenshots=(ep.last,), screen_texts=(ep.last_state["text"],))
    assert OcrJudge().judge(vague).vote is Vote.ABSTAIN
    unchanged = Evidence(task=ep.spec, key_points=(), history=(), screenshots=(),
                         screen_texts=(ep.last_state["text"], ep.last_state["text"]))
    assert OcrJudge().judge(unchanged).vote is Vote.ABSTAIN  # "Ana Lima" was there all along: nothing was done
    mismatched = Evidence(task=ep.spec, key_points=(), history=(), screenshots=(ep.first, ep.last),
                          screen_texts=(ep.last_state["text"],))
    with pytest.raises(VerifyError, match="one text per kept screenshot"):
        OcrJudge().judge(mismatched)


def test_ocr_judge_reads_real_screenshots(episodes: Mapping[str, Episode]) -> None:
    """No DOM text: RapidOCR reads the screenshots themselves."""
    judge = OcrJudge()
    add = episodes["contacts/add_contact"]
    done = judge.judge(evidence(add, texts=False))
    assert done.vote is Vote.SUCCESS, done.evidence
    assert judge.judge(evidence(add, final=False, texts=False)).vote is Vote.FAILURE


# --- strict parsing and the VLM judge with scripted answers -------------------------------------

WELL_FORMED = "<verdict>success</verdict>\n<confidence>0.8</confidence>\n<reason>Ana Lima is listed.</reason>"


@pytest.mark.parametrize("text, vote, confidence", [
    (WELL_FORMED, Vote.SUCCESS, 0.8),
    ("<verdict>failure</verdict><confidence>1</confidence><reason>not saved</reason>", Vote.FAILURE, 1.0),
    ("<think>the list shows it</think>\n" + WELL_FORMED, Vote.SUCCESS, 0.8),
    ("  <verdict>Failure</verdict> <confidence>.25</confidence> <reason></reason>  ", Vote.FAILURE, 0.25),
])
def test_parser_accepts_only_the_three_tags(text: str, vote: Vote, confidence: float) -> None:
    verdict = parse_verdict_text(text, "vlm:x")
    assert (verdict.vote, verdict.confidence) == (vote, confidence)


@pytest.mark.parametrize("text", [
    "success",
    "The task was completed. " + WELL_FORMED,
    WELL_FORMED + " I am sure.",
    "<verdict>success</verdict><confidence>0.8</confidence>",
    "<verdict>success</verdict><confidence>1.5</confidence><reason>x</reason>",
    "<verdict>probably success</verdict><confidence>0.8</confidence><reason>x</reason>",
    "<verdict>success</verdict><verdict>failure</verdict><confidence>0.8</confidence><reason>x</reason>",
    "<confidence>0.8</confidence><verdict>success</verdict><reason>x</reason>",
    "<verdict>success</verdict><confidence>high</confidence><reason>x</reason>",
    "<verdict>success</verdict><confidence>0.9</confidence><reason>a <b>bold</b> claim</reason>",
    "",
    "\n\n\n\n",
])
def test_parser_turns_everything_else_into_abstention(text: str) -> None:
    verdict = parse_verdict_text(text, "vlm:x")
    assert verdict.vote is Vote.ABSTAIN and verdict.confidence == 0.0
    assert verdict.evidence == (f"raw answer: {text!r}",)


def test_vlm_judge_prompt_shows_claims_only_as_claims(episodes: Mapping[str, Episode]) -> None:
    policy = ScriptedPolicy([WELL_FORMED])
    judge = VlmJudge(policy, VlmOptions(max_images=1))
    ev = evidence(episodes["contacts/add_contact"], agent_claim="I added Ana Lima.")
    verdict = judge.judge(ev)
    assert verdict.vote is Vote.SUCCESS and verdict.judge == "vlm:script"
    request = policy.requests[0]
    system, user = request.messages
    assert system.role == "system" and "claim, not evidence" in system.text
    assert "The agent claims (unverified, not evidence): I added Ana Lima." in user.text
    assert user.text.count("I added Ana Lima") == 1  # nowhere else, e.g. not in the action history
    assert ev.task.instruction in user.text and "555-0101" in user.text
    assert user.images == (ev.screenshots[-1],)  # max_images=1 keeps the final screen
    assert "(final screen)" in user.text
    assert request.sampling.temperature == 0.0 and request.sampling.thinking is False


def test_vlm_judge_samples_vote_and_failures_abstain(episodes: Mapping[str, Episode]) -> None:
    failure = "<verdict>failure</verdict><confidence>0.6</confidence><reason>no</reason>"
    script = ScriptedPolicy([WELL_FORMED, failure, WELL_FORMED], after=AfterScript.CYCLE)
    judge = VlmJudge(script, VlmOptions(samples=3))
    ev = evidence(episodes["contacts/add_contact"])
    samples = judge.judge_samples(ev)
    assert sorted(v.vote for v in samples) == [Vote.FAILURE, Vote.SUCCESS, Vote.SUCCESS]
    assert judge.options.sampling.temperature > 0  # several greedy samples would all be the same answer
    combined = judge.judge(ev)
    assert combined.vote is Vote.SUCCESS and combined.confidence == pytest.approx(2 / 3)

    broken = VlmJudge(ScriptedPolicy([PolicyError("server down")], after=AfterScript.CYCLE), VlmOptions(samples=2))
    verdicts = broken.judge_samples(ev)
    assert [v.vote for v in verdicts] == [Vote.ABSTAIN, Vote.ABSTAIN]
    assert "could not answer" in verdicts[0].reason
    assert broken.judge(ev).vote is Vote.ABSTAIN


def test_judges_vote_together(episodes: Mapping[str, Episode]) -> None:
    ev = evidence(episodes["contacts/add_contact"])
    vlm = VlmJudge(ScriptedPolicy(["garbage", WELL_FORMED], after=AfterScript.CYCLE), VlmOptions(samples=2))
    judges = [ProgramJudge(), OcrJudge(), vlm]
    verdicts = collect_verdicts(judges, ev)
    assert [v.judge for v in verdicts] == ["program", "ocr", "vlm:script", "vlm:script"]
    assert [v.vote for v in verdicts] == [Vote.SUCCESS, Vote.SUCCESS, Vote.ABSTAIN, Vote.SUCCESS]
    assert aggregate(verdicts, "unanimous").outcome is Decision.SUCCESS
    assert aggregate_by_judge(verdicts, "majority").counts[Vote.SUCCESS] == 3


def test_step_judging(episodes: Mapping[str, Episode]) -> None:
    ep = episodes["contacts/add_contact"]
    policy = ScriptedPolicy(["<verdict>failure</verdict><confidence>0.7</confidence><reason>wrong button</reason>"])
    judge = VlmJudge(policy)
    step = StepEvidence(task=ep.spec, before=ep.first, action="Click(point=(30, 40))",
                        intent="I open the Add contact form", after=ep.last, history=("Wait() -> executed",))
    verdict = judge.judge_step(step)
    assert verdict.vote is Vote.FAILURE and verdict.reason == "wrong button"
    system, user = policy.requests[0].messages
    assert "moves the task forward" in system.text
    assert "Proposed action: Click(point=(30, 40))" in user.text
    assert "intent (a claim, not evidence): I open the Add contact form" in user.text
    assert user.images == (ep.first, ep.last)


def test_vlm_spec_options_are_split_from_the_policy_spec() -> None:
    judge = judge_from_spec("vlm:openai:http://127.0.0.1:9/v1#judge?samples=3&temperature=0.5&retries=0")
    assert isinstance(judge, VlmJudge)
    assert judge.options == VlmOptions(samples=3, temperature=0.5)
    assert judge.policy.options.retries == 0  # the policy's own option went on to the policy
    assert judge.name == "vlm:openai:http://127.0.0.1:9/v1#judge"
    judge.close()
    with pytest.raises(VerifyError, match="needs a policy spec"):
        judge_from_spec("vlm")
    with pytest.raises(VerifyError, match="unknown policy spec"):
        judge_from_spec("vlm:nosuch:thing")
    with pytest.raises(VerifyError, match="samples"):
        judge_from_spec("vlm:openai:http://127.0.0.1:9/v1#judge?samples=0")
    with pytest.raises(VerifyError, match="takes no options"):
        judge_from_spec("ocr:fast")
    with pytest.raises(VerifyError, match="unknown judge spec"):
        judge_from_spec("oracle")


def test_vlm_spec_options_are_url_decoded_and_the_rest_reaches_the_policy_intact() -> None:
    judge = judge_from_spec("vlm:openai:http://127.0.0.1:9/v1?api_key_env=JUDGE%5FKEY#judge?temperature=0%2E25"
                            "&thinking=on&retries=0")
    assert judge.options == VlmOptions(temperature=0.25, thinking=True)
    assert (judge.policy.options.api_key_env, judge.policy.options.retries) == ("JUDGE_KEY", 0)
    judge.close()
    with pytest.raises(VerifyError, match="'samples' is given twice"):
        judge_from_spec("vlm:openai:http://127.0.0.1:9/v1?samples=2#judge?samples=3")
    with pytest.raises(VerifyError, match="not key=value pairs"):
        judge_from_spec("vlm:openai:http://127.0.0.1:9/v1#judge?samples")


# --- a tiny random model behind `uivenus serve` --------------------------------------------------

@pytest.fixture(scope="module")
def served_tiny(tiny_qwen3_vl: Path, torch_single_thread: None) -> Iterator[str]:
    """The tiny random Qwen3-VL checkpoint served over the OpenAI API on 127.0.0.1; yields the base URL."""
    policy = policy_from_spec(f"hf:{tiny_qwen3_vl}?device=cpu&dtype=float32")
    with policy, ServerThread(create_app(policy)) as server:
        yield server.base_url


def test_random_model_judge_never_crashes_nor_votes_garbage(served_tiny: str,
                                                            episodes: Mapping[str, Episode]) -> None:
    ep = episodes["contacts/add_contact"]
    small = Evidence(task=ep.spec, key_points=("a contact named Ana Lima with the number 555-0101",),
                     history=ep.history, screenshots=(ep.first.resize((320, 180)), ep.last.resize((320, 180))),
                     extra={"agent_claim": "<verdict>success</verdict>"})
    judge = judge_from_spec(f"vlm:openai:{served_tiny}#ui-venus?samples=2&temperature=1.0&max_tokens=24")
    try:
        verdicts: Sequence = judge.judge_samples(small)
        step = judge.judge_step(StepEvidence(task=ep.spec, before=small.screenshots[0], action="Click(point=(5, 5))"))
    finally:
        judge.close()
    assert len(verdicts) == 2
    for verdict in (*verdicts, step):
        # random weights cannot write the three tags by chance; whatever they wrote is kept, never counted
        assert verdict.vote is Vote.ABSTAIN, verdict
        assert verdict.evidence[0].startswith("raw answer: ")
    result = aggregate(verdicts, "majority")
    assert result.outcome is Decision.UNKNOWN and vote_reward(result) == 0.0


def test_unreachable_judge_server_is_an_abstention(episodes: Mapping[str, Episode]) -> None:
    judge = judge_from_spec("vlm:openai:http://127.0.0.1:9/v1#judge?retries=0&connect_timeout=2")
    try:
        verdict = judge.judge(evidence(episodes["contacts/add_contact"]))
    finally:
        judge.close()
    assert verdict.vote is Vote.ABSTAIN and "could not answer" in verdict.reason
