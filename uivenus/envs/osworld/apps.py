"""The apps OSWorld tasks name, as the Debian programs that play them here, and the packages that install them.

OSWorld's VM is an Ubuntu desktop with Google Chrome, VS Code and GNOME apps; here each name maps to a Debian
program (`APPS`), files opened by a task go to the app of their extension (`OPENERS`), and a name with no Debian
counterpart has a reason (`UNSUPPORTED_APPS`) that `support.py` reports. Chromium always runs with the episode's
own DevTools port and profile, so the Chrome steps and getters reach it without OSWorld's socat forwarding.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from types import MappingProxyType

from uivenus.envs.base import SetupError

__all__ = ["APPS", "CHROME_PROFILE", "OPENERS", "UNSUPPORTED_APPS", "App", "AppMissing", "app_argv", "opener"]

#: Chromium's profile inside the root, where Chrome's would be on OSWorld's VM (bookmarks, history, prefs).
CHROME_PROFILE = "/home/user/.config/google-chrome"


class AppMissing(SetupError):
    """The program a task needs is not installed; the message names the Debian package to install."""


@dataclass(frozen=True)
class App:
    """A program playing an app OSWorld names: the executable and the Debian package that ships it."""

    program: str
    package: str
    extra: tuple[str, ...] = ()  # arguments added after the program (before the task's own)


_CHROME = App("chromium", "chromium")
_OFFICE = App("soffice", "libreoffice-calc libreoffice-writer libreoffice-impress")
#: OSWorld app or program name -> the Debian program that plays it.
APPS: Mapping[str, App] = MappingProxyType({
    "google-chrome": _CHROME, "chrome": _CHROME, "chromium": _CHROME, "chromium-browser": _CHROME,
    "libreoffice": _OFFICE, "soffice": _OFFICE,
    "libreoffice_calc": App("soffice", "libreoffice-calc", ("--calc",)),
    "libreoffice_writer": App("soffice", "libreoffice-writer", ("--writer",)),
    "libreoffice_impress": App("soffice", "libreoffice-impress", ("--impress",)),
    "gimp": App("gimp", "gimp"), "vlc": App("vlc", "vlc"), "thunderbird": App("thunderbird", "thunderbird"),
    "gnome-terminal": App("xterm", "xterm"), "terminal": App("xterm", "xterm"), "xterm": App("xterm", "xterm"),
    "gedit": App("l3afpad", "l3afpad"), "l3afpad": App("l3afpad", "l3afpad"),
    "nautilus": App("pcmanfm", "pcmanfm"), "os": App("xterm", "xterm"),
})
#: Apps with no Debian program, and why.
UNSUPPORTED_APPS: Mapping[str, str] = MappingProxyType({
    "vs_code": "VS Code is not in Debian", "code": "VS Code is not in Debian",
})
#: File extension -> the app that opens it (OSWorld's `open` uses the VM's default app).
OPENERS: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys((".xlsx", ".xls", ".ods", ".csv"), "libreoffice_calc"),
    **dict.fromkeys((".docx", ".doc", ".odt", ".rtf"), "libreoffice_writer"),
    **dict.fromkeys((".pptx", ".ppt", ".odp"), "libreoffice_impress"),
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".xcf", ".gif", ".bmp", ".tif", ".tiff"), "gimp"),
    **dict.fromkeys((".mp4", ".mp3", ".wav", ".ogg", ".mkv", ".webm", ".avi", ".flac"), "vlc"),
    **dict.fromkeys((".txt", ".py", ".md", ".json", ".log", ".sh"), "gedit"),
    **dict.fromkeys((".html", ".htm", ".pdf"), "google-chrome"),
})
_CHROME_FLAGS = ("--no-first-run", "--no-default-browser-check", "--password-store=basic", "--no-sandbox",
                 "--disable-dev-shm-usage", "--force-renderer-accessibility", f"--user-data-dir={CHROME_PROFILE}")


def app_argv(argv: Sequence[str], *, cdp_port: int) -> list[str]:
    """A task's argv with its program replaced by the Debian one; Chromium gets the episode's port and profile."""
    name = PurePosixPath(argv[0]).name
    app = APPS.get(name)
    if app is None:
        return list(argv)
    if shutil.which(app.program) is None:
        raise AppMissing(f"{name!r} needs {app.program!r}, which is not installed: apt-get install {app.package}")
    rest = list(argv[1:])
    if app is _CHROME:
        rest = [a for a in rest if not a.startswith(("--remote-debugging-port=", "--user-data-dir="))]
        rest = [*_CHROME_FLAGS, f"--remote-debugging-port={cdp_port}", *rest]
    return [app.program, *app.extra, *rest]


def opener(path: str) -> str:
    """The app name that opens `path` (by extension; unknown kinds go to the text editor)."""
    return OPENERS.get(PurePosixPath(path).suffix.lower(), "gedit")
