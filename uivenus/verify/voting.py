"""Voting: several judges (and several samples of one judge) into one decision, abstentions handled explicitly.

One judge is biased and can be gamed; a vote over a VLM judge, an OCR evidence judge and a programmatic judge is
harder to fool (CUARewardBench: unanimity raises precision). Abstentions never count as votes: they are reported,
and a set where nobody voted is `unknown` — never success. Ties are `unknown` too (not failure): a tie says the
judges could not decide, and `unknown` earns no reward either way while staying visible in reports.

Rules (registry `RULES`):

- `majority`: the side holding more than `threshold` (default ½) of the votes wins; otherwise `unknown`.
- `weighted`: the same over confidences, i.e. the sign of Σ confidence·(+1 success, −1 failure) at ½.
- `unanimous`: success only when every voter says success (and, with `require_all`, nobody abstained);
  any failure vote makes it failure; otherwise `unknown`.

Where an exact check (the task's own checker: `Verdict.exact`) votes, the rule is applied to the exact votes only:
the answer key is not outvoted by judges that estimate (they decide where it abstains — no checker, no state).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from uivenus.verify.base import TraceOutcome, Verdict, VerifyError, Vote

__all__ = ["RULES", "Decision", "VoteResult", "VotingOptions", "aggregate", "aggregate_by_judge", "as_verdict"]


class Decision(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    UNKNOWN = "unknown"  # all abstained, a tie, or no side strong enough

    @property
    def trace_outcome(self) -> TraceOutcome:
        return _TRACE_OUTCOMES[self]


_TRACE_OUTCOMES: Mapping[Decision, TraceOutcome] = MappingProxyType({
    Decision.SUCCESS: TraceOutcome.SUCCESS, Decision.FAILURE: TraceOutcome.FAILED,
    Decision.UNKNOWN: TraceOutcome.UNKNOWN,
})


@dataclass(frozen=True)
class VoteResult:
    """The decision, the share of the (weighted) votes behind it, the raw counts and why."""

    outcome: Decision
    support: float  # share of the voters' weight behind `outcome` (0 for unknown with no voters)
    counts: Mapping[Vote, int]
    reason: str
    abstained: int
    rule: str

    @property
    def voted(self) -> int:
        return self.counts[Vote.SUCCESS] + self.counts[Vote.FAILURE]

    def to_dict(self) -> dict[str, object]:
        return {"outcome": self.outcome.value, "support": self.support, "rule": self.rule, "reason": self.reason,
                "abstained": self.abstained, "counts": {v.value: n for v, n in self.counts.items()}}


@dataclass(frozen=True)
class VotingOptions:
    threshold: float = 0.5  # a side needs more than this share of the voters' weight (majority, weighted)
    require_all: bool = False  # unanimous: an abstention blocks success

    def __post_init__(self) -> None:
        if not 0.5 <= self.threshold < 1.0:
            raise VerifyError(f"voting threshold must be in [0.5, 1) so that at most one side can pass it, "
                              f"got {self.threshold}")


Ruling = tuple[Decision, float, str]  # outcome, support, reason
Rule = Callable[[Sequence[Verdict], VotingOptions, Mapping[Vote, int]], Ruling]


def _share_rule(weight: Callable[[Verdict], float], unit: str) -> Rule:
    """Majority over `weight`: votes weigh 1 (majority) or their confidence (weighted)."""
    def decide(voters: Sequence[Verdict], options: VotingOptions, counts: Mapping[Vote, int]) -> Ruling:
        success = sum(weight(v) for v in voters if v.vote is Vote.SUCCESS)
        failure = sum(weight(v) for v in voters if v.vote is Vote.FAILURE)
        total = success + failure
        if total == 0:
            return Decision.UNKNOWN, 0.0, f"the voters' {unit} sums to zero"
        tally = f"{success:g} success vs {failure:g} failure ({unit})"
        for decision, share in ((Decision.SUCCESS, success / total), (Decision.FAILURE, failure / total)):
            if share > options.threshold:
                return decision, share, tally
        if success == failure:
            return Decision.UNKNOWN, 0.5, f"tie: {tally}"
        return Decision.UNKNOWN, max(success, failure) / total, f"no side above {options.threshold:g}: {tally}"

    return decide


def _unanimous(voters: Sequence[Verdict], options: VotingOptions, counts: Mapping[Vote, int]) -> Ruling:
    n = len(voters)
    if counts[Vote.FAILURE]:
        return Decision.FAILURE, counts[Vote.FAILURE] / n, f"{counts[Vote.FAILURE]} of {n} voters say failure"
    if options.require_all and counts[Vote.ABSTAIN]:
        return Decision.UNKNOWN, 1.0, f"all {n} voters say success but {counts[Vote.ABSTAIN]} abstained (require_all)"
    return Decision.SUCCESS, 1.0, f"all {n} voters say success"


#: Aggregation rules by name; each sees only the non-abstaining verdicts (at least one) and the counts.
RULES: Mapping[str, Rule] = MappingProxyType({
    "majority": _share_rule(lambda v: 1.0, "votes"),
    "weighted": _share_rule(lambda v: float(v.confidence), "confidence"),
    "unanimous": _unanimous,
})


def aggregate(verdicts: Sequence[Verdict], rule: str = "majority", *, threshold: float = 0.5,
              require_all: bool = False) -> VoteResult:
    """One decision from `verdicts` under `rule`; all-abstain (or no verdicts) is `unknown` under every rule."""
    decide = RULES.get(rule)
    if decide is None:
        raise VerifyError(f"unknown voting rule {rule!r}; use one of {', '.join(RULES)}")
    options = VotingOptions(threshold=threshold, require_all=require_all)
    counts = MappingProxyType({vote: Counter(v.vote for v in verdicts)[vote] for vote in Vote})
    voters = [v for v in verdicts if not v.abstained]
    exact = [v for v in voters if v.exact]
    if exact and len(exact) < len(voters):  # the task's own checker voted: the other judges do not outvote it
        result = aggregate(exact, rule, threshold=threshold, require_all=require_all)
        reason = f"{result.reason}; exact checks decide, {len(voters) - len(exact)} other votes set aside"
        return VoteResult(result.outcome, result.support, counts, reason, counts[Vote.ABSTAIN], rule)
    if not voters:
        reason = "no verdicts" if not verdicts else f"all {len(verdicts)} judges abstained"
        return VoteResult(Decision.UNKNOWN, 0.0, counts, reason, counts[Vote.ABSTAIN], rule)
    outcome, support, reason = decide(voters, options, counts)
    if counts[Vote.ABSTAIN]:
        reason += f"; {counts[Vote.ABSTAIN]} abstained"
    return VoteResult(outcome, support, counts, reason, counts[Vote.ABSTAIN], rule)


def as_verdict(result: VoteResult, judge: str) -> Verdict:
    """A vote result as one judge's verdict (unknown → abstain; confidence = support), to vote again with."""
    vote = {Decision.SUCCESS: Vote.SUCCESS, Decision.FAILURE: Vote.FAILURE, Decision.UNKNOWN: Vote.ABSTAIN}
    return Verdict(judge=judge, vote=vote[result.outcome], confidence=result.support if result.voted else 0.0,
                   reason=f"{result.rule}: {result.reason}")


def aggregate_by_judge(verdicts: Sequence[Verdict], rule: str = "majority", *, per_judge: str = "majority",
                       threshold: float = 0.5, require_all: bool = False) -> VoteResult:
    """Collapse each judge's samples first (`per_judge` rule), then vote across judges with `rule`, so a judge
    sampled five times has one voice, not five."""
    by_judge: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        by_judge.setdefault(verdict.judge, []).append(verdict)
    collapsed = [as_verdict(aggregate(samples, per_judge, threshold=threshold), name)
                 for name, samples in by_judge.items()]
    return aggregate(collapsed, rule, threshold=threshold, require_all=require_all)
