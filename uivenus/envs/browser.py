"""BrowserEnv: Playwright driving Debian Chromium, as a desktop-web viewport or an emulated touch phone.

One Chromium process serves every episode (a fresh context per reset). This module is the Env protocol around it
(reset, step, observe, recovery) and the tabs it looks at: opening the task's page, following a tab the page
opens, waiting for the page to settle, and capturing what it shows (screenshots always in logical CSS pixels).
The rest is composed in, one job per module:

- `BrowserConfig` (browser_config.py): mode, screen, time limits, what Launch may open;
- `Chromium` (chromium.py): launches the process and runs every Playwright call on its own thread with a
  deadline; a browser that hangs is killed and the env raises `EnvCrashedError`, after which `_recover()`
  relaunches, re-runs `reset(task)` and replays the actions taken since (unless the task says it is not replayable);
- `PageActions` (browser_actions.py): how each action becomes page input, through `Mouse` or `Touch` (pointer.py:
  real CDP touch events on a phone, Playwright's mouse on the desktop web);
- `Traffic` (traffic.py): the requests in flight, for the settle wait;
- page scripts (page_script.py, envs/js/): the JavaScript the env runs, and that `query_dom` runs for other layers.
"""

from __future__ import annotations

import base64
import fnmatch
import io
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

from PIL import Image
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from uivenus.actions.space import (
    Action, ActionSequence, Launch, LaunchApp, LongPress, PressBack, PressHome, PressRecent, Wait,
)
from uivenus.envs.base import (
    ACTS_ON_POINT, FOCUSED_ELEMENT, HIT_ELEMENT, EnvBase, EnvCrashedError, EnvError, Observation, PlatformMismatchError,
    SetupError,
)
from uivenus.envs.ax_tree import page_elements
from uivenus.envs.browser_actions import BrowserActionError, PageActions, Session
from uivenus.envs.browser_config import MODES, BrowserConfig
from uivenus.envs.chromium import Chromium
from uivenus.envs.elements import UIElement
from uivenus.envs.hosts import TASK_HOSTS, HostPolicy
from uivenus.envs.page_script import PageScript, page_script
from uivenus.envs.pointer import DOUBLE_TAP_WINDOW_S, Mouse, Touch
from uivenus.envs.traffic import Traffic
from uivenus.records import TaskSpec

__all__ = [
    "BLOCKED", "DOWNLOADS", "NEW_TAB", "UNSETTLED", "BrowserEnv",
]

#: What a step's info says about the page: downloads it started (url, suggested file name), the URL of a tab it
#: opened that the env now looks at, the settle wait it ran out (seconds) while the page was still busy, and the
#: navigations the task's host allow-list (`setup["allowed_hosts"]`) stopped.
DOWNLOADS, NEW_TAB, UNSETTLED, BLOCKED = "downloads", "new_tab", "unsettled_s", "blocked_navigations"

T = TypeVar("T")

#: Added to every deadline for the hop to the Playwright thread and back.
_SLACK_S = 1.0


# --- fixed page scripts (envs/js/; data goes in as arguments, never as code) ----------------------

_JS_READ_PAGE = page_script("uivenus.envs", "read_page.js")
_JS_WATCH_TABS = page_script("uivenus.envs", "watch_tabs.js")
_JS_HIDE_CARET = page_script("uivenus.envs", "hide_caret.js")
_JS_SETTLE = page_script("uivenus.envs", "settle.js")
_JS_HAS_APP = page_script("uivenus.envs", "has_app.js")
_JS_SETUP = page_script("uivenus.envs", "setup.js")
_JS_APP_STATE = page_script("uivenus.envs", "app_state.js")
_JS_CENTER = page_script("uivenus.envs", "center.js")
_JS_EXISTS = page_script("uivenus.envs", "exists.js")
_JS_TEXT = page_script("uivenus.envs", "text.js")
_JS_WIPE_PAGE = page_script("uivenus.envs", "wipe_page.js")


# --- the environment -------------------------------------------------------------------------------

class BrowserEnv(PageActions, EnvBase):
    """A Chromium page as an environment: `reset(task)`, `step(action)`, `observe()`, `state()`, DomQuery."""

    def __init__(self, config: BrowserConfig | None = None) -> None:
        self.config = config or BrowserConfig()
        self._mode = MODES[self.config.mode]
        self.platform = self._mode.platform
        self._chromium = Chromium()
        self._user_agent: str | None = self.config.user_agent
        self._session: Session | None = None
        self._new_tabs: list[Any] = []  # pages the current context opened since the last action
        self._downloads: list[dict[str, str]] = []  # downloads the page started since the last action
        self._blocked: list[dict[str, str]] = []  # navigations the task's host allow-list stopped since then
        self._stopped: list[dict[str, str]] = []  # every navigation it stopped this episode (`stopped_navigations`)
        self._responses: list[Any] = []  # this episode's responses matching `config.capture_responses`
        self._task: TaskSpec | None = None
        self._observed: Observation | None = None  # captured with the last action, for step()'s observe()
        self._read: dict[tuple[float, float], Mapping[str, Any] | None] = {}  # elements at points of this screen
        self._history: list[Action] = []
        self._closed = False

    # -- public API ---------------------------------------------------------------------------------

    @property
    def screen_size(self) -> tuple[int, int]:
        return self.config.screen_size

    @property
    def browser_pid(self) -> int | None:
        """PID of this env's Chromium main process (None before the first reset), for monitoring."""
        return self._chromium.pid

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
            session = self._live()
            snapshot = _run(session, _JS_READ_PAGE, {"limit": self.config.max_text_chars})
            return {"url": session.page.url, "title": snapshot["title"], "text": snapshot["text"],
                    "app_state": _run(session, _JS_APP_STATE)}
        return self._call(read, self._query_budget())

    def query_dom(self, script: PageScript, arg: Any = None) -> Any:
        """Run a packaged, read-only page script (`page_script(package, name)`) on the live page with `arg` as its
        argument, and return its (JSON) result. Only `PageScript`s: what a page is made to run is source kept in
        the package, and data goes in as the argument, never as code (JSON: `_run`, the cheaper channel, since a
        reference policy asks several per step)."""
        if not isinstance(script, PageScript):
            raise TypeError(f"query_dom runs packaged page scripts (page_script(package, name)), "
                            f"not {type(script).__name__}")
        return self._call(lambda: _run(self._live(), script, arg), self._query_budget())

    def captured_responses(self) -> list[dict[str, Any]]:
        """This episode's responses whose URL matches a glob of `config.capture_responses`, oldest first: url,
        status and the body read as JSON (None when it is not JSON) — how a page that grades itself is read."""
        def read() -> list[dict[str, Any]]:
            out = []
            for response in self._responses:
                try:
                    body = response.json()
                except (PlaywrightError, ValueError):
                    body = None
                out.append({"url": response.url, "status": response.status, "json": body})
            return out
        return self._call(read, self._query_budget())

    def center(self, selector: str) -> tuple[int, int] | None:
        """Centre of the first visible `selector` match inside the viewport, in logical pixels, else None."""
        point = self.query_dom(_JS_CENTER, selector)
        return None if point is None else (int(point[0]), int(point[1]))

    def exists(self, selector: str) -> bool:
        return bool(self.query_dom(_JS_EXISTS, selector))

    def text(self, selector: str) -> str | None:
        return self.query_dom(_JS_TEXT, selector)

    def element_at(self, point: tuple[float, float] | None) -> Mapping[str, Any] | None:
        """The interactive element at `point` (None: the focused one) as a small read-only dict, or None.

        A point is read once per screen: the guard's read before a click is the one the click's step records as
        `HIT_ELEMENT`, so judging what an action acts on costs no page query of its own."""
        if point is None:
            return self.query_dom(_JS_READ_PAGE, {"point": None})
        return self._call(lambda: self._element_at((float(point[0]), float(point[1]))), self._query_budget())

    def url(self) -> str:
        """The page's URL now (no screenshot taken)."""
        return self._call(lambda: self._live().page.url, self._query_budget())

    def elements(self) -> tuple[UIElement, ...]:
        """The page's UI elements from Chromium's accessibility tree (only on request: a step reads none)."""
        return self._call(lambda: page_elements(self._live().page), self._query_budget())

    def stopped_navigations(self, grace_s: float = 0.0) -> tuple[Mapping[str, str], ...]:
        """Every navigation the task's host allow-list stopped this episode, oldest first, read after a final settle
        (after `grace_s` more seconds, for one a page timer starts late): a navigation that reached the allow-list
        after its step's settle, or after the episode's last step, is not in any step's `BLOCKED`, but it is here."""
        def read() -> tuple[Mapping[str, str], ...]:
            session = self._live()
            if grace_s > 0:
                session.page.wait_for_timeout(grace_s * 1000)
            self._settle(session)
            return tuple(dict(item) for item in self._stopped)
        return self._call(read, grace_s + self.config.settle_timeout_s + self._query_budget())

    def app_state(self) -> Mapping[str, Any]:
        state = self.query_dom(_JS_APP_STATE, None)
        if state is None:
            raise BrowserActionError("this page defines no window.uivenus.state(); app_state() needs a sandbox app")
        return state

    def close(self) -> None:
        """Close the page, the browser and the Playwright thread; safe to call twice."""
        if self._closed or not self._chromium.started:
            self._closed = True
            return
        self._closed = True
        try:
            self._chromium.close(self.config.action_timeout_s)
        finally:
            self._session, self._observed = None, None

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
        try:
            return self._chromium.call(lambda: self._translated(fn), budget)
        except EnvCrashedError:
            if self._chromium.browser is None:  # its stuck Playwright thread was left behind, and the page with it
                self._session = None
            raise

    def _translated(self, fn: Callable[[], T]) -> T:
        """Turn Playwright's errors into typed env errors (runs on the Playwright thread)."""
        try:
            return fn()
        except PlaywrightTimeout as exc:
            self._chromium.kill()
            raise EnvCrashedError(f"the page stopped answering ({_first_line(exc)}); its browser was killed") from None
        except PlaywrightError as exc:
            if self._dead():
                raise EnvCrashedError(f"the browser or page died: {_first_line(exc)}") from None
            raise BrowserActionError(_first_line(exc)) from None

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
                held = cfg.gesture_s + DOUBLE_TAP_WINDOW_S
        return cfg.action_timeout_s + cfg.settle_timeout_s + held + _SLACK_S

    # -- browser lifecycle (Playwright thread) -----------------------------------------------------

    def _ensure_browser(self) -> None:
        """Launch Chromium unless it runs; a phone without a user agent of its own gets one of the launched version."""
        if self._chromium.connected:
            return
        cfg = self.config
        self._chromium.launch(cfg.executable, sandbox=cfg.chromium_sandbox, extra_args=cfg.extra_args,
                              timeout_s=cfg.launch_timeout_s)
        if self._mode.touch and cfg.user_agent is None:
            major = self._chromium.browser.version.split(".")[0]
            self._user_agent = (f"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                                f"Chrome/{major}.0.0.0 Mobile Safari/537.36")

    def _restart(self) -> None:
        """Kill this env's Chromium; the next open launches a new one."""
        self._chromium.restart()
        self._session = None

    def _open(self, task: TaskSpec) -> None:
        """The task's URL in a fresh context and page (or the last episode's page, wiped: `_reused`), app state
        applied (Playwright thread)."""
        cfg = self.config
        session = self._reused(task) or self._fresh_session()
        task_hosts = task.setup.get(TASK_HOSTS)
        if task_hosts is not None:
            session.context.route("**/*", self._keep_to(cfg.hosts.narrowed(tuple(task_hosts)), task.url))
        self._new_tabs.clear()
        self._downloads.clear()
        self._blocked.clear()
        self._stopped.clear()
        self._responses.clear()
        page = session.page
        url = task.url or "about:blank"
        try:
            response = page.goto(url, wait_until=cfg.load_event)
        except PlaywrightTimeout:
            raise SetupError(f"task {task.id}: {url} did not load within {cfg.navigation_timeout_s}s") from None
        except PlaywrightError as exc:
            if self._dead():
                raise
            raise SetupError(f"task {task.id}: cannot open {url} ({_first_line(exc)}); "
                             "is its server running?") from None
        if response is not None and not response.ok:
            raise SetupError(f"task {task.id}: {url} answered HTTP {response.status}; check the task's url")
        app_state = task.setup.get("app_state")
        if app_state is not None:
            if not self._app_ready(session):
                raise SetupError(f"task {task.id}: {url} defines no window.uivenus.setup() after "
                                 f"{cfg.action_timeout_s}s; app_state needs a sandbox app page")
            _run(session, _JS_SETUP, json.loads(json.dumps(app_state, default=dict)))
        self._settle(session)

    def _app_ready(self, session: Session) -> bool:
        """Wait (bounded by the action timeout) until the page defines `window.uivenus.setup()`. Polled over
        DevTools (`_run`): Playwright's `wait_for_function` first injects its 350 kB selector engine into every new
        document, which a collection worker paid on each episode's reset (issue 17)."""
        return _poll(session, lambda: bool(_run(session, _JS_HAS_APP)), self.config.action_timeout_s)

    def _fresh_session(self) -> Session:
        """A new context and page (the last episode's context closed): nothing of an earlier episode in them."""
        if self._session is not None:
            try:
                self._session.context.close()
            except PlaywrightError:
                pass
            self._session = None
        cfg, mode = self.config, self._mode
        width, height = cfg.screen_size
        context = self._chromium.browser.new_context(
            viewport={"width": width, "height": height},
            device_scale_factor=cfg.device_scale_factor or mode.device_scale_factor,
            is_mobile=mode.touch, has_touch=mode.touch, user_agent=self._user_agent,
        )
        context.set_default_timeout(cfg.action_timeout_s * 1000)
        context.set_default_navigation_timeout(cfg.navigation_timeout_s * 1000)
        context.add_init_script(_JS_WATCH_TABS.source)
        context.add_init_script(_JS_HIDE_CARET.source)
        page = context.new_page()
        context.on("page", lambda tab: self._new_tabs.append(tab))
        self._session = self._attach(context, page)
        return self._session

    def _reused(self, task: TaskSpec) -> Session | None:
        """With `config.reuse_page`, the last episode's page made as clean as a fresh one for `task`: its storage,
        the site's data and cookies wiped, its routes dropped, the pointer at a fresh page's place, its history back
        to a fresh page's (about:blank alone). None — a fresh context — where that cannot be vouched for: another
        tab open, the page on another site than the task's (an error page's origin is not the site whose storage
        the app used), a crash."""
        session = self._session
        if not self.config.reuse_page or session is None or session.opener is not None or session.crashed:
            return None
        page, context = session.page, session.context
        origin = _origin(page.url)
        if page.is_closed() or len(context.pages) != 1 or origin is None or origin != _origin(task.url):
            return None
        _run(session, _JS_WIPE_PAGE)
        session.touch.cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        context.clear_cookies()
        context.unroute("**/*")
        if not self._mode.touch:
            page.mouse.move(0, 0)  # where a fresh page's pointer is: nothing of the last screen stays hovered
        page.goto("about:blank")  # the history a fresh page has before its task's page: about:blank alone
        session.touch.cdp.send("Page.resetNavigationHistory")
        session.traffic.pending.clear()
        session.traffic.navigating = False
        session.last_point = None
        return session

    def _keep_to(self, hosts: HostPolicy, task_url: str | None) -> Callable[[Any], None]:
        """A route handler that aborts page navigations (links, forms, redirects) to hosts `hosts` refuses, and
        records them (`BLOCKED` in the next step's info); other requests (images, scripts, APIs) go through."""
        def route(handle: Any) -> None:
            request = handle.request
            why = hosts.refusal(request.url, task_url) if request.is_navigation_request() else None
            if why is None:
                handle.continue_()
            else:
                stopped = {"url": request.url[:300], "why": why}
                self._blocked.append(stopped)
                self._stopped.append(stopped)
                handle.abort("blockedbyclient")
        return route

    def _attach(self, context: Any, page: Any, opener: Session | None = None) -> Session:
        """Look at `page` from now on: its own CDP channel for touches, request tracking, crash flag."""
        cdp = context.new_cdp_session(page)
        touch = Touch(cdp)
        session = Session(context, page, cdp, touch, touch if self._mode.touch else Mouse(page), Traffic(page), opener)
        page.on("crash", lambda _page: setattr(session, "crashed", True))
        page.on("download", lambda download: self._downloads.append(
            {"url": download.url, "filename": download.suggested_filename}))
        if self.config.capture_responses:
            page.on("response", self._keep_response)
        return session

    def _keep_response(self, response: Any) -> None:
        if any(fnmatch.fnmatchcase(response.url, pattern) for pattern in self.config.capture_responses):
            self._responses.append(response)

    def _follow_new_tab(self, session: Session) -> Session:
        """The last action opened a tab (target=_blank, window.open): look at it from now on, as a browser does."""
        page = self._new_tabs[-1]
        self._new_tabs.clear()
        page.bring_to_front()
        self._session = self._attach(session.context, page, opener=session)
        return self._session

    def _live(self) -> Session:
        if self._session is None:
            raise EnvError("no page is open; call reset(task) first")
        return self._session

    def _dead(self) -> bool:
        session = self._session
        return (not self._chromium.connected
                or session is None or session.crashed or session.page.is_closed())

    # -- observing (Playwright thread) ---------------------------------------------------------------

    def _capture(self) -> Observation:
        """Screenshot (logical pixels), then the page's text and focused element, so that whatever the pixels show
        is in the text however late the page rendered it (a hashchange handler, a timer): the guard scans what the
        agent sees, and reads the field a Type goes into from `info[FOCUSED_ELEMENT]` without asking again."""
        session = self._live()
        page = session.page
        self._read.clear()  # a new screen
        png = self._screenshot(session)
        image = Image.open(io.BytesIO(png))  # decoded lazily, on first pixel access
        if image.size != self.screen_size:
            image, png = image.resize(self.screen_size), None  # the bytes no longer hold these pixels
        info: dict[str, Any] = {}
        try:
            snapshot = _run(session, _JS_READ_PAGE, {"limit": self.config.max_text_chars})
            info[FOCUSED_ELEMENT] = snapshot["focused"]  # element_at(None) as of this screen, for the guard
        except PlaywrightError:  # a navigation replaced the document mid-call: no text this time
            if self._dead():
                raise
            snapshot = {"text": None, "title": None, "app": None}
        return Observation(
            screenshot=image, platform=self.platform, size=self.screen_size, url=page.url,
            app=snapshot["app"], text=snapshot["text"], info={"title": snapshot["title"], **info}, png=png,
        )

    def _screenshot(self, session: Session) -> bytes:
        """The viewport as PNG, in one DevTools call: Playwright's `page.screenshot` adds four round trips to the
        page around the same call (hide the caret, wait for fonts, read the layout, restore), a third of a click
        step. The caret is hidden once per document (`hide_caret.js`: it blinks); fonts are waited for by the
        settle check. Chromium captures the emulated viewport in CSS pixels (`_capture` resizes if it ever did not).
        `optimizeForSpeed` compresses the PNG less (the same pixels, a larger file): ~40 % less CPU per capture,
        which a collection worker pays on every step (`BrowserConfig.fast_png`).
        """
        params = {"format": "png", "optimizeForSpeed": self.config.fast_png}
        return base64.b64decode(session.cdp.send("Page.captureScreenshot", params)["data"])

    def _settle(self, session: Session) -> bool:
        """Wait (bounded) until no navigation or request is in flight and the document has loaded; False when the
        page was still busy at the deadline (a live page that polls or streams never settles).

        The common case — an action that starts nothing — costs one round trip to the page, which also
        gives the browser the moment it needs to report a navigation the action started.
        """
        tab_coming = False

        def settled() -> bool:
            nonlocal tab_coming
            try:
                check = _run(session, _JS_SETTLE)
            except PlaywrightError:
                if self._dead():
                    raise
                check = None
            ready = check is not None and check["ready"] == "complete" and check["fonts"] == "loaded"
            tab_coming = (tab_coming or (check is not None and check["tabs"] > 0)) and not self._new_tabs
            return ready and not session.traffic.busy and not tab_coming

        return _poll(session, settled, self.config.settle_timeout_s)

    # -- acting (Playwright thread) -----------------------------------------------------------------

    def _element_at(self, point: tuple[float, float]) -> Mapping[str, Any] | None:
        """The element at `point` on the current screen, read from the page the first time it is asked for."""
        if point not in self._read:
            self._read[point] = _run(self._live(), _JS_READ_PAGE, {"point": list(point)})
        return self._read[point]

    def _perform(self, action: Action) -> dict[str, Any]:
        """Carry out one action (a ActionSequence member by member), letting the page settle after each;
        returns the action's info."""
        if isinstance(action, ActionSequence):
            info: dict[str, Any] = {}
            for member in action.actions:
                info.update(self._perform(member))
            return info
        self._read.clear()  # the screen those reads were of is about to change
        info = dict(self._act(self._live(), action) or {})
        session = self._live()  # PressBack may have closed a tab and gone back to its opener
        settled = self._settle(session)
        if self._new_tabs:
            session = self._follow_new_tab(session)
            info[NEW_TAB] = session.page.url
            settled = self._settle(session)
        if not settled:
            info[UNSETTLED] = self.config.settle_timeout_s
        if self._downloads:
            info[DOWNLOADS], self._downloads = list(self._downloads), []
        if self._blocked:
            info[BLOCKED], self._blocked = list(self._blocked), []
        return info

    def _perform_and_capture(self, action: Action) -> tuple[dict[str, Any], Observation]:
        """Carry out `action` and capture the screen after it; a pointer action's info records what its point hit
        (`HIT_ELEMENT`: the element there on the screen the action was chosen on, read before the action unless the
        guard already read it)."""
        point = action.point if isinstance(action, ACTS_ON_POINT) else None
        hit: Mapping[str, Any] | None = None
        if point is not None:
            try:
                read = self._element_at((float(point[0]), float(point[1])))
                hit = read or {"tag": None, "text": ""}  # blank page background: the point hit nothing
            except PlaywrightError:  # the page was being replaced: no record, the action still runs
                if self._dead():
                    raise
        info = self._perform(action)
        if hit is not None:
            info = {**info, HIT_ELEMENT: hit}
        return info, self._capture()



def _poll(session: Session, done: Callable[[], bool], timeout_s: float) -> bool:
    """Ask `done` until it says yes or `timeout_s` passes (False then), 20 ms apart on the page's own clock: the
    common case, already done, costs the one check."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() >= deadline:
            return False
        session.page.wait_for_timeout(20)
    return True


def _run(session: Session, script: PageScript, arg: Any = None) -> Any:
    """A page script's JSON result, evaluated over the tab's DevTools channel: a third less time than Playwright's
    `evaluate` (the settle check and the two reads run on every step). The argument goes in as a JSON string the
    page parses: data, never code. A script that throws raises PlaywrightError, as `evaluate` would."""
    call = f"({script.source})(JSON.parse({json.dumps(json.dumps(arg))}))"
    reply = session.cdp.send("Runtime.evaluate", {"expression": call, "awaitPromise": True, "returnByValue": True})
    if "exceptionDetails" in reply:
        details = reply["exceptionDetails"]
        raise PlaywrightError(f"{script.name}: {details.get('exception', {}).get('description') or details['text']}")
    return reply["result"].get("value")


def _origin(url: str | None) -> str | None:
    """scheme://host[:port] of an http(s) URL (None for others: about:, data:, error pages)."""
    parts = urlsplit(url or "")
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else None


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__

