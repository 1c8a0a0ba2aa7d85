"""Voting rules on hand-built verdict sets: clear majorities, ties, abstentions, confidences, dissent."""

from __future__ import annotations

import pytest

from uivenus.verify.base import TraceOutcome, Verdict, VerifyError, Vote
from uivenus.verify.voting import RULES, Decision, aggregate, aggregate_by_judge, as_verdict

S, F, A = Vote.SUCCESS, Vote.FAILURE, Vote.ABSTAIN


def v(vote: Vote, confidence: float = 1.0, judge: str = "j") -> Verdict:
    return Verdict(judge=judge, vote=vote, confidence=confidence if vote is not A else 0.0)


def votes(*spec: Vote) -> list[Verdict]:
    return [v(x, judge=f"j{i}") for i, x in enumerate(spec)]


def test_clear_majority_wins_with_its_share() -> None:
    result = aggregate(votes(S, S, F), "majority")
    assert result.outcome is Decision.SUCCESS
    assert result.support == pytest.approx(2 / 3)
    assert result.counts == {S: 2, F: 1, A: 0}
    assert result.abstained == 0
    assert aggregate(votes(F, F, S, F), "majority").outcome is Decision.FAILURE


def test_majority_tie_is_unknown_not_failure() -> None:
    result = aggregate(votes(S, F), "majority")
    assert result.outcome is Decision.UNKNOWN
    assert "tie" in result.reason
    assert result.outcome.trace_outcome is TraceOutcome.UNKNOWN


@pytest.mark.parametrize("rule", sorted(RULES))
def test_all_abstain_is_unknown_under_every_rule(rule: str) -> None:
    result = aggregate(votes(A, A, A), rule)
    assert result.outcome is Decision.UNKNOWN
    assert result.abstained == 3 and result.voted == 0 and result.support == 0.0
    assert "abstained" in result.reason
    assert aggregate([], rule).outcome is Decision.UNKNOWN


@pytest.mark.parametrize("rule", sorted(RULES))
def test_all_abstain_stays_unknown_even_when_require_all_is_off_or_on(rule: str) -> None:
    for require_all in (False, True):
        assert aggregate(votes(A), rule, require_all=require_all).outcome is Decision.UNKNOWN


def test_abstentions_are_excluded_from_majority_but_counted() -> None:
    result = aggregate(votes(S, A, A, A), "majority")
    assert result.outcome is Decision.SUCCESS  # one voter, one vote: the abstainers do not count against it
    assert result.support == 1.0
    assert result.abstained == 3
    assert "3 abstained" in result.reason
    tie_with_abstainers = aggregate(votes(S, F, A), "majority")
    assert tie_with_abstainers.outcome is Decision.UNKNOWN and tie_with_abstainers.abstained == 1


def test_supermajority_threshold_leaves_a_narrow_win_unknown() -> None:
    assert aggregate(votes(S, S, F), "majority", threshold=0.7).outcome is Decision.UNKNOWN
    assert aggregate(votes(S, S, S, F), "majority", threshold=0.7).outcome is Decision.SUCCESS


def test_weighted_follows_confidence_not_headcount() -> None:
    verdicts = [v(S, 0.2, "a"), v(S, 0.2, "b"), v(F, 0.9, "c")]
    assert aggregate(verdicts, "majority").outcome is Decision.SUCCESS
    weighted = aggregate(verdicts, "weighted")
    assert weighted.outcome is Decision.FAILURE
    assert weighted.support == pytest.approx(0.9 / 1.3)


def test_weighted_equal_mass_is_a_tie_and_zero_confidence_is_unknown() -> None:
    assert aggregate([v(S, 0.6, "a"), v(F, 0.3, "b"), v(F, 0.3, "c")], "weighted").outcome is Decision.UNKNOWN
    assert aggregate([v(S, 0.0, "a"), v(F, 0.0, "b")], "weighted").outcome is Decision.UNKNOWN


def test_unanimous_one_dissent_is_failure() -> None:
    result = aggregate(votes(S, S, S, F), "unanimous")
    assert result.outcome is Decision.FAILURE
    assert result.support == pytest.approx(1 / 4)


def test_unanimous_success_ignores_abstainers_unless_require_all() -> None:
    assert aggregate(votes(S, S, A), "unanimous").outcome is Decision.SUCCESS
    blocked = aggregate(votes(S, S, A), "unanimous", require_all=True)
    assert blocked.outcome is Decision.UNKNOWN
    assert "require_all" in blocked.reason
    assert aggregate(votes(S, S, S), "unanimous", require_all=True).outcome is Decision.SUCCESS


def test_samples_of_one_judge_collapse_to_one_voice() -> None:
    many = [v(S, judge="vlm")] * 5
    others = [v(F, judge="program"), v(F, judge="ocr")]
    assert aggregate(many + others, "majority").outcome is Decision.SUCCESS  # five samples outvote two judges
    by_judge = aggregate_by_judge(many + others, "majority")
    assert by_judge.outcome is Decision.FAILURE
    assert by_judge.counts == {S: 1, F: 2, A: 0}


def test_a_judge_whose_samples_tie_abstains_in_the_second_round() -> None:
    verdicts = [v(S, judge="vlm"), v(F, judge="vlm"), v(S, judge="program")]
    result = aggregate_by_judge(verdicts, "unanimous")
    assert result.counts == {S: 1, F: 0, A: 1}
    assert result.outcome is Decision.SUCCESS
    assert aggregate_by_judge(verdicts, "unanimous", require_all=True).outcome is Decision.UNKNOWN


def test_as_verdict_maps_unknown_to_abstention() -> None:
    unknown = as_verdict(aggregate(votes(S, F), "majority"), "vote")
    assert unknown.vote is A
    success = as_verdict(aggregate(votes(S, S, F), "majority"), "vote")
    assert success.vote is S and success.confidence == pytest.approx(2 / 3)


def test_bad_rule_and_threshold_are_errors() -> None:
    with pytest.raises(VerifyError, match="unknown voting rule 'any'"):
        aggregate(votes(S), "any")
    with pytest.raises(VerifyError, match="threshold"):
        aggregate(votes(S), "majority", threshold=0.3)


def test_result_serialises() -> None:
    data = aggregate(votes(S, F, F, A), "majority").to_dict()
    assert data["outcome"] == "failure" and data["counts"] == {"success": 1, "failure": 2, "abstain": 1}


def test_an_exact_check_is_not_outvoted_by_estimating_judges() -> None:
    from uivenus.verify.base import Verdict, Vote
    from uivenus.verify.voting import Decision, aggregate

    program = Verdict("program", Vote.FAILURE, 1.0, "checker: not done", exact=True)
    estimates = [Verdict("ocr", Vote.SUCCESS, 0.9), Verdict("acts", Vote.SUCCESS, 0.9)]
    for rule in ("majority", "weighted", "unanimous"):
        result = aggregate([program, *estimates], rule)
        assert result.outcome is Decision.FAILURE and "exact checks decide" in result.reason
    abstaining = Verdict("program", Vote.ABSTAIN, 0.0, "no checker")
    assert aggregate([abstaining, *estimates], "majority").outcome is Decision.SUCCESS  # they decide without one
    assert Verdict.from_dict(program.to_dict()) == program
