"""Grounding samples per second against the raw rate of the same Chromium rendering the same pages.

The baseline renders exactly the pages the generator composes (same HTML, same viewport sizes, same
Chromium and flags): `set_viewport_size` + `set_content` + `screenshot`, nothing else. The generator also
composes the pages, measures every candidate's box, writes instructions, and writes PNGs and JSON to disk.
Both sides launch their browsers inside the timed region, with 1 and 2 browser workers, alternating
for `rounds` rounds; each side's best round counts (other load on the machine only ever slows a round).
Target: ratio (generator rate / raw rate) >= 0.5.

    .venv/bin/python bench/synth.py [--n 40] [--rounds 2] [--seed 0] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from typing import Any


def raw_rate(pages: list[tuple[str, tuple[int, int]]], workers: int) -> float:
    """Pages per second for bare render + screenshot of `pages`, split over `workers` browsers."""
    from playwright.sync_api import sync_playwright

    from uivenus.envs.browser_config import BrowserConfig
    from uivenus.synth.grounding.render import RENDER_ARGS

    executable = BrowserConfig().executable
    shares = [pages[k::workers] for k in range(workers)]

    def work(share: list[tuple[str, tuple[int, int]]]) -> None:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=executable, headless=True, args=list(RENDER_ARGS))
            page = browser.new_page(device_scale_factor=1)
            size = None
            for html, (width, height) in share:
                if size != (width, height):  # as the renderer does: resize only when the size changes
                    page.set_viewport_size({"width": width, "height": height})
                    size = (width, height)
                page.set_content(html, wait_until="load")
                page.screenshot(type="png")
            browser.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=work, args=(share,)) for share in shares]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(pages) / (time.perf_counter() - started)


def synth_rate(n: int, seed: int, workers: int) -> float:
    """Samples per second of generate_grounding writing a dataset to a temporary folder."""
    from uivenus.synth.grounding import generate_grounding

    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        generate_grounding(n, out, seed=seed, workers=workers, progress=False)
        return n / (time.perf_counter() - started)


def run(n: int = 40, seed: int = 0, workers: tuple[int, ...] = (1, 2), rounds: int = 2) -> list[dict[str, Any]]:
    from uivenus.synth.grounding import compose_screen

    pages = [(screen.html, screen.size) for screen in (compose_screen(seed, i) for i in range(n))]
    results = []
    for count in workers:
        raw = synth = 0.0
        for _ in range(rounds):
            raw = max(raw, raw_rate(pages, count))
            synth = max(synth, synth_rate(n, seed, count))
        results.append({"workers": count, "n": n, "synth_per_s": synth, "raw_per_s": raw, "ratio": synth / raw})
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="screens per measurement")
    parser.add_argument("--rounds", type=int, default=2, help="alternating raw/synth rounds; best of each counts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", default="1,2", help="comma-separated browser worker counts")
    args = parser.parse_args()
    counts = tuple(int(w) for w in args.workers.split(","))
    print(f"grounding synth vs raw Chromium render+screenshot of the same {args.n} pages (seed {args.seed})")
    for r in run(args.n, args.seed, counts, args.rounds):
        print(
            f"workers={r['workers']}: synth {r['synth_per_s']:.2f} samples/s, raw {r['raw_per_s']:.2f} pages/s, "
            f"ratio {r['ratio']:.2f} (target >= 0.5)"
        )


if __name__ == "__main__":
    main()
