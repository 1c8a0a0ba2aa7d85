"""The desktop's UI elements (`UIElement`) read over a task root's AT-SPI bus by one long-lived helper.

The helper (`a11y_server.py`, run by the system Python, where pyatspi is) starts on the first read and answers
each later one in milliseconds, so recording what every click hit costs the step almost nothing. A read that does
not come back in time means an app hangs the bus: the helper is stopped (the next read starts a fresh one) and
`A11yTimeout` says so.
"""

from __future__ import annotations

import json
import select
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from uivenus.envs.base import EnvError
from uivenus.envs.elements import UIElement
from uivenus.envs.osworld import a11y_server
from uivenus.envs.osworld.getters import SYSTEM_PYTHON
from uivenus.envs.osworld.isolation import Root
from uivenus.envs.x11 import stop

__all__ = ["A11yError", "A11yReader", "A11yTimeout", "A11yUnavailable", "element_of"]


class A11yError(EnvError):
    """The accessibility tree could not be read; the message says why and what to do."""


class A11yUnavailable(A11yError):
    """No system Python with pyatspi: install the Debian packages python3-pyatspi and at-spi2-core."""


class A11yTimeout(A11yError):
    """The helper did not answer in time: an app on the bus hangs (the helper was stopped; the next read retries)."""


def element_of(data: Mapping[str, Any]) -> UIElement:
    """The helper's JSON for one accessible as the normalised record."""
    bounds = data.get("bounds")
    placed = bounds if bounds and bounds[2] > 0 and bounds[3] > 0 else None
    value_range = data.get("value_range")
    return UIElement(role=str(data.get("role", "unknown")), name=str(data.get("name", "")),
                     value=str(data.get("value", "")), states=tuple(data.get("states", ())),
                     bounds=tuple(placed) if placed else None,  # type: ignore[arg-type]
                     actions=tuple(data.get("actions", ())), path=tuple(data.get("path", ())),
                     app=str(data.get("app", "")),
                     value_range=tuple(value_range) if value_range else None)  # type: ignore[arg-type]


class A11yReader:
    """Reads a root's accessibility tree on request; `close()` stops its helper (the root's close does too)."""

    def __init__(self, root: Root, *, timeout_s: float = 10.0) -> None:
        self.root, self.timeout_s = root, timeout_s
        self._helper: Any = None

    def elements(self, timeout_s: float | None = None) -> tuple[UIElement, ...]:
        """Every shown element of every app on the root's bus, in tree order; `A11yTimeout` when an app hangs."""
        answer = self._ask({"op": "elements"}, timeout_s)
        if answer.get("hung"):
            raise A11yTimeout(f"{', '.join(answer['hung'])} did not answer the accessibility bus in time (hung)")
        return tuple(element_of(e) for e in answer["elements"])

    def hit(self, point: tuple[float, float], timeout_s: float | None = None) -> UIElement | None:
        """The deepest element at a screen point (in the active window when windows overlap), or None."""
        answer = self._ask({"op": "hit", "x": int(point[0]), "y": int(point[1])}, timeout_s)
        return element_of(answer["element"]) if answer.get("element") else None

    def _ask(self, command: Mapping[str, Any], timeout_s: float | None) -> dict[str, Any]:
        helper = self._started()
        try:
            helper.stdin.write((json.dumps(command) + "\n").encode())
            helper.stdin.flush()
        except (BrokenPipeError, OSError):
            self.close()
            raise A11yError("the accessibility helper died; the next read starts a new one") from None
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([helper.stdout], [], [], left)[0]:
                self.close()
                raise A11yTimeout(f"the accessibility tree was not read within {timeout_s or self.timeout_s:g}s: "
                                  "an app on the bus does not answer")
            chunk = helper.stdout.readline()
            if not chunk:
                self.close()
                raise A11yError("the accessibility helper exited; see the root's logs (helper-*.log)")
            line += chunk
        answer = json.loads(line)
        if "error" in answer:
            raise A11yError(f"the accessibility tree could not be read: {answer['error']}")
        return answer

    def start(self) -> None:
        """Start the helper now (it takes about half a second to load pyatspi) so that the first read does not wait."""
        self._started()

    def _started(self) -> Any:
        if self._helper is None or self._helper.poll() is not None:
            if not Path(SYSTEM_PYTHON).is_file():
                raise A11yUnavailable(f"reading UI elements needs {SYSTEM_PYTHON} with pyatspi: "
                                      "apt-get install python3-pyatspi at-spi2-core")
            self._helper = self.root.serve([SYSTEM_PYTHON, "-c", Path(a11y_server.__file__).read_text()])
        return self._helper

    def close(self) -> None:
        if self._helper is not None:
            stop(self._helper)
            self._helper = None
