"""`uivenus demo`: the project's main job on embedded defaults (grown by each part of the system)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from uivenus.cli.console import cli_console

SAMPLE_FORMATS = {
    "androidworld": "androidworld.json",
    "uitars": "uitars.txt",
    "guiowl": "guiowl.txt",
    "opencua": "opencua.txt",
}


def _sample_text(package: str, name: str) -> str:
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def action_table(console: Console) -> tuple[int, int]:
    """Parse the bundled UI-Venus responses and convert every foreign sample; print one table."""
    from uivenus.actions.calls import format_action
    from uivenus.actions.convert import ConvertError, convert_text, split_items
    from uivenus.actions.coords import CoordinateError, Frame
    from uivenus.actions.grammar import parse_response
    from uivenus.actions.syntax import ParseError

    table = Table(title="Responses and foreign actions -> unified actions (screen 1280x720)")
    table.add_column("source", style="cyan")
    table.add_column("input", overflow="fold", max_width=48)
    table.add_column("unified action(s) in screen pixels", overflow="fold")
    ok = failed = 0
    frame = Frame.relative(1280, 720)
    for text in json.loads(_sample_text("uivenus.actions.samples", "venus_responses.json")):
        snippet = text[text.find("<action>"):] if "<action>" in text else text
        try:
            actions = [frame.action_to_screen(a) for a in parse_response(text).actions]
            table.add_row("ui-venus (rel 0-999)", snippet, "; ".join(format_action(a) for a in actions))
            ok += 1
        except (ParseError, CoordinateError) as exc:
            table.add_row("ui-venus (rel 0-999)", snippet, f"[red]{type(exc).__name__}: {exc}[/red]")
            failed += 1
    for source, filename in SAMPLE_FORMATS.items():
        text = _sample_text("uivenus.actions.convert.samples", filename)
        for item, result in zip(split_items(text), convert_text(source, text), strict=True):
            label = item if isinstance(item, str) else json.dumps(item)
            if isinstance(result, ConvertError):
                table.add_row(source, label, f"[yellow]not mapped: {result}[/yellow]")
                failed += 1
            else:
                table.add_row(source, label, "; ".join(format_action(a) for a in result))
                ok += 1
    console.print(table)
    return ok, failed


#: The bundled sandbox task the demo runs end to end with the oracle policy.
DEMO_TASK = "sandbox:contacts/add_contact"


def agent_episode(console: Console, out: Path) -> tuple[Path, Any]:
    """Run one bundled sandbox task through the agent loop with the `oracle` policy; print steps and verdict.

    Returns the episode directory and the trajectory."""
    import time

    from uivenus.cli.run import run_and_record, trajectory_table, verdict_line

    console.print(f"\n[bold]Agent loop[/bold]: {DEMO_TASK} with the oracle policy (guard: confirm, nobody to ask)")
    directory, trajectory = run_and_record(policy_spec="oracle", task=DEMO_TASK, out=out,
                                           run_id=time.strftime("demo-%Y%m%d-%H%M%S"))
    console.print(trajectory_table(trajectory, title=f"{trajectory.task.id}: {trajectory.task.instruction}"))
    console.print(verdict_line(trajectory))
    console.print(f"recorded in {directory} (see it again with `uivenus runs show {directory.parent} --steps`)")
    return directory, trajectory


#: Judges of the demo episode: the task's own checker and OCR of the kept screens.
DEMO_JUDGES = ("program", "ocr")


def verify_episode(console: Console, directory: Path, trajectory: Any) -> dict[str, Any]:
    """Verify the recorded episode with `verify_trace` (program + OCR judges); returns what the report shows.

    A verifier that cannot run is the demo's failure, never hidden behind the loop's own verdict."""
    from uivenus.verify.judges import judge_from_spec
    from uivenus.verify.trace import verify_trace

    result = verify_trace(trajectory, directory, [judge_from_spec(spec) for spec in DEMO_JUDGES])
    console.print(f"[bold]Verified[/bold] with {' + '.join(DEMO_JUDGES)} judges: outcome "
                  f"[bold]{result.outcome.value}[/bold] ({result.reason})")
    return {"trace": result.to_dict(), "checker": dict(trajectory.verdicts)}


def nano_grounding(console: Console, out: Path, screens: int = 4) -> dict[str, Any]:
    """Synthesize a few small screens and let the bundled `nano` policy ground their instructions; print accuracy."""
    from uivenus.evals.grounding import evaluate_grounding
    from uivenus.evals.grounding_data import load_grounding
    from uivenus.synth.grounding import generate_grounding

    console.print(f"\n[bold]Grounding[/bold]: {screens} synthetic 224x224 screens, instructions grounded by `nano`")
    generate_grounding(screens, out / "screens", seed=2024, sizes=[(224, 224)], simple=True, per_sample=2,
                       progress=False)
    results = evaluate_grounding(load_grounding(out / "screens" / "annotations.json"), "nano", out / "results",
                                 progress=False)
    console.print(f"nano grounding accuracy: [bold]{results['accuracy']:.2f}[/bold] ({results['hits']}/{results['n']})")
    return results


def demo(out: Path = Path("runs/demo")) -> None:
    """Run the demo: the unified action space on samples of every format, one agent episode end to end and its
    verification, `nano` grounding synthetic screens, and an HTML report of it all."""
    import time

    from uivenus.agent.policies import PolicyError
    from uivenus.reports import write_report
    from uivenus.envs.base import EnvError
    from uivenus.verify.base import VerifyError

    started = time.perf_counter()
    console = cli_console(min_width=140)
    ok, failed = action_table(console)
    console.print(f"[bold]{ok}[/bold] inputs mapped, [bold]{failed}[/bold] reported as unmappable or malformed")
    try:
        directory, trajectory = agent_episode(console, out)
        verification = verify_episode(console, directory, trajectory)
        grounding = nano_grounding(console, out / "grounding")
    except (PolicyError, VerifyError, EnvError) as exc:
        console.print(f"[red]demo failed: {type(exc).__name__}: {exc}[/red]")
        raise typer.Exit(1) from None
    report = write_report(out / "report.html", title="uivenus demo", grounding=grounding, trajectory=trajectory,
                          episode_dir=directory, verification=verification,
                          notes=[f"{ok} inputs mapped to unified actions, {failed} reported as unmappable.",
                                 f"Episode recorded in {directory}."])
    console.print(f"report: {report} ({time.perf_counter() - started:.0f} s)")
