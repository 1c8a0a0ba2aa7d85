"""`uivenus tasks run|loop`: dispatch tasks to parallel environments, and the closed loop over rounds.

Plain command functions, registered on the `tasks` group (`uivenus/cli/tasks.py`) as `run` and `loop`, and the
tables they print.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from uivenus.cli.console import cli_console

if TYPE_CHECKING:
    from uivenus.tasks.rounds import RoundStats

console = cli_console()

Workers = Annotated[int, typer.Option("--workers", min=1, help="Parallel workers, each with its own environment.")]
Ray = Annotated[str | None, typer.Option("--ray", metavar="ADDRESS",
                                         help="Run on Ray: 'local' starts a local instance, else a cluster address.")]
ExecutorName = Annotated[str, typer.Option("--executor", help="process (default), serial (in this process, for "
                                                               "debugging); --ray picks ray.")]
Store = Annotated[Path, typer.Option("--out", file_okay=False, help="Trajectory store root.")]
RunId = Annotated[str | None, typer.Option("--run-id", help="The run to write (and resume); default: derived from "
                                                            "the inputs, so the same command resumes.")]
Judges = Annotated[str, typer.Option("--judges", help="Comma-separated judge SPECs for the trace verdict "
                                                      "(program, ocr, vlm:...).")]
MaxSteps = Annotated[int | None, typer.Option("--max-steps", min=1, help="Step budget (default: each task's own).")]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[:60] or "x"


def _executor(workers: int, ray: str | None, name: str):
    from uivenus.tasks.executors import ExecutorError, make_executor

    try:
        if ray is not None:
            return make_executor("ray", workers, None if ray == "local" else ray)
        return make_executor(name, workers)
    except ExecutorError as exc:
        raise typer.BadParameter(str(exc)) from None


def _judges(text: str) -> tuple[str, ...]:
    judges = tuple(j.strip() for j in text.split(",") if j.strip())
    if not judges:
        raise typer.BadParameter("--judges needs at least one judge SPEC, e.g. program")
    return judges


def _load_catalog(path: Path):
    from uivenus.tasks.catalog import Catalog, CatalogError

    try:
        return Catalog.load(path)
    except (OSError, CatalogError) as exc:
        raise typer.BadParameter(f"{path}: {exc}") from None


def _failures_table(failures, limit: int = 15) -> Table:
    table = Table(title=f"failures ({len(failures)})")
    table.add_column("episode", overflow="fold", max_width=22)
    table.add_column("kind / rule", no_wrap=True)
    table.add_column("reason", overflow="fold", ratio=1)
    table.add_column("learned", justify="right")
    for f in failures[:limit]:
        table.add_row(f.episode_id, f"{f.kind.value}\n{f.rule}", f.reason[:200], str(len(f.learned)))
    return table


#: The summary table's columns (short headers: it should fit an 80-column terminal).
STATS_COLUMNS: tuple[tuple[str, Callable[[RoundStats], str]], ...] = (
    ("round", lambda s: str(s.round)),
    ("prop.", lambda s: str(s.proposed)),
    ("acc.", lambda s: str(s.accepted)),
    ("exec.", lambda s: str(s.executable)),
    ("✓", lambda s: str(s.verified_success)),
    ("inval.", lambda s: str(s.failed_invalid)),
    ("agent", lambda s: str(s.failed_agent)),
    ("other", lambda s: str(s.failed_other)),
    ("rate", lambda s: f"{s.acceptance_rate:.0%}"),
    ("learn", lambda s: str(s.learned)),
    ("eps", lambda s: str(s.episodes) + (f"+{s.skipped}" if s.skipped else "")),
    ("ep/min", lambda s: f"{s.episodes_per_min:.1f}"),
    ("s", lambda s: f"{s.seconds:.0f}"),
)


def stats_table(stats: Iterable[RoundStats], title: str = "closed loop") -> Table:
    """The per-round summary table."""
    table = Table(title=title, caption="prop./acc./exec.: tasks proposed, accepted by the gate, executable; "
                                       "✓: verified successful; rate: executable/proposed; "
                                       "eps: episodes run (+ done before)")
    for name, _ in STATS_COLUMNS:
        table.add_column(name, justify="right", no_wrap=True)
    for s in stats:
        table.add_row(*(cell(s) for _, cell in STATS_COLUMNS))
    return table


def run(
    tasks: Annotated[Path, typer.Option("--tasks", exists=True,
                                        help="Tasks to run (JSONL: `tasks synth`/`gate` output, or TaskSpec lines; "
                                             "or OSWorld-format task files: a directory, an index, one .json).")],
    policy: Annotated[str, typer.Option("--policy", help="The policy SPEC: oracle, random, hf:..., openai:...")],
    workers: Workers = 1,
    ray: Ray = None,
    executor: ExecutorName = "process",
    store: Store = Path("runs"),
    run_id: RunId = None,
    judges: Judges = "program",
    max_steps: MaxSteps = None,
    catalog: Annotated[Path | None, typer.Option(
        "--catalog", exists=True, dir_okay=False,
        help="Add what invalid tasks teach to this catalog (saved back).")] = None,
) -> None:
    """Run tasks through a policy in parallel environments; verify, store and classify every episode.

    Finished episodes of the run are skipped, so the same command resumes a run that was stopped."""
    from uivenus.store import StoreError
    from uivenus.tasks.catalog_diff import diff_catalogs
    from uivenus.tasks.feedback import FailureKind
    from uivenus.tasks.collect import Collector, PipelineError, load_tasks

    try:
        loaded = load_tasks(tasks)
    except PipelineError as exc:
        raise typer.BadParameter(str(exc)) from None
    run_id = run_id or f"{_slug(tasks.stem)}-{_slug(policy)}"
    cat = _load_catalog(catalog) if catalog is not None else None
    before = _load_catalog(catalog) if catalog is not None else None
    with _executor(workers, ray, executor) as pool:
        try:
            collector = Collector(pool, policy, store, run_id, judges=_judges(judges), max_steps=max_steps,
                                  console=console)
            result = collector.collect(loaded, catalog=cat)
        except (PipelineError, StoreError) as exc:
            raise typer.BadParameter(str(exc)) from None
    summary = Table(title=escape(str(store / run_id)))
    columns = {"tasks": len(loaded), "ran": result.episodes, "done": result.skipped, "✓": result.passed,
               "invalid": result.count(FailureKind.TASK_INVALID), "agent": result.count(FailureKind.AGENT_ERROR),
               "other": len(result.failures) - result.count(FailureKind.TASK_INVALID)
               - result.count(FailureKind.AGENT_ERROR),
               "crashed": len(result.errors), "ep/min": f"{result.episodes_per_min:.1f}", "s": f"{result.seconds:.0f}"}
    for name in columns:
        summary.add_column(name, justify="right")
    summary.add_row(*(str(v) for v in columns.values()))
    console.print(summary)
    if result.failures:
        console.print(_failures_table(list(result.failures)))
    for error in result.errors:
        console.print(f"[red]crashed[/red] {error}")
    if cat is not None and before is not None and cat.version != before.version:
        cat.save(catalog)
        console.print(str(diff_catalogs(before, cat)))


def loop(
    catalog: Annotated[Path, typer.Option("--catalog", exists=True, dir_okay=False,
                                          help="The capability catalog; what the loop learns is saved back to it.")],
    rounds: Annotated[int, typer.Option("--rounds", min=1,
                                        help="Rounds to run (finished ones are not run again).")] = 3,
    n: Annotated[int, typer.Option("--n", min=1, help="Tasks proposed per round.")] = 12,
    policy: Annotated[str, typer.Option("--policy", help="The policy SPEC that collects the episodes.")] = "oracle",
    workers: Workers = 1,
    ray: Ray = None,
    executor: ExecutorName = "process",
    store: Store = Path("runs"),
    run_id: RunId = None,
    judges: Judges = "program",
    max_steps: MaxSteps = None,
    seed: Annotated[int, typer.Option("--seed", help="Round r proposes with seed SEED + r - 1.")] = 0,
    kinds: Annotated[str, typer.Option("--kinds", help="Comma-separated: single, multi, long_horizon.")]
    = "single,multi,long_horizon",
    functions: Annotated[str | None, typer.Option("--functions", help="Comma-separated catalog functions to propose "
                                                                      "tasks for (default: all implemented).")] = None,
    layout: Annotated[str, typer.Option("--layout", help="web or phone.")] = "web",
    allow_unsafe: Annotated[bool, typer.Option("--allow-unsafe",
                                               help="Keep payment/deletion/sending/… tasks.")] = False,
    gate_execute: Annotated[bool, typer.Option("--gate-execute/--no-gate-execute",
                                               help="Let the gate run each task's reference solution (serially) "
                                                    "before dispatch; by default executability shows in the "
                                                    "collected episodes.")] = False,
) -> None:
    """The closed loop: synthesize → gate → collect in parallel → verify → feedback into the catalog, per round."""
    from uivenus.store import StoreError
    from uivenus.tasks.catalog_diff import diff_catalogs
    from uivenus.tasks.gate import Gate, ReferenceExecutor
    from uivenus.tasks.rounds import Pipeline
    from uivenus.tasks.collect import PipelineError
    from uivenus.tasks.spec import TaskKind
    from uivenus.tasks.synthesis import TemplateSynthesizer

    try:
        chosen = [TaskKind(k.strip()) for k in kinds.split(",") if k.strip()]
    except ValueError:
        raise typer.BadParameter(f"--kinds takes {', '.join(TaskKind)}; got {kinds!r}") from None
    only = [f.strip() for f in functions.split(",") if f.strip()] if functions else None
    cat, before = _load_catalog(catalog), _load_catalog(catalog)
    run_id = run_id or f"loop-{_slug(catalog.stem)}-{_slug(policy)}-s{seed}"

    def synthesizer(index: int) -> TemplateSynthesizer:
        return TemplateSynthesizer(seed + index - 1, kinds=chosen, layout=layout, functions=only)

    gate_runner = ReferenceExecutor(layout) if gate_execute else None
    gate = Gate(cat, allow_unsafe=allow_unsafe, executor=gate_runner)
    try:
        with _executor(workers, ray, executor) as pool:
            pipeline = Pipeline(cat, synthesizer, gate, pool, policy, store, run_id, judges=_judges(judges),
                                max_steps=max_steps, console=console)
            done: list = pipeline.completed()[:rounds]
            if done:  # the message on a line of its own, never folded: a long store path cannot cut it
                console.print(f"{len(done)} round(s) finished before, not run again: {store / run_id}",
                              markup=False, soft_wrap=True)
                console.print(stats_table(done, "finished before"))
            while len(done) < rounds:
                stats = pipeline.round(n)
                done.append(stats)
                console.print(f"round {stats.round}: {stats.proposed} proposed, {stats.accepted} accepted, "
                              f"{stats.verified_success} verified, {stats.failed_invalid} invalid, "
                              f"{stats.failed_agent} agent errors, {stats.learned} constraint(s) learned")
    except (PipelineError, StoreError) as exc:
        raise typer.BadParameter(str(exc)) from None
    finally:
        if gate_runner is not None:
            gate_runner.close()
    console.print(stats_table(done, escape(str(store / run_id))))
    if cat.version != before.version:
        cat.save(catalog)
        console.print(str(diff_catalogs(before, cat)))

