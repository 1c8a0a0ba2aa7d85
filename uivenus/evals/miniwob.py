"""MiniWoB++ evaluation: any policy on the `miniwob` wheel's task pages, each episode graded by the page itself.

An episode is seeded (`seed`, `seed + 1`, … for the episodes of every task), so every policy meets the same
problems. The agent loop (`run_episode`) drives a `MiniWoBEnv`; afterwards the page's own values are read:
`raw_reward` (±1, or partial on a few tasks), `reward` (discounted by the time taken) and `reason`. An episode
succeeds when its raw reward is positive; an episode the page did not end within the step budget has raw
reward 0. Results: success rate and mean rewards per task, overall (the mean of the per-task rates, as MiniWoB
reports it, and over all episodes), one record per episode — appended to a JSON-lines log as each episode
ends, so a long run can be watched and a killed one keeps its episodes — a results JSON and a bar plot.

The loop takes the utterance from the observation of its reset (the task's instruction is empty until the page
is up) and stops as soon as the page has graded the episode (`Outcome.ENDED_BY_ENV`).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from uivenus.agent.loop import LoopConfig, run_episode
from uivenus.agent.policies import Policy, policy_from_spec
from uivenus.agent.safety import GuardMode
from uivenus.envs.base import EnvError
from uivenus.envs.miniwob import MiniWoBEnv, MiniWoBError, list_flight_tasks, list_tasks, miniwob_task, page_verdict
from uivenus.records import TaskSpec
from uivenus.store import TrajectoryStore

__all__ = [
    "EPISODES_FILE", "PLOT_FILE", "RESULTS_FILE", "evaluate_miniwob", "list_tasks", "plot_success",
    "resolve_tasks", "summarise",
]

RESULTS_FILE = "miniwob_results.json"
EPISODES_FILE = "miniwob_episodes.jsonl"
PLOT_FILE = "miniwob_success.png"
RUNS_DIR = "runs"
def resolve_tasks(tasks: str | Iterable[str]) -> tuple[str, ...]:
    """`all`, a comma-separated list, or names; every name must be a task of the wheel (flight tasks included)."""
    if isinstance(tasks, str):
        names = list_tasks() if tasks.strip() == "all" else tuple(t.strip() for t in tasks.split(",") if t.strip())
    else:
        names = tuple(tasks)
    known = set(list_tasks()) | set(list_flight_tasks())
    unknown = [name for name in names if name not in known]
    if unknown:
        raise MiniWoBError(f"unknown MiniWoB task(s) {unknown}; use 'all' or names from list_tasks() or "
                           "list_flight_tasks()")
    if not names:
        raise MiniWoBError("no tasks given; use 'all' or a comma-separated list of task names")
    return names


def _episode(env: MiniWoBEnv, policy: Policy, task: TaskSpec, loop: LoopConfig, store: TrajectoryStore | None,
             run_id: str) -> dict[str, Any]:
    """One graded episode; the record holds the page's values and what the loop did. An environment failure
    is the episode's error, never the end of the evaluation."""
    started = time.perf_counter()
    name, seed = task.setup["miniwob"]["task"], task.setup["miniwob"]["seed"]
    record: dict[str, Any] = {"task": name, "seed": seed, "utterance": None, "done": False, "raw_reward": 0.0,
                              "reward": 0.0, "reason": None, "success": False, "steps": 0, "outcome": None,
                              "error": None}
    try:
        with ExitStack() as stack:
            writer = None
            if store is not None:
                writer = stack.enter_context(store.episode(run_id, f"{name}-{seed}", task, {"seed": seed}))
            trajectory = run_episode(env, policy, task, config=loop, writer=writer)
        record.update(steps=len(trajectory.steps), outcome=trajectory.outcome.value,
                      error=trajectory.metadata.get("error"), utterance=trajectory.task.instruction)
        # the loop asks its checker unless the episode ended in ERROR; then the page is asked here
        verdict = trajectory.verdicts.get("miniwob") or page_verdict(env, trajectory.task)
    except EnvError as exc:
        record["error"] = f"{type(exc).__name__}: {exc}"
        return {**record, "seconds": round(time.perf_counter() - started, 3)}
    record.update({key: verdict[key] for key in ("done", "raw_reward", "reward", "reason")})
    record["success"] = verdict["passed"]
    return {**record, "seconds": round(time.perf_counter() - started, 3)}


def _rates(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "n": len(records),
        "successes": sum(bool(r["success"]) for r in records),
        "success_rate": statistics.fmean(bool(r["success"]) for r in records),
        "mean_raw_reward": statistics.fmean(float(r["raw_reward"]) for r in records),
        "mean_reward": statistics.fmean(float(r["reward"]) for r in records),
        "done_rate": statistics.fmean(bool(r["done"]) for r in records),
        "errors": sum(r["error"] is not None for r in records),
    }


def summarise(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-task rates, and overall: the mean of the per-task rates (MiniWoB's number) and over all episodes."""
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        by_task.setdefault(record["task"], []).append(record)
    per_task = {name: _rates(group) for name, group in by_task.items()}
    rates = [rate["success_rate"] for rate in per_task.values()]
    return {
        "success_rate": statistics.fmean(rates) if rates else 0.0,
        "mean_reward": statistics.fmean(r["mean_reward"] for r in per_task.values()) if rates else 0.0,
        "episodes": _rates(records) if records else {"n": 0},
        "per_task": per_task,
    }


def plot_success(results: Mapping[str, Any], path: Path, title: str) -> Path:
    """One horizontal bar per task (success rate, best first) and the overall rate as a line."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    per_task = sorted(results["per_task"].items(), key=lambda item: (-item[1]["success_rate"], item[0]))
    names = [name for name, _ in per_task]
    values = [rate["success_rate"] for _, rate in per_task]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.16 * len(names)))
    ax.barh(names, values, color="#3b82e0")
    ax.axvline(results["success_rate"], color="#1e3a5f", linestyle="--",
               label=f"overall {results['success_rate']:.3f}")
    ax.set_ylim(len(names) - 0.5, -0.5)  # best on top, no empty rows
    ax.set_xlim(0, 1)
    ax.set_xlabel("success rate (raw reward > 0)")
    ax.tick_params(axis="y", labelsize=6)
    ax.set_title(title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def evaluate_miniwob(
    tasks: str | Iterable[str],
    policy: Policy | str,
    episodes: int,
    seed: int,
    out_dir: Path | str,
    max_steps: int = 10,
    progress: bool = True,
    *,
    episode_max_ms: int | None = None,
    loop: LoopConfig | None = None,
    record: bool = False,
    env: MiniWoBEnv | None = None,
) -> dict[str, Any]:
    """Run `policy` for `episodes` seeded episodes of each task; write the results to `out_dir`; return them.

    `loop` sets the frame, history and sampling (its step budget is `max_steps`; the guard is off: nothing on a
    MiniWoB page is consequential). `record` stores every trajectory under `out_dir/runs/`. `env` is reused when
    given, else one is opened here and closed at the end.
    """
    if episodes < 1 or max_steps < 1:
        raise ValueError(f"episodes and max_steps must be positive, got {episodes} and {max_steps}")
    names = resolve_tasks(tasks)
    if isinstance(policy, str):
        policy = policy_from_spec(policy)
    loop = replace(loop or LoopConfig(), max_steps=max_steps, guard=GuardMode.ALLOW)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / EPISODES_FILE
    run_id = f"miniwob-{policy.name.replace(':', '_').replace('/', '_')}-seed{seed}"
    store = TrajectoryStore(out / RUNS_DIR) if record else None
    plan = [miniwob_task(name, seed + e, max_steps=max_steps, episode_max_ms=episode_max_ms)
            for name in names for e in range(episodes)]
    records: list[dict[str, Any]] = []
    started = time.perf_counter()
    with ExitStack() as stack, open(log_path, "w", encoding="utf-8") as log:
        live = env or stack.enter_context(MiniWoBEnv())
        for task in _progress(plan, progress, f"MiniWoB · {policy.name}", records):
            records.append(_episode(live, policy, task, loop, store, run_id))
            log.write(json.dumps(records[-1]) + "\n")
            log.flush()
    results = {
        "policy": policy.name, "tasks": list(names), "episodes_per_task": episodes, "seed": seed,
        "max_steps": max_steps, "episode_max_ms": episode_max_ms, "loop": loop.to_dict(),
        "seconds": round(time.perf_counter() - started, 1), **summarise(records), "records": records,
    }
    results_path = out / RESULTS_FILE
    results_path.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    plot = plot_success(results, out / PLOT_FILE, f"MiniWoB++ success · {policy.name} · {len(names)} tasks")
    return {**results, "results_path": str(results_path), "episodes_path": str(log_path), "plot_path": str(plot)}


def _progress(plan: list[TaskSpec], show: bool, label: str, records: list[dict[str, Any]]) -> Iterator[TaskSpec]:
    """The plan, with a rich progress bar that shows the task running and the success rate so far."""
    if not show:
        yield from plan
        return
    from rich.progress import (
        BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, transient=True) as bar:
        job = bar.add_task(label, total=len(plan))
        for task in plan:
            wins = sum(bool(r["success"]) for r in records)
            bar.update(job, description=f"{label} · {task.setup['miniwob']['task']} · {wins}/{len(records)} won")
            yield task
            bar.advance(job)
