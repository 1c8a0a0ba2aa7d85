"""`uivenus eval web` (a policy on a live-web task set, judged the WebJudge way) and `uivenus eval web-agreement`
(those verdicts against human labels)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from uivenus.cli.console import cli_console
from uivenus.cli.tasks_run import ExecutorName, Workers, _executor, _judges

console = cli_console()

REPORT_FILE = "report.html"


def _rate_table(title: str, groups: dict) -> Table:
    table = Table(title=title)
    for column in ("", "tasks", "success", "rate"):
        table.add_column(column, justify="left" if not column else "right")
    for name, rate in groups.items():
        table.add_row(escape(name), str(rate["n"]), str(rate["success"]), f"{rate['success_rate']:.1%}")
    return table


def web(
    tasks: Annotated[Path, typer.Option("--tasks", exists=True, dir_okay=False,
                                        help="Task file: Online-Mind2Web JSON, WebVoyager JSONL or plain "
                                             "{id, instruction, start_url} rows.")],
    policy: Annotated[str, typer.Option("--policy", help="Policy SPEC: oracle, random[:SEED], hf:PATH, "
                                                         "openai:URL#MODEL, …")],
    out: Annotated[Path, typer.Option("--out", file_okay=False, help="Output folder (the same one resumes).")],
    format: Annotated[str, typer.Option("--format", help="auto, online-mind2web, webvoyager or plain.")] = "auto",
    judges: Annotated[str, typer.Option("--judges", help="Comma-separated judge SPECs: ocr (text evidence), "
                                                         "program, vlm:openai:URL#MODEL, …")] = "ocr",
    workers: Workers = 1,
    executor: ExecutorName = "process",
    max_steps: Annotated[int | None, typer.Option("--max-steps", min=1, help="Step budget (default: each "
                                                                             "task's own).")] = None,
    viewport: Annotated[str, typer.Option("--viewport", help="desktop or phone.")] = "desktop",
    keep_to_site: Annotated[bool, typer.Option("--keep-to-site", help="Let each episode open only its task's "
                                                                      "website.")] = False,
    consent: Annotated[str | None, typer.Option("--consent", help="Comma-separated CSS selectors of consent "
                                                                  "buttons to click (recorded as steps); "
                                                                  "'none' turns it off.")] = None,
    min_interval: Annotated[float, typer.Option("--min-interval", min=0, help="Seconds between two episode "
                                                                              "starts on one website.")] = 0.0,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Further tries of a start the site "
                                                                  "failed (429, 5xx, no load).")] = 2,
) -> None:
    """Run a live-web task set: one episode per task, judged from key points and key screenshots; writes
    OUT/results.json (per task, by website, by level) and OUT/report.html. Finished tasks are not run again."""
    from uivenus.evals.web import WebEvalConfig, evaluate_web
    from uivenus.evals.web_tasks import load_web_tasks
    from uivenus.progress import Tracker
    from uivenus.reports.web_eval import write_web_eval_page

    loaded = load_web_tasks(tasks, format, viewport)
    for error in loaded.errors:
        console.print(f"[yellow]skipped[/yellow] {escape(str(tasks))} {escape(str(error))}")
    options = {}
    if consent is not None:
        parts = () if consent.strip() == "none" else consent.split(",")
        options["consent"] = tuple(s.strip() for s in parts if s.strip())
    config = WebEvalConfig(policy=policy, judges=_judges(judges), viewport=viewport, max_steps=max_steps,
                           keep_to_site=keep_to_site, min_interval_s=min_interval, retries=retries, **options)
    with _executor(workers, None, executor) as pool, Tracker(f"web · {policy}", unit="episodes",
                                                             console=cli_console(stderr=True)) as bar:
        result = evaluate_web(loaded, config, out, pool, progress=lambda done, total: bar.advance())
    summary = result.results["summary"]
    console.print(_rate_table(f"success by website · {escape(policy)}", summary["by_website"]))
    console.print(_rate_table("success by level", summary["by_level"]))
    per = summary["seconds_per_episode"]
    console.print(f"[bold]{escape(policy)}[/bold]: success {summary['success']}/{summary['n']} = "
                  f"{summary['success_rate']:.3f} ({loaded.format}; {summary['unknown']} undecided; "
                  f"{result.ran} run now, {result.skipped} finished before"
                  + (f"; {per:.1f} s per episode" if per is not None else "") + ")")
    for error in result.errors:
        console.print(f"[red]not finished[/red] {escape(error)}")
    report = write_web_eval_page(out / REPORT_FILE, result.results, out)
    console.print(f"wrote {escape(str(result.path))} and {escape(str(report))}")


def web_agreement(
    results: Annotated[Path, typer.Option("--results", exists=True, help="results.json of `uivenus eval web`, "
                                                                        "or its folder.")],
    labels: Annotated[Path, typer.Option("--labels", exists=True, dir_okay=False,
                                         help='Human labels: {"task_id": ..., "success": true|false} rows.')],
) -> None:
    """The judges' agreement with human labels: agreement, precision, recall and false-success rate."""
    import json

    from uivenus.evals.agreement import compare, read_labels
    from uivenus.evals.web import RESULTS_FILE

    path = results / RESULTS_FILE if results.is_dir() else results
    known, errors = read_labels(labels)
    for error in errors:
        console.print(f"[yellow]skipped[/yellow] {escape(str(labels))} {escape(str(error))}")
    report = compare(json.loads(path.read_text(encoding="utf-8")), known)
    table = Table(title=f"judges vs human labels ({report['labelled']} episodes)")
    for column in ("judge", "n", "agreement", "precision", "recall", "false-success rate"):
        table.add_column(column, justify="left" if column == "judge" else "right")
    fmt = lambda value: "–" if value is None else f"{value:.3f}"  # noqa: E731
    for name, row in report["judges"].items():
        table.add_row(escape(name), str(row["n"]), fmt(row["agreement"]), fmt(row["precision"]), fmt(row["recall"]),
                      fmt(row["false_success_rate"]))
    console.print(table)
    if report["unlabelled"]:
        unlabelled = report["unlabelled"]
        console.print(f"{len(unlabelled)} episode(s) have no label: {escape(', '.join(unlabelled))}")
