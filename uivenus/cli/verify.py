"""`uivenus verify RUN_DIR` (trace verdicts and step labels written beside a run) and `uivenus eval verifier`
(judges and voting rules calibrated on labelled trajectories)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import typer
from rich.table import Table

from uivenus.cli.console import cli_console
from uivenus.cli.errors import fail

console = cli_console()


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def verify(
    run_dir: Path = typer.Argument(..., help="A run directory (or one episode directory) of the trajectory store."),
    judges: str = typer.Option("program,ocr,acts", help="Judge SPECs, comma-separated: program, ocr, acts, "
                                                        "vlm:<policy spec>."),
    vote: str = typer.Option("majority", help="Voting rule over the judges: majority, unanimous or weighted."),
    out: Path = typer.Option(None, help="Also write every episode's verdict to this JSON file."),
    k: int = typer.Option(4, min=2, help="Key screenshots kept per episode (the first and final included)."),
    ocr: bool = typer.Option(True, "--ocr/--no-ocr", help="Read screens without recorded text by OCR (slow)."),
    pixels: bool = typer.Option(False, "--pixels", help="Text judges OCR the kept screenshots, not recorded text."),
) -> None:
    """Judge every finished episode of RUN_DIR; write the verdict into its episode.json and step labels into
    labels.jsonl."""
    from uivenus.store import StoreError, episode_dirs, read_episode
    from uivenus.verify.base import VerifyError
    from uivenus.verify.judges import judge_from_spec
    from uivenus.verify.trace import verify_trace, write_trace

    try:
        built = [judge_from_spec(spec) for spec in _split(judges)]
        directories = episode_dirs(run_dir)
    except (VerifyError, StoreError) as exc:
        fail(str(exc))
    table = Table(title=f"{run_dir} · {', '.join(j.name for j in built)} · {vote}")
    for column in ("episode", "task", "outcome", "vote", "steps (C/E/I/X)", "reason"):
        table.add_column(column, overflow="fold")
    results, outcomes = [], Counter()
    for directory in directories:
        try:
            trajectory = read_episode(directory)
            if not trajectory.complete:
                console.print(f"[yellow]skipped[/yellow] {directory.name}: not finished")
                continue
            result = verify_trace(trajectory, directory, built, vote, k=k, ocr=ocr, pixels=pixels)
            write_trace(directory, result)
        except (VerifyError, StoreError) as exc:  # one unreadable episode is reported; the others are judged
            console.print(f"[red]not verified[/red] {directory.name}: {exc}")
            outcomes["not verified"] += 1
            results.append({"episode": directory.name, "error": str(exc)})
            continue
        labels = Counter(step.label.value for step in result.steps)
        counts = "/".join(str(labels[name]) for name in ("correct", "exploratory", "ineffective", "incorrect"))
        table.add_row(directory.name, trajectory.task.id, result.outcome.value, result.vote.outcome.value, counts,
                      result.reason)
        outcomes[result.outcome.value] += 1
        results.append({"episode": directory.name, "task": trajectory.task.id, **result.to_dict()})
    console.print(table)
    console.print(f"{len(results)} episode{'' if len(results) == 1 else 's'} verified: "
                  + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items())))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        console.print(f"wrote {out}")


def eval_verifier(
    data: Path = typer.Option(..., help="The labelled set: a store root (or run directory) of labelled episodes."),
    judges: str = typer.Option("program,ocr,acts", help="Judge SPECs, comma-separated: program, ocr, acts, "
                                                        "vlm:<policy spec>."),
    vote: str = typer.Option("majority,unanimous,weighted", help="Voting rules to score, comma-separated."),
    out: Path = typer.Option(None, help="Directory for the report, table and plot (default: DATA/calibration)."),
    build: bool = typer.Option(False, "--build", help="First record the labelled set into DATA (resumable)."),
    tasks: str = typer.Option(None, help="With --build: sandbox task ids, comma-separated (default: six apps)."),
    miniwob_seeds: int = typer.Option(4, min=0, help="With --build: seeded episodes per MiniWoB task and kind."),
    miniwob_tasks: str = typer.Option(None, help="With --build: MiniWoB tasks, comma-separated (default: all 16 "
                                                 "with an oracle)."),
    sandbox: bool = typer.Option(True, "--sandbox/--no-sandbox", help="With --build: record the sandbox part."),
    seed: int = typer.Option(0, help="With --build: the first seed (MiniWoB episodes use seed, seed+1, ...)."),
    split: str = typer.Option(None, help="Score only episodes of this split (dev or held_out MiniWoB tasks)."),
    k: int = typer.Option(4, min=2, help="Key screenshots kept per episode (the first and final included)."),
    pixels: bool = typer.Option(False, "--pixels", help="Text judges OCR the kept screenshots, not recorded text."),
    limit: int = typer.Option(None, min=1, help="Score only this many episodes, in turn from each kind (slow judges)."),
    compare: Path = typer.Option(None, help="An earlier run's verifier_report.json: also print each voter's coverage / "
                                           "false-success / agreement before -> after, per kind."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show progress."),
) -> None:
    """Score judges and voting rules against labelled trajectories: agreement, precision, recall and
    false-success rate, per judge, per rule and per perturbation kind."""
    from uivenus.envs.base import EnvError
    from uivenus.evals.verifier import calibrate, compare_table, format_table, load_report
    from uivenus.evals.verifier_data import BuildPlan, DataBuildError, build_dataset
    from uivenus.verify.base import VerifyError

    try:
        before = load_report(compare) if compare is not None else None
        if build:
            chosen = {"miniwob_tasks": tuple(_split(miniwob_tasks))} if miniwob_tasks else {}
            plan = BuildPlan(tasks=tuple(_split(tasks)) if tasks else None, miniwob_seeds=miniwob_seeds, seed=seed,
                             **chosen)
            summary = build_dataset(data, plan, progress=progress, sandbox=sandbox)
            console.print(f"labelled set: {sum(summary.recorded.values())} recorded, {summary.skipped} already there, "
                          f"{len(summary.failed)} failed")
            for failure in summary.failed:
                console.print(f"[yellow]failed:[/yellow] {failure}")
        report = calibrate(data, _split(judges), _split(vote), out_dir=out or data / "calibration", k=k,
                           pixels=pixels, limit=limit, split=split, progress=progress)
    except (VerifyError, DataBuildError, EnvError, LookupError) as exc:
        fail(str(exc))
    console.print(format_table(report))
    if before is not None:
        console.print(compare_table(before, report))
    console.print(f"{report['n']} labelled episodes ({report['truth']['success']} success, "
                  f"{report['truth']['failure']} failure; {report['hard_negatives']} hard negatives), "
                  f"{len(report['skipped'])} skipped, {report['seconds']:.0f} s")
    console.print(f"wrote {report['report_path']}, {report['table_path']} and {report['plot_path']}")
