"""How far the judges agree with people: a web evaluation's verdicts against human labels of the same episodes.

Labels are `{"task_id": ..., "success": true|false}` rows (JSON list or JSONL; a bad row is reported with its line
and skipped). For the final verdict and for each judge, over the tasks both sides have: agreement (share of equal
calls), precision and recall of "success", and the false-success rate — the share of episodes people call
failures that the judge calls successes, the error that inflates a leaderboard (the number WebJudge reports
beside agreement). A judge that abstained, and a final verdict that is not success, count as "not success".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from uivenus.evals.web_tasks import RowError, read_rows

__all__ = ["Agreement", "AgreementError", "agreement", "compare", "read_labels"]

#: The name the final (voted) verdict is reported under, beside the judges' own names.
FINAL = "final"


class AgreementError(ValueError):
    """A labels or results file cannot be read at all; the message names it."""


@dataclass(frozen=True)
class Agreement:
    """One judge (or the final verdict) against the labels."""

    n: int
    true_success: int
    false_success: int
    true_failure: int
    false_failure: int

    @property
    def agreement(self) -> float:
        return (self.true_success + self.true_failure) / self.n if self.n else 0.0

    @property
    def precision(self) -> float | None:
        called = self.true_success + self.false_success
        return self.true_success / called if called else None

    @property
    def recall(self) -> float | None:
        actual = self.true_success + self.false_failure
        return self.true_success / actual if actual else None

    @property
    def false_success_rate(self) -> float | None:
        failures = self.false_success + self.true_failure
        return self.false_success / failures if failures else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "agreement": self.agreement, "precision": self.precision, "recall": self.recall,
                "false_success_rate": self.false_success_rate}


def agreement(calls: Sequence[tuple[bool, bool]]) -> Agreement:
    """Counts over (judge says success, people say success) pairs."""
    return Agreement(len(calls), sum(1 for j, h in calls if j and h), sum(1 for j, h in calls if j and not h),
                     sum(1 for j, h in calls if not j and not h), sum(1 for j, h in calls if not j and h))


def read_labels(path: str | Path) -> tuple[dict[str, bool], list[RowError]]:
    """Human labels by task id, and the rows that are not `{"task_id": str, "success": bool}`."""
    rows = read_rows(path, AgreementError)
    labels: dict[str, bool] = {}
    errors: list[RowError] = []
    for line, row in rows:
        if isinstance(row, Exception):
            errors.append(RowError(line, f"not JSON ({row})"))
        elif isinstance(row, Mapping) and isinstance(row.get("task_id"), str) and isinstance(row.get("success"), bool):
            labels[row["task_id"]] = row["success"]
        else:
            errors.append(RowError(line, f'a label is {{"task_id": "...", "success": true|false}}, got {row!r:.120}'))
    return labels, errors


def compare(results: Mapping[str, Any], labels: Mapping[str, bool]) -> dict[str, Any]:
    """The final verdict's and every judge's agreement with `labels`, over the tasks both have."""
    records = [r for r in results["tasks"] if r["task_id"] in labels]
    calls: dict[str, list[tuple[bool, bool]]] = {FINAL: [(bool(r["success"]), labels[r["task_id"]]) for r in records]}
    for record in records:
        for verdict in record.get("judges", ()):
            calls.setdefault(verdict["judge"], []).append((verdict["vote"] == "success", labels[record["task_id"]]))
    unlabelled = [r["task_id"] for r in results["tasks"] if r["task_id"] not in labels]
    return {"labelled": len(records), "unlabelled": unlabelled,
            "missing": sorted(set(labels) - {r["task_id"] for r in results["tasks"]}),
            "judges": {name: agreement(pairs).to_dict() for name, pairs in calls.items()}}
