"""Whether Chromium's sandbox can work on this machine: it needs a non-root user and user namespaces.

Chromium refuses to sandbox itself as root, and its namespace sandbox needs unprivileged user namespaces,
which some kernels switch off (sysctls below) and container runtimes often forbid (a seccomp profile that
denies `unshare`). Only there does the browser env run Chromium with `--no-sandbox`.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

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
