"""Calibrating verifiers: judges and voting rules against trajectories whose truth is known programmatically.

The labelled set (`evals.verifier_data`) holds reference runs and hard negatives, each episode carrying its truth
(the task's checker, the MiniWoB page's raw reward) and its perturbation kind. Every judge sees the same evidence
the trace verifier builds (`verify.trace.build_evidence`); each judge's own decision and each voting rule's
decision over all judges are scored against the truth:

- agreement: the share of episodes where the decision *is* the truth (an abstention or an undecided vote agrees
  with nothing);
- coverage: the share where a decision was made at all;
- precision and recall of "success";
- false-success rate: the share of true failures called success — what a reward hacker exploits; the hard
  negatives exist to measure it.

Everything is reported overall, per source (sandbox, MiniWoB) and per source/perturbation kind, together with each
rule's trace outcomes (success / partial / failed / unknown, `verify.trace.trace_outcome`) per kind, as JSON, a
Markdown table and a plot.
"""

from __future__ import annotations

import itertools
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uivenus.evals.verifier_data import PERTURBATION_KEY, SPLIT_KEY, TRUTH_KEY
from uivenus.records import Trajectory
from uivenus.store import StoreError, episode_dirs, is_episode_dir, list_runs, read_episode
from uivenus.verify.base import Judge, VerifyError
from uivenus.verify.judges import judge_from_spec
from uivenus.verify.trace import read_trace, trace_outcome
from uivenus.verify.voting import RULES, Decision, aggregate

__all__ = [
    "PLOT_FILE", "REPORT_FILE", "TABLE_FILE", "LabelledEpisode", "calibrate", "compare_table", "find_labelled",
    "format_table", "load_report",
    "plot_report", "score",
]

REPORT_FILE = "verifier_report.json"
TABLE_FILE = "verifier_table.md"
PLOT_FILE = "verifier_calibration.png"
RULE_PREFIX = "vote:"


@dataclass(frozen=True)
class LabelledEpisode:
    """A stored episode with what the calibration scores against: its truth, kind and source."""

    directory: Path
    trajectory: Trajectory
    truth: bool
    kind: str
    source: str

    @property
    def group(self) -> str:
        return f"{self.source}/{self.kind}"


def _episode_paths(data_dir: Path) -> list[Path]:
    """Every episode under a store root, a run directory or an episode directory."""
    if is_episode_dir(data_dir):
        return [data_dir]
    runs = list_runs(data_dir)
    if runs:
        return [path for run in runs for path in episode_dirs(run)]
    return episode_dirs(data_dir)


def find_labelled(data_dir: str | Path) -> tuple[list[LabelledEpisode], list[str]]:
    """The finished episodes that carry a truth, and why the others were skipped."""
    found, skipped = [], []
    for path in _episode_paths(Path(data_dir)):
        try:
            trajectory = read_episode(path)
        except StoreError as exc:
            skipped.append(f"{path.name}: {exc}")
            continue
        truth = trajectory.metadata.get(TRUTH_KEY)
        if not trajectory.complete or truth not in ("success", "failure"):
            skipped.append(f"{path.name}: no truth recorded (outcome {trajectory.outcome.value})")
            continue
        found.append(LabelledEpisode(path, trajectory, truth == "success",
                                     str(trajectory.metadata.get(PERTURBATION_KEY, "unlabelled")),
                                     str(trajectory.metadata.get("source", path.parent.name))))
    return found, skipped


# --- scores -------------------------------------------------------------------------------------

def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def score(pairs: Iterable[tuple[bool, Decision]]) -> dict[str, Any]:
    """Agreement, coverage, precision, recall and false-success rate of decisions against truths."""
    pairs = list(pairs)
    tp = sum(1 for t, d in pairs if t and d is Decision.SUCCESS)
    fp = sum(1 for t, d in pairs if not t and d is Decision.SUCCESS)
    tn = sum(1 for t, d in pairs if not t and d is Decision.FAILURE)
    fn = sum(1 for t, d in pairs if t and d is Decision.FAILURE)
    positives = sum(1 for t, _ in pairs if t)
    negatives = len(pairs) - positives
    decided = tp + fp + tn + fn
    return {
        "n": len(pairs), "positives": positives, "negatives": negatives, "tp": tp, "fp": fp, "tn": tn, "fn": fn,
        "undecided": len(pairs) - decided, "coverage": _ratio(decided, len(pairs)),
        "agreement": _ratio(tp + tn, len(pairs)), "agreement_decided": _ratio(tp + tn, decided),
        "precision": _ratio(tp, tp + fp), "recall": _ratio(tp, positives),
        "false_success_rate": _ratio(fp, negatives),
    }


def _decisions(judges: Sequence[Judge], rules: Sequence[str], episode: LabelledEpisode, k: int, ocr: bool,
               pixels: bool) -> dict[str, Any]:
    """Each judge's and each rule's decision on one episode, and each rule's trace outcome."""
    directory = episode.directory
    reading = read_trace(episode.trajectory, directory, k=k, ocr=ocr, pixels=pixels)
    verdicts = tuple(judge.judge(reading.evidence) for judge in judges)  # one voice each, with its own confidence
    steps = reading.label_steps()  # the terminal label does not enter outcomes
    progress = reading.progress()
    decisions: dict[str, Decision] = {}
    outcomes: dict[str, str] = {}
    for verdict in verdicts:
        decisions[verdict.judge] = aggregate((verdict,), "majority").outcome
    for rule in rules:
        vote = aggregate(verdicts, rule)
        decisions[RULE_PREFIX + rule] = vote.outcome
        outcomes[RULE_PREFIX + rule] = trace_outcome(vote, progress, steps)[0].value
    return {
        "episode": f"{directory.parent.name}/{directory.name}", "source": episode.source,
        "kind": episode.kind, "truth": "success" if episode.truth else "failure",
        "decisions": {name: d.value for name, d in decisions.items()}, "outcomes": outcomes,
        "verdicts": [v.to_dict() for v in verdicts],
    }


def _grouped(records: Sequence[Mapping[str, Any]], voters: Sequence[str], key: Callable[[Mapping[str, Any]], str]
             ) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(key(record), []).append(record)
    return {name: {voter: score((r["truth"] == "success", Decision(r["decisions"][voter])) for r in group)
                   for voter in voters}
            for name, group in sorted(groups.items())}


def _spread(episodes: Sequence[LabelledEpisode], limit: int, seed: int = 0) -> list[LabelledEpisode]:
    """`limit` episodes taken in turn from each source/kind group (each group in a seeded shuffled order, so the
    subset spans tasks and apps too)."""
    groups: dict[str, list[LabelledEpisode]] = {}
    for episode in episodes:
        groups.setdefault(episode.group, []).append(episode)
    for group in groups.values():
        random.Random(seed).shuffle(group)
    rounds = itertools.zip_longest(*groups.values())
    return [episode for row in rounds for episode in row if episode is not None][:limit]


def _outcome_counts(records: Sequence[Mapping[str, Any]], rules: Sequence[str]) -> dict[str, dict[str, Any]]:
    """How many episodes of each source/kind got each trace outcome, per rule."""
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        group = out.setdefault(f"{record['source']}/{record['kind']}", {rule: Counter() for rule in rules})
        for rule in rules:
            group[rule][record["outcomes"][rule]] += 1
    return {name: {rule: dict(counts) for rule, counts in group.items()} for name, group in sorted(out.items())}


def calibrate(data_dir: str | Path, judges: Sequence[str | Judge] = ("program", "ocr", "acts"),
              rules: Sequence[str] = ("majority", "unanimous", "weighted"), *, out_dir: str | Path | None = None,
              k: int = 4, ocr: bool = True, pixels: bool = False, limit: int | None = None,
              split: str | None = None, progress: bool = True) -> dict[str, Any]:
    """Score `judges` and the voting `rules` over them on the labelled set at `data_dir`; with `out_dir`, write
    the report (JSON), a Markdown table and a plot there. `pixels` makes text judges OCR the kept screenshots
    instead of reading the recorded screen text; `limit` scores only that many episodes, taken in turn from each
    source/kind in a seeded shuffled order (a balanced subset, for slow judges); `split` scores only the episodes
    whose metadata names that split ("held_out": the MiniWoB tasks no judge was developed on)."""
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        raise VerifyError(f"unknown voting rule(s) {unknown}; use {', '.join(RULES)}")
    built = [judge_from_spec(j) if isinstance(j, str) else j for j in judges]
    if not built:
        raise VerifyError("calibrate needs at least one judge")
    names = [j.name for j in built]
    if len(set(names)) != len(names):
        raise VerifyError(f"judge names must differ, got {names}")
    episodes, skipped = find_labelled(data_dir)
    if not episodes:
        raise VerifyError(f"{data_dir} holds no labelled episodes (none carries metadata['truth']); build them with "
                          "uivenus.evals.verifier_data.build_dataset or `uivenus eval verifier --build`")
    if split is not None:
        episodes = [e for e in episodes if e.trajectory.metadata.get(SPLIT_KEY) == split]
        if not episodes:
            raise VerifyError(f"{data_dir} holds no labelled episodes of split {split!r}")
    if limit is not None and limit < len(episodes):
        episodes = _spread(episodes, limit)
    started = time.perf_counter()
    records = [_decisions(built, rules, episode, k, ocr, pixels) for episode in _progress(episodes, progress)]
    voters = [*names, *(RULE_PREFIX + r for r in rules)]
    report = {
        "data_dir": str(data_dir), "split": split, "judges": names, "rules": list(rules), "voters": voters, "k": k,
        "screen_text": "ocr of the kept screenshots" if pixels else "recorded (else ocr)",
        "n": len(records), "skipped": skipped, "seconds": round(time.perf_counter() - started, 1),
        "truth": {"success": sum(r["truth"] == "success" for r in records),
                  "failure": sum(r["truth"] == "failure" for r in records)},
        "hard_negatives": sum(r["kind"] != "reference" for r in records),
        "overall": _grouped(records, voters, lambda r: "all")["all"],
        "by_source": _grouped(records, voters, lambda r: r["source"]),
        "by_kind": _grouped(records, voters, lambda r: f"{r['source']}/{r['kind']}"),
        "outcomes_by_kind": _outcome_counts(records, [RULE_PREFIX + r for r in rules]),
        "records": records,
    }
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / REPORT_FILE).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        (out / TABLE_FILE).write_text(format_table(report) + "\n", encoding="utf-8")
        plot_report(report, out / PLOT_FILE)
        report = {**report, "report_path": str(out / REPORT_FILE), "table_path": str(out / TABLE_FILE),
                  "plot_path": str(out / PLOT_FILE)}
    return report


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def format_table(report: Mapping[str, Any]) -> str:
    """Markdown: per source/kind and overall, each voter's false-success rate / agreement (coverage); then each
    rule's trace outcomes per source/kind (success / partial / failed / unknown)."""
    voters = report["voters"]
    head = "| group | n (succ/fail) | " + " | ".join(f"{v} FSR / agr (cov)" for v in voters) + " |"
    lines = [head, "|" + "---|" * (len(voters) + 2)]
    rows = [*report["by_kind"].items(), *(("all/" + s, m) for s, m in report["by_source"].items()),
            ("all", report["overall"])]
    for name, metrics in rows:
        first = metrics[voters[0]]
        cells = [f"{_pct(m['false_success_rate'])} / {_pct(m['agreement'])} ({_pct(m['coverage'])})"
                 for m in (metrics[v] for v in voters)]
        counts = f"{first['n']} ({first['positives']}/{first['negatives']})"
        lines.append(f"| {name} | {counts} | " + " | ".join(cells) + " |")
    rules = [RULE_PREFIX + r for r in report["rules"]]
    if rules:
        lines += ["", "| group | " + " | ".join(f"{r} S/P/F/U" for r in rules) + " |", "|" + "---|" * (len(rules) + 1)]
        for name, by_rule in report["outcomes_by_kind"].items():
            cells = ["/".join(str(by_rule[r].get(o, 0)) for o in ("success", "partial", "failed", "unknown"))
                     for r in rules]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines += ["", "S/P/F/U: how many episodes each rule judged success / partial / failed / unknown (no judge "
                      "could tell)."]
    lines += ["FSR: false-success rate (failures judged success); agr: agreement with the labels; "
              "cov: coverage (episodes the voter judged at all)."]
    return "\n".join(lines)


def load_report(path: str | Path) -> dict[str, Any]:
    """A report `calibrate` wrote (its JSON), for comparing runs; `VerifyError` when it is not one."""
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise VerifyError(f"cannot read the verifier report {path}: {exc}") from exc
    if not isinstance(report, dict) or not {"by_kind", "by_source", "overall", "voters"} <= set(report):
        raise VerifyError(f"{path} is no verifier report (write one with `uivenus eval verifier --out DIR`)")
    return report


def _cells(metrics: Mapping[str, Any] | None) -> str:
    if metrics is None:
        return "–"
    return (f"{_pct(metrics['coverage'])} / {_pct(metrics['false_success_rate'])} / "
            f"{_pct(metrics['agreement_decided'])}")


def compare_table(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """Markdown: per source/kind and overall, each voter of `after` as coverage / false-success rate / agreement
    on the decided episodes, before → after (a voter or group the earlier report lacks shows –)."""
    voters = after["voters"]
    lines = ["| group | n | " + " | ".join(f"{v} before → after" for v in voters) + " |",
             "|" + "---|" * (len(voters) + 2)]

    def rows(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
        return {**report["by_kind"], **{f"all/{s}": m for s, m in report["by_source"].items()},
                "all": report["overall"]}

    earlier, later = rows(before), rows(after)
    for name, metrics in later.items():
        old = earlier.get(name, {})
        cells = [f"{_cells(old.get(v))} → {_cells(metrics[v])}" for v in voters]
        lines.append(f"| {name} | {metrics[voters[0]]['n']} | " + " | ".join(cells) + " |")
    lines.append("Each cell: coverage / false-success rate / agreement on the decided episodes.")
    return "\n".join(lines)


def plot_report(report: Mapping[str, Any], path: Path) -> Path:
    """Two panels per source/kind: false-success rate and agreement, one bar per voter."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    groups = list(report["by_kind"])
    voters = report["voters"]
    width = 0.8 / len(voters)
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 0.9 * len(groups) + 2), 7), sharex=True)
    for ax, metric, title in ((axes[0], "false_success_rate", "false-success rate (lower is better)"),
                              (axes[1], "agreement", "agreement with the truth")):
        for i, voter in enumerate(voters):
            values = [report["by_kind"][g][voter][metric] for g in groups]
            ax.bar([x + i * width for x in range(len(groups))], [v if v is not None else 0 for v in values],
                   width, label=voter)
        ax.set_ylim(0, 1.05)
        ax.set_title(title)
    axes[1].set_xticks([x + width * (len(voters) - 1) / 2 for x in range(len(groups))])
    axes[1].set_xticklabels(groups, rotation=30, ha="right", fontsize=8)
    axes[0].legend(fontsize=7, ncol=len(voters))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _progress(episodes: Sequence[LabelledEpisode], show: bool) -> Iterable[LabelledEpisode]:
    from uivenus.progress import Tracker

    with Tracker("verifier judging", len(episodes), unit="episodes", show=show) as tracker:
        for episode in episodes:
            tracker.note = episode.group
            yield episode
            tracker.advance()
