"""The sandbox server's caching: the bundled apps' scripts and styles may be cached, nothing else."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from uivenus.envs.sandbox import SandboxServer
from uivenus.envs.sandbox.server import CACHED


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
