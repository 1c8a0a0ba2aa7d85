"""`uivenus tasks synth-real|gate-real`: tasks on real apps from the explorer's catalog, and the gate that replays
their reference solutions (and a no-op) from fresh isolated roots.

Plain command functions, registered on the `tasks` group (`uivenus/cli/__init__.py`), and the table they print.
Files under OUT: `tasks.jsonl` (SynthTask records), `osworld/<app>/<id>.json` (the OSWorld-format task files
`uivenus eval osworld --tasks OUT/osworld` runs), `constraints.json` (what the gate learned; read back by the next
run), and for `gate-real` `rejected.jsonl`, `replay/` (the accepted tasks replayed by the OSWorld runner) and
`numbers.json`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from uivenus.cli.console import cli_console

console = cli_console()

CatalogArg = Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="The explorer's app catalog (JSON).")]
OutDir = Annotated[Path, typer.Option("--out", file_okay=False, help="Where the tasks and figures go.")]
Seed = Annotated[int, typer.Option("--seed", help="Same seed and catalog, same tasks.")]
Kinds = Annotated[str, typer.Option("--kinds", help="Comma-separated: single, multi, long_horizon.")]
CONSTRAINTS_FILE = "constraints.json"


def _catalogs(path: Path, out: Path) -> tuple[Any, Any]:
    """The explored catalog, and the constraint catalog over it (with what an earlier run in OUT learned)."""
    from uivenus.tasks.app_catalog import RealCatalog
    from uivenus.tasks.catalog import Catalog, CatalogError
    from uivenus.tasks.real_synthesis import constraint_catalog

    try:
        real = RealCatalog.load(path)
        known = Catalog.load(out / CONSTRAINTS_FILE) if (out / CONSTRAINTS_FILE).is_file() else None
    except (OSError, CatalogError) as exc:
        raise typer.BadParameter(f"{path}: {exc}") from None
    return real, constraint_catalog(real, known)


def _kinds(text: str) -> list[Any]:
    from uivenus.tasks.spec import TaskKind

    try:
        return [TaskKind(k.strip()) for k in text.split(",") if k.strip()]
    except ValueError:
        raise typer.BadParameter(f"--kinds takes {', '.join(TaskKind)}; got {text!r}") from None


def _synthesizer(real: Any, seed: int, kinds: list[Any], policy: str | None) -> Any:
    from uivenus.tasks.real_synthesis import RealLLMSynthesizer, RealSynthesizer

    return RealLLMSynthesizer(real, policy) if policy else RealSynthesizer(real, seed, kinds=kinds)


def synth_real(
    catalog: CatalogArg,
    out: OutDir,
    n: Annotated[int, typer.Option("--n", min=1, help="How many tasks to make.")] = 20,
    seed: Seed = 0,
    kinds: Kinds = "single,multi,long_horizon",
    policy: Annotated[str | None, typer.Option(
        "--policy", help="Propose tasks with this policy SPEC (it reads the catalog and the apps' docs) instead of "
                         "templates.")] = None,
) -> None:
    """Synthesise OSWorld-format tasks from an explored catalog of real apps (no gate)."""
    from uivenus.tasks.real_synthesis import write_osworld_tasks
    from uivenus.tasks.spec import write_tasks

    real, cat = _catalogs(catalog, out)
    result = _synthesizer(real, seed, _kinds(kinds), policy).synthesize(cat, n)
    write_tasks(out / "tasks.jsonl", result.tasks)
    write_osworld_tasks(out / "osworld", result.tasks)
    counts = Counter(t.kind.value for t in result.tasks)
    console.print(f"wrote {len(result.tasks)} tasks to {out / 'tasks.jsonl'} and {out / 'osworld'} "
                  f"({', '.join(f'{k}: {v}' for k, v in sorted(counts.items())) or 'none'})")
    for reason, count in Counter(d.reason for d in result.dropped).most_common(10):
        console.print(f"[yellow]dropped[/yellow] {count}× {reason}", highlight=False)


def _table(numbers: dict[str, Any]) -> Table:
    table = Table(title="Real-app task engine")
    for column in ("round", "proposed", "dropped", "accepted", "rejected", "learned"):
        table.add_column(column)
    for r in numbers["rounds"]:
        table.add_row(str(r["round"]), str(r["proposed"]), str(r["dropped"]), str(r["accepted"]),
                      ", ".join(f"{k}: {v}" for k, v in r["rejected"].items()) or "-", str(r["learned"]))
    return table


def gate_real(
    catalog: CatalogArg,
    out: OutDir,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Rounds of synthesize -> gate -> learn.")] = 2,
    n: Annotated[int, typer.Option("--n", min=1, help="Tasks proposed per round.")] = 6,
    seed: Seed = 0,
    kinds: Kinds = "single,multi,long_horizon",
    policy: Annotated[str | None, typer.Option("--policy",
                                               help="Propose with this policy SPEC instead of templates.")] = None,
    replay: Annotated[bool, typer.Option("--replay/--no-replay", help="Replay the accepted tasks' references with "
                                                                      "the OSWorld runner from fresh roots.")] = True,
    unsafe_host: Annotated[bool, typer.Option(
        "--unsafe-host", help="Run apps on this machine, not in bubblewrap (only inside a throwaway VM or "
                              "container).")] = False,
) -> None:
    """Synthesise and gate tasks on real apps for some rounds: a task is kept when its reference passes and a no-op
    fails, each from a fresh root; prints and writes (numbers.json) the figures."""
    from uivenus.files import write_json
    from uivenus.tasks.gate import Gate
    from uivenus.tasks.real_gate import ReplayExecutor, gate_rounds, teach_unexplained
    from uivenus.tasks.real_synthesis import write_osworld_tasks
    from uivenus.tasks.spec import write_tasks

    real, cat = _catalogs(catalog, out)
    chosen = _kinds(kinds)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rejected.jsonl").unlink(missing_ok=True)
    with ReplayExecutor(unsafe_host=unsafe_host, progress=True) as executor:
        gate = Gate(cat, executor=executor, log=out / "rejected.jsonl", unexplained=teach_unexplained)
        figures, accepted, _ = gate_rounds(cat, lambda r: _synthesizer(real, seed + r, chosen, policy), gate,
                                           rounds=rounds, per_round=n)
    cat.save(out / CONSTRAINTS_FILE)
    write_tasks(out / "accepted.jsonl", accepted)
    write_osworld_tasks(out / "osworld", accepted)
    numbers: dict[str, Any] = {
        "apps": {app: e.counts() for app, e in real.apps.items()},
        "rounds": [f.to_dict() for f in figures],
        "proposed": sum(f.proposed for f in figures), "accepted": len(accepted),
    }
    if replay and accepted:
        from uivenus.evals.osworld import evaluate_osworld

        summary = evaluate_osworld(out / "osworld", "reference", out / "replay", progress=False,
                                   unsafe_host=unsafe_host, console=console)
        passed = summary["overall"]["successes"]
        numbers["replay"] = {"tasks": len(accepted), "passed": passed, "share": round(passed / len(accepted), 3)}
    write_json(out / "numbers.json", numbers)
    apps = Table(title="Apps explored")
    for column in ("app", "states", "functions", "failures"):
        apps.add_column(column)
    for app, counts in numbers["apps"].items():
        apps.add_row(app, str(counts["states"]), str(counts["functions"]), str(counts["failures"]))
    console.print(apps)
    console.print(_table(numbers))
    if "replay" in numbers:
        r = numbers["replay"]
        console.print(f"replayed from fresh roots: {r['passed']}/{r['tasks']} accepted tasks pass ({r['share']:.0%})")
    console.print(f"accepted {len(accepted)} of {numbers['proposed']} proposed -> {out / 'osworld'}; "
                  f"figures in {out / 'numbers.json'}; rejections in {out / 'rejected.jsonl'}")
