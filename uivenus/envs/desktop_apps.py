"""The apps a desktop env starts: which programs a task (or a model's LaunchApp) may start, starting them on the
display, waiting for their windows and stopping them.

Only what the task names (`setup["apps"]`, its `app`, its materialization plan's launches, `setup["launch"]`) or
`DesktopConfig.allowed_apps` lists ever starts; a model's LaunchApp goes through the same check. In a materialized
task every app runs in the task's root with its home and settings environment. `DesktopEnv` (`envs/desktop.py`)
owns one `AppLauncher` and decides when to launch; this module knows how.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from uivenus.envs.base import EnvError, SetupError
from uivenus.envs.materialize import Materialized
from uivenus.envs.x11 import XConnection, log_tail, spawn, stop
from uivenus.records import TaskSpec

__all__ = ["AppLauncher", "AppNotAllowedError", "AppNotFoundError", "is_path"]

Process = subprocess.Popen[bytes]


class AppNotFoundError(SetupError):
    """An app the task allows is not in `task.setup['apps']` and no executable of its name is on PATH."""


class AppNotAllowedError(EnvError):
    """LaunchApp named a program that neither the task nor `DesktopConfig.allowed_apps` names: nothing started."""


def is_path(name: str) -> bool:
    """An app name with a directory part (or a NUL): a path, which would start a program no allow-list named."""
    return "/" in name or "\\" in name or "\0" in name or name in (".", "..")


def _argv(value: Any, where: str) -> list[str]:
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) and v for v in value):
        return list(value)
    raise SetupError(f"{where} must be an argv list of non-empty strings, e.g. ['xmessage', 'hi'], got {value!r}")


class AppLauncher:
    """Starts the allowed apps of the current task on a display, logs each to its own file, and stops them all."""

    def __init__(self, workdir: Path, *, launch_timeout_s: float, allowed_apps: tuple[str, ...]) -> None:
        self.workdir, self.launch_timeout_s, self.allowed_apps = workdir, launch_timeout_s, allowed_apps
        self.logs: dict[Process, Path] = {}  # every app launched for the current task -> its log
        self.windows: set[int] = set()  # the windows those apps opened
        self._launches = itertools.count()

    def task_argvs(self, task: TaskSpec, materialized: Materialized | None) -> list[list[str]]:
        """What a task starts with: its materialization plan's launches, else `setup['launch']` (argv lists), else
        its `app`."""
        launch = task.setup.get("launch")
        if materialized is not None and materialized.commands:
            return [self.in_sandbox(list(command.argv), materialized) for command in materialized.commands]
        if launch is not None:
            return [_argv(item, "setup.launch") for item in launch]
        if task.app:
            return [self.resolve(task.app, task)]
        return []

    def resolve(self, name: str, task: TaskSpec | None) -> list[str]:
        """The argv of app `name`: its `setup['apps']` entry, else the program of that name on PATH if the task's
        `app` or `allowed_apps` names it. A model's LaunchApp comes here too: no other program ever starts."""
        apps = task.setup.get("apps", {}) if task is not None else {}
        if not isinstance(apps, Mapping):
            raise SetupError(f"task.setup['apps'] must map app names to argv lists, got {type(apps).__name__}")
        if name in apps:
            return _argv(apps[name], f"setup.apps[{name!r}]")
        allowed = sorted({*apps, *([task.app] if task is not None and task.app else []), *self.allowed_apps})
        if is_path(name) or name not in allowed:
            what = "a path" if is_path(name) else "not an app this task allows"
            raise AppNotAllowedError(
                f"app {name!r} refused, nothing was started: it is {what} (allowed: {', '.join(allowed) or 'none'}); "
                "name an allowed app, or allow it in task.setup['apps'] or DesktopConfig.allowed_apps"
            )
        found = shutil.which(name)
        if found is None:
            raise AppNotFoundError(f"app {name!r} is allowed but no executable of that name is on PATH; install it "
                                   "or add it to task.setup['apps'] as an argv list")
        return [found]

    @staticmethod
    def in_sandbox(argv: list[str], materialized: Materialized | None) -> list[str]:
        """`argv` as run in a materialized task: in its root, with its home and settings environment."""
        if materialized is None:
            return argv
        if shutil.which(argv[0]) is None:
            raise AppNotFoundError(f"{argv[0]!r} is not installed or not on PATH; install its Debian package")
        return materialized.command(argv).via_env()

    def launch(self, argv: list[str], display: str) -> Process:
        log_path = self.workdir / f"app-{next(self._launches)}.log"
        process = spawn(argv, display, log_path)
        self.logs[process] = log_path
        return process

    def log_tail(self, process: Process) -> str:
        return log_tail(self.logs[process])

    def wait_windows(self, x: XConnection, known: set[int], count: int, processes: Sequence[Process],
                     timeout: float | None = None) -> list[int]:
        """New top-level windows (at least `count`, or what there is at the timeout, or once every process ended)."""
        deadline = time.monotonic() + (self.launch_timeout_s if timeout is None else timeout)
        while True:
            new = [w for w in x.client_ids() if w not in known]
            if len(new) >= count or time.monotonic() > deadline or all(p.poll() is not None for p in processes):
                self.windows.update(new)
                return new
            time.sleep(0.02)

    @staticmethod
    def wait_windows_gone(x: XConnection, windows: set[int], timeout: float = 2.0) -> None:
        """Wait until the WM has dropped `windows`: X reuses the ids of a dead client for the next one, so a
        window still listed from the last task would hide the new app's window from `wait_windows`."""
        deadline = time.monotonic() + timeout
        while windows & set(x.client_ids()) and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop_all(self) -> set[int]:
        """Stop every app launched; returns the windows they had, which close asynchronously."""
        for process in self.logs:
            stop(process)
        self.logs.clear()
        windows, self.windows = self.windows, set()
        return windows
