"""Local sites on 127.0.0.1 for the web evaluations: a small shop (search, product pages, a form, a cookie banner, a
pop-up, a new-tab link, a slow page, a page that never settles, a download, and a page that answers 429 once), and
a CAPTCHA site in Open CaptchaWorld's shape (`/`, `GET /api/get_puzzle?type=<Type>`, `POST /api/check_answer` ->
`{"correct": ...}`) whose `Easy_Pick` puzzles have their answer on the first button and `Hard_Pick` on the last."""

from __future__ import annotations

import html
import itertools
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

SITE = Path(__file__).parent / "websuite"
PRODUCTS = {"blue-kettle": ("Blue Kettle", "29.99"), "red-kettle": ("Red Kettle", "34.50"),
            "copper-kettle": ("Copper Kettle", "59.00")}


def _page(title: str, body: str) -> str:
    return ('<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{html.escape(title)}</title><link rel="stylesheet" href="/base.css"></head>'
            f'<body>{body}</body></html>')


class _Shop(BaseHTTPRequestHandler):
    busy_seen: set[str] = set()

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str = "text/html; charset=utf-8", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query)
        if path == "/search":
            q = query.get("q", [""])[0].lower()
            hits = [(slug, name) for slug, (name, _) in PRODUCTS.items() if all(w in name.lower() for w in q.split())]
            items = "".join(f'<a class="product" id="p-{slug}" href="/product/{slug}">{name}</a>'
                            for slug, name in hits)
            return self._send(200, _page("Search", f"<h1>Results for {html.escape(q)}</h1>{items or 'No kettles'}")
                              .encode())
        if path.startswith("/product/") and path.removeprefix("/product/") in PRODUCTS:
            name, price = PRODUCTS[path.removeprefix("/product/")]
            return self._send(200, _page(name, f"<h1>{name}</h1><p>Price {price} EUR</p>").encode())
        if path == "/sent":
            name = html.escape(query.get("name", [""])[0])
            return self._send(200, _page("Sent", f"<h1>Thanks, {name}!</h1><p>Message received.</p>").encode())
        if path == "/shipping":  # a slow page
            time.sleep(1.5)
            return self._send(200, _page("Shipping", "<h1>Shipping</h1><p>Standard delivery 4.99 EUR</p>").encode())
        if path == "/busy":  # rate limited on the first visit of each client context
            key = self.headers.get("Cookie", "") + "|" + self.path
            if key not in _Shop.busy_seen:
                _Shop.busy_seen.add(key)
                return self._send(429, b"Too many requests", "text/plain", Retry_After="1")
            return self._send(200, _page("Opening times", "<h1>Opening times</h1><p>Open 9 to 5</p>").encode())
        if path == "/poll":
            time.sleep(0.5)
            return self._send(200, b"{}", "application/json")
        if path == "/files/kettle-manual.pdf":
            return self._send(200, b"%PDF-1.4\n% kettle manual\n", "application/pdf",
                              Content_Disposition='attachment; filename="kettle-manual.pdf"')
        name = "index.html" if path == "/" else path.strip("/") + ("" if path.endswith((".css", ".html")) else ".html")
        file = SITE / name
        if file.is_file():
            kind = "text/css" if name.endswith(".css") else "text/html; charset=utf-8"
            return self._send(200, file.read_bytes(), kind)
        return self._send(404, b"not found", "text/plain")


class _Captchas(BaseHTTPRequestHandler):
    ids = itertools.count(1)
    answers: dict[int, int] = {}
    lock = threading.Lock()

    log_message = _Shop.log_message
    _send = _Shop._send

    def do_GET(self) -> None:  # noqa: N802
        parts = urlsplit(self.path)
        if parts.path == "/":
            return self._send(200, (SITE / "captcha.html").read_bytes())
        if parts.path == "/api/get_puzzle":
            kind = parse_qs(parts.query).get("type", ["Easy_Pick"])[0]
            with self.lock:
                puzzle_id = next(self.ids)
            options = [puzzle_id * 10 + k for k in range(4)]
            answer = options[0] if kind == "Easy_Pick" else options[-1]
            self.answers[puzzle_id] = answer
            body = {"puzzle_id": puzzle_id, "puzzle_type": kind, "prompt": f"Click the number {answer}",
                    "options": options}
            return self._send(200, json.dumps(body).encode(), "application/json")
        return self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:  # noqa: N802
        if urlsplit(self.path).path != "/api/check_answer":
            return self._send(404, b"not found", "text/plain")
        data = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        correct = self.answers.pop(data.get("puzzle_id"), None) == data.get("answer")  # one answer per puzzle
        return self._send(200, json.dumps({"correct": correct, "puzzle_id": data.get("puzzle_id")}).encode(),
                          "application/json")


def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def captcha_site() -> Iterator[str]:
    """The CAPTCHA site's base URL."""
    yield from _serve(_Captchas)


@pytest.fixture(scope="session")
def web_shop() -> Iterator[str]:
    """The shop's base URL (http://127.0.0.1:PORT)."""
    yield from _serve(_Shop)
