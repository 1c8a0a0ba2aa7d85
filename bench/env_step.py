"""Step latency of our environments against the raw tools they wrap, measured in the same run.

Browser: BrowserEnv.step(Click) + screenshot vs raw Playwright doing the same (target ratio <= 1.10).
Desktop: DesktopEnv.step(Click) + screenshot vs raw XTEST + MIT-SHM (target ratio <= 1.15).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import env_step_browser  # noqa: E402
import env_step_desktop  # noqa: E402
from targets import against  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=50, help="steps per side")
    args = parser.parse_args()
    browser = env_step_browser.run(args.n)
    print(f"browser: env {browser['env_s'] * 1000:.1f} ms, raw Playwright {browser['raw_s'] * 1000:.1f} ms, "
          f"ratio {against(browser['ratio'], env_step_browser.TARGET_RATIO)}")
    desktop = env_step_desktop.run(args.n)
    print(f"desktop: env {desktop['env_median_s'] * 1000:.1f} ms, "
          f"raw XTEST+mss {desktop['raw_median_s'] * 1000:.1f} ms, "
          f"ratio {against(desktop['ratio'], env_step_desktop.TARGET_RATIO)}")


if __name__ == "__main__":
    main()
