"""Render composed screens in headless Chromium and read every candidate's real box from the DOM.

One Chromium and one page serve every screen; Playwright lives on a thread the renderer owns, so callers
may hold their own sync Playwright and several renderers can run side by side (one per worker). After
layout, one script measures each `[data-gid]` element and keeps it only if it is rendered, at least
`min_side` px each way, wholly inside the viewport, not clipped by a scrolling ancestor, holds no other
candidate, and `elementFromPoint` at its centre and four inner points lands on it or inside it. The same
script lists every text and icon drawn in the viewport (occluded or not), which instructions use to
prove uniqueness and absence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Self

from uivenus.envs.browser_config import BrowserConfig
from uivenus.envs.chromium import CHROMIUM_ARGS
from uivenus.envs.chromium import sandbox_blocker
from uivenus.synth import SynthError

Box = tuple[int, int, int, int]
#: Every renderer's Chromium flags: the envs' flags, plus unhinted fonts and no scrollbars (stable pixels).
RENDER_ARGS = (*CHROMIUM_ARGS, "--font-render-hinting=none", "--hide-scrollbars")

_JS_MEASURE = """async (minSide) => {
  await document.fonts.ready;
  const W = innerWidth, H = innerHeight;
  const POINTS = [[.5, .5], [.2, .2], [.8, .2], [.2, .8], [.8, .8]];
  const inView = (r) => r.width > 0 && r.height > 0 && r.right > 0 && r.bottom > 0 && r.left < W && r.top < H;
  const shown = (el) => el.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const clips = new Map();  // element -> its clip rect, or null when it does not clip
  const clipOf = (a) => {
    if (!clips.has(a)) {
      const s = getComputedStyle(a);
      clips.set(a, s.overflowX === "visible" && s.overflowY === "visible" ? null : a.getBoundingClientRect());
    }
    return clips.get(a);
  };
  const clipped = (el, r) => {
    for (let a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
      const c = clipOf(a);
      if (c && (r.left < c.left - .5 || r.top < c.top - .5 || r.right > c.right + .5 || r.bottom > c.bottom + .5))
        return true;
    }
    return false;
  };
  const hit = (el, r) => POINTS.every(([fx, fy]) => {
    const h = document.elementFromPoint(r.left + fx * r.width, r.top + fy * r.height);
    return h !== null && el.contains(h);
  });
  const elements = {};
  for (const el of document.querySelectorAll("[data-gid]")) {
    const r = el.getBoundingClientRect();
    let why = null;
    if (!inView(r) || !shown(el)) why = "hidden";
    else if (r.width < minSide || r.height < minSide) why = "small";
    else if (r.left < 0 || r.top < 0 || r.right > W || r.bottom > H) why = "cut";
    else if (el.querySelector("[data-gid]")) why = "nested";
    else if (clipped(el, r)) why = "clipped";
    else if (!hit(el, r)) why = "occluded";
    elements[el.dataset.gid] = {box: [r.left, r.top, r.right, r.bottom], why};
  }
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const text = node.textContent.replace(/\\s+/g, " ").trim();
    if (!text || !node.parentElement || !shown(node.parentElement)) continue;
    range.selectNodeContents(node);
    if (Array.from(range.getClientRects()).some(inView)) texts.push(text);
  }
  for (const el of document.querySelectorAll("input, textarea")) {
    const text = (el.value || el.placeholder || "").trim();
    if (text && el.type !== "password" && shown(el) && inView(el.getBoundingClientRect())) texts.push(text);
  }
  const icons = [];
  for (const el of document.querySelectorAll("svg[data-icon]"))
    if (shown(el) && inView(el.getBoundingClientRect())) icons.push(el.dataset.icon);
  return {elements, texts, icons};
}"""


class RenderError(SynthError):
    """Chromium could not render a screen (missing binary, crash, timeout); the message says which."""


@dataclass(frozen=True)
class Rendered:
    """A screenshot and what the DOM said about it."""

    png: bytes
    boxes: Mapping[str, Box]  # gid -> box of every candidate that passed all checks
    present: Mapping[str, Box]  # gid -> box of every candidate drawn in the viewport (passed or not)
    rejected: Mapping[str, str]  # gid -> why it was dropped (hidden, small, cut, nested, clipped, occluded)
    texts: tuple[str, ...]  # every text drawn in the viewport, occluded or not
    icons: tuple[str, ...]  # every icon drawn in the viewport, occluded or not


def _px(value: float) -> int:
    return math.floor(value + 0.5)


def parse_measure(data: Mapping[str, Any], png: bytes) -> Rendered:
    boxes: dict[str, Box] = {}
    present: dict[str, Box] = {}
    rejected: dict[str, str] = {}
    for gid, info in data["elements"].items():
        box = tuple(_px(v) for v in info["box"])
        why = info["why"]
        if why != "hidden":
            present[gid] = box  # type: ignore[assignment]
        if why is None:
            boxes[gid] = box  # type: ignore[assignment]
        else:
            rejected[gid] = why
    return Rendered(
        png=png, boxes=boxes, present=present, rejected=rejected, texts=tuple(data["texts"]), icons=tuple(data["icons"])
    )


class Renderer:
    """A headless Chromium on a private thread: `render(html, size)` -> `Rendered`. Close it when done."""

    def __init__(
        self, *, executable: str | None = None, extra_args: tuple[str, ...] = (), timeout_s: float = 60.0
    ) -> None:
        self.executable = executable or BrowserConfig().executable
        self.args = [*RENDER_ARGS, *extra_args]
        self.timeout_s = timeout_s
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="uivenus-synth-render")
        self._playwright: Any = None
        self._browser: Any = None
        self._page: Any = None
        self._size: tuple[int, int] | None = None
        try:
            self._thread.submit(self._start).result()
        except Exception:
            self.close()
            raise

    def _start(self) -> None:
        import os

        from playwright.sync_api import sync_playwright

        if not os.path.exists(self.executable):
            raise RenderError(f"Chromium not found at {self.executable}; install chromium or set UIVENUS_CHROMIUM")
        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(
            executable_path=self.executable, headless=True, args=self.args, timeout=self.timeout_s * 1000,
            chromium_sandbox=sandbox_blocker() is None,  # as the browser env: sandboxed wherever it can work
        )
        self._page = self._browser.new_page(viewport={"width": 800, "height": 600}, device_scale_factor=1)
        self._page.set_default_timeout(self.timeout_s * 1000)

    def _render(self, html: str, size: tuple[int, int], min_side: int, screenshot: bool) -> Rendered:
        if self._size != size:
            self._page.set_viewport_size({"width": size[0], "height": size[1]})
            self._size = size
        self._page.set_content(html, wait_until="load")
        data = self._page.evaluate(_JS_MEASURE, min_side)
        png = self._page.screenshot(type="png") if screenshot else b""
        return parse_measure(data, png)

    def render(self, html: str, size: tuple[int, int], *, min_side: int = 4, screenshot: bool = True) -> Rendered:
        """Lay out `html` in a `size` viewport (CSS px = image px), measure it, screenshot it."""
        from playwright.sync_api import Error as PlaywrightError

        try:
            return self._thread.submit(self._render, html, tuple(size), min_side, screenshot).result()
        except PlaywrightError as exc:
            raise RenderError(f"Chromium failed to render a {size[0]}x{size[1]} screen: {exc}") from exc

    def close(self) -> None:
        def stop() -> None:
            if self._browser is not None:
                self._browser.close()
            if self._playwright is not None:
                self._playwright.stop()
            self._browser = self._playwright = None

        try:
            self._thread.submit(stop).result()
        finally:
            self._thread.shutdown(wait=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
