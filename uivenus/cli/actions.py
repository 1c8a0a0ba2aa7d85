"""`uivenus actions parse|convert`: model responses and foreign action formats -> unified actions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

app = typer.Typer(help="Parse model responses and convert other systems' action formats.", no_args_is_help=True)


def read_responses(path: Path) -> list[str]:
    """Responses from a file: a JSON list of strings, or one response per non-empty line."""
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise typer.BadParameter(f"{path} looks like a JSON list but is not valid JSON: {exc}") from None
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise typer.BadParameter(f"{path}: a JSON file must hold a list of response strings")
        return items
    return [line for line in text.splitlines() if line.strip()]


def parse_size(text: str) -> tuple[int, int]:
    """`1080x2400` -> (1080, 2400)."""
    width, sep, height = text.lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit():
        raise typer.BadParameter(f"expected a size like 1080x2400, got {text!r}")
    return int(width), int(height)


def parse_to_screen(text: str, frame: Any, *, lenient: bool) -> dict[str, Any]:
    """One response -> a JSON-ready dict with its actions in screen pixels, or its error."""
    from uivenus.actions.coords import CoordinateError
    from uivenus.actions.grammar import ParseError, parse_response

    try:
        response = parse_response(text, lenient=lenient)
        actions = [frame.action_to_screen(a).to_dict() for a in response.actions]
    except (ParseError, CoordinateError) as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    out: dict[str, Any] = {"ok": True, "actions": actions}
    if response.think is not None:
        out["think"] = response.think
    if response.conclusion is not None:
        out["conclusion"] = response.conclusion
    if response.recovered:
        out["recovered"] = list(response.notes)
    return out


@app.command("parse")
def parse(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="Responses: one per line, or a JSON list."),
    frame: str = typer.Option("rel", help="Model coordinate frame: rel, abs or smart."),
    width: int = typer.Option(1280, help="Screen width in logical pixels."),
    height: int = typer.Option(720, help="Screen height in logical pixels."),
    divisor: int = typer.Option(1000, help="Relative frame divisor (1000; some models use 999)."),
    factor: int = typer.Option(28, help="smart_resize factor: 28 for Qwen2/2.5-VL, 32 for Qwen3-VL."),
    lenient: bool = typer.Option(False, help="Recover the last well-formed action from responses with junk."),
) -> None:
    """Print one JSON object per response: its actions in screen pixels, or the error."""
    from uivenus.actions.coords import CoordinateError, frame_from_options

    try:
        screen_frame = frame_from_options(frame, width, height, divisor=divisor, factor=factor)
    except CoordinateError as exc:
        raise typer.BadParameter(str(exc)) from None
    for text in read_responses(file):
        typer.echo(json.dumps(parse_to_screen(text, screen_frame, lenient=lenient), ensure_ascii=False))


@app.command("convert")
def convert(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="Actions in a foreign format."),
    source: str = typer.Option(..., "--from", help="androidworld, uitars, guiowl or opencua."),
    screen: str = typer.Option("", help="Screen size WxH, needed by AndroidWorld scroll/swipe (e.g. 1080x2400)."),
) -> None:
    """Print the unified actions of each item of a foreign-format file (or why it cannot be mapped)."""
    from uivenus.actions.convert import ConvertError, convert_text

    options = {"screen": parse_size(screen)} if screen else {}
    try:
        results = convert_text(source, file.read_text(encoding="utf-8"), **options)
    except ConvertError as exc:
        raise typer.BadParameter(str(exc)) from None
    for result in results:
        if isinstance(result, ConvertError):
            typer.echo(json.dumps({"ok": False, "error": str(result)}, ensure_ascii=False))
        else:
            typer.echo(json.dumps({"ok": True, "actions": [a.to_dict() for a in result]}, ensure_ascii=False))
