"""`uivenus eval miniwob`: a policy on the MiniWoB++ task pages of the `miniwob` wheel, graded by the pages."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from uivenus.cli.console import cli_console
from uivenus.cli.errors import fail

console = cli_console()

#: Above this many tasks the summary shows only the best and the worst ones (the JSON has them all).
_FULL_TABLE_MAX = 20


def miniwob(
    tasks: str = typer.Option("all", help="'all' (the wheel's 130 tasks) or a comma-separated list of names."),
    policy: str = typer.Option("random", help="Policy SPEC: random[:SEED], hf:PATH, openai:URL#MODEL, …"),
    episodes: int = typer.Option(1, min=1, help="Seeded episodes per task (seeds S, S+1, …)."),
    seed: int = typer.Option(0, help="Seed S of the first episode of every task."),
    out: Path = typer.Option(Path("runs/miniwob"), help="Directory for the results JSON, episode log and plot."),
    max_steps: int = typer.Option(10, min=1, help="Step budget of an episode."),
    episode_ms: int = typer.Option(None, min=1, help="Episode time limit in ms (default: the page's own)."),
    frame: str = typer.Option("rel", help="The policy's coordinate frame: rel, abs or smart."),
    record: bool = typer.Option(False, "--record", help="Also store every trajectory under OUT/runs/."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
) -> None:
    """Run POLICY on MiniWoB++ tasks and report the success rate (raw reward > 0) per task and overall."""
    from uivenus.agent.loop import LoopConfig
    from uivenus.envs.base import EnvError
    from uivenus.evals.miniwob import evaluate_miniwob

    try:
        results = evaluate_miniwob(tasks, policy, episodes, seed, out, max_steps, progress,
                                   episode_max_ms=episode_ms, loop=LoopConfig(frame=frame), record=record)
    except (EnvError, ValueError) as exc:
        fail(str(exc))
    console.print(_table(results))
    overall = results["episodes"]
    console.print(f"[bold]{results['policy']}[/bold]: success {results['success_rate']:.3f} "
                  f"over {len(results['tasks'])} tasks ({overall['successes']}/{overall['n']} episodes), "
                  f"mean reward {results['mean_reward']:.3f}, {overall['errors']} errors, {results['seconds']:.0f} s")
    console.print(f"wrote {results['results_path']}, {results['episodes_path']} and {results['plot_path']}")


def _table(results: dict) -> Table:
    rows = sorted(results["per_task"].items(), key=lambda item: (-item[1]["success_rate"], item[0]))
    title = f"MiniWoB++ · {results['policy']}"
    if len(rows) > _FULL_TABLE_MAX:
        half = _FULL_TABLE_MAX // 2
        rows = rows[:half] + rows[-half:]
        title += f" (best and worst {half} of {len(results['per_task'])})"
    table = Table(title=title)
    for column in ("task", "episodes", "success", "mean raw reward", "mean reward"):
        table.add_column(column, justify="left" if column == "task" else "right")
    for name, rate in rows:
        table.add_row(name, str(rate["n"]), f"{rate['success_rate']:.2f}", f"{rate['mean_raw_reward']:.2f}",
                      f"{rate['mean_reward']:.2f}")
    return table
