"""The Chromium process of a browser env: where it is, how it starts, whether it may sandbox itself, and how a
dead or hung one is found out and killed.

All Playwright work runs on one daemon thread (`PlaywrightThread`), for two reasons: the caller's thread keeps no
event loop (so other code may use sync Playwright beside us), and a call that never returns — a page stuck in
`while(true){}` — can be abandoned after a deadline: `Chromium.call` kills the browser's process tree (by the PID
found from a marker flag on its command line) and raises `EnvCrashedError`; the env decides how to recover.

Chromium refuses to sandbox itself as root, and its namespace sandbox needs unprivileged user namespaces, which
some kernels switch off (sysctls below) and container runtimes often forbid (a seccomp profile that denies
`unshare`). Only there does the browser env run Chromium with `--no-sandbox`.
"""

from __future__ import annotations

import functools
import logging
import os
import queue
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, TypeVar

import psutil
from playwright.sync_api import sync_playwright

from uivenus.envs.base import EnvCrashedError, SetupError

T = TypeVar("T")
log = logging.getLogger(__name__)

#: The features Playwright 1.65 switches off with a `--disable-features` of its own (HTTPS upgrades, the media
#: router, optimization hints, paint holding, ...). Chromium reads only the last `--disable-features` of its command
#: line and Playwright puts the caller's flags after its own, so a flag of ours naming only our feature switched all
#: of these back on: ours repeats them (`merged_features`). tests/envs/test_chromium_args.py checks that this list
#: covers the one the installed Playwright launches with (pinned below 1.66 in pyproject.toml until a newer one is).
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding", "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect", "TcpPortRandomizationWin", "OptimizationHints",
    "NetworkTimeServiceQuerying", "AimEnabled", "PreconnectToSearch", "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)
_DISABLE_FEATURES = "--disable-features="


def merged_features(args: Iterable[str]) -> tuple[str, ...]:
    """`args` with Playwright's disabled features and every `--disable-features=` of `args` joined into one flag,
    last (see `PLAYWRIGHT_DISABLED_FEATURES`): a caller's `--disable-features` adds to the list instead of
    replacing it."""
    features, rest = list(PLAYWRIGHT_DISABLED_FEATURES), []
    for arg in args:
        if arg.startswith(_DISABLE_FEATURES):
            features += [name for name in arg[len(_DISABLE_FEATURES):].split(",") if name and name not in features]
        else:
            rest.append(arg)
    return (*rest, _DISABLE_FEATURES + ",".join(features))


#: Flags every launch uses: no GPU, no background traffic to Google, and no going back in history when a sideways
#: wheel scroll runs past the page's edge (with Playwright's disabled features: `merged_features`). Not
#: --no-sandbox: Playwright adds that itself unless it is launched with chromium_sandbox=True (`BrowserConfig.sandbox`).
CHROMIUM_ARGS = merged_features((
    "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--no-first-run", "--disable-sync", "--disable-quic", "--disable-features=OverscrollHistoryNavigation",
))
DEFAULT_CHROMIUM = "/usr/bin/chromium"
#: Seconds the env waits for a call to come back after killing the browser under it.
KILL_GRACE_S = 5.0

# --- whether the sandbox can work ------------------------------------------------------------------

#: Creates a user namespace in a fresh single-threaded process (unshare fails in a threaded one); exit 0 if it can.
_UNSHARE_NEWUSER = "import ctypes, sys; sys.exit(ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0)"


def _sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", name).read_text(encoding="ascii").strip()
    except OSError:
        return None


def _no_user_namespace() -> bool:
    try:
        return subprocess.run([sys.executable, "-c", _UNSHARE_NEWUSER], capture_output=True, timeout=30).returncode != 0
    except (OSError, subprocess.TimeoutExpired):
        return True


#: Why the sandbox cannot work -> the test that says so, checked in order (the cheap ones first).
SANDBOX_BLOCKERS: Mapping[str, Callable[[], bool]] = {
    "running as root (Chromium refuses to sandbox itself as root)": lambda: os.geteuid() == 0,
    "unprivileged user namespaces are off (kernel.unprivileged_userns_clone = 0)":
        lambda: _sysctl("kernel/unprivileged_userns_clone") == "0",
    "user namespaces are off (user.max_user_namespaces = 0)": lambda: _sysctl("user/max_user_namespaces") == "0",
    "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)":
        lambda: _sysctl("kernel/apparmor_restrict_unprivileged_userns") == "1",
    "a user namespace cannot be created (a container's seccomp profile forbids it?)": _no_user_namespace,
}


@functools.cache
def sandbox_blocker() -> str | None:
    """Why Chromium's sandbox cannot work here (the first of `SANDBOX_BLOCKERS` that holds), or None if it can."""
    return next((reason for reason, holds in SANDBOX_BLOCKERS.items() if holds()), None)


# --- the thread that owns Playwright ---------------------------------------------------------------

class PlaywrightThread:
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


# --- one browser process ---------------------------------------------------------------------------

class Chromium:
    """One headless Chromium driven from its own Playwright thread: launched on demand, called with deadlines,
    killed (process tree, from any thread) when it hangs."""

    def __init__(self) -> None:
        self._worker: PlaywrightThread | None = None
        self.browser: Any = None  # the Playwright Browser (touch only on the Playwright thread)
        self.pid: int | None = None  # the main process, found by the marker flag on its command line

    @property
    def started(self) -> bool:
        """Whether the Playwright thread is running (it starts on the first `call`)."""
        return self._worker is not None

    @property
    def connected(self) -> bool:
        return self.browser is not None and self.browser.is_connected()

    def call(self, fn: Callable[[], T], budget: float) -> T:
        """Run `fn` on the Playwright thread; past `budget` seconds the page is hung: kill and raise.

        If the thread itself stays stuck after the kill it is left behind, and with it the browser
        (`browser` becomes None); the next call starts another thread."""
        if self._worker is None:
            self._worker = PlaywrightThread()
        worker = self._worker
        future = worker.submit(fn)
        try:
            return future.result(timeout=budget)
        except FutureTimeout:
            self.kill()
            try:
                future.result(timeout=KILL_GRACE_S)
            except FutureTimeout:  # the Playwright thread itself is stuck: leave it, start another
                worker.stop()
                self._worker, self.browser = None, None
            except Exception:  # noqa: BLE001 - the expected "browser closed" error after the kill
                pass
            raise EnvCrashedError(
                f"the page did not answer within {budget:.1f}s (a hung script?); its browser was killed"
            ) from None

    def launch(self, executable: str, *, sandbox: bool, extra_args: tuple[str, ...], timeout_s: float) -> None:
        """Start Chromium (on the Playwright thread, inside `call`); `sandbox` False adds --no-sandbox."""
        if not os.path.exists(executable):
            raise SetupError(f"Chromium not found at {executable}; install chromium or set "
                             "UIVENUS_CHROMIUM / BrowserConfig.executable")
        worker = self._worker
        assert worker is not None
        if worker.playwright is None:
            worker.playwright = sync_playwright().start()
        marker = f"--uivenus-browser={uuid.uuid4().hex}"
        if not sandbox:
            log.info("Chromium runs without its sandbox: %s", sandbox_blocker() or "BrowserConfig.sandbox is False")
        self.browser = worker.playwright.chromium.launch(
            executable_path=executable, headless=True, chromium_sandbox=sandbox,
            args=[*merged_features((*CHROMIUM_ARGS, *extra_args)), marker],
            timeout=timeout_s * 1000,
        )
        self.pid = _find_process(marker)

    def restart(self) -> None:
        """Kill the browser; the next launch starts a new one."""
        self.kill()
        self.browser = None

    def kill(self) -> None:
        """SIGKILL the Chromium process tree (safe from any thread: touches no Playwright object)."""
        if self.pid is None:
            return
        try:
            main = psutil.Process(self.pid)
            for proc in [*main.children(recursive=True), main]:
                try:
                    proc.kill()
                except psutil.Error:
                    pass
        except psutil.Error:
            pass
        self.pid = None

    def close(self, timeout_s: float) -> None:
        """Close the browser and Playwright and stop the thread; a browser that does not close is killed."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        try:
            worker.submit(lambda: self._shutdown(worker)).result(timeout=KILL_GRACE_S + timeout_s)
        except Exception:  # noqa: BLE001 - a dead or hung browser is killed below instead
            self.kill()
        finally:
            worker.stop()
            self.browser, self.pid = None, None

    def _shutdown(self, worker: PlaywrightThread) -> None:
        try:
            if self.browser is not None and self.browser.is_connected():
                self.browser.close()
        finally:
            if worker.playwright is not None:
                worker.playwright.stop()
                worker.playwright = None


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
