"""Training curves from a stage's metrics JSONL (what `Trainer` writes), one panel per metric, as a PNG."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from uivenus.records import read_jsonl

__all__ = ["PlotError", "plot_metrics", "read_metrics"]

#: Metrics shown first when present; the rest follow alphabetically.
PREFERRED = ("loss", "eval/loss", "reward", "reverse_kl", "grad_norm", "lr")


class PlotError(ValueError):
    """The metrics file is missing or holds no numeric series; the message names the file."""


def read_metrics(path: Path | str) -> dict[str, tuple[list[int], list[float]]]:
    """Each metric's (steps, values) from a JSONL file of `{"step": N, "name": value, ...}` records."""
    file = Path(path)
    if not file.is_file():
        raise PlotError(f"{file} does not exist; train a stage first (it writes metrics.jsonl into its out_dir)")
    series: dict[str, tuple[list[int], list[float]]] = {}
    for _, record in read_jsonl(file, PlotError):
        step = record.get("step")
        for name, value in record.items():
            if name != "step" and isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and math.isfinite(value) and isinstance(step, int):
                steps, values = series.setdefault(name, ([], []))
                steps.append(step)
                values.append(float(value))
    if not series:
        raise PlotError(f"{file} holds no numeric metrics")
    return series


def plot_metrics(path: Path | str, out: Path | str, title: str = "", metrics: Sequence[str] | None = None) -> Path:
    """Plot `metrics` (default: every series, preferred ones first, at most 12) against the step; returns the PNG."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    series = read_metrics(path)
    names = list(metrics) if metrics else (
        [m for m in PREFERRED if m in series] + sorted(m for m in series if m not in PREFERRED))[:12]
    missing = [m for m in names if m not in series]
    if missing:
        raise PlotError(f"{path} has no metric(s) {missing}; it has {sorted(series)}")
    columns = min(3, len(names))
    rows = math.ceil(len(names) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 2.8 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        steps, values = series[name]
        ax.plot(steps, values, marker="." if len(steps) < 40 else None, linewidth=1.2)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("step", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
