"""BrowserEnv: Playwright driving Debian Chromium, as a desktop-web viewport or an emulated touch phone.

One Chromium process serves every episode (a fresh context per reset). All Playwright work runs on one
daemon thread the env owns, for two reasons: the caller's thread keeps no event loop (so other code may
use sync Playwright beside us), and a call that never returns — a page stuck in `while(true){}` — can be
abandoned after a deadline: the env kills its own Chromium, raises `EnvCrashedError`, and `_recover()`
relaunches, re-runs `reset(task)` and replays the actions taken since (unless the task says it is not
replayable). Phones are driven with real CDP touch events (taps, holds, swipes that scroll); the desktop
web with Playwright's mouse. Screenshots are always in logical CSS pixels.
"""

from __future__ import annotations

import io
import json
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import psutil
from PIL import Image
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

from uivenus.actions.space import (
    Action, ActionSequence, Answer, CallUser, Click, Direction, DoubleClick, Drag, Finished, GetScreenshot, GetUrl,
    Hotkey, Hover, Launch, LaunchApp, LongPress, Platform, Point, PressBack, PressEnter, PressHome, PressRecent,
    RightClick, Scroll, SelectOption, Swipe, TakeNote, TripleClick, Type, Wait,
)
from uivenus.envs.base import EnvBase, EnvCrashedError, EnvError, Observation, PlatformMismatchError, SetupError
from uivenus.envs.chromium import sandbox_blocker
from uivenus.envs.hosts import HostPolicy, launch_url
from uivenus.records import TaskSpec

T = TypeVar("T")
log = logging.getLogger(__name__)

#: Flags every launch uses: no GPU, no background traffic to Google, and no going back in history when a sideways
#: wheel scroll runs past the page's edge. Not --no-sandbox: Playwright adds that itself unless it is launched with
#: chromium_sandbox=True (`BrowserConfig.sandbox`).
CHROMIUM_ARGS = (
    "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--no-first-run", "--disable-sync", "--disable-quic", "--disable-features=OverscrollHistoryNavigation",
)
DEFAULT_CHROMIUM = "/usr/bin/chromium"
#: Seconds the env waits for a call to come back after killing the browser under it.
_KILL_GRACE_S = 5.0
#: Added to every deadline for the hop to the Playwright thread and back.
_SLACK_S = 1.0
#: Gap between the taps of a touch double tap (Chrome turns two quick taps into a dblclick).
_TAP_GAP_S = 0.04
#: A new touch waits this long after the last one lifted, so two Click steps never merge into a double
#: tap (Chromium on Linux counts taps up to 400 ms apart as one double tap).
_DOUBLE_TAP_WINDOW_S = 0.5
#: Pause at the end of a touch drag before lifting, so the gesture ends without a fling.
_TOUCH_REST_S = 0.06
_GESTURE_STEPS = 10


class BrowserConfigError(ValueError):
    """A BrowserConfig value is illegal; the message names the field."""


class BrowserActionError(EnvError):
    """The browser could not carry out an action (no <select> there, unknown app, bad URL, …)."""


@dataclass(frozen=True)
class _Mode:
    platform: Platform
    viewport: tuple[int, int]
    device_scale_factor: float
    touch: bool  # is_mobile + has_touch + a mobile user agent; pointer actions become touches


MODES: Mapping[str, _Mode] = {
    "desktop": _Mode(Platform.WEB, (1280, 720), 1.0, touch=False),
    "phone": _Mode(Platform.MOBILE, (412, 915), 2.625, touch=True),
}


def _default_executable() -> str:
    return os.environ.get("UIVENUS_CHROMIUM", DEFAULT_CHROMIUM)


@dataclass(frozen=True)
class BrowserConfig:
    """How the browser looks (mode, viewport) and how long it may take; None = the mode's default."""

    mode: str = "desktop"  # "desktop" (platform web) or "phone" (platform mobile)
    executable: str = field(default_factory=_default_executable)
    viewport: tuple[int, int] | None = None  # logical (width, height); desktop 1280x720, phone 412x915
    device_scale_factor: float | None = None  # desktop 1.0, phone 2.625
    user_agent: str | None = None  # phone default: a mobile Chrome UA of the launched version
    launch_timeout_s: float = 60.0  # starting Chromium (slow on a loaded machine)
    action_timeout_s: float = 10.0  # any single Playwright call (screenshots, input, evaluation)
    navigation_timeout_s: float = 20.0  # page loads (reset, Launch, back, home)
    settle_timeout_s: float = 3.0  # after an action: wait at most this for loads and requests to finish
    long_press_s: float = 1.0  # LongPress without a duration
    gesture_s: float = 0.3  # duration of a swipe or drag
    scroll_notches: int = 3  # Scroll without an amount
    notch_px: int = 100  # pixels per wheel notch
    wait_s: float = 1.0  # Wait without seconds
    max_wait_s: float = 30.0  # Wait(seconds) is capped at this
    max_text_chars: int = 20_000  # Observation.text is the page's innerText cut to this length
    launch_schemes: tuple[str, ...] = ("http", "https")  # what Launch(url) may open (never javascript:)
    hosts: HostPolicy = HostPolicy()  # which hosts Launch(url) may open besides the task's (default: no local ones)
    sandbox: bool | None = None  # Chromium's sandbox; None: on wherever it can work (not root, user namespaces)
    extra_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise BrowserConfigError(f"mode must be one of {sorted(MODES)}, got {self.mode!r}")
        for name in ("launch_timeout_s", "action_timeout_s", "navigation_timeout_s", "settle_timeout_s", "gesture_s"):
            if not getattr(self, name) > 0:
                raise BrowserConfigError(f"{name} must be positive, got {getattr(self, name)!r}")
        if self.viewport is not None and (len(self.viewport) != 2 or min(self.viewport) <= 0):
            raise BrowserConfigError(f"viewport must be (width, height) > 0, got {self.viewport!r}")

    @property
    def platform(self) -> Platform:
        return MODES[self.mode].platform

    @property
    def screen_size(self) -> tuple[int, int]:
        width, height = self.viewport or MODES[self.mode].viewport
        return int(width), int(height)

    @property
    def chromium_sandbox(self) -> bool:
        """Whether Chromium runs sandboxed: the `sandbox` setting, else wherever the sandbox can work."""
        return self.sandbox if self.sandbox is not None else sandbox_blocker() is None


#: Hotkey key names (lower-cased) -> Playwright key names; single characters pass through.
PLAYWRIGHT_KEYS: Mapping[str, str] = {
    "ctrl": "Control", "control": "Control", "alt": "Alt", "option": "Alt", "shift": "Shift",
    "cmd": "Meta", "command": "Meta", "meta": "Meta", "win": "Meta", "super": "Meta",
    "enter": "Enter", "return": "Enter", "esc": "Escape", "escape": "Escape", "tab": "Tab", "space": "Space",
    "backspace": "Backspace", "delete": "Delete", "del": "Delete", "insert": "Insert", "home": "Home",
    "end": "End", "pageup": "PageUp", "pagedown": "PageDown",
    "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
    "arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft", "arrowright": "ArrowRight",
    "capslock": "CapsLock", "numlock": "NumLock", "scrolllock": "ScrollLock", "printscreen": "PrintScreen",
    "prtsc": "PrintScreen", "pause": "Pause", "menu": "ContextMenu", "volumeup": "AudioVolumeUp",
    "volumedown": "AudioVolumeDown", "volumemute": "AudioVolumeMute", "playpause": "MediaPlayPause",
    "back": "BrowserBack", "forward": "BrowserForward",
    **{f"f{i}": f"F{i}" for i in range(1, 25)},
}

#: Unit wheel vector of each scroll direction (content moves the other way, as with a real wheel).
_WHEEL: Mapping[Direction, tuple[int, int]] = {
    Direction.UP: (0, -1), Direction.DOWN: (0, 1), Direction.LEFT: (-1, 0), Direction.RIGHT: (1, 0),
}


def playwright_key(key: str) -> str:
    """The Playwright name of one Hotkey key; `BrowserActionError` for keys a browser cannot press."""
    name = PLAYWRIGHT_KEYS.get(key.lower())
    if name is not None:
        return name
    if len(key) == 1:
        return key
    raise BrowserActionError(f"key {key!r} has no browser equivalent; known keys: {', '.join(sorted(PLAYWRIGHT_KEYS))}")


# --- fixed page scripts (data goes in as arguments, never as code) --------------------------------

#: Reads the element at a point (or the focused one, for a null point) as a small dict; read-only.
_JS_ELEMENT_AT = r"""
(point) => {
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim().slice(0, 200);
  let el = point ? document.elementFromPoint(point[0], point[1]) : document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const active = el.closest("button, a[href], input, select, textarea, label, summary, [role=button], [role=link], " +
    "[role=menuitem], [role=switch], [role=checkbox], [role=tab], [onclick], [data-testid]") || el;
  const attr = (n) => active.getAttribute(n);
  const labels = active.labels ? Array.from(active.labels).map((l) => clean(l.innerText)).join(" ") : "";
  const isButtonInput = active.tagName === "INPUT" && /^(submit|button|reset)$/i.test(attr("type") || "");
  const form = active.form || active.closest("form");
  let submit = null;
  if (form) {
    const b = form.querySelector("button[type=submit], button:not([type]), input[type=submit]");
    if (b) submit = clean(b.innerText || b.value || b.getAttribute("aria-label")) + " " +
      (b.dataset.testid || b.id || "");
  }
  return {
    tag: active.tagName.toLowerCase(), text: clean(active.innerText || active.textContent),
    aria_label: attr("aria-label"), title: attr("title"), type: attr("type"), name: attr("name"), id: active.id,
    testid: active.dataset ? active.dataset.testid || null : null, autocomplete: attr("autocomplete"),
    placeholder: attr("placeholder"), role: attr("role"), label: labels,
    value: isButtonInput ? clean(active.value) : null, submit: submit ? clean(submit) : null,
  };
}
"""


#: Runs in every document before its scripts: counts attempts to open a tab, so the settle wait knows
#: a new tab is coming before Chromium reports it (it arrives a little after the click).
_JS_WATCH_TABS = """(() => {
  const opening = () => { window.__uivenusTabs = (window.__uivenusTabs || 0) + 1; };
  const open = window.open;
  window.open = function (...args) { opening(); return open.apply(this, args); };
  document.addEventListener("click", (event) => {
    const link = event.target instanceof Element && event.target.closest("a[target], area[target]");
    if (link && !["", "_self", "_top", "_parent"].includes(link.target)) opening();
  }, true);
})();"""
#: What an Observation reads of the page besides the pixels (after them, so it is never older than they are).
_JS_SNAPSHOT = """(limit) => ({text: document.body ? document.body.innerText.slice(0, limit) : "",
  title: document.title, app: (window.uivenus && window.uivenus.app) || null})"""
#: The settle check: load state and the tabs the page tried to open since the last check. It runs ahead of work
#: the action only queued (DevTools evaluations jump the page's task queue), so it reads no text: see `_capture`.
_JS_SETTLE = """() => {
  const tabs = window.__uivenusTabs || 0;
  window.__uivenusTabs = 0;
  return {ready: document.readyState, tabs: tabs};
}"""
_JS_HAS_APP = "() => !!(window.uivenus && typeof window.uivenus.setup === 'function')"
_JS_SETUP = "(state) => window.uivenus.setup(state)"
_JS_APP_STATE = """() => (window.uivenus && typeof window.uivenus.state === 'function')
  ? window.uivenus.state() : null"""
_JS_CENTER = """(selector) => {
  for (const el of document.querySelectorAll(selector)) {
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (r.width <= 0 || r.height <= 0 || style.visibility === "hidden" || Number(style.opacity) === 0) continue;
    const x = Math.round(r.left + r.width / 2), y = Math.round(r.top + r.height / 2);
    if (x >= 0 && y >= 0 && x < innerWidth && y < innerHeight) return [x, y];
  }
  return null;
}"""
_JS_EXISTS = "(selector) => document.querySelector(selector) !== null"
_JS_TEXT = "(selector) => { const el = document.querySelector(selector); return el ? el.innerText : null; }"
_JS_SELECT = """([point, index]) => {
  let el = point ? document.elementFromPoint(point[0], point[1]) : document.activeElement;
  const select = el && (el.tagName === "SELECT" ? el : el.closest("select"));
  if (!select) return {error: point ? `no <select> at (${point[0]}, ${point[1]})` : "no <select> has the focus"};
  if (index >= select.options.length)
    return {error: `the <select> has ${select.options.length} options; index ${index} is out of range`};
  select.selectedIndex = index;
  select.dispatchEvent(new Event("input", {bubbles: true}));
  select.dispatchEvent(new Event("change", {bubbles: true}));
  return {value: select.value, text: select.options[index].text};
}"""


# --- the thread that owns Playwright ---------------------------------------------------------------

class _Worker:
    """A daemon thread running jobs in order; it owns one sync Playwright for its whole life."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = queue.SimpleQueue()
        self.playwright: Any = None
        threading.Thread(target=self._loop, name="uivenus-browser", daemon=True).start()

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, future = job
            try:
                future.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                future.set_exception(exc)

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        self._jobs.put((fn, future))
        return future

    def stop(self) -> None:
        self._jobs.put(None)


# --- pointer input per mode ------------------------------------------------------------------------

class _Mouse:
    """Desktop-web pointer: Playwright's mouse."""

    def __init__(self, page: Any) -> None:
        self.page = page

    def tap(self, point: Point, count: int) -> None:
        self.page.mouse.click(point[0], point[1], click_count=count)

    def press(self, point: Point, seconds: float) -> None:
        self.page.mouse.move(point[0], point[1])
        self.page.mouse.down()
        time.sleep(seconds)
        self.page.mouse.up()

    def drag(self, start: Point, end: Point, seconds: float) -> None:
        mouse = self.page.mouse
        mouse.move(start[0], start[1])
        mouse.down()
        for i in range(1, _GESTURE_STEPS + 1):
            mouse.move(start[0] + (end[0] - start[0]) * i / _GESTURE_STEPS,
                       start[1] + (end[1] - start[1]) * i / _GESTURE_STEPS)
            time.sleep(seconds / _GESTURE_STEPS)
        mouse.up()


class _Touch:
    """Touch pointer: raw CDP touch events, so taps, holds and swipes are real touches that scroll."""

    def __init__(self, cdp: Any) -> None:
        self.cdp = cdp
        self._lifted = 0.0  # monotonic time of the last touchEnd

    def _send(self, kind: str, point: Point | None = None, *, new_gesture: bool = True) -> None:
        """One touch event, stamped with our clock so a loaded machine cannot squeeze holds and gaps."""
        if kind == "touchStart" and new_gesture:  # never merge with the last gesture into a double tap
            time.sleep(max(0.0, self._lifted + _DOUBLE_TAP_WINDOW_S - time.monotonic()))
        points = [] if point is None else [{"x": point[0], "y": point[1]}]
        self.cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points, "timestamp": time.time()})
        if kind == "touchEnd":
            self._lifted = time.monotonic()

    def tap(self, point: Point, count: int) -> None:
        for i in range(count):
            if i:
                time.sleep(_TAP_GAP_S)
            self._send("touchStart", point, new_gesture=i == 0)  # the taps of one DoubleClick do merge
            self._send("touchEnd")

    def press(self, point: Point, seconds: float) -> None:
        self._send("touchStart", point)
        time.sleep(seconds)
        self._send("touchEnd")

    def drag(self, start: Point, end: Point, seconds: float) -> None:
        self._send("touchStart", start)
        for i in range(1, _GESTURE_STEPS + 1):
            time.sleep(seconds / _GESTURE_STEPS)
            self._send("touchMove", (start[0] + (end[0] - start[0]) * i / _GESTURE_STEPS,
                                     start[1] + (end[1] - start[1]) * i / _GESTURE_STEPS))
        for _ in range(2):  # hold still at the end, so the velocity tracker reads zero and nothing flings
            time.sleep(_TOUCH_REST_S)
            self._send("touchMove", end)
        self._send("touchEnd")


class _Traffic:
    """The page's in-flight requests and whether a main-frame navigation is under way."""

    def __init__(self, page: Any) -> None:
        self.pending: set[Any] = set()
        self.navigating = False
        self._main = page.main_frame
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)
        page.on("framenavigated", self._navigated)

    @property
    def busy(self) -> bool:
        return self.navigating or bool(self.pending)

    def _is_main_navigation(self, request: Any) -> bool:
        try:
            return request.is_navigation_request() and request.frame is self._main
        except PlaywrightError:  # service-worker requests have no frame
            return False

    def _started(self, request: Any) -> None:
        self.pending.add(request)
        if self._is_main_navigation(request):
            self.navigating = True

    def _ended(self, request: Any) -> None:
        self.pending.discard(request)
        if self._is_main_navigation(request):
            self.navigating = False

    def _navigated(self, frame: Any) -> None:
        if frame is self._main:
            self.navigating = False


@dataclass
class _Session:
    """The live objects of the tab the env is looking at (touched only on the Playwright thread)."""

    context: Any
    page: Any
    touch: _Touch
    pointer: _Mouse | _Touch
    traffic: _Traffic
    opener: _Session | None = None  # the tab this one was opened from (PressBack returns there)
    crashed: bool = False
    last_point: Point | None = None


# --- the environment -------------------------------------------------------------------------------

class BrowserEnv(EnvBase):
    """A Chromium page as an environment: `reset(task)`, `step(action)`, `observe()`, `state()`, DomQuery."""

    def __init__(self, config: BrowserConfig | None = None) -> None:
        self.config = config or BrowserConfig()
        self._mode = MODES[self.config.mode]
        self.platform = self._mode.platform
        self._worker: _Worker | None = None
        self._browser: Any = None
        self._browser_pid: int | None = None
        self._user_agent: str | None = self.config.user_agent
        self._session: _Session | None = None
        self._new_tabs: list[Any] = []  # pages the current context opened since the last action
        self._task: TaskSpec | None = None
        self._observed: Observation | None = None  # captured with the last action, for step()'s observe()
        self._history: list[Action] = []
        self._closed = False

    # -- public API ---------------------------------------------------------------------------------

    @property
    def screen_size(self) -> tuple[int, int]:
        return self.config.screen_size

    @property
    def browser_pid(self) -> int | None:
        """PID of this env's Chromium main process (None before the first reset), for monitoring."""
        return self._browser_pid

    def reset(self, task: TaskSpec) -> Observation:
        """A fresh context and page at `task.url`, with `task.setup["app_state"]` applied when given."""
        if task.platform is not self.platform:
            modes = [name for name, mode in MODES.items() if mode.platform is task.platform]
            hint = f"use BrowserConfig(mode={modes[0]!r})" if modes else "run it in a desktop environment"
            raise PlatformMismatchError(
                f"task {task.id} is for {task.platform.value} but this browser emulates {self.platform.value}; {hint}"
            )
        self._closed = False
        self._task, self._history, self._observed = task, [], None
        try:
            self._start(task)
        except EnvCrashedError as exc:  # a dead or hung browser: relaunch once and try again
            self._restart()
            try:
                self._start(task)
            except EnvCrashedError:
                raise SetupError(f"task {task.id}: the browser died twice while opening {task.url}: {exc}") from None
        return self.observe()

    def observe(self) -> Observation:
        """The screen now; right after step()'s action it is the capture taken as the page settled."""
        if self._observed is not None:
            observation, self._observed = self._observed, None
            return observation
        try:
            return self._call(self._capture, self._query_budget())
        except EnvCrashedError:
            if not self._recover():
                raise
            return self._call(self._capture, self._query_budget())

    def state(self) -> Mapping[str, Any]:
        """What checkers read: url, title, innerText and `window.uivenus.state()` (None on other pages)."""
        def read() -> dict[str, Any]:
            page = self._live().page
            snapshot = page.evaluate(_JS_SNAPSHOT, self.config.max_text_chars)
            return {"url": page.url, "title": snapshot["title"], "text": snapshot["text"],
                    "app_state": page.evaluate(_JS_APP_STATE)}
        return self._call(read, self._query_budget())

    def center(self, selector: str) -> tuple[int, int] | None:
        """Centre of the first visible `selector` match inside the viewport, in logical pixels, else None."""
        point = self._evaluate(_JS_CENTER, selector)
        return None if point is None else (int(point[0]), int(point[1]))

    def exists(self, selector: str) -> bool:
        return bool(self._evaluate(_JS_EXISTS, selector))

    def text(self, selector: str) -> str | None:
        return self._evaluate(_JS_TEXT, selector)

    def element_at(self, point: tuple[float, float] | None) -> Mapping[str, Any] | None:
        """The interactive element at `point` (None: the focused one) as a small read-only dict, or None."""
        return self._evaluate(_JS_ELEMENT_AT, None if point is None else [float(point[0]), float(point[1])])

    def app_state(self) -> Mapping[str, Any]:
        state = self._evaluate(_JS_APP_STATE, None)
        if state is None:
            raise BrowserActionError("this page defines no window.uivenus.state(); app_state() needs a sandbox app")
        return state

    def close(self) -> None:
        """Close the page, the browser and the Playwright thread; safe to call twice."""
        if self._closed or self._worker is None:
            self._closed = True
            return
        self._closed = True
        worker, self._worker = self._worker, None
        try:
            worker.submit(lambda: self._shutdown(worker)).result(timeout=_KILL_GRACE_S + self.config.action_timeout_s)
        except Exception:  # noqa: BLE001 - a dead or hung browser is killed below instead
            self._kill_browser()
        finally:
            worker.stop()
            self._session, self._browser, self._browser_pid, self._observed = None, None, None, None

    # -- EnvBase hooks ------------------------------------------------------------------------------

    def _execute(self, action: Action) -> Mapping[str, Any] | None:
        if self._session is None:
            raise EnvError("no page is open (never reset, closed, or a recovery failed); call reset(task)")
        info, self._observed = self._call(lambda: self._perform_and_capture(action),
                                          self._budget(action) + self._query_budget())
        self._history.append(action)
        return info

    def _recover(self) -> bool:
        """Relaunch Chromium, re-run reset(task) and replay this episode's actions (if replayable)."""
        task, history = self._task, list(self._history)
        if task is None:
            return False
        try:
            self._restart()
            self._start(task)
            if task.metadata.get("replayable", True):
                for action in history:
                    self._call(lambda a=action: self._perform(a), self._budget(action))
            else:
                history = []
        except EnvError:
            return False
        self._history = history
        return True

    # -- calls across the thread boundary -----------------------------------------------------------

    def _call(self, fn: Callable[[], T], budget: float) -> T:
        """Run `fn` on the Playwright thread; past `budget` seconds the page is hung: kill and raise."""
        if self._worker is None:
            self._worker = _Worker()
        worker = self._worker
        future = worker.submit(lambda: self._translated(fn))
        try:
            return future.result(timeout=budget)
        except FutureTimeout:
            self._kill_browser()
            try:
                future.result(timeout=_KILL_GRACE_S)
            except FutureTimeout:  # the Playwright thread itself is stuck: leave it, start another
                worker.stop()
                self._worker, self._browser, self._session = None, None, None
            except Exception:  # noqa: BLE001 - the expected "browser closed" error after the kill
                pass
            raise EnvCrashedError(
                f"the page did not answer within {budget:.1f}s (a hung script?); its browser was killed"
            ) from None

    def _translated(self, fn: Callable[[], T]) -> T:
        """Turn Playwright's errors into typed env errors (runs on the Playwright thread)."""
        try:
            return fn()
        except PlaywrightTimeout as exc:
            self._kill_browser()
            raise EnvCrashedError(f"the page stopped answering ({_first_line(exc)}); its browser was killed") from None
        except PlaywrightError as exc:
            if self._dead():
                raise EnvCrashedError(f"the browser or page died: {_first_line(exc)}") from None
            raise BrowserActionError(_first_line(exc)) from None

    def _evaluate(self, script: str, arg: Any) -> Any:
        return self._call(lambda: self._live().page.evaluate(script, arg), self._query_budget())

    def _query_budget(self) -> float:
        """Deadline of a read (screenshot, evaluation); Playwright's own timeout fires first."""
        return 2 * self.config.action_timeout_s + _SLACK_S

    def _start(self, task: TaskSpec) -> None:
        """(Re)launch Chromium if it is not running, then open the task's page in a fresh context."""
        cfg = self.config
        self._call(self._ensure_browser, cfg.launch_timeout_s + _SLACK_S)
        self._call(lambda: self._open(task),
                   cfg.navigation_timeout_s + 2 * cfg.action_timeout_s + cfg.settle_timeout_s + _SLACK_S)

    def _budget(self, action: Action) -> float:
        """Seconds an action may take before its page counts as hung (holds and waits included)."""
        cfg = self.config
        match action:
            case ActionSequence(actions=members):
                return sum(self._budget(a) for a in members)
            case Launch() | LaunchApp() | PressBack() | PressHome() | PressRecent():
                held = cfg.navigation_timeout_s
            case Wait(seconds=seconds):
                held = self._wait_s(seconds)
            case LongPress(duration=duration):
                held = cfg.long_press_s if duration is None else float(duration)
            case _:
                held = cfg.gesture_s + _DOUBLE_TAP_WINDOW_S
        return cfg.action_timeout_s + cfg.settle_timeout_s + held + _SLACK_S

    def _wait_s(self, seconds: float | None) -> float:
        return min(self.config.wait_s if seconds is None else float(seconds), self.config.max_wait_s)

    # -- browser lifecycle (Playwright thread) -----------------------------------------------------

    def _ensure_browser(self) -> None:
        if self._browser is not None and self._browser.is_connected():
            return
        if not os.path.exists(self.config.executable):
            raise SetupError(f"Chromium not found at {self.config.executable}; install chromium or set "
                             "UIVENUS_CHROMIUM / BrowserConfig.executable")
        worker = self._worker
        assert worker is not None
        if worker.playwright is None:
            worker.playwright = sync_playwright().start()
        marker = f"--uivenus-browser={uuid.uuid4().hex}"
        sandbox = self.config.chromium_sandbox
        if not sandbox:
            log.info("Chromium runs without its sandbox: %s", sandbox_blocker() or "BrowserConfig.sandbox is False")
        self._browser = worker.playwright.chromium.launch(
            executable_path=self.config.executable, headless=True, chromium_sandbox=sandbox,
            args=[*CHROMIUM_ARGS, *self.config.extra_args, marker],
            timeout=self.config.launch_timeout_s * 1000,
        )
        self._browser_pid = _find_process(marker)
        if self._mode.touch and self.config.user_agent is None:
            major = self._browser.version.split(".")[0]
            self._user_agent = (f"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                                f"Chrome/{major}.0.0.0 Mobile Safari/537.36")

    def _restart(self) -> None:
        """Kill this env's Chromium; the next open launches a new one."""
        self._kill_browser()
        self._session, self._browser = None, None

    def _kill_browser(self) -> None:
        """SIGKILL the Chromium process tree (safe from any thread: touches no Playwright object)."""
        if self._browser_pid is None:
            return
        try:
            main = psutil.Process(self._browser_pid)
            for proc in [*main.children(recursive=True), main]:
                try:
                    proc.kill()
                except psutil.Error:
                    pass
        except psutil.Error:
            pass
        self._browser_pid = None

    def _shutdown(self, worker: _Worker) -> None:
        try:
            if self._browser is not None and self._browser.is_connected():
                self._browser.close()
        finally:
            if worker.playwright is not None:
                worker.playwright.stop()
                worker.playwright = None

    def _open(self, task: TaskSpec) -> None:
        """New context + page at the task's URL, app state applied (Playwright thread)."""
        if self._session is not None:
            try:
                self._session.context.close()
            except PlaywrightError:
                pass
            self._session = None
        cfg, mode = self.config, self._mode
        width, height = cfg.screen_size
        context = self._browser.new_context(
            viewport={"width": width, "height": height},
            device_scale_factor=cfg.device_scale_factor or mode.device_scale_factor,
            is_mobile=mode.touch, has_touch=mode.touch, user_agent=self._user_agent,
        )
        context.set_default_timeout(cfg.action_timeout_s * 1000)
        context.set_default_navigation_timeout(cfg.navigation_timeout_s * 1000)
        context.add_init_script(_JS_WATCH_TABS)
        page = context.new_page()
        context.on("page", lambda tab: self._new_tabs.append(tab))
        self._new_tabs.clear()
        session = self._session = self._attach(context, page)
        url = task.url or "about:blank"
        try:
            response = page.goto(url, wait_until="load")
        except PlaywrightTimeout:
            raise SetupError(f"task {task.id}: {url} did not load within {cfg.navigation_timeout_s}s") from None
        except PlaywrightError as exc:
            if self._dead():
                raise
            raise SetupError(f"task {task.id}: cannot open {url} ({_first_line(exc)}); is its server running?") from None
        if response is not None and not response.ok:
            raise SetupError(f"task {task.id}: {url} answered HTTP {response.status}; check the task's url")
        app_state = task.setup.get("app_state")
        if app_state is not None:
            try:
                page.wait_for_function(_JS_HAS_APP, timeout=cfg.action_timeout_s * 1000)
            except PlaywrightTimeout:
                raise SetupError(f"task {task.id}: {url} defines no window.uivenus.setup() after "
                                 f"{cfg.action_timeout_s}s; app_state needs a sandbox app page") from None
            page.evaluate(_JS_SETUP, json.loads(json.dumps(app_state, default=dict)))
        self._settle(session)

    def _attach(self, context: Any, page: Any, opener: _Session | None = None) -> _Session:
        """Look at `page` from now on: its own CDP channel for touches, request tracking, crash flag."""
        touch = _Touch(context.new_cdp_session(page))
        session = _Session(context, page, touch, touch if self._mode.touch else _Mouse(page), _Traffic(page), opener)
        page.on("crash", lambda _page: setattr(session, "crashed", True))
        return session

    def _follow_new_tab(self, session: _Session) -> _Session:
        """The last action opened a tab (target=_blank, window.open): look at it from now on, as a browser does."""
        page = self._new_tabs[-1]
        self._new_tabs.clear()
        page.bring_to_front()
        self._session = self._attach(session.context, page, opener=session)
        return self._session

    def _live(self) -> _Session:
        if self._session is None:
            raise EnvError("no page is open; call reset(task) first")
        return self._session

    def _dead(self) -> bool:
        session = self._session
        return (self._browser is None or not self._browser.is_connected()
                or session is None or session.crashed or session.page.is_closed())

    # -- observing (Playwright thread) ---------------------------------------------------------------

    def _capture(self) -> Observation:
        """Screenshot (logical pixels), then the page's text, so that whatever the pixels show is in the text
        however late the page rendered it (a hashchange handler, a timer): the guard scans what the agent sees."""
        page = self._live().page
        png = page.screenshot(scale="css", timeout=self.config.action_timeout_s * 1000)
        image = Image.open(io.BytesIO(png))  # decoded lazily, on first pixel access
        if image.size != self.screen_size:
            image = image.resize(self.screen_size)
        try:
            snapshot = page.evaluate(_JS_SNAPSHOT, self.config.max_text_chars)
        except PlaywrightError:  # a navigation replaced the document mid-call: no text this time
            if self._dead():
                raise
            snapshot = {"text": None, "title": None, "app": None}
        return Observation(
            screenshot=image, platform=self.platform, size=self.screen_size, url=page.url,
            app=snapshot["app"], text=snapshot["text"], info={"title": snapshot["title"]},
        )

    def _settle(self, session: _Session) -> None:
        """Wait (bounded) until no navigation or request is in flight and the document has loaded.

        The common case — an action that starts nothing — costs one round trip to the page, which also
        gives the browser the moment it needs to report a navigation the action started.
        """
        deadline = time.monotonic() + self.config.settle_timeout_s
        tab_coming = False
        while True:
            try:
                check = session.page.evaluate(_JS_SETTLE)
            except PlaywrightError:
                if self._dead():
                    raise
                check = None
            ready = check is not None and check["ready"] == "complete"
            tab_coming = (tab_coming or (check is not None and check["tabs"] > 0)) and not self._new_tabs
            if (ready and not session.traffic.busy and not tab_coming) or time.monotonic() >= deadline:
                return
            session.page.wait_for_timeout(20)

    # -- acting (Playwright thread) -----------------------------------------------------------------

    def _perform(self, action: Action) -> dict[str, Any]:
        """Carry out one action (a Sequence member by member), letting the page settle after each;
        returns the action's info."""
        if isinstance(action, ActionSequence):
            info: dict[str, Any] = {}
            for member in action.actions:
                info.update(self._perform(member))
            return info
        info = self._act(self._live(), action) or {}
        session = self._live()  # PressBack may have closed a tab and gone back to its opener
        self._settle(session)
        if self._new_tabs:
            self._settle(self._follow_new_tab(session))
        return info

    def _perform_and_capture(self, action: Action) -> tuple[dict[str, Any], Observation]:
        info = self._perform(action)
        return info, self._capture()

    def _act(self, s: _Session, action: Action) -> dict[str, Any] | None:
        page, cfg = s.page, self.config
        match action:
            case Click(point=p):
                s.pointer.tap(p, 1)
            case DoubleClick(point=p):
                s.pointer.tap(p, 2)
            case TripleClick(point=p):
                s.pointer.tap(p, 3)
            case RightClick(point=p):
                page.mouse.click(p[0], p[1], button="right")
            case Hover(point=p):
                page.mouse.move(p[0], p[1])
            case LongPress(point=p, duration=d):
                s.pointer.press(p, cfg.long_press_s if d is None else float(d))
            case Drag(start=start, end=end):
                start = start if start is not None else s.last_point
                if start is None:
                    raise BrowserActionError("Drag without a start needs an earlier pointer action; give start=(x, y)")
                s.pointer.drag(start, end, cfg.gesture_s)
                p = end
            case Swipe(start=start, end=end):
                s.touch.drag(start, end, cfg.gesture_s)
                p = end
            case Scroll(direction=direction, point=point, amount=amount):
                width, height = cfg.screen_size
                p = point if point is not None else (width // 2, height // 2)
                dx, dy = _WHEEL[direction]
                pixels = (amount or cfg.scroll_notches) * cfg.notch_px
                page.mouse.move(p[0], p[1])
                page.mouse.wheel(dx * pixels, dy * pixels)
            case Type(content=content):
                for i, line in enumerate(content.split("\n")):
                    if i:
                        page.keyboard.press("Enter")
                    if line:
                        page.keyboard.type(line)
                return None
            case Hotkey(keys=keys, repeat=repeat):
                names = [playwright_key(k) for k in keys]
                for _ in range(repeat):
                    for name in names:
                        page.keyboard.down(name)
                    for name in reversed(names):
                        page.keyboard.up(name)
                return None
            case PressEnter():
                page.keyboard.press("Enter")
                return None
            case PressBack():
                self._back(s)
                return None
            case PressHome() | PressRecent():  # a browser phone has no app switcher: Recent goes home too
                self._navigate(page, self._home_url())
                return None
            case Launch(url=url):
                self._navigate(page, self._launchable(url))
                return None
            case LaunchApp(app=app):
                self._navigate(page, self._app_url(app))
                return None
            case SelectOption(index=index, point=point):
                result = page.evaluate(_JS_SELECT, [list(point) if point is not None else None, index])
                if "error" in result:
                    raise BrowserActionError(f"SelectOption: {result['error']}")
                return {"selected": result}
            case GetUrl():
                return {"url": page.url}
            case Wait(seconds=seconds):
                time.sleep(self._wait_s(seconds))
                return None
            case GetScreenshot() | TakeNote() | Answer() | CallUser() | Finished():
                return None  # the observation after every step already carries the screen
            case _:
                raise BrowserActionError(f"{action.type} has no browser executor")
        s.last_point = p
        return None

    def _navigate(self, page: Any, url: str | None) -> Any:
        """Go to `url` (None = back in history; None comes back when there is none); a slow load is an
        action error, not a hang."""
        try:
            if url is None:
                return page.go_back(wait_until="load")
            return page.goto(url, wait_until="load")
        except PlaywrightTimeout:
            where = url or "the previous page"
            raise BrowserActionError(f"{where} did not load within {self.config.navigation_timeout_s}s") from None

    def _back(self, s: _Session) -> None:
        """History back; a tab with no history closes and returns to the tab that opened it."""
        before = s.page.url
        went_back = self._navigate(s.page, None) is not None or s.page.url != before
        if not went_back and s.opener is not None and not s.opener.page.is_closed():
            s.page.close()
            s.opener.page.bring_to_front()
            self._session = s.opener

    def _home_url(self) -> str:
        task = self._task
        assert task is not None
        return task.setup.get("home_url") or task.url or "about:blank"

    def _app_url(self, app: str) -> str:
        task = self._task
        assert task is not None
        apps = {str(name).lower(): url for name, url in (task.setup.get("apps") or {}).items()}
        if app.lower() not in apps:
            known = ", ".join(sorted(apps)) or "none (the task's setup has no 'apps' map)"
            raise BrowserActionError(f"no app named {app!r} in this task; known apps: {known}")
        return apps[app.lower()]

    def _launchable(self, url: str) -> str:
        """A URL a model asked for, if its scheme and host are allowed ('example.com' means https://example.com)."""
        url = launch_url(url)
        if url == "about:blank":
            return url
        scheme = urlsplit(url).scheme.lower()
        if scheme not in self.config.launch_schemes:
            raise BrowserActionError(f"Launch may open only {', '.join(self.config.launch_schemes)} URLs, "
                                     f"not {scheme or 'this'}: {url[:80]!r}")
        self.config.hosts.check(url, self._task.url if self._task is not None else None)
        return url


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _find_process(marker: str) -> int | None:
    """PID of our Chromium main process: the descendant whose command line carries `marker`."""
    for proc in psutil.Process().children(recursive=True):
        try:
            cmdline = proc.cmdline()
        except psutil.Error:
            continue
        if marker in cmdline and not any(arg.startswith("--type=") for arg in cmdline):
            return proc.pid
    return None
