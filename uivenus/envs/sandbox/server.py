"""A local HTTP server for the bundled sandbox apps (127.0.0.1 only, a free port, no CDNs)."""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

APPS_DIR = Path(__file__).parent / "apps"
#: The bundled apps' scripts and styles do not change while a server runs: a browser may keep them a day, so a
#: collection worker's reused tab takes them (compiled) from its cache each episode instead of fetching and
#: compiling them again (issue 17). Pages, and every file of other roots (written per run), stay `no-store`.
CACHED_SUFFIXES = (".js", ".css")
CACHED = "max-age=86400"


class _QuietHandler(SimpleHTTPRequestHandler):
    def __init__(self, *args: Any, cache_assets: bool, **kwargs: Any) -> None:
        self.cache_assets, self.status = cache_assets, 0
        super().__init__(*args, **kwargs)  # handles the request

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        return None

    def send_response(self, code: int, message: str | None = None) -> None:
        self.status = code
        super().send_response(code, message)

    def end_headers(self) -> None:
        cached = self.cache_assets and self.status == 200 and urlsplit(self.path).path.endswith(CACHED_SUFFIXES)
        self.send_header("Cache-Control", CACHED if cached else "no-store")
        super().end_headers()


class SandboxServer:
    """Serves `apps/` over http://127.0.0.1:PORT/ in a daemon thread; use as a context manager. `cache_assets`
    (default: for the bundled apps only) lets the browser cache scripts and styles (`CACHED_SUFFIXES`)."""

    def __init__(self, root: Path = APPS_DIR, port: int = 0, cache_assets: bool | None = None) -> None:
        cache = Path(root) == APPS_DIR if cache_assets is None else cache_assets
        handler = functools.partial(_QuietHandler, directory=str(root), cache_assets=cache)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="sandbox-http", daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> SandboxServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
