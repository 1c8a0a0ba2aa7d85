"""`uivenus demo`: the project's main job on embedded defaults (grown by each part of the system)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from rich.console import Console
from rich.table import Table

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
    from uivenus.actions.convert import ConvertError, convert_text, split_items
    from uivenus.actions.coords import CoordinateError, Frame
    from uivenus.actions.grammar import ParseError, format_action, parse_response

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


def agent_episode(console: Console, out: Path) -> bool:
    """Run one bundled sandbox task through the agent loop with the `oracle` policy; print steps and verdict."""
    import time

    from uivenus.cli.run import run_and_record, trajectory_table, verdict_line

    console.print(f"\n[bold]Agent loop[/bold]: {DEMO_TASK} with the oracle policy (guard: confirm, nobody to ask)")
    directory, trajectory = run_and_record(policy_spec="oracle", task=DEMO_TASK, out=out,
                                           run_id=time.strftime("demo-%Y%m%d-%H%M%S"))
    console.print(trajectory_table(trajectory, title=f"{trajectory.task.id}: {trajectory.task.instruction}"))
    console.print(verdict_line(trajectory))
    console.print(f"recorded in {directory} (see it again with `uivenus runs show {directory.parent} --steps`)")
    return bool(trajectory.verdicts.get("sandbox", {}).get("passed"))


def demo(out: Path = Path("runs/demo")) -> None:
    """Run the demo: the unified action space on samples of every format, then one agent episode end to end."""
    console = Console(width=max(Console().width, 140))
    ok, failed = action_table(console)
    console.print(f"[bold]{ok}[/bold] inputs mapped, [bold]{failed}[/bold] reported as unmappable or malformed")
    agent_episode(console, out)
