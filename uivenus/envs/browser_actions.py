"""How BrowserEnv carries out each action on its page (on the Playwright thread): pointer actions through the mode's
pointer (pointer.py: mouse or touch), text and key chords through Playwright's keyboard, Scroll as wheel notches,
SelectOption through a packaged script, and navigation — Back, Home, Launch(url), LaunchApp — only to where the task
and the host policy allow.

`PageActions` is the half of BrowserEnv that acts; the env (browser.py) is the other half: the Env protocol, the
Chromium process, tabs, settling and observing. They are two files because what an action does to a page is one
job and keeping an environment alive around it another. `PageActions` reads only the env's `config` and `_task`,
and the tab it is handed; PressBack on a tab with no history hands the env back the tab that opened it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from uivenus.actions.space import (
    Action, Answer, CallUser, Click, Direction, DoubleClick, Drag, Finished, GetScreenshot, GetUrl, Hotkey,
    Hover, Launch, LaunchApp, LongPress, Point, PressBack, PressEnter, PressHome, PressRecent,
    RightClick, Scroll, SelectOption, Swipe, TakeNote, TripleClick, Type, Wait,
)
from uivenus.envs.base import EnvError
from uivenus.envs.browser_config import BrowserConfig
from uivenus.envs.hosts import TASK_HOSTS, launch_url
from uivenus.envs.page_script import page_script
from uivenus.envs.pointer import Mouse, Touch
from uivenus.envs.traffic import Traffic
from uivenus.records import TaskSpec


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


class BrowserActionError(EnvError):
    """The browser could not carry out an action (no <select> there, unknown app, bad URL, …)."""


def playwright_key(key: str) -> str:
    """The Playwright name of one Hotkey key; `BrowserActionError` for keys a browser cannot press."""
    name = PLAYWRIGHT_KEYS.get(key.lower())
    if name is not None:
        return name
    if len(key) == 1:
        return key
    raise BrowserActionError(f"key {key!r} has no browser equivalent; known keys: {', '.join(sorted(PLAYWRIGHT_KEYS))}")


_JS_SELECT = page_script("uivenus.envs", "select_option.js")


@dataclass
class Session:
    """The live objects of the tab the env is looking at (touched only on the Playwright thread)."""

    context: Any
    page: Any
    cdp: Any  # the page's own DevTools channel: screenshots and touches without Playwright's extra round trips
    touch: Touch
    pointer: Mouse | Touch
    traffic: Traffic
    opener: Session | None = None  # the tab this one was opened from (PressBack returns there)
    crashed: bool = False
    last_point: Point | None = None


class PageActions:
    """Carrying out one action on a tab; mixed into BrowserEnv, which supplies the attributes below."""

    config: BrowserConfig
    _task: TaskSpec | None
    _session: Session | None

    def _act(self, s: Session, action: Action) -> dict[str, Any] | None:
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
                result = page.evaluate(_JS_SELECT.source, [list(point) if point is not None else None, index])
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

    def _back(self, s: Session) -> None:
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
        task = self._task
        task_hosts = task.setup.get(TASK_HOSTS) if task is not None else None
        hosts = self.config.hosts if task_hosts is None else self.config.hosts.narrowed(tuple(task_hosts))
        hosts.check(url, task.url if task is not None else None)
        return url


    def _wait_s(self, seconds: float | None) -> float:
        return min(self.config.wait_s if seconds is None else float(seconds), self.config.max_wait_s)
