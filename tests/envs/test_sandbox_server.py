"""The sandbox server's caching: the bundled apps' scripts and styles may be cached, nothing else; and the bundled
pages make real Chromium ask for nothing they do not use (no `/favicon.ico` that 404s each episode)."""

from __future__ import annotations

import functools
import threading
import urllib.error
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from uivenus.envs.sandbox import SandboxServer
from uivenus.envs.chromium import DEFAULT_CHROMIUM
from uivenus.envs.sandbox.server import APPS_DIR, CACHED


def cache_control(server: SandboxServer, path: str) -> tuple[int, str | None]:
    try:
        with urllib.request.urlopen(server.base_url + path, timeout=10) as reply:
            return reply.status, reply.headers["Cache-Control"]
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Cache-Control"]


def test_bundled_app_scripts_and_styles_are_cached_pages_and_errors_are_not() -> None:
    with SandboxServer() as server:
        assert cache_control(server, "/common/sandbox.js") == (200, CACHED)
        assert cache_control(server, "/common/base.css?v=1") == (200, CACHED)
        assert cache_control(server, "/notes/index.html?layout=web") == (200, "no-store")
        assert cache_control(server, "/no-such-script.js") == (404, "no-store")


@pytest.mark.parametrize("cache_assets", [None, False])
def test_other_roots_are_never_cached(tmp_path: Path, cache_assets: bool | None) -> None:
    (tmp_path / "page.js").write_text("window.x = 1;")  # written per run: a cached copy could go stale
    with SandboxServer(root=tmp_path, cache_assets=cache_assets) as server:
        assert cache_control(server, "/page.js") == (200, "no-store")


class _Recording(SimpleHTTPRequestHandler):
    """Serves a folder and notes every path asked for."""

    asked: list[str]

    def log_message(self, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self.asked.append(self.path)
        super().do_GET()


def test_bundled_pages_make_the_browser_ask_for_no_favicon() -> None:
    from playwright.sync_api import sync_playwright

    handler = type("Recording", (_Recording,), {"asked": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(APPS_DIR)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    apps = sorted(page.parent.name for page in APPS_DIR.glob("*/index.html"))
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=DEFAULT_CHROMIUM, headless=True)
            page = browser.new_page()
            for app in apps:
                page.goto(f"{base}/{app}/index.html?layout=web", wait_until="load")
                page.wait_for_timeout(300)  # the favicon is asked for after `load`
            browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert len(apps) >= 8 and all(f"/{app}/index.html?layout=web" in handler.asked for app in apps)
    assert not [path for path in handler.asked if "favicon" in path]
