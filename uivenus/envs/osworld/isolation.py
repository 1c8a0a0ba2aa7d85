"""Where an OSWorld task's processes run: a throwaway root seen from inside a bubblewrap sandbox, or the bare host.

An `IsolatedRoot` is a fresh directory with `home/` (seen inside as `/home/user`) and `tmp/` (seen as `/tmp`).
Every setup command and app of the task runs in one bubblewrap sandbox: the host's `/` read-only, tmpfs over
`/home`, `/root`, `/run` and `/tmp` with the root's own folders bound in their place, its own pid, ipc and uts
namespaces, its own session bus (with AT-SPI on), and a user namespace in which everything runs as `user`
(uid 1000, HOME=/home/user; VLC, for one, refuses to run as root). Nothing a task or a model does there can write a host
file outside the root or signal a host process; `close()` kills every process and deletes the root.

`sudo` (decided): setup commands find a `sudo` on PATH that drops its options (and the password `sudo -S` reads)
and runs the rest as `user`, the sandbox's only user, so OSWorld's `echo password | sudo -S ...` steps do what
they can: writes to the home work, writes to system folders fail as read-only, as they would for anyone without
root. There is no real root in the sandbox; apps and the agent have no `sudo` at all.

`UnsafeHost` runs the same calls on the bare host (HOME and `/home/user/...` paths map to a throwaway folder, other
paths are the host's): only for a user who passes `--unsafe-host` explicitly.
"""

from __future__ import annotations

import json
import os
import shutil
import select
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Protocol

from uivenus.envs.base import SetupError
from uivenus.envs.x11 import SOCKET_DIR, spawn, stop

__all__ = ["BWRAP_PACKAGE", "HOME", "BubblewrapMissing", "CommandFailed", "IsolatedRoot", "Root", "UnsafeHost",
           "command_argv"]

HOME = PurePosixPath("/home/user")  # the VM user's home, which OSWorld tasks name
SANDBOX_TMP = PurePosixPath("/tmp")
BWRAP_PACKAGE = "bubblewrap"
_SUDO_DIR = "/run/uivenus/bin"  # where the setup commands' sudo lives inside the sandbox
_BUS = "unix:path=/tmp/.uivenus-session-bus"  # the root's session bus, inside the sandbox
_A11Y_BUS = "unix:path=/tmp/.uivenus-a11y-bus"  # its AT-SPI bus
_A11Y_CONFIG = "/usr/share/defaults/at-spi2/accessibility.conf"  # at-spi2-core's bus configuration
#: Every process in the root talks to the root's buses, with the accessibility bridges of GTK and Qt on, in a GNOME
#: session as on the OSWorld VM: that makes LibreOffice's windows pick its GTK 3 toolkit (its plain X11 one exposes
#: no accessibility tree) while its headless runs keep their own (forcing SAL_USE_VCLPLUGIN=gtk3 made a headless
#: `--convert-to` leave a profile whose next window opened 24x26 pixels).
_ACCESSIBLE = {"DBUS_SESSION_BUS_ADDRESS": _BUS, "AT_SPI_BUS_ADDRESS": _A11Y_BUS, "GTK_MODULES": "gail:atk-bridge",
               "NO_AT_BRIDGE": "0", "QT_ACCESSIBILITY": "1", "XDG_CURRENT_DESKTOP": "GNOME"}
_SUDO = """#!/bin/sh
# uivenus sandbox sudo: the sandbox has one user and read-only system folders; drop sudo's options, run the rest.
while [ $# -gt 0 ]; do
  case "$1" in
    -u|-g|-p|-C|-h|-U|-r|-t|-D) shift 2 ;;
    --) shift; break ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -eq 0 ] && exit 0
exec "$@" </dev/null
"""


class BubblewrapMissing(SetupError):
    """bwrap is not installed: no setup command may run outside a sandbox."""


class CommandFailed(SetupError):
    """A command in the root could not start or ran past its timeout; the message names it."""


def command_argv(command: Sequence[str] | str) -> list[str]:
    """An argv list as it is, a string as a `sh -c` command line (OSWorld's `shell: true` form)."""
    if isinstance(command, str):
        return ["/bin/sh", "-c", command]
    if not command or not all(isinstance(part, str) for part in command):
        raise SetupError(f"a command must be a non-empty argv list of strings or a shell string, got {command!r}")
    return list(command)


class Root(Protocol):
    """Where a task's commands and apps run and where its `/home/user` and `/tmp` files are on the host."""

    display: str
    isolated: bool

    def run(self, command: Sequence[str] | str, *, timeout: float = 60.0, setup: bool = False
            ) -> subprocess.CompletedProcess[str]: ...

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]: ...

    def serve(self, argv: Sequence[str]) -> subprocess.Popen[bytes]: ...

    def host_path(self, path: str) -> Path: ...

    def close(self) -> None: ...


class _Processes:
    """The long-lived apps a root started (stopped on close) and the logs they write."""

    def __init__(self, logs: Path) -> None:
        self.logs, self.started = logs, []

    def start(self, argv: list[str], display: str) -> subprocess.Popen[bytes]:
        process = spawn(argv, display, self.logs / f"app-{len(self.started)}.log")
        self.started.append(process)
        return process

    def serve(self, argv: list[str], display: str) -> subprocess.Popen[bytes]:
        """A helper that answers on its stdin/stdout pipes (its errors go to the log)."""
        with open(self.logs / f"helper-{len(self.started)}.log", "ab") as err:
            try:
                process = subprocess.Popen(argv, env={**os.environ, "DISPLAY": display}, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=err, start_new_session=True)
            except OSError as exc:
                raise CommandFailed(f"cannot start {argv}: {exc}") from None
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in self.started:
            stop(process)
        self.started.clear()


def _run(argv: list[str], display: str, cwd: Path | None, env: Mapping[str, str], timeout: float
         ) -> subprocess.CompletedProcess[str]:
    """Run a command to its end. Its output goes to files, not pipes: a process it leaves running (`app &`)
    would hold a pipe open and keep the caller waiting for its end forever."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            process = subprocess.Popen(argv, cwd=cwd, env={**os.environ, **env, "DISPLAY": display},
                                       stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        except OSError as exc:
            raise CommandFailed(f"cannot run {argv}: {exc}") from None
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            stop(process)
            raise CommandFailed(f"{argv[-1]!r} ran past its {timeout:g}s timeout") from None
        out.seek(0)
        err.seek(0)
        text = [f.read().decode(errors="replace") for f in (out, err)]
    return subprocess.CompletedProcess(argv, code, text[0], text[1])


class IsolatedRoot:
    """A throwaway root whose commands and apps run inside one bubblewrap sandbox; nothing they write reaches the host.

    A keeper process holds the sandbox's namespaces for the root's lifetime; every command and app joins them
    (nsenter), so they all see one another (a setup `pkill` reaches the task's app) and none of the host's
    processes. Killing the keeper ends every process of the sandbox at once.
    """

    isolated = True

    def __init__(self, display: str, *, parent: Path | None = None, timeout: float = 10.0) -> None:
        self.bwrap, self.nsenter = shutil.which("bwrap"), shutil.which("nsenter")
        if self.bwrap is None:
            raise BubblewrapMissing(
                f"bwrap is not installed: install the Debian package '{BWRAP_PACKAGE}' (apt-get install "
                f"{BWRAP_PACKAGE}) or pass --unsafe-host to run the task's setup on this machine itself")
        if self.nsenter is None:
            raise BubblewrapMissing("nsenter is not installed: install the Debian package 'util-linux'")
        self.display = display
        self.dir = Path(tempfile.mkdtemp(prefix="uivenus-osworld-", dir=parent))
        self.home, self.tmp, self._bin = self.dir / "home", self.dir / "tmp", self.dir / "bin"
        for folder in (self.home, self.tmp, self._bin, self.dir / "logs"):
            folder.mkdir()
        sudo = self._bin / "sudo"
        sudo.write_text(_SUDO)
        sudo.chmod(0o755)
        self._processes = _Processes(self.dir / "logs")
        try:
            self._keeper, self._pid = self._start_keeper(timeout)
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        self._start_bus(timeout)

    def _start_bus(self, timeout: float) -> None:
        """The root's own session and accessibility buses: apps reach no host bus, and the accessibility tree is
        this root's even where an earlier root's AT-SPI address is still announced on the display."""
        if shutil.which("dbus-daemon") is None:
            return
        buses = [(_BUS, ["--session"])]
        if Path(_A11Y_CONFIG).is_file():
            buses.append((_A11Y_BUS, [f"--config-file={_A11Y_CONFIG}"]))
        for address, kind in buses:
            self._processes.start(self._enter(["dbus-daemon", *kind, f"--address={address}", "--nofork",
                                               "--nopidfile"], setup=False), self.display)
        deadline = time.monotonic() + timeout
        for address, _ in buses:
            while not self.host_path(address.removeprefix("unix:path=")).exists() and time.monotonic() < deadline:
                time.sleep(0.01)

    def _start_keeper(self, timeout: float) -> tuple[subprocess.Popen[bytes], int]:
        """Start the process that holds the sandbox's namespaces; its pid inside them is what others join.

        It is the sandbox's pid 1, which no signal from inside can end (a task's `pkill sleep` cannot take the
        sandbox down); only `close()` from outside does."""
        argv = [
            self.bwrap or "bwrap", "--unshare-user", "--uid", "1000", "--gid", "1000",
            "--unshare-pid", "--as-pid-1", "--unshare-ipc", "--unshare-uts",
            "--die-with-parent", "--new-session",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/home", "--tmpfs", "/root", "--tmpfs", "/run", "--tmpfs", "/tmp",
            "--bind", str(self.home), str(HOME), "--bind", str(self.tmp), str(SANDBOX_TMP),
            "--ro-bind", str(self._bin), _SUDO_DIR,
        ]
        if SOCKET_DIR.is_dir():  # the X server's socket: the sandbox's /tmp hides the host's
            argv += ["--ro-bind", str(SOCKET_DIR), str(SOCKET_DIR)]
        read, write = os.pipe()
        try:
            keeper = subprocess.Popen([*argv, "--info-fd", str(write), "--",
                                       "sh", "-c", "echo up; exec sleep infinity"],
                                      pass_fds=(write,), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, start_new_session=True)
        finally:
            os.close(write)
        try:
            pid = _child_pid(read, timeout)
            assert keeper.stdout is not None
            if not select.select([keeper.stdout], [], [], timeout)[0] or keeper.stdout.readline() != b"up\n":
                raise ValueError("the sandbox's first process did not start")  # it prints once fully set up
            return keeper, pid
        except (ValueError, KeyError):
            stop(keeper)
            error = keeper.stderr.read().decode(errors="replace") if keeper.stderr else ""
            raise SetupError(f"bubblewrap could not make the sandbox: {error.strip() or 'no output'}; user "
                             "namespaces must be enabled (sysctl kernel.unprivileged_userns_clone=1)") from None

    def _enter(self, argv: list[str], *, setup: bool, env: Mapping[str, str] = {}) -> list[str]:
        path = os.environ.get("PATH", "/usr/bin:/bin")
        settings = {"HOME": str(HOME), "USER": "user", "LOGNAME": "user", "DISPLAY": self.display, "TMPDIR": "/tmp",
                    "PATH": f"{_SUDO_DIR}:{path}" if setup else path, **_ACCESSIBLE, **env}
        return [self.nsenter or "nsenter", "--target", str(self._pid), "--user", "--mount", "--pid", "--ipc", "--uts",
                "--setuid", "1000", "--setgid", "1000", "--", "env", "-u", "XAUTHORITY", "-C", str(HOME),
                *(f"{k}={v}" for k, v in settings.items()), *argv]

    def run(self, command: Sequence[str] | str, *, timeout: float = 60.0, setup: bool = False
            ) -> subprocess.CompletedProcess[str]:
        """Run a command to its end inside the sandbox (a `setup` command has the sandbox's `sudo`)."""
        return _run(self._enter(command_argv(command), setup=setup), self.display, None, {}, timeout)

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start a long-lived app inside the sandbox; it is stopped on `close()`."""
        return self._processes.start(self._enter(command_argv(argv), setup=False, env=env or {}), self.display)

    def serve(self, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        """Start a helper inside the sandbox that answers over its stdin/stdout; it is stopped on `close()`."""
        return self._processes.serve(self._enter(command_argv(argv), setup=False), self.display)

    def host_path(self, path: str) -> Path:
        """Where a path of the sandbox (`/home/user/...`, `/tmp/...`, or relative to the home) lies on the host."""
        return _map(path, {HOME: self.home, SANDBOX_TMP: self.tmp})

    def close(self) -> None:
        self._processes.stop_all()
        stop(self._keeper)  # the sandbox's init goes, and with it every process left inside
        shutil.rmtree(self.dir, ignore_errors=True)


class UnsafeHost:
    """The same calls on the bare host (`--unsafe-host`): `/home/user` is a throwaway folder, the rest is real."""

    isolated = False

    def __init__(self, display: str, *, parent: Path | None = None) -> None:
        self.display = display
        self.dir = Path(tempfile.mkdtemp(prefix="uivenus-osworld-host-", dir=parent))
        self.home = self.dir / "home"
        self.home.mkdir()
        (self.dir / "logs").mkdir()
        self._env = {"HOME": str(self.home)}
        self._processes = _Processes(self.dir / "logs")

    def run(self, command: Sequence[str] | str, *, timeout: float = 60.0, setup: bool = False
            ) -> subprocess.CompletedProcess[str]:
        return _run(command_argv(command), self.display, self.home, self._env, timeout)

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        merged = {**self._env, **(env or {})}
        prefix = ["env", "-C", str(self.home), "--", *(f"{k}={v}" for k, v in merged.items())]
        return self._processes.start([*prefix, *command_argv(argv)], self.display)

    def serve(self, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        prefix = ["env", "-C", str(self.home), "--", *(f"{k}={v}" for k, v in self._env.items())]
        return self._processes.serve([*prefix, *command_argv(argv)], self.display)

    def host_path(self, path: str) -> Path:
        return _map(path, {HOME: self.home})

    def close(self) -> None:
        self._processes.stop_all()
        shutil.rmtree(self.dir, ignore_errors=True)


def _child_pid(fd: int, timeout: float) -> int:
    """The sandbox's first pid as bwrap reports it on its info fd (JSON it writes once the sandbox is up)."""
    text, deadline = b"", time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(fd, 4096) if ready else b""
            if ready and not chunk:
                break  # bwrap closed it: it failed before the sandbox was up
            text += chunk
            try:
                return int(json.loads(text)["child-pid"])
            except ValueError:
                continue
    finally:
        os.close(fd)
    raise ValueError(f"no child pid from bwrap: {text!r}")


def _map(path: str, mounts: Mapping[PurePosixPath, Path]) -> Path:
    """A sandbox path (absolute, `~/...` or relative to the home) on the host: under a mount, or the host's own."""
    relative = path.removeprefix("~").lstrip("/") if path.startswith("~") else path
    pure = PurePosixPath(os.path.normpath(path if path.startswith("/") else f"{HOME}/{relative}"))
    for inside, outside in mounts.items():
        if pure.is_relative_to(inside):
            return outside / pure.relative_to(inside)
    return Path(pure)  # outside the mounts: the host's tree (read-only from inside the sandbox)
