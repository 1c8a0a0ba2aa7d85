"""Environments by spec string (`browser`, `phone`, `desktop`, `android[:SERIAL]`, `sandbox:APP`,
`sandbox-phone:APP`), so the CLI, gymnasium ids and configs name an environment in one way.

Each factory imports its env module when called: asking for a browser never loads X11 or adb code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from uivenus.envs.base import Env, EnvError, Observation
from uivenus.records import TaskSpec


class EnvSpecError(EnvError):
    """An environment spec string names an unknown kind or has a missing/extra argument."""


#: Browser mode of each sandbox kind, and the app layout that mode shows.
_SANDBOX_LAYOUTS: Mapping[str, str] = {"desktop": "web", "phone": "phone"}


class SandboxEnv:
    """A browser on one bundled sandbox app that owns the local server serving it (closed with the env).

    A task without a URL opens this env's app (or the task's own `app`); tasks from
    `SandboxTask.spec(env.base_url, env.layout)` run as they are. Everything else is the browser's
    (`reuse_page`: episodes after the first reuse the wiped tab, `BrowserConfig.reuse_page`).
    """

    def __init__(self, app: str, mode: str, *, reuse_page: bool = False) -> None:
        from uivenus.envs.browser import BrowserEnv
        from uivenus.envs.browser_config import BrowserConfig
        from uivenus.envs.sandbox import SandboxServer

        self.app = app
        self.layout = _SANDBOX_LAYOUTS[mode]
        self.server = SandboxServer()
        try:
            self.browser = BrowserEnv(BrowserConfig(mode=mode, reuse_page=reuse_page))
        except BaseException:
            self.server.close()
            raise
        self._closed = False

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def reset(self, task: TaskSpec) -> Observation:
        from uivenus.envs.sandbox.tasks import APP_NAMES, app_url

        if task.url is None:
            app = task.app or self.app
            urls = {"home_url": app_url(self.base_url, "launcher", self.layout),
                    "apps": {name: app_url(self.base_url, name, self.layout)
                             for name in APP_NAMES if name != "launcher"}}
            task = replace(task, app=app, url=app_url(self.base_url, app, self.layout), setup={**urls, **task.setup})
        return self.browser.reset(task)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.browser.close()
        finally:
            self.server.close()

    def __enter__(self) -> SandboxEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:  # step, observe, state, platform, screen_size, DomQuery reads
        if name == "browser":  # not set yet: construction failed part-way
            raise AttributeError(name)
        return getattr(self.browser, name)


def _no_argument(kind: str, argument: str | None) -> None:
    if argument is not None:
        raise EnvSpecError(f"env {kind!r} takes no argument, got {kind}:{argument}")


def _browser(mode: str, kind: str) -> Callable[[str | None], Env]:
    def build(argument: str | None) -> Env:
        from uivenus.envs.browser import BrowserEnv
        from uivenus.envs.browser_config import BrowserConfig

        _no_argument(kind, argument)
        return BrowserEnv(BrowserConfig(mode=mode))
    return build


#: `desktop:ARGUMENT` -> the DesktopConfig options it sets; `unsafe-host` lets OSWorld tasks run their setup and
#: apps on this machine itself instead of in bubblewrap (only ever asked for explicitly: `--unsafe-host`).
_DESKTOP_ARGUMENTS: Mapping[str, Mapping[str, Any]] = {"unsafe-host": {"unsafe_host": True}}


def _desktop(argument: str | None) -> Env:
    from uivenus.envs.desktop import DesktopConfig, DesktopEnv

    if argument is not None and argument not in _DESKTOP_ARGUMENTS:
        raise EnvSpecError(f"env 'desktop' takes no argument or one of {', '.join(_DESKTOP_ARGUMENTS)}, "
                           f"got desktop:{argument}")
    return DesktopEnv(DesktopConfig(**_DESKTOP_ARGUMENTS.get(argument or "", {})))


def _android(serial: str | None) -> Env:
    from uivenus.envs.android import AndroidConfig, AndroidEnv

    return AndroidEnv(AndroidConfig(serial=serial))


def _sandbox(mode: str, kind: str) -> Callable[[str | None], Env]:
    def build(app: str | None) -> Env:
        from uivenus.envs.sandbox.tasks import APP_NAMES

        if app not in APP_NAMES:
            raise EnvSpecError(f"{kind} needs a bundled app, as in {kind}:notes; apps: {', '.join(APP_NAMES)}"
                               + (f" (got {app!r})" if app else ""))
        # every episode after the first reuses the wiped tab: a fresh context started new renderer processes per
        # episode, half of a collection worker's CPU (issue 17); the sandbox apps share one origin, so it always can
        return SandboxEnv(app, mode, reuse_page=True)  # type: ignore[return-value]
    return build


#: Every environment kind by name; the part after the first `:` of a spec is the factory's argument.
ENV_FACTORIES: dict[str, Callable[[str | None], Env]] = {
    "browser": _browser("desktop", "browser"),
    "phone": _browser("phone", "phone"),
    "desktop": _desktop,
    "android": _android,
    "sandbox": _sandbox("desktop", "sandbox"),
    "sandbox-phone": _sandbox("phone", "sandbox-phone"),
}


def make_env(spec: str) -> Env:
    """Build the environment `spec` names, e.g. `browser`, `android:emulator-5554`, `sandbox:notes`,
    `desktop:unsafe-host`."""
    kind, _, argument = spec.strip().partition(":")
    try:
        factory = ENV_FACTORIES[kind]
    except KeyError:
        raise EnvSpecError(f"unknown environment {spec!r}; kinds: {', '.join(ENV_FACTORIES)} "
                           "(android takes :SERIAL, sandbox and sandbox-phone take :APP)") from None
    return factory(argument or None)
