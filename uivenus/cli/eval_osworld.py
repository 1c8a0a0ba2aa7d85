"""`uivenus eval osworld`: a policy on OSWorld-format task files, each episode judged by the task's own evaluator."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from uivenus.agent.element_listing import MAX_ELEMENTS, ObservationType
from uivenus.cli.console import cli_console
from uivenus.cli.run import A11yLimitOption, ObservationOption, observation_type

console = cli_console()


def _domains(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise typer.BadParameter("--domains takes a comma-separated list of domains, e.g. os,libreoffice_calc")
    return names


def osworld(
    tasks: Annotated[Path, typer.Option("--tasks", help="A task file, a directory tree of them, or an index "
                                                        "{domain: \\[ids]} (the public test_all.json, with examples/ "
                                                        "beside it); `bundled` for our own tasks.")],
    out: Annotated[Path, typer.Option("--out", file_okay=False, help="Directory for results.json, coverage.json, "
                                                                     "the report and the run (resumed if there).")],
    policy: Annotated[str, typer.Option("--policy", help="Policy SPEC (noop, random, hf:..., openai:...), or "
                                                         "reference / wrong: replay each task's own solution.")
                      ] = "noop",
    domains: Annotated[str | None, typer.Option("--domains", help="Only these domains (comma-separated).")] = None,
    ids: Annotated[Path | None, typer.Option("--ids", exists=True, dir_okay=False,
                                             help="Only these task ids: an index {domain: \\[ids]}, a JSON list or "
                                                  "one id per line.")] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", min=1, help="Step budget (default 15).")] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Parallel desktops.")] = 1,
    time_limit: Annotated[float | None, typer.Option("--time-limit", min=1, help="Seconds an episode may run from "
                                                     "its first screen; past it the task is an error.")] = None,
    executor: Annotated[str, typer.Option("--executor", help="process (workers in their own processes) or serial "
                                                              "(in this process, for debugging).")] = "process",
    unsafe_host: Annotated[bool, typer.Option("--unsafe-host", help="Run setup steps and apps on this machine "
                                                                    "itself, without the bubblewrap sandbox.")] = False,
    plan_only: Annotated[bool, typer.Option("--plan-only", help="Load and check support, write coverage.json; "
                                                                "run nothing.")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")] = True,
    observation: ObservationOption = ObservationType.SCREENSHOT.value,
    a11y_limit: A11yLimitOption = MAX_ELEMENTS,
) -> None:
    """Run POLICY on OSWorld-format tasks in isolated desktops; print a table per domain, write results + report.

    The same command resumes a stopped run: finished tasks are not run again."""
    from uivenus.evals.osworld import COVERAGE_FILE, evaluate_osworld, plan_osworld
    from uivenus.tasks.osworld import bundled_tasks_dir, read_ids

    shown = observation_type(observation)
    source = bundled_tasks_dir() if str(tasks) == "bundled" else tasks
    chosen_ids = read_ids(ids) if ids is not None else None
    if plan_only:
        loaded, plan = plan_osworld(source, out, domains=_domains(domains), ids=chosen_ids)
        console.print(_coverage_table(plan))
        for error in loaded.errors:
            console.print(f"[red]{escape(error.id)}[/red] ({escape(error.source)}): {escape(error.reason)}")
        console.print(f"wrote {escape(str(out / COVERAGE_FILE))}")
        return
    summary = evaluate_osworld(source, policy, out, domains=_domains(domains), ids=chosen_ids, max_steps=max_steps,
                               workers=workers, executor=executor, unsafe_host=unsafe_host, progress=progress,
                               console=console, time_limit_s=time_limit, observation=shown, a11y_limit=a11y_limit)
    console.print(_domain_table(summary))
    for result in summary["results"]:
        if result.error:
            console.print(f"[red]{escape(result.id)}[/red]: {escape(result.error)}", soft_wrap=True)
    overall = summary["overall"]
    console.print(f"[bold]{escape(summary['policy'])}[/bold] ({summary['observation']}): "
                  f"{overall['successes']}/{overall['tasks']} successful "
                  f"({overall['success_rate']:.1%}), mean score {overall['mean_score']:.3f}, "
                  f"{overall['errors']} errors, {overall['unsupported']} unsupported; "
                  f"{summary['ran']} episodes run, {summary['skipped']} done "
                  f"before; {overall['seconds_per_episode']} s per episode")
    console.print(f"wrote {escape(summary['results_path'])} and {escape(summary['report_path'])}", soft_wrap=True)


def _coverage_table(plan: dict) -> Table:
    table = Table(title=f"coverage: {plan['supported']}/{plan['tasks']} tasks supported")
    table.add_column("domain")
    table.add_column("tasks", justify="right")
    table.add_column("supported", justify="right")
    for name, row in plan["domains"].items():
        table.add_row(escape(name), str(row["tasks"]), str(row["supported"]))
    for reason, n in plan["unsupported"].items():
        table.add_row(f"[dim]{escape(reason)}[/dim]", str(n), "")
    return table


def _domain_table(summary: dict) -> Table:
    table = Table(title=escape(f"OSWorld-format tasks · {summary['policy']}"))
    for column in ("domain", "tasks", "success", "rate", "mean score", "errors", "unsupported", "s/episode"):
        table.add_column(column, justify="left" if column == "domain" else "right")
    rows = [*summary["domains"].items(), ("all", summary["overall"])]
    for name, row in rows:
        seconds = row["seconds_per_episode"]
        table.add_row(escape(name), str(row["tasks"]), str(row["successes"]), f"{row['success_rate']:.1%}",
                      f"{row['mean_score']:.3f}", str(row["errors"]), str(row["unsupported"]),
                      "—" if seconds is None else f"{seconds:.1f}")
    return table
