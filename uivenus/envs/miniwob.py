"""MiniWoBEnv: the `miniwob` wheel's task pages driven by our own browser env (no Selenium).

A page of the wheel holds its task in a 160x210 area at the top left (flight tasks: 375x667). The env opens the
page (file://, or over a local HTTP server on the wheel's html root for the flight tasks, which need http),
seeds `Math.seedrandom`, sets `core.EPISODE_MAX_TIME`, starts the episode and reads the utterance into the
TaskSpec's instruction. The viewport is exactly the task area, so the screenshot, `screen_size` and the pixels
actions are given in are one and the same; the rest of the page (reward display, click canvas) lies outside
and the document is kept from scrolling. The page grades itself: `state()` reads `WOB_DONE_GLOBAL`,
`WOB_RAW_REWARD_GLOBAL` (±1), `WOB_REWARD_GLOBAL` (time-discounted) and `WOB_REWARD_REASON`. When an episode
ends the page covers its area with the start cover; the env disarms the cover so that no later click can start
a second episode over the first one's reward, and actions that would leave the page are refused. The page's grade
is the "miniwob" check kind (`page_verdict`, and `page_state_check` on a recorded state), registered here with the
one check registry (`uivenus.envs.checks`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from uivenus.actions.space import Action, Launch, Platform, PressBack, PressHome
from uivenus.envs.base import Env, Observation, SetupError
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.browser_actions import BrowserActionError
from uivenus.envs.browser_config import BrowserConfig
from uivenus.envs.checks import Checker, CheckOutcome, register_checker
from uivenus.envs.page_script import page_script
from uivenus.envs.sandbox.server import SandboxServer
from uivenus.records import TaskSpec

#: The task area of a MiniWoB page, and of a flight page (CSS pixels, top-left corner of the page).
TASK_AREA = (160, 210)
FLIGHT_AREA = (375, 667)
#: Prefix that names a flight task (`flight.AA` is html/flight/AA/wrapper.html).
FLIGHT_PREFIX = "flight."


class MiniWoBError(SetupError):
    """A MiniWoB task cannot be found or started (unknown name, page never became ready)."""


def html_dir() -> Path:
    """The wheel's `html/` root (found without importing the package, which loads gymnasium)."""
    spec = importlib.util.find_spec("miniwob")
    if spec is None or not spec.submodule_search_locations:
        raise MiniWoBError("the miniwob package is not installed; pip install miniwob")
    return Path(next(iter(spec.submodule_search_locations))) / "html"


def list_tasks() -> tuple[str, ...]:
    """The names of the wheel's MiniWoB++ task pages (`html/miniwob/<name>.html`), sorted."""
    return tuple(sorted(path.stem for path in (html_dir() / "miniwob").glob("*.html")))


def list_flight_tasks() -> tuple[str, ...]:
    """The wheel's flight tasks (`flight.<site>`), which must be served over http."""
    root = html_dir() / "flight"
    return tuple(sorted(f"{FLIGHT_PREFIX}{path.parent.name}" for path in root.glob("*/wrapper.html")))


def miniwob_task(name: str, seed: int | str = 0, *, max_steps: int = 30, episode_max_ms: int | None = None,
                 data_mode: str | None = None) -> TaskSpec:
    """The TaskSpec of one seeded episode of task `name`; `MiniWoBEnv.reset` fills in its instruction.

    `episode_max_ms` sets `core.EPISODE_MAX_TIME` (None keeps the page's own limit, 10 s on most pages);
    `data_mode` calls `core.setDataMode` ("train" or "test" question sets of the flight tasks).
    """
    if episode_max_ms is not None and episode_max_ms <= 0:
        raise MiniWoBError(f"episode_max_ms must be positive (None: the page's own limit), got {episode_max_ms!r}")
    episode = {"task": name, "seed": seed, "episode_max_ms": episode_max_ms, "data_mode": data_mode}
    return TaskSpec(
        id=f"miniwob/{name}", instruction="", platform=Platform.WEB, app="miniwob", setup={"miniwob": episode},
        check={"kind": "miniwob"}, max_steps=max_steps, metadata={"seed": seed},
    )


@dataclass(frozen=True)
class MiniWoBConfig:
    """Where pages come from and how long a page may take to start."""

    http: bool = False  # serve every task over local http, not only the flight tasks
    ready_timeout_s: float = 10.0  # wait for the start cover and for WOB_TASK_READY

    def __post_init__(self) -> None:
        if not self.ready_timeout_s > 0:
            raise MiniWoBError(f"ready_timeout_s must be positive, got {self.ready_timeout_s!r}")


# --- fixed page scripts (envs/js/miniwob_*.js; data goes in as arguments, never as code) ------------------------------

#: Keeps the document from scrolling (the task area must stay where the viewport and the screenshot are) and a
#: sideways wheel at its edge from going back in history (Chromium's overscroll navigation). On <html> only: a
#: body that is a scroll container of its own lets the overscroll through.
_CSS_LOCK = "html { overflow: hidden !important; overscroll-behavior: none !important; }"
_JS_START = page_script("uivenus.envs", "miniwob_start.js")
_JS_READY = page_script("uivenus.envs", "miniwob_ready.js")
_JS_DOM = page_script("uivenus.envs", "miniwob_dom.js")
_JS_URL = page_script("uivenus.envs", "miniwob_url.js")
_JS_STATE = page_script("uivenus.envs", "miniwob_state.js")

#: Actions that would take the page away from its task (the page cannot grade what it no longer shows).
_LEAVING = (PressBack, PressHome, Launch)


class MiniWoBEnv(BrowserEnv):
    """A Chromium page on one MiniWoB++ task: `reset(miniwob_task(name, seed))`, `step`, `state()`, `done`."""

    def __init__(self, config: MiniWoBConfig | None = None, browser: BrowserConfig | None = None) -> None:
        browser = browser or BrowserConfig()
        if browser.mode != "desktop":
            raise MiniWoBError(f"MiniWoB pages are desktop web pages; use BrowserConfig(mode='desktop'), "
                               f"not {browser.mode!r}")
        super().__init__(replace(browser, viewport=TASK_AREA))
        self.miniwob_config = config or MiniWoBConfig()
        self.task: TaskSpec | None = None  # the current episode's task, instruction filled in
        self._server: SandboxServer | None = None
        self._utterance = ""

    @property
    def done(self) -> bool:
        """The page has ended the episode (success, failure or timeout); its reward is final."""
        return bool(self.state()["done"])

    def url_for(self, name: str) -> str:
        """Where task `name` is opened: file:// for MiniWoB pages, this env's local http server for flights."""
        root = html_dir()
        if name.startswith(FLIGHT_PREFIX):
            path = root / "flight" / name.removeprefix(FLIGHT_PREFIX) / "wrapper.html"
        else:
            path = root / "miniwob" / f"{name}.html"
        if not path.is_file():
            raise MiniWoBError(f"no MiniWoB task {name!r} in {root}; see list_tasks() and list_flight_tasks()")
        if not (self.miniwob_config.http or name.startswith(FLIGHT_PREFIX)):
            return path.as_uri()
        if self._server is None:
            self._server = SandboxServer(root=root)
        return f"{self._server.base_url}/{path.relative_to(root).as_posix()}"

    def reset(self, task: TaskSpec) -> Observation:
        """Open the task's page, seed it, start the episode; `self.task` then holds the utterance."""
        name = _episode(task)["task"]
        area = FLIGHT_AREA if name.startswith(FLIGHT_PREFIX) else TASK_AREA
        self.config = replace(self.config, viewport=area)
        opened = replace(task, url=self.url_for(name))
        observation = super().reset(opened)
        self.task = opened.with_instruction(self._utterance)
        return replace(observation, info={**observation.info, "instruction": self._utterance})

    def state(self) -> Mapping[str, Any]:
        """The page's own verdict: done, raw_reward (±1, or partial), reward (time-discounted), reason, utterance.

        A page that has left its task (a link followed, a form that reloaded the document) can no longer grade
        the episode: it is over, with reward 0 and a reason saying where the page went.
        """
        state = self.query_dom(_JS_STATE)
        if state is None:
            url = self.query_dom(_JS_URL)
            return {"done": True, "raw_reward": 0, "reward": 0, "reason": f"the page left its task for {url}",
                    "utterance": self._utterance}
        return state

    def dom(self) -> Mapping[str, Any]:
        """`core.getDOMInfo()`: the task's element tree with boxes (left, top, width, height) in screen pixels."""
        return self.query_dom(_JS_DOM)

    def close(self) -> None:
        super().close()
        if self._server is not None:
            self._server.close()
            self._server = None

    # -- BrowserEnv hooks ---------------------------------------------------------------------------

    def _execute(self, action: Action) -> Mapping[str, Any] | None:
        if isinstance(action, _LEAVING):
            raise BrowserActionError(f"{action.type} would leave the MiniWoB page; the episode stays on its task")
        info = dict(super()._execute(action) or {})
        info["done"] = self.done  # which step ended the episode, for the trajectory record
        return info

    def _open(self, task: TaskSpec) -> None:
        """Open the page (BrowserEnv), then start a seeded episode on it (Playwright thread)."""
        super()._open(task)
        episode = _episode(task)
        cfg, page = self.miniwob_config, self._live().page
        timeout_ms = cfg.ready_timeout_s * 1000
        start = {"seed": episode.get("seed", 0), "maxMs": episode.get("episode_max_ms"),
                 "mode": episode.get("data_mode")}
        page.add_style_tag(content=_CSS_LOCK)
        try:
            page.wait_for_selector("#sync-task-cover", state="attached", timeout=timeout_ms)
            page.evaluate(_JS_START.source, start)
            page.wait_for_function(_JS_READY.source, timeout=timeout_ms)
        except PlaywrightTimeout:
            raise MiniWoBError(f"{task.id}: the page did not become ready within {cfg.ready_timeout_s}s; "
                               "raise MiniWoBConfig.ready_timeout_s on a loaded machine") from None
        self._utterance = page.evaluate(_JS_STATE.source)["utterance"]
        self._settle(self._live())


def _episode(task: TaskSpec) -> Mapping[str, Any]:
    """The episode settings of a TaskSpec built by `miniwob_task` (task name, seed, time limit, data mode)."""
    episode = task.setup.get("miniwob")
    if not isinstance(episode, Mapping) or not isinstance(episode.get("task"), str):
        raise MiniWoBError(f"task {task.id} is not a MiniWoB episode; build it with miniwob_task(name, seed)")
    return episode


# --- the page's own grade, as the "miniwob" check kind -------------------------------------------

def page_verdict(env: Env, task: TaskSpec) -> Mapping[str, Any]:
    """The grade the page gave the episode (its whole state): done with a positive raw reward passes."""
    state = dict(env.state())
    return {**state, "passed": bool(state.get("done")) and float(state.get("raw_reward", 0)) > 0}


def page_state_check(task: TaskSpec, state: Mapping[str, Any]) -> CheckOutcome:
    """The page's grade from a recorded `MiniWoBEnv.state()`: success when the raw reward is positive."""
    raw = state.get("raw_reward")
    if raw is None:
        return CheckOutcome(None, "the state has no raw_reward (not a MiniWoB page?)")
    if not state.get("done"):
        return CheckOutcome(False, "the page never graded the episode (not done)")
    reason = f"raw_reward {raw}" + (f" ({state['reason']})" if state.get("reason") else "")
    return CheckOutcome(float(raw) > 0, reason)


MINIWOB = register_checker(Checker("miniwob", page_verdict, page_state_check))
