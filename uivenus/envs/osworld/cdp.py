"""Chromium's DevTools HTTP endpoints (`/json/...`) for the tab steps and getters: list, open, close and activate tabs.

The HTTP side of the protocol is enough for what OSWorld's Chrome steps and getters need (the tabs' URLs and
titles, in most-recently-active order), so no WebSocket client or Playwright connection is kept per episode.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from uivenus.envs.base import SetupError

__all__ = ["NEW_TAB_URLS", "BrowserUnreachable", "Tab", "activate", "close", "open_tab", "tabs", "wait_ready"]

#: The URLs of Chromium's blank start page.
NEW_TAB_URLS = ("chrome://newtab", "chrome://new-tab-page", "about:blank")


class BrowserUnreachable(SetupError):
    """No Chromium answers on the episode's DevTools port: the task must launch Chrome first."""


@dataclass(frozen=True)
class Tab:
    """One open page: its DevTools id, title and URL."""

    id: str
    title: str
    url: str


def _call(port: int, path: str, *, method: str = "GET", timeout: float = 5.0) -> Any:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - our own loopback port
        body = response.read()
    try:
        return json.loads(body)
    except ValueError:
        return body.decode(errors="replace")


def wait_ready(port: int, timeout: float = 20.0) -> None:
    """Wait until Chromium answers on `port`; `BrowserUnreachable` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            _call(port, "/json/version", timeout=1.0)
            return
        except (OSError, urllib.error.URLError):
            if port <= 0 or time.monotonic() > deadline:
                raise BrowserUnreachable(
                    f"no Chromium answers on DevTools port {port}: launch Chrome in the task's config first "
                    "(a 'launch' step with google-chrome)") from None
            time.sleep(0.1)


def tabs(port: int) -> list[Tab]:
    """The open pages, the most recently active first (Chromium's own order)."""
    wait_ready(port)
    return [Tab(t["id"], t.get("title", ""), t.get("url", "")) for t in _call(port, "/json/list")
            if t.get("type") == "page"]


def open_tab(port: int, url: str, timeout: float = 15.0) -> Tab:
    """Open `url` in a new tab and wait until it has loaded (a tab has an empty title until then; a page without a
    <title> gets its URL as one), as OSWorld's step waits for the page."""
    wait_ready(port)
    made = _call(port, "/json/new?" + urllib.parse.quote(url, safe=":/?&=#%+@,;~"), method="PUT")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tab = next((t for t in tabs(port) if t.id == made["id"]), None)
        if tab is None or tab.title:
            return tab or Tab(made["id"], "", url)
        time.sleep(0.05)
    return Tab(made["id"], "", url)


def close(port: int, tab: Tab) -> None:
    _call(port, f"/json/close/{tab.id}")


def activate(port: int, tab: Tab) -> None:
    _call(port, f"/json/activate/{tab.id}")
