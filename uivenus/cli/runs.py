"""`uivenus runs`: look inside stored runs and export them for training."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.progress import Progress
from rich.table import Table

from uivenus.cli.console import cli_console
from uivenus.cli.errors import fail
from uivenus.records import Trajectory
from uivenus.store import StoreError, episode_dirs, export_parquet, read_episode

app = typer.Typer(help="Inspect stored runs (trajectories) and export them to Parquet.", no_args_is_help=True)
console = cli_console()


def _episodes(path: Path) -> list[tuple[Path, Trajectory]]:
    try:
        return [(d, read_episode(d)) for d in episode_dirs(path)]
    except StoreError as exc:
        fail(str(exc))


def _steps_table(directory: Path, trajectory: Trajectory) -> Table:
    table = Table(title=f"{directory.name}: steps")
    for column in ("#", "action", "error", "executed", "timings"):
        table.add_column(column, overflow="fold")
    for step in trajectory.steps:
        action = json.dumps(step.action.to_dict(), ensure_ascii=False) if step.action is not None else "-"
        timings = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in step.timings.items())
        table.add_row(str(step.index), action, step.error or "", "yes" if step.executed else "no", timings)
    return table


@app.command()
def show(
    path: Path = typer.Argument(..., help="A run directory or one episode directory of the store."),
    steps: bool = typer.Option(False, "--steps", help="Also list every step of every episode."),
) -> None:
    """Summarise each episode (task, outcome, steps, answer)."""
    episodes = _episodes(path)
    table = Table(title=f"{path} ({len(episodes)} episode{'s' if len(episodes) != 1 else ''})")
    for column in ("episode", "task", "outcome", "steps", "answer"):
        table.add_column(column, overflow="fold")
    for directory, trajectory in episodes:
        table.add_row(directory.name, trajectory.task.id, trajectory.outcome.value, str(len(trajectory.steps)),
                      trajectory.answer or "")
    console.print(table)
    if not steps:
        return
    for directory, trajectory in episodes:
        console.print(_steps_table(directory, trajectory))
        for warning in trajectory.metadata.get("warnings", ()):
            console.print(f"[yellow]warning:[/yellow] {warning}")


@app.command()
def export(
    path: Path = typer.Argument(..., help="A run directory (or one episode directory) of the store."),
    out: Path = typer.Option(..., "--out", help="The Parquet file to write (loadable with `datasets`)."),
) -> None:
    """Write one Parquet row per step, screenshots included."""
    import pyarrow.parquet as pq

    with Progress(console=console, transient=True) as progress:
        job = progress.add_task("exporting episodes", total=None)
        try:
            export_parquet(path, out, progress=lambda done, total: progress.update(job, completed=done, total=total))
        except StoreError as exc:
            fail(str(exc))
    console.print(f"wrote {pq.ParquetFile(out).metadata.num_rows} steps to {out}")


@app.command()
def view(
    path: Path = typer.Argument(..., help="A run directory (or one episode directory) of the store."),
    out: Path = typer.Option(None, "--out", help="The HTML file to write (default: RUN_DIR/view.html)."),
    compare: Path = typer.Option(None, "--compare", help="Another run to show beside this one, matched by task id."),
) -> None:
    """Write one self-contained HTML page of the run: every step's screenshot with its action drawn on it, the
    reasoning, guard decisions, injection flags, step labels and trace verdicts; filter by outcome and verdict."""
    from uivenus.reports import write_run_view

    target = out or path / "view.html"
    try:
        page = write_run_view(target, path, compare=compare)
    except StoreError as exc:
        fail(str(exc))
    console.print(f"wrote {page} ({page.stat().st_size / 1e6:.1f} MB); open it in a browser")
