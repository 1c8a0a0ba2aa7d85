"""Every HTML page the project writes, rendered from Jinja2 templates (autoescaped) on one base layout.

The templates and the one stylesheet (`templates/base.css`, inlined into each page) ship with the package. Pages:

- `write_report`: the demo's page: grounding cards, one episode step by step, its verification.
- `write_misses_page` (with `plot_accuracy`): a grounding evaluation's accuracy plot, breakdown and worst misses.
- `write_run_view`: a recorded run, or two side by side matched by task id, as one self-contained page: images
  inlined as downscaled data URIs, each step's action drawn on its screenshot, reasoning, guard decision,
  injection flags, step labels and the trace verdict with its key screenshots; a little inline JS filters the
  episodes by outcome and verdict.

Screenshots are drawn on with PIL at display size: points as rings, drag and swipe paths as arrows, typed text
and key presses as labels (`draw_action`).
"""

from __future__ import annotations

import base64
import io
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from PIL import Image, ImageDraw, ImageFont

from uivenus import __version__
from uivenus.actions.calls import format_action
from uivenus.actions.grammar import parse_response
from uivenus.actions.points import iter_points
from uivenus.actions.space import Action, ActionSequence, Direction, Scroll, Type
from uivenus.actions.syntax import ParseError
from uivenus.records import Step, Trajectory
from uivenus.store import episode_dirs, read_episode
from uivenus.verify.step import load_screens

__all__ = ["draw_action", "episode_view", "plot_accuracy", "read_run_view", "render", "write_misses_page",
           "write_report", "write_run_view", "write_safety_report"]

#: Largest screenshot drawn into a page (display pixels); bigger screens are scaled down to fit.
SHOT_SIZE = (640, 720)
THUMB_SIZE = (220, 260)
#: Misses on the grounding page are scaled down to at most this width.
MISS_WIDTH = 960
#: Trace verdict of an episode nobody has verified yet (`uivenus verify RUN_DIR` writes one).
UNVERIFIED = "unverified"

#: The colour family (a CSS class) of each status word a page shows: outcomes, verdicts, step labels, guard.
TONES: Mapping[str, str] = {
    **dict.fromkeys(("finished", "answered", "success", "correct", "passed", "hit"), "good"),
    "failure": "bad",
    **dict.fromkeys(("called_user", "partial", "ineffective", "allowed", "declined", "blocked"), "warn"),
    **dict.fromkeys(("max_steps", "error", "failed", "incorrect", "miss", "injection"), "bad"),
    **dict.fromkeys(("exploratory", "ended_by_env", "confirmed"), "info"),
}

_ACTION = (225, 29, 72)  # the action drawn on a screenshot
_HELD = (217, 119, 6)  # an action the guard stopped or that did not run
_TARGET = (22, 163, 74)
_MISS = (220, 38, 38)

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("uivenus.reports", "templates"), autoescape=True,
                          undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
_ENV.filters["tone"] = lambda word: TONES.get(str(word), "muted")
_ENV.filters["words"] = lambda word: str(word).replace("_", " ")


def render(template: str, **context: Any) -> str:
    """The page `template` (a name under `templates/`) filled with `context`; every value is HTML-escaped."""
    return _ENV.get_template(template).render(version=__version__, **context)


def _write(path: Path | str, template: str, **context: Any) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(template, **context), encoding="utf-8")
    return out


# --- images -------------------------------------------------------------------------------------

def _fit(image: Image.Image, size: tuple[int, int]) -> tuple[Image.Image, float]:
    """`image` in RGB, scaled down (never up) to fit `size`, and the scale used."""
    scale = min(1.0, size[0] / image.width, size[1] / image.height)
    image = image.convert("RGB")
    if scale < 1:
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))),
                             Image.Resampling.LANCZOS)
    return image, scale


def _data_uri(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=85)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _ring(draw: ImageDraw.ImageDraw, point: Sequence[float], colour: tuple[int, int, int], radius: float) -> None:
    """A ring with a cross through it and a faint fill: where a point lands."""
    x, y = point
    draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=(*colour, 60), outline=(*colour, 255),
                 width=3)
    draw.line([x - radius - 4, y, x + radius + 4, y], fill=(*colour, 255), width=2)
    draw.line([x, y - radius - 4, x, y + radius + 4], fill=(*colour, 255), width=2)


def _arrow(draw: ImageDraw.ImageDraw, start: Sequence[float], end: Sequence[float],
           colour: tuple[int, int, int]) -> None:
    """A line from `start` to `end` with an arrowhead at `end`."""
    (x0, y0), (x1, y1) = start, end
    draw.line([x0, y0, x1, y1], fill=(*colour, 255), width=4)
    angle = math.atan2(y1 - y0, x1 - x0)
    head = [(x1 - 16 * math.cos(angle + turn), y1 - 16 * math.sin(angle + turn)) for turn in (0.45, -0.45)]
    draw.polygon([(x1, y1), *head], fill=(*colour, 255))
    draw.ellipse([x0 - 5, y0 - 5, x0 + 5, y0 + 5], fill=(*colour, 255))


def _label(draw: ImageDraw.ImageDraw, at: Sequence[float], text: str, colour: tuple[int, int, int],
           bounds: tuple[int, int]) -> None:
    """`text` in white on a `colour` tag whose top-left is near `at`, kept inside `bounds`."""
    font = _font(15)
    text = text if len(text) <= 60 else text[:59] + "…"
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    width, height = right - left + 12, bottom - top + 8
    x = min(max(at[0], 2), max(bounds[0] - width - 2, 2))
    y = min(max(at[1], 2), max(bounds[1] - height - 2, 2))
    draw.rounded_rectangle([x, y, x + width, y + height], radius=5, fill=(*colour, 230))
    draw.text((x + 6 - left, y + 4 - top), text, fill=(255, 255, 255, 255), font=font)


_SCROLL_ARROW = {Direction.UP: (0, -1), Direction.DOWN: (0, 1), Direction.LEFT: (-1, 0), Direction.RIGHT: (1, 0)}


def _draw_one(draw: ImageDraw.ImageDraw, action: Action, scale: float, anchor: Sequence[float] | None,
              colour: tuple[int, int, int], bounds: tuple[int, int]) -> None:
    points = {name: (x * scale, y * scale) for name, (x, y) in iter_points(action)}
    if "start" in points and "end" in points:  # a drag or swipe: its path
        _arrow(draw, points["start"], points["end"], colour)
    else:
        for point in points.values():
            _ring(draw, point, colour, 11)
        if isinstance(action, Scroll) and "point" in points:
            (x, y), (dx, dy) = points["point"], _SCROLL_ARROW[action.direction]
            _arrow(draw, (x + 16 * dx, y + 16 * dy), (x + 70 * dx, y + 70 * dy), colour)
    if isinstance(action, Type):
        text = f'typed "{action.content}"'
    elif not points:
        text = format_action(action)
    else:
        return
    where = (anchor[0] + 14, anchor[1] + 14) if anchor is not None else (8, 8)
    _label(draw, where, text, colour, bounds)


def draw_action(image: Image.Image, action: Action | None, scale: float = 1.0, *,
                anchor: Sequence[float] | None = None, held: bool = False) -> Image.Image:
    """`image` (RGB, already at display size) with `action` drawn on it; `scale` maps the action's screen pixels
    onto the image. Points are rings, drags and swipes arrows, scrolls arrows in their direction; typed text and
    point-less actions are labels, placed at `anchor` (screen pixels: where the last point landed) when given.
    A `held` action (stopped by the guard, or not executed) is drawn in amber instead of red."""
    if action is None:
        return image
    layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    shown_anchor = (anchor[0] * scale, anchor[1] * scale) if anchor is not None else None
    inner = action.actions if isinstance(action, ActionSequence) else (action,)
    for one in inner:
        _draw_one(draw, one, scale, shown_anchor, _HELD if held else _ACTION, image.size)
    return Image.alpha_composite(image.convert("RGBA"), layer).convert("RGB")


def _last_point(action: Action | None) -> tuple[float, float] | None:
    points = [point for _, point in iter_points(action)] if action is not None else []
    return tuple(points[-1]) if points else None


# --- episodes: what a page shows of one recorded episode ------------------------------------------

@dataclass
class StepView:
    """One step as a page shows it."""

    index: int
    image: str | None
    action: str | None
    think: str | None
    response: str
    error: str | None
    executed: bool
    guard: Mapping[str, Any] | None
    injection: Sequence[Mapping[str, Any]]
    reasks: Sequence[str]
    feedback: str | None
    label: str | None
    label_reason: str | None
    key: bool


@dataclass
class EpisodeView:
    """One episode as a page shows it: the header facts, the verdicts and the steps."""

    run: str
    name: str
    task_id: str
    instruction: str
    outcome: str
    verdict: str
    trace: Mapping[str, Any] | None
    checkers: Sequence[tuple[str, bool, str]]
    answer: str | None
    policy: str | None
    steps: Sequence[StepView]
    key_shots: Sequence[tuple[int, str]]
    notes: Sequence[str] = field(default_factory=tuple)


def _think(response: str | None) -> str | None:
    if not response:
        return None
    try:
        return parse_response(response, lenient=True).think
    except ParseError:
        return None


def _step_view(step: Step, image: Image.Image | None, anchor: tuple[float, float] | None, key: bool) -> StepView:
    info = step.info
    guard = info.get("guard")
    held = not step.executed or (guard is not None and not guard.get("runs", True))
    uri = None
    if image is not None:
        fitted, scale = _fit(image, SHOT_SIZE)
        uri = _data_uri(draw_action(fitted, step.action, scale, anchor=anchor, held=held))
    attempts = info.get("attempts") or ()
    return StepView(
        index=step.index, image=uri, action=format_action(step.action) if step.action is not None else None,
        think=_think(step.response), response=step.response or "", error=step.error, executed=step.executed,
        guard=guard, injection=info.get("injection") or (),
        reasks=[str(a.get("error")) for a in attempts[:-1] if a.get("error")],
        feedback=info.get("feedback"), label=step.labels.get("step_label"),
        label_reason=step.labels.get("step_reason"), key=key)


def episode_view(directory: Path, trajectory: Trajectory, trace: Mapping[str, Any] | None = None) -> EpisodeView:
    """What a page shows of the episode stored at `directory`; `trace` is its trace verdict (default: the one
    `uivenus verify` stored in its verdicts)."""
    trace = trace if trace is not None else trajectory.verdicts.get("trace")
    kept = set(trace.get("kept", ())) if trace else set()
    screens = load_screens(trajectory, directory)
    steps, anchor = [], None
    for step, image in zip(trajectory.steps, screens):
        steps.append(_step_view(step, image, anchor, step.index in kept))
        anchor = _last_point(step.action) or anchor
    key_shots = [(i, _data_uri(_fit(screens[i], THUMB_SIZE)[0])) for i in sorted(kept)
                 if 0 <= i < len(screens) and screens[i] is not None]
    checkers = [(kind, bool(v["passed"]), str(v.get("reason", ""))) for kind, v in trajectory.verdicts.items()
                if isinstance(v, Mapping) and isinstance(v.get("passed"), bool)]
    meta = trajectory.metadata
    notes = [*meta.get("warnings", ()), *([f"error: {meta['error']}"] if meta.get("error") else [])]
    return EpisodeView(
        run=directory.parent.name, name=directory.name, task_id=trajectory.task.id,
        instruction=trajectory.task.instruction, outcome=trajectory.outcome.value,
        verdict=str(trace.get("outcome", UNVERIFIED)) if trace else UNVERIFIED, trace=trace, checkers=checkers,
        answer=trajectory.answer, policy=meta.get("policy"), steps=steps, key_shots=key_shots, notes=notes)


# --- the demo's page ------------------------------------------------------------------------------

def _grounding_card(record: Mapping[str, Any]) -> dict[str, Any]:
    """A grounding item drawn: the target (green) and the predicted point (green on a hit, red on a miss)."""
    with Image.open(record["image"]) as opened:
        image, scale = _fit(opened, (500, 500))
    layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    _draw_target(draw, record.get("target") or {}, scale)
    hit = bool(record.get("hit"))
    if record.get("point"):
        _ring(draw, [v * scale for v in record["point"]], _TARGET if hit else _MISS, 6)
    picture = Image.alpha_composite(image.convert("RGBA"), layer).convert("RGB")
    return {"image": _data_uri(picture), "hit": hit, "instruction": str(record["instruction"]),
            "response": str(record.get("response", ""))}


def write_report(path: Path | str, *, title: str, grounding: Mapping[str, Any] | None = None,
                 trajectory: Trajectory | None = None, episode_dir: Path | None = None,
                 verification: Mapping[str, Any] | None = None, notes: Sequence[str] = ()) -> Path:
    """Write the demo's page: `grounding` is an `evaluate_grounding` result, `trajectory` a recorded episode
    (screens under `episode_dir`), `verification` its verdicts (`trace`: a trace result's dict, `checker`: the
    checkers' verdicts); returns the path."""
    episode = None
    if trajectory is not None:
        trace = (verification or {}).get("trace")
        episode = episode_view(Path(episode_dir or "."), trajectory, trace)
    checkers = [(kind, bool(v["passed"]), str(v.get("reason", "")))
                for kind, v in ((verification or {}).get("checker") or {}).items()
                if isinstance(v, Mapping) and isinstance(v.get("passed"), bool)]
    cards = [_grounding_card(record) for record in (grounding or {}).get("items", [])]
    return _write(path, "demo.html.j2", title=title, notes=list(notes), grounding=grounding, cards=cards,
                  episode=episode, verification=verification, checkers=checkers)


# --- grounding evaluation -------------------------------------------------------------------------

def plot_accuracy(results: Mapping[str, Any], path: Path, title: str) -> Path:
    """One bar chart per breakdown dimension (accuracy by category, n under each bar) on a 0–1 axis."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    tables = results["breakdown"]
    fig, axes = plt.subplots(1, len(tables), figsize=(4.2 * len(tables), 3.8), squeeze=False)
    for ax, (dimension, table) in zip(axes[0], tables.items()):
        names = list(table)
        values = [table[name]["accuracy"] for name in names]
        bars = ax.bar(names, values, color="#3b82e0")
        for bar, name in zip(bars, names):
            ax.annotate(f"{table[name]['accuracy']:.2f}\nn={table[name]['n']}",
                        (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom",
                        fontsize=7, xytext=(0, 2), textcoords="offset points")
        ax.set_ylim(0, 1.2)
        ax.set_title(dimension)
        ax.tick_params(axis="x", labelrotation=35, labelsize=8)
    axes[0][0].set_ylabel("accuracy")
    fig.suptitle(f"{title} — overall {results['accuracy']:.3f} (n={results['n']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _draw_target(draw: ImageDraw.ImageDraw, target: Mapping[str, Any], scale: float) -> None:
    if target.get("kind") == "box":
        draw.rectangle([v * scale for v in target["box"]], outline=(*_TARGET, 255), width=3)
    elif target.get("kind") == "polygon":
        draw.polygon([(x * scale, y * scale) for x, y in target["points"]], outline=(*_TARGET, 255), width=3)


def _draw_miss(record: Mapping[str, Any], path: Path) -> None:
    """The screenshot with the target (green) and the predicted point (red), scaled to the page width."""
    with Image.open(record["image"]) as source:
        image, scale = _fit(source, (MISS_WIDTH, source.height))
    layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    _draw_target(draw, record["target"], scale)
    if record["point"] is not None:
        _ring(draw, [v * scale for v in record["point"]], _MISS, 9)
    Image.alpha_composite(image.convert("RGBA"), layer).convert("RGB").save(path)


def _answer_text(record: Mapping[str, Any]) -> str:
    if record["error"]:
        return f"unusable reply — {record['error']}"
    if record["refused"]:
        return "refused ([-1,-1])"
    return f"pointed at {tuple(record['point'])} px"


def write_misses_page(results: Mapping[str, Any], path: Path, worst: int = 30, plot: Path | None = None) -> Path:
    """The grounding page at `path`: accuracy, the breakdown tables, the `plot` (a file beside the page) and the
    `worst` misses drawn on their screenshots (written into the folder named after the page), points farthest
    from their target first, then answers of the wrong kind."""
    records = results["items"]
    misses = sorted((r for r in records if not r["hit"]),
                    key=lambda r: (r["miss_distance"] is None, -(r["miss_distance"] or 0.0)))[:max(worst, 0)]
    folder = path.parent / path.stem
    folder.mkdir(parents=True, exist_ok=True)
    cards = []
    for rank, record in enumerate(misses, 1):
        name = f"{rank:03d}.png"
        _draw_miss(record, folder / name)
        distance, kind = record["miss_distance"], record["target"]["kind"]
        cards.append({
            "rank": rank, "record": record, "src": f"{folder.name}/{name}", "answer": _answer_text(record),
            "expected": "a refusal" if kind == "refusal" else f"the green {kind}",
            "distance": "wrong kind of answer" if distance is None else
            f"missed by {distance:.3f} of the screen diagonal"})
    return _write(path, "grounding.html.j2", title=f"Grounding · {results.get('policy', '')}", results=results,
                  cards=cards, n_misses=sum(not r["hit"] for r in records),
                  plot=plot.name if plot is not None else None)


# --- the run viewer -------------------------------------------------------------------------------

@dataclass
class RunView:
    """One run of the store as the viewer shows it."""

    name: str
    path: str
    episodes: Sequence[EpisodeView]

    @property
    def policies(self) -> list[str]:
        return sorted({e.policy for e in self.episodes if e.policy})

    @property
    def outcomes(self) -> Counter[str]:
        return Counter(e.outcome for e in self.episodes)

    @property
    def verdicts(self) -> Counter[str]:
        return Counter(e.verdict for e in self.episodes)


def read_run_view(path: Path | str) -> RunView:
    """Every episode of the run (or the one episode) at `path`, ready for the viewer."""
    path = Path(path)
    directories = episode_dirs(path)
    name = path.name if len(directories) != 1 or directories[0] != path else f"{path.parent.name}/{path.name}"
    return RunView(name=name, path=str(path), episodes=[episode_view(d, read_episode(d)) for d in directories])


def _rows(runs: Sequence[RunView]) -> list[tuple[str, list[EpisodeView | None]]]:
    """One row per task (in the order the runs first show them) holding each run's episode of it or None; the
    n-th episode of a task in one run stands beside the n-th of the same task in the other."""
    order: dict[tuple[str, int], None] = {}
    keyed: list[dict[tuple[str, int], EpisodeView]] = []
    for run in runs:
        seen: Counter[str] = Counter()
        mine = {}
        for episode in run.episodes:
            key = (episode.task_id, seen[episode.task_id])
            seen[episode.task_id] += 1
            mine[key] = episode
            order.setdefault(key, None)
        keyed.append(mine)
    return [(task if n == 0 else f"{task} #{n + 1}", [mine.get((task, n)) for mine in keyed]) for task, n in order]


def _options(counters: Iterable[Counter[str]]) -> list[tuple[str, int]]:
    total: Counter[str] = Counter()
    for counter in counters:
        total.update(counter)
    return sorted(total.items())


def write_run_view(out: Path | str, run: Path | str, compare: Path | str | None = None) -> Path:
    """Write the viewer page for the run at `run` (or one episode directory) to `out`; with `compare`, that
    run's episodes stand beside this run's, matched by task id. Raises `StoreError` for what is not a run."""
    runs = [read_run_view(run)] + ([read_run_view(compare)] if compare is not None else [])
    title = " vs ".join(r.name for r in runs)
    return _write(out, "runs.html.j2", title=title, runs=runs, rows=_rows(runs),
                  outcomes=_options(r.outcomes for r in runs), verdicts=_options(r.verdicts for r in runs))


def write_safety_report(path: Path | str, summary: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> Path:
    """The safety evaluation's page: ASR by category × guard mode (bars), by surface, the false alarms with the
    guard's reasons, and every case that did harm."""
    categories = sorted({c for table in summary["asr_by_category"].values() for c in table})
    surfaces = sorted({s for table in summary["asr_by_surface"].values() for s in table})
    return _write(path, "safety.html.j2", title=f"Safety · {summary['policy']}", summary=summary,
                  categories=categories, surfaces=surfaces, results=results)
