"""The one contract every environment keeps: reset(task) -> Observation, step(action) -> StepResult.

Executors take actions in the screen's logical pixels. `EnvBase` does what all of them share — the
platform check, the on-screen check, timing and the context-manager protocol — so each concrete env
writes only `_reset`, `_execute`, `_observe`, `state` and `close`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from PIL import Image

from uivenus.actions.points import iter_points
from uivenus.actions.space import (
    Action, Click, DoubleClick, LongPress, Platform, RightClick, SelectOption, TripleClick, check_platform,
)
from uivenus.actions.values import ActionError
from uivenus.images import remember_png
from uivenus.records import TaskSpec


class EnvError(RuntimeError):
    """Base of environment errors."""


class PlatformMismatchError(EnvError):
    """The action belongs to another platform (e.g. PressHome on a desktop)."""


class OffScreenError(EnvError):
    """The action's point lies outside the screen's logical pixels."""


class EnvCrashedError(EnvError):
    """The underlying browser/display/device died or hung; the env may recover on the next reset/step."""


class SetupError(EnvError):
    """The task could not be set up (app missing, URL unreachable, bad setup data)."""


#: The `Observation.info` key under which an env with a DOM hands over the focused element (as its `element_at(None)`
#: reads it), read together with the screen, so that the guard need not ask the page again.
FOCUSED_ELEMENT = "focused_element"
#: The `StepResult.info` key under which an env with a DOM records what a pointer action's point hit on the screen the
#: action was chosen on (tag, role, text, labels, nth, …: the element record `element_at` gives; the guard's read of
#: that point when it made one, else a read just before the action), so verifiers know what each action acted on
#: without OCR.
HIT_ELEMENT = "hit"
#: Actions that act on the element under their point (what `HIT_ELEMENT` records).
ACTS_ON_POINT = (Click, DoubleClick, TripleClick, RightClick, LongPress, SelectOption)


@dataclass(frozen=True)
class Observation:
    """What the agent sees (the screenshot) plus what checkers and judges may also read."""

    screenshot: Image.Image
    platform: Platform
    size: tuple[int, int]  # logical (width, height) of the screen; the screenshot has this size
    url: str | None = None
    app: str | None = None
    text: str | None = None  # accessibility / DOM text, for judges and the guard, not for the policy
    info: Mapping[str, Any] = field(default_factory=dict)
    #: The screenshot as the env received it already encoded (PNG bytes of exactly `screenshot`'s pixels), or
    #: None when the env only had raw pixels: the store writes these bytes as they are instead of encoding again.
    png: bytes | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "info", MappingProxyType(dict(self.info)))
        if self.png is not None:  # a policy sending this screenshot sends these bytes, not a new encoding
            remember_png(self.screenshot, self.png)


@dataclass(frozen=True)
class StepResult:
    """The outcome of one action: the new observation, whether it executed, why not, how long it took."""

    observation: Observation
    executed: bool
    error: str | None = None
    timings: Mapping[str, float] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"url": ...} for GetUrl, {"recovered": True}

    def __post_init__(self) -> None:
        object.__setattr__(self, "timings", MappingProxyType(dict(self.timings)))
        object.__setattr__(self, "info", MappingProxyType(dict(self.info)))


@runtime_checkable
class Env(Protocol):
    """The environment plug point (browser, desktop, Android, sandbox apps)."""

    platform: Platform

    @property
    def screen_size(self) -> tuple[int, int]: ...

    def reset(self, task: TaskSpec) -> Observation: ...

    def step(self, action: Action) -> StepResult: ...

    def observe(self) -> Observation: ...

    def state(self) -> Mapping[str, Any]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Env: ...

    def __exit__(self, *exc: object) -> None: ...


class EnvBase:
    """Shared behaviour; subclasses set `platform` and implement the underscored hooks."""

    platform: Platform

    def __enter__(self) -> EnvBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def screen_size(self) -> tuple[int, int]:
        raise NotImplementedError

    def validate(self, action: Action) -> None:
        """Raise a typed error for an action this env cannot take (wrong platform, off-screen point)."""
        try:
            check_platform(action, self.platform)
        except ActionError as exc:
            raise PlatformMismatchError(f"{exc}; this is a {self.platform.value} environment") from None
        width, height = self.screen_size
        for name, (x, y) in iter_points(action):
            if not (0 <= x < width and 0 <= y < height):
                raise OffScreenError(
                    f"{action.type}.{name}=({x}, {y}) is off the {width}x{height} screen; "
                    "convert model coordinates with uivenus.actions.coords.Frame first"
                )

    def step(self, action: Action) -> StepResult:
        """Validate, execute, observe; execution failures become `executed=False` with the error."""
        self.validate(action)
        started = time.perf_counter()
        info: dict[str, Any] = {}
        error: str | None = None
        try:
            info = dict(self._execute(action) or {})
            executed = True
        except EnvCrashedError as exc:
            executed, error = False, f"{type(exc).__name__}: {exc}"
            info = {"recovered": self._recover()}
        except EnvError as exc:
            executed, error = False, f"{type(exc).__name__}: {exc}"
        acted = time.perf_counter()
        observation = self.observe()
        done = time.perf_counter()
        return StepResult(
            observation=observation,
            executed=executed,
            error=error,
            timings={"execute_s": acted - started, "observe_s": done - acted},
            info=info,
        )

    def _execute(self, action: Action) -> Mapping[str, Any] | None:
        raise NotImplementedError

    def _recover(self) -> bool:
        """Bring the env back after a crash; True when it is usable again."""
        return False

    def observe(self) -> Observation:
        raise NotImplementedError

    def state(self) -> Mapping[str, Any]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError
