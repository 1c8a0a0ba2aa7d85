"""The pointer of a browser page: Playwright's mouse on the desktop web, raw CDP touch events on a phone.

Both answer the same three gestures (`tap`, `press`, `drag`), so the env's action code does not care which one a
mode uses. Touches go through `Input.dispatchTouchEvent` rather than Playwright's `tap()`, because only real touch
sequences hold (LongPress), scroll when they move (Swipe) and double-tap as a phone's browser sees them; each event
is stamped with our clock, so a loaded machine cannot squeeze holds and gaps.
"""

from __future__ import annotations

import time
from typing import Any

from uivenus.actions.space import Point

#: Gap between the taps of a touch double tap (Chrome turns two quick taps into a dblclick).
TAP_GAP_S = 0.04
#: A new touch waits this long after the last one lifted, so two Click steps never merge into a double
#: tap (Chromium on Linux counts taps up to 400 ms apart as one double tap).
DOUBLE_TAP_WINDOW_S = 0.5
#: Pause at the end of a touch drag before lifting, so the gesture ends without a fling.
TOUCH_REST_S = 0.06
GESTURE_STEPS = 10


class Mouse:
    """Desktop-web pointer: Playwright's mouse."""

    def __init__(self, page: Any) -> None:
        self.page = page

    def tap(self, point: Point, count: int) -> None:
        self.page.mouse.click(point[0], point[1], click_count=count)

    def press(self, point: Point, seconds: float) -> None:
        self.page.mouse.move(point[0], point[1])
        self.page.mouse.down()
        time.sleep(seconds)
        self.page.mouse.up()

    def drag(self, start: Point, end: Point, seconds: float) -> None:
        mouse = self.page.mouse
        mouse.move(start[0], start[1])
        mouse.down()
        for i in range(1, GESTURE_STEPS + 1):
            mouse.move(start[0] + (end[0] - start[0]) * i / GESTURE_STEPS,
                       start[1] + (end[1] - start[1]) * i / GESTURE_STEPS)
            time.sleep(seconds / GESTURE_STEPS)
        mouse.up()


class Touch:
    """Touch pointer: raw CDP touch events, so taps, holds and swipes are real touches that scroll."""

    def __init__(self, cdp: Any) -> None:
        self.cdp = cdp
        self._lifted = 0.0  # monotonic time of the last touchEnd

    def _send(self, kind: str, point: Point | None = None, *, new_gesture: bool = True) -> None:
        """One touch event, stamped with our clock so a loaded machine cannot squeeze holds and gaps."""
        if kind == "touchStart" and new_gesture:  # never merge with the last gesture into a double tap
            time.sleep(max(0.0, self._lifted + DOUBLE_TAP_WINDOW_S - time.monotonic()))
        points = [] if point is None else [{"x": point[0], "y": point[1]}]
        self.cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points, "timestamp": time.time()})
        if kind == "touchEnd":
            self._lifted = time.monotonic()

    def tap(self, point: Point, count: int) -> None:
        for i in range(count):
            if i:
                time.sleep(TAP_GAP_S)
            self._send("touchStart", point, new_gesture=i == 0)  # the taps of one DoubleClick do merge
            self._send("touchEnd")

    def press(self, point: Point, seconds: float) -> None:
        self._send("touchStart", point)
        time.sleep(seconds)
        self._send("touchEnd")

    def drag(self, start: Point, end: Point, seconds: float) -> None:
        self._send("touchStart", start)
        for i in range(1, GESTURE_STEPS + 1):
            time.sleep(seconds / GESTURE_STEPS)
            self._send("touchMove", (start[0] + (end[0] - start[0]) * i / GESTURE_STEPS,
                                     start[1] + (end[1] - start[1]) * i / GESTURE_STEPS))
        for _ in range(2):  # hold still at the end, so the velocity tracker reads zero and nothing flings
            time.sleep(TOUCH_REST_S)
            self._send("touchMove", end)
        self._send("touchEnd")
