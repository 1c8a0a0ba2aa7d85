"""Network tracking of a browser page: its requests in flight and whether a main-frame navigation is under way.

The env's settle wait after an action asks `busy` (with the document's load state and any tab being opened) to
know when the page has finished what the action started, without a fixed sleep: the common case — an action
that starts no request — costs nothing here.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Error as PlaywrightError


class Traffic:
    """The page's in-flight requests and whether a main-frame navigation is under way."""

    def __init__(self, page: Any) -> None:
        self.pending: set[Any] = set()
        self.navigating = False
        self._main = page.main_frame
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)
        page.on("framenavigated", self._navigated)

    @property
    def busy(self) -> bool:
        return self.navigating or bool(self.pending)

    def _is_main_navigation(self, request: Any) -> bool:
        try:
            return request.is_navigation_request() and request.frame is self._main
        except PlaywrightError:  # service-worker requests have no frame
            return False

    def _started(self, request: Any) -> None:
        self.pending.add(request)
        if self._is_main_navigation(request):
            self.navigating = True

    def _ended(self, request: Any) -> None:
        self.pending.discard(request)
        if self._is_main_navigation(request):
            self.navigating = False

    def _navigated(self, frame: Any) -> None:
        if frame is self._main:
            self.navigating = False
