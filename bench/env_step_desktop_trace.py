"""Where a `DesktopEnv.step(Click)` spends its time: every X round trip, grab and wait of the step, timed.

Run: `PYTHONPATH=. .venv/bin/python bench/env_step_desktop_trace.py [-n 100]`. Same app and interleaving as
`env_step_desktop.py` (a raw click between env clicks, so each env step finds the screen redrawn by someone else).
The env's X calls are wrapped with `time.perf_counter` (each wrapper calls the real method); steps are
grouped by the sequence of calls they made ("path"), with the median milliseconds of each call in that order.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mss
from Xlib.display import Display

from uivenus.actions.space import Click
from uivenus.envs import x11
from uivenus.envs.desktop import DesktopEnv
from uivenus.records import TaskSpec

sys.path.insert(0, str(Path(__file__).parent))
from env_step_desktop import APP, _pad_points, _raw_click  # noqa: E402

#: The calls timed: round trips (`sync`), waits for the server's reports (`_wait_events`, only when they slept),
#: MIT-SHM grabs, the focused-window lookup and the frame's conversion to an image.
TIMED = ((x11.XConnection, "sync"), (x11.XConnection, "_wait_events"), (x11.XConnection, "focused_title"),
         (x11.Screen, "grab"), (x11.Screen, "image"))
NAMES = {"sync": "round trip", "_wait_events": "wait for drawing", "focused_title": "focused window",
         "grab": "grab", "image": "to image"}


def _timed(calls: list[tuple[str, float]], name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            elapsed = time.perf_counter() - started
            if name != "_wait_events" or elapsed >= 1e-4:  # a wait that found its answer already there is no wait
                calls.append((NAMES[name], elapsed))
    return timed


def run(n: int) -> None:
    calls: list[tuple[str, float]] = []
    for cls, name in TIMED:
        setattr(cls, name, _timed(calls, name, getattr(cls, name)))
    with tempfile.TemporaryDirectory() as tmp, DesktopEnv() as env:
        log_path = Path(tmp) / "events.jsonl"
        log_path.touch()
        env.reset(TaskSpec(id="trace-desktop", instruction="click the pad", platform="desktop",
                           setup={"launch": [[sys.executable, str(APP), str(log_path)]]}))
        points = _pad_points(log_path)
        display, sct = Display(env.display), mss.MSS(display=env.display)
        try:
            for i in range(3):
                _raw_click(display, sct, points[i % 2])
                env.step(Click(point=points[i % 2]))
            raw, ours, paths = [], [], defaultdict(list)
            for i in range(n):
                raw.append(_raw_click(display, sct, points[i % 2]))
                calls.clear()
                started = time.perf_counter()
                env.step(Click(point=points[(i + 1) % 2]))
                ours.append(time.perf_counter() - started)
                paths[tuple(name for name, _ in calls)].append([s for _, s in calls] + [ours[-1]])
        finally:
            sct.close()
            display.close()
    print(f"raw click+screenshot {statistics.median(raw) * 1000:.2f} ms, env step {statistics.median(ours) * 1000:.2f} "
          f"ms (medians of {n}), ratio {statistics.median(ours) / statistics.median(raw):.3f}")
    for path, count in Counter({p: len(v) for p, v in paths.items()}).most_common(5):
        columns = [statistics.median(c) * 1000 for c in zip(*paths[path])]
        print(f"{count:4d} steps, {columns[-1]:.2f} ms: " + ", ".join(
            f"{name} {ms:.2f}" for name, ms in zip(path, columns)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=100, help="clicks per side")
    run(parser.parse_args().n)


if __name__ == "__main__":
    main()
