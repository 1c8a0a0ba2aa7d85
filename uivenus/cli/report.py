"""The demo's HTML report: one self-contained page (images inlined) of what the agent saw, said and did.

Grounding items show the target box (green) and the predicted point (red on a miss, green on a hit); episode
steps show the screenshot with the action's points, the raw reply, the parsed action and any error; the
verification section shows the outcome and each judge's verdict.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from uivenus.actions.space import iter_points
from uivenus.records import Trajectory

__all__ = ["write_report"]

_STYLE = """body{font-family:system-ui,sans-serif;margin:24px;color:#1f2933;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccd}
.grid{display:flex;flex-wrap:wrap;gap:12px}.card{border:1px solid #dde;border-radius:6px;padding:8px;width:250px;
font-size:12px}.card img{width:100%}.hit{color:#15803d}.miss{color:#b91c1c}
.step{display:flex;gap:12px;border-bottom:1px solid #eef;padding:8px 0}.step img{width:420px}
pre{white-space:pre-wrap;font-size:12px;background:#f6f8fa;padding:6px;margin:4px 0}
table{border-collapse:collapse}td,th{border:1px solid #dde;padding:4px 8px;font-size:13px;text-align:left}"""


def _png(image: Image.Image, width: int = 640) -> str:
    if image.width > width:
        image = image.resize((width, round(image.height * width / image.width)))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _mark(draw: ImageDraw.ImageDraw, point: Sequence[float], colour: str, radius: int = 5) -> None:
    x, y = point
    draw.ellipse([x - radius, y - radius, x + radius, y + radius], outline=colour, width=3)
    draw.line([x - radius - 3, y, x + radius + 3, y], fill=colour)
    draw.line([x, y - radius - 3, x, y + radius + 3], fill=colour)


def _grounding_card(record: Mapping[str, Any]) -> str:
    with Image.open(record["image"]) as opened:
        image = opened.convert("RGB")
    draw = ImageDraw.Draw(image)
    box = record.get("target", {}).get("box")
    if box:
        draw.rectangle(box, outline="#16a34a", width=2)
    hit = bool(record.get("hit"))
    if record.get("point"):
        _mark(draw, record["point"], "#16a34a" if hit else "#dc2626")
    verdict = '<b class="hit">hit</b>' if hit else '<b class="miss">miss</b>'
    return (f'<div class="card"><img src="{_png(image, 500)}" alt="screen"><div>{verdict} · '
            f'{html.escape(str(record["instruction"]))}</div><pre>{html.escape(str(record.get("response", "")))}'
            "</pre></div>")


def _step_row(step: Any, episode_dir: Path) -> str:
    picture = ""
    if step.screen and (episode_dir / step.screen).is_file():
        with Image.open(episode_dir / step.screen) as opened:
            image = opened.convert("RGB")
        if step.action is not None:
            draw = ImageDraw.Draw(image)
            for _, point in iter_points(step.action):
                _mark(draw, point, "#dc2626", radius=9)
        picture = f'<img src="{_png(image)}" alt="step {step.index}">'
    action = step.action.to_dict() if step.action is not None else None
    error = f'<div class="miss">error: {html.escape(step.error)}</div>' if step.error else ""
    return (f'<div class="step">{picture}<div><b>step {step.index}</b> · executed: {step.executed}'
            f"<pre>{html.escape(step.response or '')}</pre><pre>{html.escape(json.dumps(action))}</pre>{error}"
            "</div></div>")


def _verdict_table(verification: Mapping[str, Any]) -> str:
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td><pre>{html.escape(json.dumps(v, indent=1, default=str))}"
                   "</pre></td></tr>" for k, v in verification.items())
    return f"<table>{rows}</table>"


def write_report(path: Path | str, *, title: str, grounding: Mapping[str, Any] | None = None,
                 trajectory: Trajectory | None = None, episode_dir: Path | None = None,
                 verification: Mapping[str, Any] | None = None, notes: Sequence[str] = ()) -> Path:
    """Write the page: `grounding` is an `evaluate_grounding` result, `trajectory` a recorded episode (screens
    under `episode_dir`), `verification` the verdicts; returns the path."""
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"]
    parts += [f"<p>{html.escape(note)}</p>" for note in notes]
    if grounding is not None:
        parts.append(f"<h2>Grounding · {html.escape(str(grounding.get('policy', '')))} · accuracy "
                     f"{grounding.get('accuracy', 0.0):.2f} ({grounding.get('hits', 0)}/{grounding.get('n', 0)})</h2>")
        parts.append('<div class="grid">' + "".join(_grounding_card(r) for r in grounding.get("items", [])) + "</div>")
    if trajectory is not None:
        parts.append(f"<h2>Episode · {html.escape(trajectory.task.id)}: {html.escape(trajectory.task.instruction)}"
                     "</h2>")
        parts += [_step_row(step, Path(episode_dir or ".")) for step in trajectory.steps]
    if verification is not None:
        parts.append("<h2>Verification</h2>" + _verdict_table(verification))
    parts.append("</body></html>")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(parts), encoding="utf-8")
    return out
