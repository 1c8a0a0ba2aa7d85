"""OSWorld-format evaluation: a policy on a set of OSWorld task files, each episode judged by the task's own evaluator.

The tasks load through `uivenus.tasks.osworld` (the public index, a directory tree or one file). Every supported
task becomes one episode of one store run (`DIR/runs/osworld-<policy>`), collected by `tasks.collect.Collector`
on the executors' workers — each worker keeps one desktop env; each episode gets its own isolated root there —
so a killed run resumes: a task whose episode finished is not run again. The evaluator's verdict is the one the
agent loop records from the task's checker (check kind `osworld`).

Nothing is lost to bad input: a malformed file, a task needing a step/getter/metric/app we lack, a setup step or
app that fails at reset, an episode past its time limit (`--time-limit`), an evaluator that raises — each is that
task's `error` in `DIR/results.json`, the run goes on, and none counts as a success. `reference` and `wrong` replay a
task's own solutions (our `"uivenus"` field): the `oracle` policy plays them through the checker's solver, so requests
never carry answers.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from uivenus.agent.element_listing import MAX_ELEMENTS, ObservationType
from uivenus.files import write_json
from uivenus.store import EPISODE_FILE, StoreError, read_episode
from uivenus.tasks.collect import Collector, EpisodeResult
from uivenus.tasks.executors import make_executor
from uivenus.tasks.osworld import (
    DEFAULT_MAX_STEPS, OSWorldSet, OSWorldTask, SupportCheck, TaskLoadError, coverage, load_osworld,
)

__all__ = [
    "COVERAGE_FILE", "REPLAYS", "RESULTS_FILE", "RUNS_DIR", "SUMMARY_FILE", "TaskResult", "evaluate_osworld",
    "plan_osworld", "summarise",
]

RESULTS_FILE = "results.json"
SUMMARY_FILE = "summary.json"
COVERAGE_FILE = "coverage.json"
RUNS_DIR = "runs"
REPORT_DIR = "report"
#: How the error of a task we cannot run begins.
UNSUPPORTED = "unsupported"
#: The check kind whose verdict is the task's evaluator (`uivenus.envs.osworld.checker`).
CHECK_KIND = "osworld"
#: Runner policy specs that replay one of each task's own solutions: (the policy that plays it, which solution).
REPLAYS: Mapping[str, tuple[str, str]] = {"reference": ("oracle", "reference"), "wrong": ("oracle", "wrong")}
#: The env spec a run uses, by whether setup may run on the bare host (`--unsafe-host`).
ENV_SPECS: Mapping[bool, str] = {False: "desktop", True: "desktop:unsafe-host"}


@dataclass(frozen=True)
class TaskResult:
    """One task's line of `results.json`: success only when the evaluator ran and passed. `error` is set when the
    task could not be judged (malformed, unsupported, a failed reset, an evaluator crash), never on a success;
    `reason` is the evaluator's own word on a task it judged."""

    id: str
    domain: str
    success: bool
    score: float
    error: str | None
    outcome: str | None = None
    steps: int = 0
    seconds: float | None = None
    episode: str | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[:60] or "x"


def plan_osworld(tasks: Path | str, out: Path | str, *, domains: Iterable[str] | None = None,
                 ids: Iterable[str] | None = None, check: SupportCheck | None = None) -> tuple[OSWorldSet, dict]:
    """Load the tasks and write `out/coverage.json` (tasks, supported, unsupported reasons); run nothing."""
    loaded = load_osworld(tasks, domains=domains, ids=ids, check=check)
    report = coverage(loaded)
    Path(out).mkdir(parents=True, exist_ok=True)
    write_json(Path(out) / COVERAGE_FILE, report)
    return loaded, report


def _failed(task: OSWorldTask | TaskLoadError, error: str) -> TaskResult:
    return TaskResult(task.id, task.domain, False, 0.0, error)


def _verdict_result(task: OSWorldTask, directory: Path, seconds: float | None) -> TaskResult:
    """The evaluator's verdict on a finished episode; anything short of a clean pass is a failure with a reason."""
    trajectory = read_episode(directory)
    common = {"outcome": trajectory.outcome.value, "steps": len(trajectory.steps), "seconds": seconds,
              "episode": directory.name}
    verdict = trajectory.verdicts.get(CHECK_KIND)
    if not isinstance(verdict, Mapping):
        error = trajectory.metadata.get("error") or f"the episode ended ({trajectory.outcome.value}) without a verdict"
        return TaskResult(task.id, task.domain, False, 0.0, str(error), **common)
    error = str(verdict["error"]) if verdict.get("error") else None
    passed = verdict.get("passed") is True and error is None
    try:
        score = min(1.0, max(0.0, float(verdict.get("score", 1.0 if passed else 0.0))))
    except (TypeError, ValueError):
        passed, score, error = False, 0.0, f"the evaluator gave a score that is not a number: {verdict.get('score')!r}"
    return TaskResult(task.id, task.domain, passed, score if error is None else 0.0, error,
                      reason=str(verdict.get("reason", "")) or None, **common)


def _episode_result(task: OSWorldTask, directory: Path, ran: EpisodeResult | None, earlier: float | None
                    ) -> TaskResult:
    """A supported task's result: its stored episode's verdict, or why there is none (the job's error)."""
    seconds = round(ran.seconds, 2) if ran is not None else earlier
    if (directory / EPISODE_FILE).exists():
        try:
            return _verdict_result(task, directory, seconds)
        except StoreError as exc:
            error = f"the stored episode cannot be read: {exc}"
    else:
        error = ran.error if ran is not None and ran.error else "the episode did not finish"
    return TaskResult(task.id, task.domain, False, 0.0, error, seconds=seconds, episode=directory.name)


def _check_policy(spec: str) -> None:
    """Fail before any desktop starts when the policy SPEC names no known backend (workers would each fail)."""
    from uivenus.agent.policies import PolicySpecError, load_backends
    from uivenus.agent.policies.base import POLICY_FACTORIES

    load_backends()
    if spec.partition(":")[0] not in POLICY_FACTORIES:
        raise PolicySpecError(f"unknown policy spec {spec!r}; known kinds: {', '.join(sorted(POLICY_FACTORIES))}, "
                              f"or {' / '.join(REPLAYS)} to replay each task's own solutions")


def _budget(task: OSWorldTask, solution: str, replay: bool, max_steps: int | None) -> int:
    """The step budget: `max_steps` (OSWorld's 15 by default); a replay always has room for its whole solution."""
    budget = max_steps or DEFAULT_MAX_STEPS
    stored = task.data.get("uivenus")
    if replay and isinstance(stored, Mapping) and isinstance(stored.get(solution), list):
        budget = max(budget, len(stored[solution]) + 1)
    return budget


def _previous_seconds(path: Path) -> dict[str, float]:
    """Seconds per task of an earlier (resumed) run's results, so a task not rerun keeps its time."""
    try:
        return {r["id"]: r["seconds"] for r in json.loads(path.read_text(encoding="utf-8"))
                if isinstance(r, dict) and r.get("seconds") is not None}
    except (OSError, ValueError, TypeError, KeyError):
        return {}


def evaluate_osworld(
    tasks: Path | str,
    policy: str,
    out: Path | str,
    *,
    domains: Iterable[str] | None = None,
    ids: Iterable[str] | None = None,
    max_steps: int | None = None,
    workers: int = 1,
    executor: str = "process",
    unsafe_host: bool = False,
    progress: bool = True,
    console: Console | None = None,
    check: SupportCheck | None = None,
    time_limit_s: float | None = None,
    observation: str = ObservationType.SCREENSHOT.value,
    a11y_limit: int = MAX_ELEMENTS,
) -> dict[str, Any]:
    """Run `policy` (a policy SPEC, or `reference`/`wrong`) on every supported task; write `out/results.json`,
    `out/summary.json`, `out/coverage.json` and the HTML report; return the summary with the results.

    `time_limit_s` is each episode's wall-clock budget from its first screen (checked between steps): an episode
    past it ends unjudged, its task's `error` says so, and the run goes on with the next task. `observation` (and
    `a11y_limit`) is what the policy is shown (`LoopConfig`): screenshot_a11y_tree adds the accessibility tree's
    listing, OSWorld's observation of that name; the run and the summary record it."""
    from uivenus.reports.osworld import write_osworld_report

    out = Path(out)
    loaded, plan = plan_osworld(tasks, out, domains=domains, ids=ids, check=check)
    played, solution = REPLAYS.get(policy, (policy, "reference"))
    _check_policy(played)
    by_source: dict[str, TaskResult] = {error.source: _failed(error, error.reason) for error in loaded.errors}
    for task in loaded.tasks:
        if not task.supported:
            by_source[task.source] = _failed(task, f"{UNSUPPORTED}: " + "; ".join(task.missing))
    runnable = loaded.supported
    specs = [task.to_taskspec(solution, _budget(task, solution, policy in REPLAYS, max_steps)) for task in runnable]
    started = time.perf_counter()
    with make_executor(executor, workers) as pool:
        collector = Collector(pool, played, out / RUNS_DIR, f"osworld-{_slug(policy)}", console=console,
                              progress=progress, env=ENV_SPECS[unsafe_host], time_limit_s=time_limit_s,
                              observation=observation, a11y_limit=a11y_limit)
        collection = collector.collect(specs)
    ran: dict[str, EpisodeResult] = {r.episode_id: r for r in collection.ran}
    earlier = _previous_seconds(out / RESULTS_FILE)
    for task, episode in zip(runnable, collection.episode_ids):
        by_source[task.source] = _episode_result(task, collector.store.episode_dir(collector.run_id, episode),
                                                 ran.get(episode), earlier.get(task.id))
    results = [by_source[item.source] for item in (*loaded.tasks, *loaded.errors)]
    summary = {"policy": policy, "tasks_path": str(tasks), "run": str(collector.run_dir),
               "time_limit_s": time_limit_s, **collector.shown,
               "seconds": round(time.perf_counter() - started, 1), "ran": collection.episodes,
               "skipped": collection.skipped, "coverage": plan, **summarise(results)}
    write_json(out / RESULTS_FILE, [r.to_dict() for r in results])
    write_json(out / SUMMARY_FILE, summary)
    report = write_osworld_report(out / REPORT_DIR, summary, [r.to_dict() for r in results])
    return {**summary, "results": results, "results_path": str(out / RESULTS_FILE), "report_path": str(report)}


def _rates(results: Sequence[TaskResult]) -> dict[str, Any]:
    timed = [r.seconds for r in results if r.seconds is not None and r.episode is not None]
    return {
        "tasks": len(results),
        "successes": sum(r.success for r in results),
        "success_rate": statistics.fmean(r.success for r in results) if results else 0.0,
        "mean_score": statistics.fmean(r.score for r in results) if results else 0.0,
        "errors": sum(r.error is not None and not r.error.startswith(UNSUPPORTED) for r in results),
        "unsupported": sum(bool(r.error and r.error.startswith(UNSUPPORTED)) for r in results),
        "episodes": sum(r.episode is not None for r in results),
        "seconds_per_episode": round(statistics.fmean(timed), 2) if timed else None,
    }


def summarise(results: Sequence[TaskResult]) -> dict[str, Any]:
    """Overall and per-domain rates over every task (unsupported and broken ones count as failures)."""
    domains: dict[str, list[TaskResult]] = {}
    for result in results:
        domains.setdefault(result.domain, []).append(result)
    return {"overall": _rates(results), "domains": {name: _rates(group) for name, group in domains.items()}}
