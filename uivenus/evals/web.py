"""Live-web evaluation: a policy runs a web task set (Online-Mind2Web, WebVoyager, plain) on real sites, and every
episode is judged the WebJudge way (key points from the task, key screenshots, a final judgement by the judges).

One job per task on an executor's workers (`tasks.executors`): each worker keeps one browser and one policy, and
every episode gets a fresh browser context (`BrowserEnv.reset`). The episode goes to the trajectory store under
`DIR/episodes/`, with each step's screen text recorded for the text judges, and is verified there
(`verify.trace.verify_trace`, written back as the episode's `trace` verdict). What live sites do is handled and
recorded, never hidden:

- consent banners are clicked away by `agent.consent.ConsentDismisser`, whose clicks are steps of the episode;
- a page that never settles costs at most the settle wait per step (`unsettled_s` in the step's info); reset waits
  for `domcontentloaded`, not for a load event that a live page may never fire;
- downloads, followed new tabs and pop-ups, and navigations stopped by the host allow-list are in the steps' info
  and counted in the task's result;
- starts on one site are spaced by `min_interval_s` (`SiteRateLimiter`, shared by every worker through lock files)
  and a start that fails (the site answers 429 / 5xx, does not load) is retried up to `retries` times with growing
  waits — every attempt, and every wait, is in the result;
- `keep_to_site` confines the episode to its task's website (`setup["allowed_hosts"]`);
- the guard scans every screen for prompt injection; its flags are recorded per step.

The run is resumable: a task whose episode is finished is not run again (an unfinished one is started over), and
`results.json` (one record per task, and the success rate by website and by level) is rebuilt from the store.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from uivenus.agent.consent import DEFAULT_CONSENT_SELECTORS, is_dismisser_step
from uivenus.envs.browser import BLOCKED, DOWNLOADS, NEW_TAB, UNSETTLED
from uivenus.envs.hosts import TASK_HOSTS
from uivenus.evals.web_tasks import LEVEL_KEY, WEBSITE_KEY, WebTaskSet, site_of
from uivenus.files import write_json
from uivenus.records import Outcome, TaskSpec, Trajectory
from uivenus.store import EPISODE_FILE, StoreError, TrajectoryStore, read_episode
from uivenus.tasks.collect import episode_id
from uivenus.tasks.executors import Executor, WorkerContext

__all__ = [
    "EPISODES_RUN", "RESULTS_FILE", "SiteRateLimiter", "WebEvalConfig", "WebEvalError", "WebEvalResult", "WebJob",
    "evaluate_web", "run_web_job", "summarise", "task_record",
]

RESULTS_FILE = "results.json"
#: The store run (under the output folder) that holds the episodes.
EPISODES_RUN = "episodes"
#: Where an episode's metadata keeps its failed start attempts, and how long its own start waited for its site.
ATTEMPTS_KEY, RATE_WAIT_KEY = "attempts", "rate_wait_s"
#: Reset errors that say the site (not the policy) failed, and so are worth another try.
RETRYABLE = "reset failed:"


class WebEvalError(RuntimeError):
    """The evaluation cannot run as asked (a bad setting, an output folder from another policy); says what to do."""


@dataclass(frozen=True)
class WebEvalConfig:
    """How a web task set is run and judged; plain data, shipped to every worker."""

    policy: str
    judges: tuple[str, ...] = ("ocr",)  # judge SPECs; `vlm:openai:...` for a VLM judge
    rule: str = "majority"
    viewport: str = "desktop"  # desktop or phone
    max_steps: int | None = None  # None: each task's own budget
    keep_to_site: bool = False  # allow only the task's own website (Launch and page navigations)
    consent: tuple[str, ...] = DEFAULT_CONSENT_SELECTORS  # consent buttons to click away; () turns it off
    min_interval_s: float = 0.0  # at least this long between two episode starts on one website
    retries: int = 2  # further tries of a start the site failed
    retry_wait_s: float = 2.0  # the first retry waits this long, each next one twice as long
    settle_timeout_s: float = 5.0  # after each action, wait at most this for the page to settle
    navigation_timeout_s: float = 30.0
    key_screenshots: int = 4
    guard: str = "allow"  # the guard records what it would stop; `confirm`/`block` stop it

    def __post_init__(self) -> None:
        if not self.judges:
            raise WebEvalError("give at least one judge SPEC (ocr, program, vlm:...)")
        if self.retries < 0 or self.min_interval_s < 0 or self.retry_wait_s < 0:
            raise WebEvalError("retries, min_interval_s and retry_wait_s must be >= 0")
        if self.key_screenshots < 2:
            raise WebEvalError("keep at least 2 key screenshots (the first and the final)")


@dataclass(frozen=True)
class WebJob:
    """One task for one worker."""

    task: dict[str, Any]
    config: WebEvalConfig
    store_root: str
    episode_id: str


# --- rate limiting ------------------------------------------------------------------------------

class SiteRateLimiter:
    """At least `interval_s` between two starts on one site, across every process writing to `directory` (one
    lock file per site holds the time of its last start)."""

    def __init__(self, directory: str | Path, interval_s: float) -> None:
        self.directory, self.interval_s = Path(directory), interval_s

    def wait(self, site: str) -> float:
        """Block until this site may be opened again; returns the seconds waited."""
        if self.interval_s <= 0:
            return 0.0
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / (hashlib.sha1(site.encode()).hexdigest()[:16] + ".last")
        with open(path, "a+", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.seek(0)
            text = handle.read().strip()
            last = float(text) if text else 0.0
            waited = max(0.0, last + self.interval_s - time.time())
            time.sleep(waited)
            handle.seek(0)
            handle.truncate()
            handle.write(repr(time.time()))
            handle.flush()
        return waited


# --- the worker's side ----------------------------------------------------------------------------

def _browser(config: WebEvalConfig) -> Any:
    from uivenus.envs.browser import BrowserEnv
    from uivenus.envs.browser_config import BrowserConfig

    return BrowserEnv(BrowserConfig(mode=config.viewport, load_event="domcontentloaded",
                                    settle_timeout_s=config.settle_timeout_s,
                                    navigation_timeout_s=config.navigation_timeout_s))


def _judges(specs: Sequence[str]) -> tuple[Any, ...]:
    from uivenus.verify.judges import judge_from_spec

    return tuple(judge_from_spec(spec) for spec in specs)


def _task(job: WebJob) -> TaskSpec:
    task = TaskSpec.from_dict(job.task)
    if job.config.keep_to_site and task.url:
        task = replace(task, setup={**task.setup, TASK_HOSTS: [site_of(task.url)]})
    return task


def _episode(context: WorkerContext, job: WebJob, task: TaskSpec, attempts: list[dict[str, Any]],
             waited: float) -> Trajectory:
    """One try: a fresh context on the task's start page, the policy (behind the consent dismisser) acting."""
    from uivenus.agent.consent import ConsentDismisser
    from uivenus.agent.loop import LoopConfig, run_episode
    from uivenus.agent.policies.base import policy_from_spec
    from uivenus.agent.safety import Guard
    from uivenus.verify.signals import SCREEN_TEXT_KEY

    cfg = job.config
    env = context.get(f"web-env:{cfg.viewport}:{cfg.settle_timeout_s}:{cfg.navigation_timeout_s}",
                      lambda: _browser(cfg))
    policy = context.get(f"policy:{cfg.policy}", lambda: policy_from_spec(cfg.policy))
    acting = ConsentDismisser(policy, env, cfg.consent) if cfg.consent else policy
    store = TrajectoryStore(job.store_root)
    writer = store.episode(EPISODES_RUN, job.episode_id, task,
                           {"policy_spec": cfg.policy, "worker": context.worker, ATTEMPTS_KEY: attempts,
                            RATE_WAIT_KEY: round(waited, 3)})
    loop = LoopConfig(max_steps=cfg.max_steps, guard=cfg.guard, text_key=SCREEN_TEXT_KEY)
    return run_episode(env, acting, task, config=loop, writer=writer, guard=Guard(cfg.guard, ocr=False))


def run_web_job(context: WorkerContext, job: WebJob) -> dict[str, Any]:
    """Run (with recorded retries) and verify one task's episode; never raises: a failure is the returned `error`."""
    from uivenus.verify.trace import verify_trace, write_trace

    started = time.perf_counter()
    cfg = job.config
    directory = TrajectoryStore(job.store_root).episode_dir(EPISODES_RUN, job.episode_id)
    try:
        task = _task(job)
        if not (directory / EPISODE_FILE).exists():
            limiter = SiteRateLimiter(Path(job.store_root) / ".rate", cfg.min_interval_s)
            site = str(task.metadata.get(WEBSITE_KEY) or site_of(task.url or ""))
            attempts: list[dict[str, Any]] = []
            for attempt in range(cfg.retries + 1):
                if directory.exists():  # a killed run's or a failed try's leftovers: start over
                    shutil.rmtree(directory)
                waited = limiter.wait(site)
                trajectory = _episode(context, job, task, attempts, waited)
                error = str(trajectory.metadata.get("error") or "")
                if not error.startswith(RETRYABLE) or attempt == cfg.retries:
                    break
                backoff = cfg.retry_wait_s * 2 ** attempt
                attempts.append({"attempt": attempt + 1, "error": error, "rate_wait_s": round(waited, 3),
                                 "retry_after_s": backoff})
                time.sleep(backoff)
        trajectory = read_episode(directory)
        if "trace" not in trajectory.verdicts:
            judges = context.get("judges:" + ",".join(cfg.judges), lambda: _judges(cfg.judges))
            write_trace(directory, verify_trace(trajectory, directory, judges, cfg.rule, k=cfg.key_screenshots,
                                                ocr=False))
        return {"episode_id": job.episode_id, "task_id": task.id, "seconds": time.perf_counter() - started}
    except Exception as exc:  # noqa: BLE001 - one broken task must not end the run; the next run redoes it
        return {"episode_id": job.episode_id, "task_id": str(job.task.get("id")),
                "error": f"{type(exc).__name__}: {exc}", "seconds": time.perf_counter() - started}


# --- results ----------------------------------------------------------------------------------------

def _seconds(meta: Mapping[str, Any]) -> float | None:
    try:
        return (datetime.fromisoformat(meta["ended"]) - datetime.fromisoformat(meta["started"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        return None


def _steps_with(trajectory: Trajectory, key: str) -> list[dict[str, Any]]:
    return [{"step": s.index, key: (s.info.get("env") or {})[key]} for s in trajectory.steps
            if (s.info.get("env") or {}).get(key)]


def task_record(task: TaskSpec, directory: Path, root: Path) -> dict[str, Any]:
    """What results.json says about one task's finished, verified episode. `verdict` is the judges' trace outcome;
    `success` also needs an episode that did not end in an error (a crashed policy or page never counts as one,
    whatever its last screen shows)."""
    trajectory = read_episode(directory)
    trace = trajectory.verdicts.get("trace") or {}
    meta = trajectory.metadata
    return {
        "task_id": task.id, "website": task.metadata.get(WEBSITE_KEY), "level": task.metadata.get(LEVEL_KEY),
        "instruction": task.instruction, "start_url": task.url, "episode": str(directory.relative_to(root)),
        "outcome": trajectory.outcome.value, "verdict": trace.get("outcome", "unknown"),
        "success": trace.get("outcome") == "success" and trajectory.outcome is not Outcome.ERROR,
        "reason": trace.get("reason"),
        "judges": [{k: v[k] for k in ("judge", "vote", "confidence", "reason")} for v in trace.get("verdicts", ())],
        "key_points": trace.get("key_points", []), "key_steps": trace.get("kept", []),
        "steps": len(trajectory.steps), "answer": trajectory.answer, "error": meta.get("error"),
        "seconds": _seconds(meta), "attempts": meta.get(ATTEMPTS_KEY, []), "rate_wait_s": meta.get(RATE_WAIT_KEY),
        "consent_steps": [s.index for s in trajectory.steps if is_dismisser_step(s.response)],
        "injection_steps": meta.get("injection_steps", []),
        "downloads": _steps_with(trajectory, DOWNLOADS), "new_tabs": _steps_with(trajectory, NEW_TAB),
        "unsettled": _steps_with(trajectory, UNSETTLED), "blocked": _steps_with(trajectory, BLOCKED),
    }


def _rate(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    successes = sum(1 for r in records if r["success"])
    return {"n": len(records), "success": successes, "success_rate": successes / len(records) if records else 0.0}


def summarise(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Success rate overall, by website and by difficulty level (tasks without one under `-`), and timing."""
    groups: dict[str, dict[str, list[Mapping[str, Any]]]] = {"website": defaultdict(list), "level": defaultdict(list)}
    for record in records:
        for key, group in groups.items():
            group[str(record.get(key) or "-")].append(record)
    seconds = [r["seconds"] for r in records if r.get("seconds") is not None]
    return {**_rate(records),
            "unknown": sum(1 for r in records if r["verdict"] == "unknown"),
            "seconds_per_episode": sum(seconds) / len(seconds) if seconds else None,
            "by_website": {k: _rate(v) for k, v in sorted(groups["website"].items())},
            "by_level": {k: _rate(v) for k, v in sorted(groups["level"].items())}}


# --- the driver -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class WebEvalResult:
    """What `evaluate_web` wrote and did."""

    results: Mapping[str, Any]
    path: Path
    ran: int  # episodes run by this call
    skipped: int  # tasks finished before
    errors: tuple[str, ...] = field(default_factory=tuple)


def _jobs(tasks: Iterable[TaskSpec], config: WebEvalConfig, out: Path) -> list[WebJob]:
    return [WebJob(task.to_dict(), config, str(out), episode_id(task, config.policy)) for task in tasks]


def evaluate_web(tasks: WebTaskSet, config: WebEvalConfig, out: str | Path, executor: Executor,
                 progress: Callable[[int, int], None] | None = None) -> WebEvalResult:
    """Run every task not finished before, verify, and write `out/results.json`; `progress(done, total)` is called
    as episodes finish. A task whose job failed (the harness, not the agent) is listed under `not_finished`, left
    out of the rates, and run again next time."""
    out = Path(out)
    store = TrajectoryStore(out)
    try:
        store.start_run(EPISODES_RUN, {"policy": config.policy})
    except StoreError as exc:  # the folder holds another policy's run
        raise WebEvalError(f"{out} holds a run of another policy ({exc}); use a new --out") from None
    jobs = _jobs(tasks.tasks, config, out)
    todo = [j for j in jobs if not _verified(store.episode_dir(EPISODES_RUN, j.episode_id))]
    errors: list[str] = []
    for done, result in enumerate(executor.map(run_web_job, todo) if todo else (), 1):
        if result.get("error"):
            errors.append(f"{result['task_id']}: {result['error']}")
        if progress is not None:
            progress(done, len(todo))
    records = []
    for task, job in zip(tasks.tasks, jobs):
        directory = store.episode_dir(EPISODES_RUN, job.episode_id)
        if _verified(directory):
            records.append(task_record(task, directory, out))
    results = {"tasks_file": tasks.path, "format": tasks.format, "config": asdict(config),
               "summary": {**summarise(records), "not_finished": len(jobs) - len(records)},
               "not_loaded": [str(e) for e in tasks.errors],
               "not_finished": errors, "tasks": records}
    path = write_json(out / RESULTS_FILE, results)
    return WebEvalResult(results, path, len(todo), len(jobs) - len(todo), tuple(errors))


def _verified(directory: Path) -> bool:
    if not (directory / EPISODE_FILE).exists():
        return False
    try:
        return "trace" in json.loads((directory / EPISODE_FILE).read_text(encoding="utf-8")).get("verdicts", {})
    except (OSError, ValueError):
        return False
