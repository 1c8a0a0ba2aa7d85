"""OSWorld's setup steps (`config` and `postconfig` entries): registry `SETUP_STEPS`, step type -> `fn(ctx, **params)`.

Each step does what the public benchmark's step of that type does on its VM, here in the task's isolated root
(`isolation.py`): `download` fetches through the URL-keyed cache, `open`/`launch` start apps under our window
manager, `execute`/`command` run a command to its end (with the sandbox's `sudo`, see `isolation.py`), the Chrome steps
speak to Chromium's DevTools port. Steps that need a cloud account are in `UNSUPPORTED_STEPS` with the reason, which
`support.py` reports before anything runs.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any

from uivenus.envs.base import SetupError
from uivenus.envs.osworld import cdp
from uivenus.envs.osworld.apps import CHROME_PROFILE, app_argv, opener
from uivenus.envs.osworld.context import TaskContext
from uivenus.envs.osworld.downloads import DownloadFailed, fetch, missing
from uivenus.envs.osworld.isolation import command_argv

__all__ = ["SETUP_STEPS", "UNSUPPORTED_STEPS", "StepError", "UnsupportedStep", "run_steps", "setup_step",
           "task_command"]

log = logging.getLogger(__name__)

#: OSWorld's placeholders in commands, with their values in our root (the VM user's password is "password").
PLACEHOLDERS: Mapping[str, str] = MappingProxyType({"{CLIENT_PASSWORD}": "password", "{USERNAME}": "user"})
#: Programs whose launch is a no-op here: OSWorld forwards Chrome's port with socat; our Chromium listens directly.
NO_OP_PROGRAMS = frozenset({"socat"})


class StepError(SetupError):
    """A setup step is malformed or failed; the message names the step's index and type."""


class UnsupportedStep(StepError):
    """A step type we do not run (a cloud account, or unknown); `support.py` reports these before running."""


Step = Callable[..., None]
_STEPS: dict[str, Step] = {}
#: Step type -> how it is run (`@setup_step` fills it).
SETUP_STEPS: Mapping[str, Step] = MappingProxyType(_STEPS)
#: Step types we refuse, and why.
UNSUPPORTED_STEPS: Mapping[str, str] = MappingProxyType({
    "googledrive": "needs a Google account",
    "login": "needs an online account",
    "upload_file": "reads a file from the benchmark's own checkout",
})


def setup_step(name: str) -> Callable[[Step], Step]:
    def register(fn: Step) -> Step:
        if name in _STEPS:
            raise ValueError(f"setup step {name!r} is registered twice")
        _STEPS[name] = fn
        return fn
    return register


def run_steps(ctx: TaskContext, steps: Sequence[Any], where: str = "config") -> None:
    """Run `steps` in order; the first failure raises `StepError` naming `where[i]` and its type."""
    if not isinstance(steps, (list, tuple)):
        raise StepError(f"{where} must be a list of steps, got {type(steps).__name__}")
    for i, step in enumerate(steps):
        kind = step.get("type") if isinstance(step, Mapping) else None
        params = step.get("parameters", {}) if isinstance(step, Mapping) else None
        if not isinstance(params, Mapping):
            raise StepError(f"{where}[{i}] must be {{'type': ..., 'parameters': {{...}}}}, got {step!r}")
        if kind in UNSUPPORTED_STEPS:
            raise UnsupportedStep(f"{where}[{i}]: setup step {kind!r} is not supported: {UNSUPPORTED_STEPS[kind]}")
        fn = _STEPS.get(kind) if isinstance(kind, str) else None
        if fn is None:
            raise UnsupportedStep(f"{where}[{i}]: unknown setup step {kind!r}; known: {', '.join(sorted(_STEPS))}")
        try:
            fn(ctx, **params)
        except TypeError as exc:
            raise StepError(f"{where}[{i}] ({kind}): bad parameters {dict(params)}: {exc}") from None
        except SetupError as exc:
            raise type(exc)(f"{where}[{i}] ({kind}): {exc}") from None


def task_command(command: Sequence[str] | str, shell: bool = False) -> Sequence[str] | str:
    """A step's command with OSWorld's placeholders filled; `shell` joins an argv list into one shell line."""
    if isinstance(command, str):
        filled: Sequence[str] | str = _fill(command)
    else:
        filled = [_fill(part) for part in command_argv(command)]
    return " ".join(filled) if shell and not isinstance(filled, str) else filled


def _fill(text: str) -> str:
    for key, value in PLACEHOLDERS.items():
        text = text.replace(key, value)
    return text


@setup_step("download")
def download(ctx: TaskContext, files: Sequence[Mapping[str, str]]) -> None:
    """Fetch each `{"url", "path"}` through the cache and put it at `path` in the root (all missing URLs named)."""
    urls = [f["url"] for f in files]
    if ctx.offline and missing(ctx.downloads, urls):
        raise DownloadFailed(f"offline and not in the download cache {ctx.downloads}: "
                             f"{', '.join(missing(ctx.downloads, urls))}")
    for spec in files:
        target = ctx.root.host_path(spec["path"])
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fetch(ctx.downloads, spec["url"], offline=ctx.offline), target)


def _launch(ctx: TaskContext, argv: Sequence[str]) -> str | None:
    if argv[0].rsplit("/", 1)[-1] in NO_OP_PROGRAMS:
        return None
    return ctx.desktop.launch(app_argv(argv, cdp_port=ctx.cdp_port))


@setup_step("launch")
def launch(ctx: TaskContext, command: Sequence[str] | str, shell: bool = False) -> None:
    """Start a long-lived app (a shell line runs through `sh -c`) and wait for its window."""
    filled = task_command(command, shell)
    _launch(ctx, command_argv(filled))


@setup_step("open")
def open_file(ctx: TaskContext, path: str) -> None:
    """Open a file of the root in the app of its kind, as a double click on the VM's desktop would, and wait for
    the window showing it (past splash screens)."""
    if not ctx.root.host_path(path).exists():
        raise StepError(f"cannot open {path}: no such file in the task's root")
    _launch(ctx, [opener(path), path])
    name = PurePosixPath(path).name
    if ctx.desktop.wait_title(name) is None:
        raise StepError(f"no window showing {name} appeared after opening {path} "
                        f"(windows: {ctx.desktop.window_titles()})")


def _execute(ctx: TaskContext, command: Sequence[str] | str, shell: bool = False, timeout: float = 120.0,
             **_: Any) -> None:
    """Run a command to its end in the root; a failing command is logged and the setup goes on, as in OSWorld."""
    done = ctx.root.run(task_command(command, shell), timeout=timeout, setup=True)
    if done.returncode != 0:
        log.warning("setup command %r exited %d: %s", command, done.returncode, done.stderr[-400:])


setup_step("execute")(_execute)
setup_step("command")(_execute)


@setup_step("sleep")
def sleep(ctx: TaskContext, seconds: float) -> None:
    time.sleep(float(seconds))


@setup_step("activate_window")
def activate_window(ctx: TaskContext, window_name: str, strict: bool = False, by_class: bool = False) -> None:
    if not ctx.desktop.activate(window_name, strict=strict, by_class=by_class):
        log.warning("activate_window: no window matches %r (windows: %s)", window_name, ctx.desktop.window_titles())


@setup_step("chrome_open_tabs")
def chrome_open_tabs(ctx: TaskContext, urls_to_open: Sequence[str]) -> None:
    """Open each URL in a new tab of the running Chromium (launched by an earlier step); the blank start tab
    closes once the first URL is open, as on OSWorld's VM."""
    blank = [t for t in cdp.tabs(ctx.cdp_port) if t.url.startswith(cdp.NEW_TAB_URLS)]
    for i, url in enumerate(urls_to_open):
        cdp.open_tab(ctx.cdp_port, url)
        if i == 0:
            for tab in blank:
                cdp.close(ctx.cdp_port, tab)


@setup_step("chrome_close_tabs")
def chrome_close_tabs(ctx: TaskContext, urls_to_close: Sequence[str]) -> None:
    """Close every tab showing one of the URLs (compared without a trailing slash)."""
    wanted = {u.rstrip("/") for u in urls_to_close}
    for tab in cdp.tabs(ctx.cdp_port):
        if tab.url.rstrip("/") in wanted:
            cdp.close(ctx.cdp_port, tab)


#: Microseconds from 1601-01-01 (Chrome's epoch) to 1970-01-01.
_CHROME_EPOCH_OFFSET_US = 11_644_473_600_000_000


@setup_step("update_browse_history")
def update_browse_history(ctx: TaskContext, history: Sequence[Mapping[str, Any]]) -> None:
    """Add visits to the profile's History database, each `visit_time_from_now_in_seconds` in the past.

    Chromium must have run once in the root (it creates the database) and be closed: it holds the file open.
    """
    path = ctx.root.host_path(f"{CHROME_PROFILE}/Default/History")
    if not path.is_file():
        raise StepError(f"no Chromium history database at {CHROME_PROFILE}/Default/History: launch and close "
                        "Chrome before this step")
    now = datetime.now(timezone.utc)
    with sqlite3.connect(path) as db:
        for item in history:
            when = now - timedelta(seconds=float(item.get("visit_time_from_now_in_seconds", 0)))
            stamp = int(when.timestamp() * 1_000_000) + _CHROME_EPOCH_OFFSET_US
            cursor = db.execute(
                "INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time, hidden) VALUES (?,?,1,0,?,0)",
                (item["url"], item.get("title", ""), stamp))
            db.execute("INSERT INTO visits (url, visit_time, from_visit, transition, segment_id, visit_duration) "
                       "VALUES (?,?,0,805306368,0,0)", (cursor.lastrowid, stamp))
