"""A local HTTP server for the bundled sandbox apps (127.0.0.1 only, a free port, no CDNs)."""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

APPS_DIR = Path(__file__).parent / "apps"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        return None

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class SandboxServer:
    """Serves `apps/` over http://127.0.0.1:PORT/ in a daemon thread; use as a context manager."""

    def __init__(self, root: Path = APPS_DIR, port: int = 0) -> None:
        handler = functools.partial(_QuietHandler, directory=str(root))
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
