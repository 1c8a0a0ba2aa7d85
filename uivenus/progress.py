"""Progress for long work: a live bar on a terminal, a quiet line now and then anywhere else.

    for item in track(items, label="grounding", unit="items"):    # or, when the work is not one loop:
        ...
    with Tracker("verifier build", total=40, unit="episodes") as progress:
        progress.advance(1, note="sandbox settings/wifi_off")

On a terminal (rich's `Console.is_terminal`, so FORCE_TERMINAL and friends apply) it draws a rich bar with the
items done, the rate and the time left, and prints one summary line when it closes. Written to a file or a pipe
(a log, CI, `… 2>&1 | tee`) it prints a plain line every `every_s` seconds and every tenth of the total, then a
final one, e.g. `grounding: 120/500 items, 3.1/s, ~2 min left`. `show=False` prints nothing at all (library
callers, tests). Output goes to standard error unless a console is given, so stdout stays the command's result.

It sits beside `records` and `files` at the bottom of the layers (it imports rich, nothing of ours), so evals,
tasks and the CLI can all use it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import TypeVar

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.text import Text

__all__ = ["Tracker", "format_duration", "track"]

T = TypeVar("T")


def format_duration(seconds: float) -> str:
    """`42 s`, `3 min`, `1 h 20 min`: coarse on purpose, for estimates."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min"


class _RateColumn(ProgressColumn):
    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        rate = task.completed / elapsed if elapsed > 0 else 0.0
        return Text(f"{rate:.1f} {self.unit}/s", style="progress.data.speed")


class Tracker:
    """Counts work done toward `total` (None: unknown, no ETA) and shows it; use as a context manager."""

    def __init__(self, label: str, total: int | None = None, *, unit: str = "items", console: Console | None = None,
                 every_s: float = 10.0, show: bool = True) -> None:
        self.label, self.total, self.unit, self.every_s, self.show = label, total, unit, every_s, show
        self.console = console if console is not None else Console(stderr=True)
        self.done = 0
        self.note = ""
        self._start = self._last_line = 0.0
        self._last_step = 0
        self._bar: Progress | None = None
        self._task = None

    # -- the context ---------------------------------------------------------------------------

    def __enter__(self) -> Tracker:
        self._start = self._last_line = time.monotonic()
        if self.show and self.console.is_terminal:
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 _RateColumn(self.unit), TimeElapsedColumn(), TimeRemainingColumn(),
                                 console=self.console, transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
        if self.show:
            self.console.print(self.line(final=True, failed=kind is not None), highlight=False, markup=False,
                               soft_wrap=True)

    # -- counting ------------------------------------------------------------------------------

    def advance(self, n: int = 1, note: str | None = None) -> None:
        """`n` more done; `note` (optional) names what is being worked on now."""
        self.done += n
        if note is not None:
            self.note = note
        if not self.show:
            return
        if self._bar is not None and self._task is not None:
            description = f"{self.label} · {self.note}" if self.note else self.label
            self._bar.update(self._task, completed=self.done, description=description)
            return
        now = time.monotonic()
        step = self._step()
        if now - self._last_line >= self.every_s or step > self._last_step:
            self._last_line, self._last_step = now, step
            if self.total is None or self.done < self.total:  # the final line comes at the close
                self.console.print(self.line(), highlight=False, markup=False, soft_wrap=True)

    def _step(self) -> int:
        """Which tenth of the total is done (0 without a total)."""
        return self.done * 10 // self.total if self.total else 0

    def line(self, *, final: bool = False, failed: bool = False) -> str:
        """`grounding: 120/500 items, 3.1/s, ~2 min left` (`… done in 3 min` at the close)."""
        elapsed = time.monotonic() - self._start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        count = f"{self.done}/{self.total}" if self.total is not None else f"{self.done}"
        text = f"{self.label}: {count} {self.unit}, {rate:.1f}/s"
        if final:
            return text + (f", stopped after {format_duration(elapsed)}" if failed
                           else f", done in {format_duration(elapsed)}")
        if self.total is not None and rate > 0:
            text += f", ~{format_duration((self.total - self.done) / rate)} left"
        return text + (f" ({self.note})" if self.note else "")


def track(iterable: Iterable[T], total: int | None = None, label: str = "working", *, unit: str = "items",
          console: Console | None = None, every_s: float = 10.0, show: bool = True) -> Iterator[T]:
    """Yield from `iterable`, counting each item done once the loop body has finished with it."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    with Tracker(label, total, unit=unit, console=console, every_s=every_s, show=show) as tracker:
        for item in iterable:
            yield item
            tracker.advance()
