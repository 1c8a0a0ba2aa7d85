"""The real apps `uivenus tasks explore-app` knows by name, and how each is started for exploration.

Desktop apps start in a fresh isolated task root per run; the web app (datasette, an open-source data browser with
forms, from PyPI) is served on the loopback from a small SQLite file made here, so it runs offline. Any other name
on PATH is started as a desktop app, and an http(s) URL is explored as a web page.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from uivenus.envs.base import SetupError
from uivenus.envs.osworld.session import free_port
from uivenus.envs.x11 import stop
from uivenus.tasks.explore_a11y_surfaces import DesktopSurface, Surface, WebSurface

__all__ = ["DESKTOP_APPS", "DOCUMENTS", "WEB_APPS", "app_surface"]

#: Desktop apps by name -> the argv that starts them in the task root.
DESKTOP_APPS: Mapping[str, tuple[str, ...]] = {
    "calc": ("localc", "--norestore"),
    "writer": ("lowriter", "--norestore"),
    "mousepad": ("mousepad",),
    "pcmanfm": ("pcmanfm", "/home/user"),
    "xterm": ("xterm",),  # no accessibility tree at all: the explorer records it as such
    "notes": ("mousepad", "/home/user/notes.txt"),  # the editor on a document of its own (see DOCUMENTS)
}
#: Documents made in an app's task root before it starts (path under /home/user, text): the editor saves its
#: edits with ctrl+s, no file chooser, so exploring it finds a function that writes a user file.
DOCUMENTS: Mapping[str, tuple[tuple[str, str], ...]] = {"notes": (("notes.txt", "Meeting notes\n"),)}

_ROWS = [("Dune", "Frank Herbert", 1965, "science fiction"), ("Emma", "Jane Austen", 1815, "novel"),
         ("Ulysses", "James Joyce", 1922, "novel"), ("Neuromancer", "William Gibson", 1984, "science fiction"),
         ("Beloved", "Toni Morrison", 1987, "novel"), ("Solaris", "Stanislaw Lem", 1961, "science fiction")]


def _wait_http(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SetupError(f"the web app exited with status {process.returncode} before serving {url}")
        try:
            with urllib.request.urlopen(url, timeout=1.0):  # noqa: S310 - our own loopback server
                return
        except (OSError, urllib.error.URLError):
            time.sleep(0.2)
    raise SetupError(f"the web app did not answer on {url} within {timeout:g}s")


@contextmanager
def datasette(timeout: float = 30.0) -> Iterator[str]:
    """datasette serving a small library database on the loopback; yields its URL (pip install datasette)."""
    if shutil.which("datasette") is None and not (Path(sys.executable).parent / "datasette").exists():
        raise SetupError("datasette is not installed: pip install datasette")
    folder = Path(tempfile.mkdtemp(prefix="uivenus-datasette-"))
    database = folder / "library.db"
    with sqlite3.connect(database) as db:
        db.execute("create table books (id integer primary key, title text, author text, year integer, genre text)")
        db.executemany("insert into books (title, author, year, genre) values (?, ?, ?, ?)", _ROWS)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    process = subprocess.Popen([sys.executable, "-m", "datasette", "serve", str(database), "--host", "127.0.0.1",
                                "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        _wait_http(url, process, timeout)
        yield url
    finally:
        stop(process)
        shutil.rmtree(folder, ignore_errors=True)


#: Web apps by name -> a context manager serving it and yielding its start URL.
WEB_APPS: Mapping[str, Callable[[], AbstractContextManager[str]]] = {"datasette": datasette}


@contextmanager
def app_surface(name: str) -> Iterator[Surface]:
    """The surface to explore `name` on (a known app, a program on PATH, or a URL); closed afterwards."""
    if name in WEB_APPS:
        with WEB_APPS[name]() as url:
            surface: Surface = WebSurface(url)
            try:
                yield surface
            finally:
                surface.close()
        return
    if name.startswith(("http://", "https://")):
        surface = WebSurface(name)
    else:
        argv = DESKTOP_APPS.get(name) or (name,)
        if shutil.which(argv[0]) is None:
            known = ", ".join(sorted({*DESKTOP_APPS, *WEB_APPS}))
            raise SetupError(f"no app {name!r}: {argv[0]} is not on PATH; known apps: {known}, or an http(s) URL")
        surface = DesktopSurface(argv, documents=DOCUMENTS.get(name, ()))
    try:
        yield surface
    finally:
        surface.close()
