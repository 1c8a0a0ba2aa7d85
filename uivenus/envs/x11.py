"""X11 plumbing for the desktop env: a private Xvfb, child processes, XTEST input, MIT-SHM grabs, window queries.

Kept apart from `desktop.py` so the env reads as policy (what each action does, when the screen is
settled) while this module holds the mechanics of talking to an X server. Every call that can fail
because the server went away raises through `x_errors`, which turns it into `EnvCrashedError`.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import mss
import mss.exception
import Xlib.error
from PIL import Image
from Xlib import X, Xatom
from Xlib.protocol import event
from Xlib.display import Display
from Xlib.ext import damage, xtest
from Xlib.xobject.drawable import Window

from uivenus.envs.base import EnvCrashedError, SetupError

SOCKET_DIR = Path("/tmp/.X11-unix")
#: What Xlib and mss raise when the X server is unreachable or went away.
SERVER_GONE = (Xlib.error.ConnectionClosedError, Xlib.error.DisplayError, mss.exception.ScreenShotError, OSError)


@contextmanager
def x_errors(display: str) -> Iterator[None]:
    """Turn the ways a dead X server shows itself (closed socket, failed grab) into `EnvCrashedError`."""
    try:
        yield
    except SERVER_GONE as exc:
        raise EnvCrashedError(
            f"X server {display} is gone ({type(exc).__name__}: {exc}); reset() or the next step restarts it"
        ) from exc


# --- processes ----------------------------------------------------------------------------------

def spawn(argv: Sequence[str], display: str, log_path: Path) -> subprocess.Popen[bytes]:
    """Start `argv` (no shell) on `display` in its own session, so stopping it stops its children too."""
    with open(log_path, "ab") as out:
        try:
            return subprocess.Popen(
                list(argv), env={**os.environ, "DISPLAY": display}, stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )
        except OSError as exc:
            raise SetupError(f"cannot start {list(argv)}: {exc}; check the command and that it is installed") from None


def stop(process: subprocess.Popen[bytes], timeout: float = 2.0) -> None:
    """SIGTERM the process group, SIGKILL it after `timeout`; safe on processes that already exited."""
    if process.poll() is None:
        _signal_group(process, signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            _signal_group(process, signal.SIGKILL)
            process.wait()
    _signal_group(process, signal.SIGKILL)  # children the leader left behind


def _signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def log_tail(path: Path, chars: int = 600) -> str:
    try:
        return path.read_text(errors="replace")[-chars:].strip()
    except OSError:
        return ""


# --- the X server -------------------------------------------------------------------------------

def _display_taken(number: int) -> bool:
    """A display is taken when its lock file names a live process (X servers clear stale locks themselves)."""
    lock = Path(f"/tmp/.X{number}-lock")
    try:
        pid = int(lock.read_text().strip())
    except FileNotFoundError:
        return (SOCKET_DIR / f"X{number}").exists() and _socket_answers(number)
    except (OSError, ValueError):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    return True


def _socket_answers(number: int) -> bool:
    try:
        Display(f":{number}").close()
    except Xlib.error.DisplayError:
        return False
    return True


def free_displays(first: int, count: int = 200) -> Iterator[int]:
    """Display numbers from `first` on whose lock file and socket are not held by a running server."""
    return (n for n in range(first, first + count) if not _display_taken(n))


@dataclass
class Xvfb:
    """A private virtual X server; `stop()` ends it."""

    display: str
    process: subprocess.Popen[bytes]

    @classmethod
    def start(cls, width: int, height: int, first: int, workdir: Path, timeout: float = 10.0) -> Xvfb:
        for number in free_displays(first):
            display, log_path = f":{number}", workdir / f"xvfb-{number}.log"
            argv = ["Xvfb", display, "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp", "-noreset"]
            process = spawn(argv, display, log_path)
            deadline = time.monotonic() + timeout
            while process.poll() is None and time.monotonic() < deadline:
                if (SOCKET_DIR / f"X{number}").exists() and _socket_answers(number):
                    return cls(display, process)
                time.sleep(0.02)
            stop(process)
            output = log_tail(log_path)
            if "already active" in output or "lock" in output.lower():
                continue  # another server won the race for this number
            raise SetupError(f"Xvfb did not start on {display}: {output or 'no output'}; is xvfb installed?")
        raise SetupError(f"no free X display number from :{first}; stop stale Xvfb servers or set first_display")

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Stop the server and remove the lock file and socket a killed server leaves behind."""
        stop(self.process)
        number = self.display.lstrip(":")
        lock = Path(f"/tmp/.X{number}-lock")
        try:
            if int(lock.read_text().strip()) == self.process.pid:
                lock.unlink()
                (SOCKET_DIR / f"X{number}").unlink(missing_ok=True)
        except (OSError, ValueError):
            pass


# --- input and queries over one Xlib connection -------------------------------------------------

class Redrawn(Enum):
    """What `XConnection.watch` found drawn between a mark and the round trip after the input."""

    NOTHING = "nothing"  # the frame grabbed at the mark is still the screen
    AFTER_INPUT = "after input"  # drawing the server did after the input (or not known when): grab and compare
    BEFORE_INPUT = "before input"  # drawing before the input: the frame at the mark is not what the input met


def char_keysym(char: str) -> int:
    """The X keysym of one character: Latin-1 keysyms equal the code point, others are 0x01000000 + code point."""
    code = ord(char)
    return code if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF else 0x01000000 | code


@dataclass(frozen=True)
class WindowInfo:
    id: int
    title: str
    wm_class: str
    geometry: tuple[int, int, int, int]  # x, y (root pixels of the client area), width, height

    def to_dict(self) -> dict[str, object]:
        return {"title": self.title, "class": self.wm_class, "geometry": list(self.geometry)}


#: How many of the highest keycodes carry characters that no key produces. On the standard evdev keymap
#: they hold rarely used multimedia keys; taking one contiguous block lets a whole batch of characters be
#: bound with one ChangeKeyboardMapping (every change makes each client, the WM included, reload its keymap).
SCRATCH_KEYCODES = 32


class XConnection:
    """One Xlib connection: fake input through XTEST, keysym lookup with scratch-keycode binding, EWMH queries."""

    def __init__(self, display: str) -> None:
        self.name = display
        self.d = Display(display)
        if not self.d.query_extension("XTEST").present:
            self.d.close()
            raise SetupError(f"X server {display} has no XTEST extension; start Xvfb without -disable-xtest")
        self.root = self.d.screen().root
        info = self.d.display.info
        self._min_keycode = info.min_keycode
        rows = self.d.get_keyboard_mapping(info.min_keycode, info.max_keycode - info.min_keycode + 1)
        self._rows = [list(row) for row in rows]  # the keymap as we last wrote it, by keycode - min_keycode
        self._original = [list(row) for row in rows]
        self._scratch = list(range(info.max_keycode - SCRATCH_KEYCODES + 1, info.max_keycode + 1))
        self._levels: dict[int, tuple[int, int]] = {}  # keysym -> (keycode, level 0 plain / 1 shifted)
        for keycode in range(info.min_keycode, self._scratch[0]):
            row = self._rows[keycode - info.min_keycode]
            for level in (0, 1):
                if row[level] and (row[level] not in self._levels or self._levels[row[level]][1] > level):
                    self._levels[row[level]] = (keycode, level)
        self._bound: OrderedDict[int, int] = OrderedDict()  # keysym -> scratch keycode, least recently used first
        self._atoms: dict[str, int] = {}
        # The focused window's (id, title), kept while no PropertyNotify says the WM moved the focus or the
        # window was renamed: saves two round trips per observation. Without a WM nothing announces focus changes.
        self._focus: tuple[int | None, str | None] | None = None
        # SubstructureNotify: the apps' answers to _NET_WM_PING come to the root window (`ping_apps`).
        self.root.change_attributes(event_mask=X.PropertyChangeMask | X.SubstructureNotifyMask)
        self._wm = self.wm_running()
        self._ping = 0  # the number of the last ping round; its answers so far; windows known (not) to answer pings
        self._pongs: set[int] = set()
        self._targets: set[int] = set()  # the windows pinged in this round
        self._clients: list[int] | None = None  # `client_ids` while the WM announces no change of _NET_CLIENT_LIST
        self._answers: dict[int, bool] = {}
        # An unmapped window of ours whose frame extents the WM sets when asked: its answer says the WM has handled
        # every event queued before the question (`ping_apps`).
        self._probe = self.root.create_window(-1, -1, 1, 1, 0, X.CopyFromParent, X.InputOnly, X.CopyFromParent,
                                              event_mask=X.PropertyChangeMask)
        self._wm_answered = False
        # One DAMAGE watch of the whole screen for the connection's life (`watch`, `drawn`, `still`): every drawing
        # request is reported, so no step pays for setting one up, and the time between steps is watched too.
        self._has_damage = self.d.query_extension("DAMAGE").present
        self._damage: int | None = None
        if self._has_damage:
            self.d.damage_query_version()  # the extension serves a client only once it has said which version it speaks
            self._damage = self.root.damage_create(damage.DamageReportRawRectangles)  # every request, not only growth
        self._below = 0  # the first screen row whose drawing counts (the top bar's clock changes by itself)
        self._drawn = False  # drawing reported since the last mark (`mark`, `watch`, `drawn` each set one)
        self._marks = 0  # how many marks so far: a mark's number says whether another came after it
        self._first_seq: int | None = None  # the sequence number of the first drawing reported since the last mark
        self._still = False  # no drawing reported since a `drawn` that found none (`still`)

    @property
    def size(self) -> tuple[int, int]:
        screen = self.d.screen()
        return screen.width_in_pixels, screen.height_in_pixels

    # pointer ------------------------------------------------------------------------------------
    def move(self, x: float, y: float) -> None:
        xtest.fake_input(self.d, X.MotionNotify, x=int(round(x)), y=int(round(y)))

    def button(self, number: int, down: bool) -> None:
        xtest.fake_input(self.d, X.ButtonPress if down else X.ButtonRelease, number)

    def pointer(self) -> tuple[int, int]:
        reply = self.root.query_pointer()
        return reply.root_x, reply.root_y

    # keyboard -----------------------------------------------------------------------------------
    def key(self, keycode: int, down: bool) -> None:
        xtest.fake_input(self.d, X.KeyPress if down else X.KeyRelease, keycode)

    def keycodes(self, keysyms: Iterable[int]) -> list[tuple[int, int]]:
        """(keycode, level) for each keysym, binding the ones no key produces to scratch keycodes first.

        At most `scratch_count` keysyms that are not `on_keymap` may be asked for at once; callers that
        type more split the text and let the app read each part before asking for the next.
        """
        keysyms = list(keysyms)
        missing = [k for k in dict.fromkeys(keysyms) if k not in self._levels and k not in self._bound]
        wanted = set(keysyms)
        changed = []
        for keysym in missing:
            keycode = self._free_scratch(wanted)
            self._rows[keycode - self._min_keycode] = [keysym, keysym] + [X.NoSymbol] * (len(self._rows[0]) - 2)
            self._bound[keysym] = keycode
            changed.append(keycode)
        for keysym in keysyms:
            if keysym in self._bound:
                self._bound.move_to_end(keysym)
        if changed:
            self._write_keymap(min(changed), max(changed))
        return [self._levels[k] if k in self._levels else (self._bound[k], 0) for k in keysyms]

    @property
    def scratch_count(self) -> int:
        return len(self._scratch)

    def on_keymap(self, keysym: int) -> bool:
        """Whether a key of the server's own keymap produces `keysym` (plain or shifted)."""
        return keysym in self._levels

    def _free_scratch(self, wanted: set[int]) -> int:
        used = set(self._bound.values())
        for keycode in self._scratch:
            if keycode not in used:
                return keycode
        for keysym, keycode in self._bound.items():
            if keysym not in wanted:
                del self._bound[keysym]
                return keycode
        raise SetupError(
            f"more than {len(self._scratch)} characters without a key in one input; send it in parts"
        )

    def _write_keymap(self, low: int, high: int) -> None:
        """One ChangeKeyboardMapping for keycodes low..high (one reload in every client)."""
        rows = self._rows[low - self._min_keycode: high - self._min_keycode + 1]
        self.d.change_keyboard_mapping(low, [tuple(row) for row in rows])
        self.d.sync()

    def restore_keymap(self) -> None:
        """Give the scratch keycodes back their original keys (polite on a display we do not own)."""
        if self._bound:
            for keycode in self._scratch:
                self._rows[keycode - self._min_keycode] = list(self._original[keycode - self._min_keycode])
            self._write_keymap(self._scratch[0], self._scratch[-1])
            self._bound.clear()

    def sync(self) -> None:
        """Round trip: the server has processed every request sent so far."""
        self.d.sync()
        self._read_events()

    def _read_events(self) -> None:
        """Note the drawing a DAMAGE watch reports; drop the focus cache on the property changes that can stale it."""
        while self.d.pending_events():
            ev = self.d.next_event()
            if self._has_damage and ev.type == self.d.extension_event.DamageNotify:
                if ev.damage == self._damage and ev.area.y + ev.area.height > self._below:
                    self._drawn, self._still = True, False
                    if self._first_seq is None:  # an event carries our last request the server had processed
                        self._first_seq = ev.sequence_number
                continue
            if ev.type == X.ClientMessage and ev.client_type == self._atom("WM_PROTOCOLS"):
                protocol, serial, window = ev.data[1][:3]
                if protocol == self._atom("_NET_WM_PING"):
                    self._answers[window] = True
                    if serial == self._ping:
                        self._pongs.add(window)
                continue
            if ev.type != X.PropertyNotify:
                continue
            if ev.window.id == self._probe.id:
                if not self._wm_answered:  # the WM has handled the input: the apps' turn
                    self._wm_answered = True
                    self._send_pings()
            elif ev.window.id == self.root.id and ev.atom == self._atom("_NET_SUPPORTING_WM_CHECK"):
                self._wm, self._focus, self._clients = ev.state == X.PropertyNewValue, None, None
            elif ev.window.id == self.root.id and ev.atom == self._atom("_NET_ACTIVE_WINDOW"):
                self._focus = None
            elif ev.window.id == self.root.id and ev.atom == self._atom("_NET_CLIENT_LIST"):
                self._clients = None
            elif self._focus is not None and ev.window.id == self._focus[0]:
                self._focus = None  # renamed (or any other property of the focused window changed)

    def _wait_events(self, done: Callable[[], bool], timeout: float) -> None:
        """Read events as the server sends them until `done()` or `timeout` (sleeping in select, not polling)."""
        deadline = time.monotonic() + timeout
        while not done() and (left := deadline - time.monotonic()) > 0:
            if select.select([self.d.fileno()], [], [], left)[0]:
                self._read_events()

    def ping_apps(self, timeout: float) -> Callable[[], bool]:
        """Start asking every app window whether it has handled the input sent so far; returns `answered()`, True once
        each has answered or `timeout` has passed. The events answer as they are read (`_wait_events`), so the
        caller waits for them together with the drawing they come with, not one after the other.

        The question is a _NET_WM_PING, which an app answers only after the input events queued before it; a WM
        that grabs buttons (click to focus) passes a click on when it has handled it, so the WM is asked first (it
        sets our probe window's _NET_FRAME_EXTENTS) and the apps are pinged on its answer. A window that lets a
        ping go unanswered is not waited for again until it answers a later one (Tk answers without announcing it
        in WM_PROTOCOLS, so every window is tried).
        """
        deadline = time.monotonic() + timeout
        self._ping, self._pongs = self._ping % 0xFFFFFFFF + 1, set()
        if self._clients is None or not self._wm:  # without a WM nothing announces new windows
            self._clients = self.client_ids()
        self._targets = {w for w in self._clients if self._answers.get(w, True)}
        self._wm_answered = not (self._wm and self._clients)
        if self._wm_answered:
            self._send_pings()
        else:
            message = event.ClientMessage(window=self._probe, client_type=self._atom("_NET_REQUEST_FRAME_EXTENTS"),
                                          data=(32, [0, 0, 0, 0, 0]))
            self.root.send_event(message, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
            self.d.flush()

        def answered() -> bool:
            if self._targets <= self._pongs:
                return True
            if time.monotonic() < deadline:
                return False
            for window_id in self._targets - self._pongs:
                self._answers[window_id] = False
            self._targets = set()
            return True

        return answered

    def _send_pings(self) -> None:
        """Ping every app window, also those not waited for (their answer makes them waited for again)."""
        for window_id in self._clients or ():
            window = self.d.create_resource_object("window", window_id)
            message = event.ClientMessage(window=window, client_type=self._atom("WM_PROTOCOLS"),
                                          data=(32, [self._atom("_NET_WM_PING"), self._ping, window_id, 0, 0]))
            window.send_event(message, event_mask=X.NoEventMask, onerror=Xlib.error.CatchError())
        self.d.flush()

    def _mark(self) -> int:
        self._drawn, self._first_seq = False, None
        self._marks += 1
        return self._marks

    @property
    def next_serial(self) -> int:
        """The sequence number the next request on this connection gets (`watch(sent=)`)."""
        return self.d.display.request_serial

    def mark(self) -> int:
        """Note drawing from here on (what has already arrived counts as before); grab a frame after this, and
        `watch(since=)` with the returned mark says whether the frame can have changed."""
        self._read_events()
        return self._mark()

    def watch(self, below: int = 0, since: int | None = None, sent: int | None = None) -> Redrawn:
        """Start watching for drawing below screen row `below`: a round trip (the server has processed the input sent
        so far), after which `drawn` reports only what is drawn from here on. Returns what was drawn since mark
        `since` (AFTER_INPUT without one, or when a later mark came between); drawing the server did before it
        processed request `sent` (the input's first) is BEFORE_INPUT, told by the sequence number in its report."""
        self._below = below
        self.sync()
        if not self._has_damage or since != self._marks:
            found = Redrawn.AFTER_INPUT
        elif not self._drawn:
            found = Redrawn.NOTHING
        elif sent is not None and self._first_seq is not None and 0 < (sent - self._first_seq) % 0x10000 < 0x8000:
            found = Redrawn.BEFORE_INPUT
        else:
            found = Redrawn.AFTER_INPUT
        self._mark()
        return found

    def drawn(self, wait_s: float, until: Callable[[], bool], poll_s: float = 0.001) -> bool:
        """Whether anything was drawn below the watched row since the last call (or `watch`), waiting up to `wait_s`
        for drawing or for `until()`. A screen grabbed after one call is still on screen when the next says False,
        which saves grabbing it again to find out; waiting on the server's report wakes at the drawing itself, where
        polling on a busy machine oversleeps. Without DAMAGE it pauses `poll_s` and says True (grab and compare)."""
        if not self._has_damage:
            time.sleep(min(wait_s, poll_s))
            return True
        self._mark()  # what was read before belongs to the last call, which ended with a round trip
        self._read_events()
        self._wait_events(lambda: self._drawn or until(), wait_s)
        if not self._drawn:  # a round trip: everything drawn until now has been reported
            self.sync()
            self._still = not self._drawn
        return self._drawn

    def still(self) -> int | None:
        """While nothing has been reported drawn (below the watched row) since the last `drawn` that found nothing,
        the last mark (for `watch(since=)`): a frame grabbed just before that call is still on screen, so a step need
        not grab it again; else None. Reads only what has already arrived (no round trip): drawing still on its way
        counts as drawn after the mark."""
        self._read_events()
        return self._marks if self._still else None

    # windows ------------------------------------------------------------------------------------
    def _atom(self, name: str) -> int:
        if name not in self._atoms:
            self._atoms[name] = self.d.intern_atom(name)
        return self._atoms[name]

    def _window_property(self, window: Window, name: str) -> list[int]:
        prop = window.get_full_property(self._atom(name), X.AnyPropertyType)
        return list(prop.value) if prop is not None and prop.format == 32 else []

    def wm_running(self) -> bool:
        """An EWMH window manager announces itself through _NET_SUPPORTING_WM_CHECK on the root window."""
        return bool(self._window_property(self.root, "_NET_SUPPORTING_WM_CHECK"))

    def client_ids(self) -> list[int]:
        """Top-level app windows: the WM's _NET_CLIENT_LIST (less panels, docks and the desktop), else mapped root
        children that carry a WM_CLASS."""
        ids = self._window_property(self.root, "_NET_CLIENT_LIST")
        if ids or self.wm_running():
            return [i for i in ids if not self._is_dock(i)]
        found = []
        for child in self.root.query_tree().children:
            try:
                if child.get_attributes().map_state == X.IsViewable and child.get_wm_class():
                    found.append(child.id)
            except Xlib.error.XError:
                continue
        return found

    def dock_count(self) -> int:
        """How many panels and docks the WM manages (they are left out of `client_ids`)."""
        return sum(self._is_dock(i) for i in self._window_property(self.root, "_NET_CLIENT_LIST"))

    def _is_dock(self, window_id: int) -> bool:
        """A panel, dock or the desktop's icon layer (_NET_WM_WINDOW_TYPE_DOCK / _DESKTOP): not an app's window."""
        try:
            types = self._window_property(self.d.create_resource_object("window", window_id), "_NET_WM_WINDOW_TYPE")
        except Xlib.error.XError:
            return False
        return bool({self._atom("_NET_WM_WINDOW_TYPE_DOCK"), self._atom("_NET_WM_WINDOW_TYPE_DESKTOP")} & set(types))

    def window(self, window_id: int) -> WindowInfo | None:
        """Title, class and client-area geometry of a window; None if it vanished meanwhile."""
        window = self.d.create_resource_object("window", window_id)
        try:
            geometry = window.get_geometry()
            origin = self.root.translate_coords(window, 0, 0)
            return WindowInfo(window_id, self._title(window), (window.get_wm_class() or ("", ""))[-1],
                              (origin.x, origin.y, geometry.width, geometry.height))
        except Xlib.error.XError:
            return None

    def _title(self, window: Window) -> str:
        prop = window.get_full_property(self._atom("_NET_WM_NAME"), self._atom("UTF8_STRING"))
        if prop is not None and prop.value:
            value = prop.value
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        name = window.get_full_property(Xatom.WM_NAME, X.AnyPropertyType)
        if name is None or not name.value:
            return ""
        return name.value.decode("latin-1") if isinstance(name.value, bytes) else str(name.value)

    def windows(self) -> list[WindowInfo]:
        return [info for window_id in self.client_ids() if (info := self.window(window_id)) is not None]

    def focused_id(self) -> int | None:
        """The active window (_NET_ACTIVE_WINDOW), else the top-level window holding the input focus."""
        active = [w for w in self._window_property(self.root, "_NET_ACTIVE_WINDOW") if w]
        if active:
            return active[0]
        focus = self.d.get_input_focus().focus
        clients = set(self.client_ids())
        while hasattr(focus, "id") and focus.id != self.root.id:  # an int means None or PointerRoot
            if focus.id in clients:
                return focus.id
            try:
                focus = focus.query_tree().parent
            except Xlib.error.XError:
                return None
        return None

    def activate(self, window_id: int, timeout: float = 1.0) -> bool:
        """Raise and focus a top-level window (through the WM's _NET_ACTIVE_WINDOW when there is one);
        True once it holds the focus."""
        window = self.d.create_resource_object("window", window_id)
        if self.wm_running():  # source 2: a tool acting for the user, which focus-stealing rules let through
            message = event.ClientMessage(window=window, client_type=self._atom("_NET_ACTIVE_WINDOW"),
                                          data=(32, [2, X.CurrentTime, 0, 0, 0]))
            self.root.send_event(message, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        else:
            window.configure(stack_mode=X.Above, onerror=Xlib.error.CatchError())
            window.set_input_focus(X.RevertToParent, X.CurrentTime, onerror=Xlib.error.CatchError())
        deadline = time.monotonic() + timeout
        while self.focused_id() != window_id:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def focused_title(self) -> str | None:
        """The focused window's title, from the cache while the WM has announced no change."""
        self._read_events()
        if self._focus is not None:
            return self._focus[1]
        window_id = self.focused_id()
        if self._wm and window_id is not None:  # listen before reading, so no rename slips in between
            window = self.d.create_resource_object("window", window_id)
            window.change_attributes(event_mask=X.PropertyChangeMask, onerror=Xlib.error.CatchError())
        title = self.title(window_id) if window_id is not None else None
        if self._wm:
            self._focus = (window_id, title)
        return title

    def title(self, window_id: int) -> str | None:
        """A window's title (_NET_WM_NAME, else WM_NAME); None if the window vanished meanwhile."""
        try:
            return self._title(self.d.create_resource_object("window", window_id))
        except Xlib.error.XError:
            return None

    def close(self) -> None:
        try:
            self.d.close()
        except SERVER_GONE:
            pass


# --- screen -------------------------------------------------------------------------------------

class Screen:
    """Full-screen grabs through MIT-SHM (mss falls back to XGetImage on servers without it)."""

    def __init__(self, display: str) -> None:
        self._mss = mss.MSS(display=display)
        self._monitor = self._mss.monitors[0]

    def grab(self) -> mss.screenshot.ScreenShot:
        return self._mss.grab(self._monitor)

    @staticmethod
    def image(shot: mss.screenshot.ScreenShot) -> Image.Image:
        return Image.frombytes("RGB", shot.size, shot.raw, "raw", "BGRX")

    def close(self) -> None:
        try:
            self._mss.close()
        except SERVER_GONE:
            pass
