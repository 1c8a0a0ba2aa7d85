"""`uivenus actions parse|convert`: model responses and foreign action formats -> unified actions."""

from __future__ import annotations

import json
import re
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

app = typer.Typer(help="Parse model responses and convert other systems' action formats.", no_args_is_help=True)


def read_responses(path: Path) -> list[str]:
    """Responses from a file: a JSON list of strings, else one response per non-empty line (so a file of grounding
    answers such as `[523, 411]` is read line by line)."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError:
            items = None
        if isinstance(items, list) and items and all(isinstance(i, str) for i in items):
            return items
    return [line for line in text.splitlines() if line.strip()]


def parse_size(text: str) -> tuple[int, int]:
    """`1080x2400` -> (1080, 2400)."""
    width, sep, height = text.lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit():
        raise typer.BadParameter(f"expected a size like 1080x2400, got {text!r}")
    return int(width), int(height)


class ParseMode(StrEnum):
    """What kind of reply a file holds: agent steps (`<action>` calls), grounding answers (`[x,y]`), or either."""

    AUTO = "auto"
    AGENT = "agent"
    GROUNDING = "grounding"


def agent_to_screen(text: str, frame: Any, *, lenient: bool) -> dict[str, Any]:
    """One agent response -> a JSON-ready dict with its actions in screen pixels (raises on a malformed reply)."""
    from uivenus.actions.grammar import parse_response

    response = parse_response(text, lenient=lenient)
    out: dict[str, Any] = {"ok": True, "mode": ParseMode.AGENT.value,
                           "actions": [frame.action_to_screen(a).to_dict() for a in response.actions]}
    if response.think is not None:
        out["think"] = response.think
    if response.conclusion is not None:
        out["conclusion"] = response.conclusion
    if response.recovered:
        out["recovered"] = list(response.notes)
    return out


def grounding_to_screen(text: str, frame: Any) -> dict[str, Any]:
    """One grounding answer -> its point (and box) in screen pixels; `[-1,-1]` is a refusal with no point."""
    from uivenus.actions.grounding import parse_grounding

    answer = parse_grounding(text)
    out: dict[str, Any] = {"ok": True, "mode": ParseMode.GROUNDING.value, "refused": answer.refused,
                           "point": None if answer.point is None else list(frame.to_screen(answer.point))}
    if answer.box is not None:
        out["box"] = [*frame.to_screen(answer.box[:2]), *frame.to_screen(answer.box[2:])]
    return out


def _looks_like_grounding(text: str) -> bool:
    """A reply with no action call (`Name(`) but a bracketed list is a grounding answer."""
    return re.search(r"[A-Za-z_]\w*\s*\(", text) is None and re.search(r"[\[(]", text) is not None


def parse_to_screen(text: str, frame: Any, *, lenient: bool, mode: ParseMode = ParseMode.AUTO) -> dict[str, Any]:
    """One response -> a JSON-ready dict with its actions (agent) or point (grounding) in screen pixels, or its
    error; `auto` reads a reply with no action call, as a grounding answer (a malformed call stays an agent error)."""
    from uivenus.actions.coords import CoordinateError
    from uivenus.actions.syntax import ParseError

    if mode is ParseMode.AUTO:
        mode = ParseMode.GROUNDING if _looks_like_grounding(text) else ParseMode.AGENT
    try:
        if mode is ParseMode.GROUNDING:
            return grounding_to_screen(text, frame)
        return agent_to_screen(text, frame, lenient=lenient)
    except (ParseError, CoordinateError) as exc:
        return {"ok": False, "mode": mode.value, "error": f"{type(exc).__name__}: {exc}"}


@app.command("parse")
def parse(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="Responses: one per line, or a JSON list."),
    frame: str = typer.Option("rel", help="Model coordinate frame: rel, abs or smart."),
    width: int = typer.Option(1280, help="Screen width in logical pixels."),
    height: int = typer.Option(720, help="Screen height in logical pixels."),
    divisor: int = typer.Option(1000, help="Relative frame divisor (1000; some models use 999)."),
    factor: int = typer.Option(28, help="smart_resize factor: 28 for Qwen2/2.5-VL, 32 for Qwen3-VL."),
    lenient: bool = typer.Option(False, help="Recover the last well-formed action from responses with junk."),
    mode: ParseMode = typer.Option(ParseMode.AUTO, help="agent (<action> calls), grounding ([x,y], [-1,-1] "
                                   "refuses) or auto (grounding when a reply has no action call)."),
) -> None:
    """Print one JSON object per response: its actions or grounding point in screen pixels, or the error."""
    from uivenus.actions.coords import CoordinateError, frame_from_options

    try:
        screen_frame = frame_from_options(frame, width, height, divisor=divisor, factor=factor)
    except CoordinateError as exc:
        raise typer.BadParameter(str(exc)) from None
    for text in read_responses(file):
        typer.echo(json.dumps(parse_to_screen(text, screen_frame, lenient=lenient, mode=mode), ensure_ascii=False))


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
