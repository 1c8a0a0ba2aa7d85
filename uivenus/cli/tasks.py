"""`uivenus tasks explore|explore-app|synth|gate|diff`: capability catalogs (sandbox apps through their state hook,
real apps through their accessibility trees), task synthesis and the validity gate."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from uivenus.cli.console import cli_console

app = typer.Typer(help="Task generation: capability catalogs, task synthesis and the validity gate.",
                  no_args_is_help=True)
console = cli_console()


def _load_catalog(path: Path):
    from uivenus.tasks.catalog import Catalog, CatalogError

    try:
        return Catalog.load(path)
    except (OSError, CatalogError) as exc:
        raise typer.BadParameter(f"{path}: {exc}") from None


def _functions_table(catalog, title: str) -> Table:
    table = Table(title=title)
    for column in ("function", "parameters", "from", "unsafe"):
        table.add_column(column)
    for fn in catalog.functions():
        params = ", ".join(p.name + ("?" if p.optional else "") + f": {p.domain}" for p in fn.params)
        table.add_row(fn.key, params, ", ".join(fn.sources), ", ".join(fn.unsafe))
    return table


@app.command("explore")
def explore(
    env: Annotated[str, typer.Option("--env", help="The app to explore: sandbox:APP or sandbox-phone:APP.")],
    out: Annotated[Path, typer.Option("--out", dir_okay=False, help="Where to write the catalog (JSON).")],
    docs: Annotated[bool, typer.Option("--docs/--no-docs", help="Also read the app's bundled feature docs.")] = True,
    merge: Annotated[Path | None, typer.Option("--catalog", exists=True, dir_okay=False,
                                               help="An existing catalog to add to (its version goes up).")] = None,
    max_actions: Annotated[int, typer.Option("--max-actions", min=1, help="Elements to try at most.")] = 60,
    max_depth: Annotated[int, typer.Option("--max-depth", min=0,
                                           help="Screens this far from the start are not explored.")] = 4,
    max_resets: Annotated[int, typer.Option("--max-resets", min=1,
                                            help="App reloads to go back to earlier screens.")] = 10,
) -> None:
    """Explore a sandbox app breadth-first and write its capability catalog."""
    from uivenus.envs.registry import EnvSpecError, make_env
    from uivenus.tasks.catalog import CatalogError
    from uivenus.tasks.catalog_diff import diff_catalogs
    from uivenus.tasks.catalog_docs import bundled_docs, catalog_from_docs
    from uivenus.tasks.explore import ExploreLimits, explore_app

    if not env.startswith(("sandbox:", "sandbox-phone:")):
        raise typer.BadParameter(f"explore needs a sandbox app, as in sandbox:notes; got {env!r}")
    try:
        environment = make_env(env)
    except EnvSpecError as exc:
        raise typer.BadParameter(str(exc)) from None
    limits = ExploreLimits(max_actions=max_actions, max_depth=max_depth, max_resets=max_resets)
    with environment:
        with console.status(f"exploring {environment.app}"):
            found = explore_app(environment, environment.app, environment.base_url, layout=environment.layout,
                                limits=limits)
    if docs:
        try:
            found.merge(catalog_from_docs(bundled_docs(environment.app)))
        except CatalogError as exc:
            console.print(f"[yellow]no docs merged:[/yellow] {exc}")
    catalog = found
    if merge is not None:
        catalog = _load_catalog(merge)
        before = _load_catalog(merge)
        catalog.merge(found)
        console.print(str(diff_catalogs(before, catalog)))
    catalog.save(out)
    app_catalog = catalog.apps[environment.app]
    console.print(_functions_table(catalog, f"{out} (v{catalog.version})"))
    console.print(f"{len(app_catalog.states)} screens, {len(app_catalog.transitions)} transitions seen in "
                  f"{environment.app}")


@app.command("synth")
def synth(
    catalog: Annotated[Path, typer.Option("--catalog", exists=True, dir_okay=False, help="The capability catalog.")],
    n: Annotated[int, typer.Option("--n", min=1, help="How many tasks to make.")],
    out: Annotated[Path, typer.Option("--out", dir_okay=False, help="Where to write the tasks (JSONL).")],
    seed: Annotated[int, typer.Option("--seed", help="Same seed and catalog, same tasks.")] = 0,
    kinds: Annotated[str, typer.Option(
        "--kinds", help="Comma-separated: single, multi, long_horizon.")] = "single,multi,long_horizon",
    policy: Annotated[str | None, typer.Option(
        "--policy", help="Propose tasks with this policy SPEC instead of templates.")] = None,
    layout: Annotated[str, typer.Option("--layout", help="web or phone.")] = "web",
) -> None:
    """Synthesise tasks grounded in a catalog's functions (templates offline, or an LLM through --policy)."""
    from uivenus.tasks.spec import TaskKind, write_tasks
    from uivenus.tasks.llm_synthesis import LLMSynthesizer
    from uivenus.tasks.synthesis import TemplateSynthesizer

    try:
        chosen = [TaskKind(k.strip()) for k in kinds.split(",") if k.strip()]
    except ValueError:
        raise typer.BadParameter(f"--kinds takes {', '.join(TaskKind)}; got {kinds!r}") from None
    cat = _load_catalog(catalog)
    synthesizer = (LLMSynthesizer(policy, layout=layout) if policy
                   else TemplateSynthesizer(seed, kinds=chosen, layout=layout))
    result = synthesizer.synthesize(cat, n)
    write_tasks(out, result.tasks)
    counts = Counter(t.kind.value for t in result.tasks)
    by_kind = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    console.print(f"wrote {len(result.tasks)} tasks to {out} ({by_kind})")
    for reason, count in Counter(d.reason for d in result.dropped).most_common(10):
        console.print(f"[yellow]dropped[/yellow] {count}× {reason}")


@app.command("gate")
def gate(
    catalog: Annotated[Path, typer.Option("--catalog", exists=True, dir_okay=False,
                                          help="The capability catalog; constraints learned are saved back to it.")],
    tasks: Annotated[Path, typer.Option("--tasks", exists=True, dir_okay=False, help="Tasks to check (JSONL).")],
    out: Annotated[Path, typer.Option("--out", dir_okay=False, help="Where to write the accepted tasks (JSONL).")],
    rejected: Annotated[Path | None, typer.Option(
        "--rejected", dir_okay=False, help="Where to log rejections (default: OUT with .rejected.jsonl).")] = None,
    allow_unsafe: Annotated[bool, typer.Option("--allow-unsafe",
                                               help="Keep payment/deletion/sending/… tasks.")] = False,
    execute: Annotated[bool, typer.Option("--execute/--no-execute",
                                          help="Run each task to check it is executable.")] = True,
    policy: Annotated[str | None, typer.Option(
        "--policy", help="Execute with this expert policy SPEC instead of the reference solutions.")] = None,
    layout: Annotated[str, typer.Option("--layout", help="web or phone.")] = "web",
    learn: Annotated[bool, typer.Option("--learn/--no-learn",
                                        help="Add constraints learned from failed runs to the catalog.")] = True,
) -> None:
    """Keep only new, feasible, safe and executable tasks; every rejection is logged with its reasons."""
    from uivenus.records import RecordError
    from uivenus.tasks.catalog_diff import diff_catalogs
    from uivenus.tasks.gate import Gate, PolicyExecutor, ReferenceExecutor
    from uivenus.tasks.spec import read_tasks, write_tasks

    try:
        candidates = read_tasks(tasks)
    except RecordError as exc:
        raise typer.BadParameter(str(exc)) from None
    cat = _load_catalog(catalog)
    before = _load_catalog(catalog)
    rejected = rejected or out.with_name(out.stem + ".rejected.jsonl")
    rejected.unlink(missing_ok=True)
    executor = None
    if execute:
        executor = PolicyExecutor(policy, layout, progress=True) if policy else ReferenceExecutor(layout, progress=True)
    try:
        task_gate = Gate(cat, allow_unsafe=allow_unsafe, executor=executor, learn=learn, log=rejected)
        results = task_gate.check_all(candidates)
    finally:
        if executor is not None:
            executor.close()
    accepted = [r.task for r in results if r.accepted]
    write_tasks(out, accepted)
    console.print(f"accepted {len(accepted)} of {len(results)} tasks -> {out}")
    for code, count in Counter(reason.code.value for r in results for reason in r.reasons).most_common():
        console.print(f"[red]rejected[/red] {count}× {code} (see {rejected})")
    if cat.version != before.version:
        cat.save(catalog)
        console.print(str(diff_catalogs(before, cat)))


@app.command("diff")
def diff(
    before: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="The older catalog.")],
    after: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="The newer catalog.")],
) -> None:
    """What changed between two catalogs: functions, screens, transitions and constraints."""
    from uivenus.tasks.catalog_diff import diff_catalogs

    console.print(str(diff_catalogs(_load_catalog(before), _load_catalog(after))), highlight=False)


@app.command("explore-app")
def explore_real_app(
    apps: Annotated[list[str], typer.Argument(help="Apps to explore: calc, writer, mousepad, pcmanfm, xterm, "
                                                   "datasette, any program on PATH, or an http(s) URL.")],
    out: Annotated[Path, typer.Option("--out", file_okay=False, help="Folder for catalog.json and summary.md.")],
    depth: Annotated[int, typer.Option("--depth", min=1, help="States this many gestures from the start are "
                                                              "recorded but not expanded.")] = 2,
    seconds: Annotated[float, typer.Option("--time", min=1.0, help="Seconds of exploration per app.")] = 120.0,
) -> None:
    """Explore real apps breadth-first through their accessibility trees (desktop apps in an isolated root)."""
    from uivenus.envs.base import EnvError
    from uivenus.files import write_text
    from uivenus.reports.app_catalog import catalog_markdown
    from uivenus.tasks.app_catalog import AppExploration, CatalogError, Failure, FailureKind, RealCatalog
    from uivenus.tasks.explore_a11y import ExploreLimits, explore_app
    from uivenus.tasks.explore_a11y_apps import app_surface

    path = out / "catalog.json"
    try:
        catalog = RealCatalog.load(path) if path.exists() else RealCatalog()
    except CatalogError as exc:
        raise typer.BadParameter(f"{path}: {exc}; delete it or pick another --out") from None
    limits = ExploreLimits(max_depth=depth, time_s=seconds)
    table = Table(title=f"{path}")
    for column in ("app", "states", "functions", "failures", "seconds"):
        table.add_column(column)
    for name in apps:
        with console.status(f"exploring {name} ({seconds:g} s at most)"):
            try:
                with app_surface(name) as surface:
                    found = explore_app(name, surface, limits)
            except EnvError as exc:  # the app could not even be set up: recorded, the next app goes on
                found = AppExploration(name, "desktop", (name,),
                                       failures=(Failure(FailureKind.LAUNCH, detail=str(exc)),))
        catalog.add(found)
        catalog.save(path)  # after every app: a later app's crash loses nothing
        write_text(out / "summary.md", catalog_markdown(catalog))
        counts = found.counts()
        table.add_row(name, str(counts["states"]), str(counts["functions"]), str(counts["failures"]),
                      f"{found.elapsed_s:.0f}")
    console.print(table)
    console.print(f"wrote {path} and {out / 'summary.md'}")
