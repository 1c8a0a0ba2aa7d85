"""What a browser env is asked for: a mode (desktop web viewport, or an emulated touch phone), its screen, how long
each kind of call may take, and what Launch may open; validated on construction, so a bad value fails where it is
written rather than deep inside a run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from uivenus.actions.space import Platform
from uivenus.envs.chromium import DEFAULT_CHROMIUM, sandbox_blocker
from uivenus.envs.hosts import HostPolicy


class BrowserConfigError(ValueError):
    """A BrowserConfig value is illegal; the message names the field."""


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


#: What `reset` may wait for before the settle wait (Playwright's `wait_until`).
LOAD_EVENTS = ("load", "domcontentloaded", "commit")


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
    capture_responses: tuple[str, ...] = ()  # URL globs whose responses the env keeps (`captured_responses()`)
    load_event: str = "load"  # what reset waits for: load, domcontentloaded (live sites whose load never ends), commit
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
    extra_args: tuple[str, ...] = ()  # more Chromium flags; a --disable-features adds to the list (merged_features)
    # reset reuses the last episode's tab when it is the only one and still on the new task's site (web storage,
    # cookies, site data and history wiped; `BrowserEnv._reused`): no renderer process to start per episode (on
    # in every sandbox env `make_env` builds, and in the safety suite's)
    reuse_page: bool = False
    # screenshots encoded for speed (a fast zlib level: identical pixels, ~1.4x the bytes, ~40 % less CPU per
    # capture); False keeps the smallest PNG, for stores where disk matters more than collection CPU
    fast_png: bool = True

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise BrowserConfigError(f"mode must be one of {sorted(MODES)}, got {self.mode!r}")
        for name in ("launch_timeout_s", "action_timeout_s", "navigation_timeout_s", "settle_timeout_s", "gesture_s"):
            if not getattr(self, name) > 0:
                raise BrowserConfigError(f"{name} must be positive, got {getattr(self, name)!r}")
        if self.load_event not in LOAD_EVENTS:
            raise BrowserConfigError(f"load_event must be one of {', '.join(LOAD_EVENTS)}, got {self.load_event!r}")
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
