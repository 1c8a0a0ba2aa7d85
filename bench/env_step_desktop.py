"""How long `DesktopEnv.step(Click)` takes, against raw XTEST + MIT-SHM doing the same on the same display.

Run: `.venv/bin/python bench/env_step_desktop.py [-n 50]`. Both sides click the press pad of the event-logger
test app (each press redraws its counter) and return an RGB screenshot that shows the click's effect. The
baseline is the least any harness must do for that: grab, fake the click with python-xlib, grab again until
the frame differs from the one before the click, convert to a PIL image. The env adds its checks, the
round trip that confirms nothing was drawn after the changed frame and the focused-window lookup, and saves the
grabs the X server's DAMAGE reports make needless (a screen nothing has redrawn since the last grab); the ratio
says what that nets. The raw click between env clicks redraws the pad, so every env step must grab its "before"
(its reuse of the last settled frame never applies here). `env_step_desktop_trace.py` times each X call of a step.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import mss
from PIL import Image
from Xlib import X
from Xlib.display import Display
from Xlib.ext import xtest

from uivenus.actions.space import Click
from uivenus.envs.desktop import DesktopEnv
from uivenus.records import TaskSpec

sys.path.insert(0, str(Path(__file__).parent))
from targets import against  # noqa: E402

#: Issue 17: DesktopEnv.step may take at most this multiple of raw XTEST + MIT-SHM's click + screenshot.
TARGET_RATIO = 1.15

APP = Path(__file__).resolve().parents[1] / "tests" / "envs" / "desktop_apps" / "event_logger.py"


def _pad_points(log_path: Path) -> list[tuple[int, int]]:
    """Two points on the pad, far enough apart that the app never merges presses into a double click."""
    layout = [e for e in map(json.loads, log_path.read_text().splitlines()) if e["event"] == "layout"][-1]
    x, y, w, h = layout["pad"]
    return [(x + w // 4, y + h // 2), (x + 3 * w // 4, y + h // 2)]


def _raw_click(display: Display, sct: mss.MSS, point: tuple[int, int]) -> float:
    monitor = sct.monitors[0]
    started = time.perf_counter()
    before = sct.grab(monitor).raw
    xtest.fake_input(display, X.MotionNotify, x=point[0], y=point[1])
    xtest.fake_input(display, X.ButtonPress, 1)
    xtest.fake_input(display, X.ButtonRelease, 1)
    display.sync()
    deadline = started + 1.0
    shot = sct.grab(monitor)
    while shot.raw == before and time.perf_counter() < deadline:
        shot = sct.grab(monitor)
    Image.frombytes("RGB", shot.size, shot.raw, "raw", "BGRX")
    return time.perf_counter() - started


def _env_click(env: DesktopEnv, point: tuple[int, int]) -> float:
    started = time.perf_counter()
    result = env.step(Click(point=point))
    elapsed = time.perf_counter() - started
    assert result.executed, result.error
    return elapsed


def run(n: int = 50) -> dict[str, float]:
    """Median seconds per click+screenshot for the env and the raw baseline (interleaved), and their ratio."""
    with tempfile.TemporaryDirectory() as tmp, DesktopEnv() as env:
        log_path = Path(tmp) / "events.jsonl"
        log_path.touch()
        env.reset(TaskSpec(
            id="bench-desktop", instruction="click the pad", platform="desktop",
            setup={"launch": [[sys.executable, str(APP), str(log_path)]]},
        ))
        points = _pad_points(log_path)
        display = Display(env.display)
        sct = mss.MSS(display=env.display)
        try:
            for i in range(3):  # warm both paths
                _raw_click(display, sct, points[i % 2])
                _env_click(env, points[i % 2])
            raw, ours = [], []
            for i in range(n):
                raw.append(_raw_click(display, sct, points[i % 2]))
                ours.append(_env_click(env, points[(i + 1) % 2]))
        finally:
            sct.close()
            display.close()
    raw_median, env_median = statistics.median(raw), statistics.median(ours)
    return {"n": n, "raw_median_s": raw_median, "env_median_s": env_median, "ratio": env_median / raw_median}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=50, help="clicks per side")
    args = parser.parse_args()
    result = run(args.n)
    print(f"raw XTEST + MIT-SHM click+screenshot: {result['raw_median_s'] * 1000:7.2f} ms (median of {args.n})")
    print(f"DesktopEnv.step(Click)              : {result['env_median_s'] * 1000:7.2f} ms (median of {args.n})")
    print(f"ratio env/raw                        : {against(result['ratio'], TARGET_RATIO)}")


if __name__ == "__main__":
    main()
