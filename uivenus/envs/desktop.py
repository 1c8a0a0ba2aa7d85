"""The desktop environment: real X11 apps on a private Xvfb, input through XTEST, screenshots through MIT-SHM.

Each action is turned into fake pointer and key events (no shell, no xdotool strings built from model
output); after input the env grabs the screen until it shows the effect and holds still, so a
screenshot is never taken in the middle of a redraw. The X mechanics live in `x11.py`; this module
decides what every action of the unified space means on a desktop.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mss.screenshot
from Xlib import XK

from uivenus.actions import space as S
from uivenus.actions.registries import check_covers
from uivenus.actions.space import Action, Direction, Platform
from uivenus.actions.space import ActionType as A
from uivenus.envs.base import EnvBase, EnvCrashedError, EnvError, Observation, PlatformMismatchError, SetupError
from uivenus.envs.materialize import Materialized, MaterializePlan, apply, relative_path
from uivenus.envs.x11 import SERVER_GONE, Screen, XConnection, Xvfb, char_keysym, log_tail, spawn, stop, x_errors
from uivenus.records import TaskSpec

log = logging.getLogger(__name__)
XK.load_keysym_group("xf86")


class AppNotFoundError(SetupError):
    """An app the task allows is not in `task.setup['apps']` and no executable of its name is on PATH."""


class AppNotAllowedError(EnvError):
    """LaunchApp named a program that neither the task nor `DesktopConfig.allowed_apps` names: nothing started."""


class UnsupportedKeyError(EnvError):
    """A key name that has no X11 keysym (e.g. 'fn', which keyboards handle in hardware)."""


#: Key names of the action space (lower-cased) -> X keysym names. Single characters map through `char_keysym`.
KEYSYM_NAMES: Mapping[str, str] = {
    "ctrl": "Control_L", "control": "Control_L", "alt": "Alt_L", "option": "Alt_L", "shift": "Shift_L",
    "cmd": "Super_L", "command": "Super_L", "meta": "Super_L", "win": "Super_L", "super": "Super_L",
    "enter": "Return", "return": "Return", "esc": "Escape", "escape": "Escape", "tab": "Tab", "space": "space",
    "backspace": "BackSpace", "delete": "Delete", "del": "Delete", "insert": "Insert", "home": "Home",
    "end": "End", "pageup": "Prior", "pagedown": "Next", "up": "Up", "down": "Down", "left": "Left",
    "right": "Right", "arrowup": "Up", "arrowdown": "Down", "arrowleft": "Left", "arrowright": "Right",
    "capslock": "Caps_Lock", "numlock": "Num_Lock", "scrolllock": "Scroll_Lock", "printscreen": "Print",
    "prtsc": "Print", "pause": "Pause", "menu": "Menu", "volumeup": "XF86_AudioRaiseVolume",
    "volumedown": "XF86_AudioLowerVolume", "volumemute": "XF86_AudioMute", "playpause": "XF86_AudioPlay",
    "back": "XF86_Back", "forward": "XF86_Forward", **{f"f{i}": f"F{i}" for i in range(1, 25)},
}
SHIFT = XK.string_to_keysym("Shift_L")
#: Characters Type presses as keys rather than as text (the computer prompt's "each \n presses Enter").
TYPE_KEYS: Mapping[str, int] = {"\n": XK.string_to_keysym("Return"), "\t": XK.string_to_keysym("Tab")}
#: (button, clicks) of each click action.
CLICKS: Mapping[A, tuple[int, int]] = {
    A.CLICK: (1, 1), A.DOUBLE_CLICK: (1, 2), A.TRIPLE_CLICK: (1, 3), A.RIGHT_CLICK: (3, 1), A.MIDDLE_CLICK: (2, 1),
}
#: Wheel buttons of each scroll direction (X11: 4/5 vertical, 6/7 horizontal).
WHEEL: Mapping[Direction, int] = {Direction.UP: 4, Direction.DOWN: 5, Direction.LEFT: 6, Direction.RIGHT: 7}
#: Actions that only speak to the agent loop; they touch nothing on screen.
NO_INPUT = frozenset({A.TAKE_NOTE, A.ANSWER, A.CALL_USER, A.FINISHED})


def key_keysym(key: str) -> int:
    """The keysym of one action-space key name; single letters are case-insensitive ('C' is the c key)."""
    name = KEYSYM_NAMES.get(key.lower())
    if name is not None:
        return XK.string_to_keysym(name)
    if len(key) == 1:
        return char_keysym(key.lower() if key.isascii() and key.isalpha() else key)
    raise UnsupportedKeyError(f"key {key!r} has no X11 keysym; leave it out or use another key")


@dataclass(frozen=True)
class DesktopConfig:
    """Where the display comes from and how long the env waits for windows and for a still screen."""

    width: int = 1280
    height: int = 800
    display: str | None = None  # ":N" attaches to a running X server (not ours to stop; its own size is used)
    first_display: int = 90  # the scan for a free display number for our own Xvfb starts here
    window_manager: tuple[str, ...] = ("openbox", "--sm-disable")  # () runs without one
    launch_timeout_s: float = 10.0  # how long reset/LaunchApp wait for an app's window
    settle_quiet_s: float = 0.25  # an input that changes nothing on screen within this long had no visible effect
    settle_hold_s: float = 0.0  # a changed frame must stay identical this long (0: the next grab) to count as settled
    settle_max_s: float = 1.0  # the screen is taken as it is after this long, even if still animating
    settle_poll_s: float = 0.001  # pause between grabs while waiting for the first change
    drag_steps: int = 10  # pointer moves between press and release (WMs and apps need motion events)
    drag_step_s: float = 0.01
    drag_hold_s: float = 0.05  # pause after the press and before the release (a WM starts a move on its own time)
    scroll_notches: int = 3  # wheel clicks of a Scroll without an amount
    wait_s: float = 1.0  # length of a Wait without seconds
    sandbox_dir: Path | None = None  # where materialized tasks' roots live (None: inside the env's own temp dir)
    allowed_apps: tuple[str, ...] = ()  # programs on PATH LaunchApp may start in any task, besides the task's own

    def __post_init__(self) -> None:
        if self.width < 16 or self.height < 16:
            raise ValueError(f"DesktopConfig: screen must be at least 16x16, got {self.width}x{self.height}")
        if self.drag_steps < 1 or self.scroll_notches < 1:
            raise ValueError("DesktopConfig: drag_steps and scroll_notches must be >= 1")
        paths = [name for name in self.allowed_apps if not name or _is_path(name)]
        if paths:
            raise ValueError(f"DesktopConfig.allowed_apps takes program names found on PATH, not paths: {paths}")


class DesktopEnv(EnvBase):
    """A real X11 desktop; the display starts with the env and every process it started ends on `close()`."""

    platform = Platform.DESKTOP

    def __init__(self, config: DesktopConfig = DesktopConfig()) -> None:
        self.config = config
        self.display = config.display or ""  # the X display name, set once the server is up
        self._workdir = Path(tempfile.mkdtemp(prefix="uivenus-desktop-"))
        self._xvfb: Xvfb | None = None
        self._wm: subprocess.Popen[bytes] | None = None
        self._apps: dict[subprocess.Popen[bytes], Path] = {}  # every app launched for the current task -> its log
        self._app_windows: set[int] = set()  # the windows those apps opened
        self._launches = itertools.count()
        self._task: TaskSpec | None = None
        self._held_buttons: set[int] = set()
        self._held_keys: dict[str, list[int]] = {}  # key name -> keycodes pressed by KeyDown
        self._frame: mss.screenshot.ScreenShot | None = None  # the settled grab of the last step, for observe()
        self._materialized: Materialized | None = None  # the current task's materialization plan, applied
        self._closed = False
        atexit.register(self.close)
        try:
            self._start_display()
        except BaseException:
            self.close()
            raise

    # --- lifecycle ------------------------------------------------------------------------------
    def _start_display(self) -> None:
        cfg = self.config
        if cfg.display is None:
            self._xvfb = Xvfb.start(cfg.width, cfg.height, cfg.first_display, self._workdir)
            self.display = self._xvfb.display
        else:
            self.display = cfg.display
        try:
            self._x = XConnection(self.display)
            self._screen = Screen(self.display)
        except SERVER_GONE as exc:
            raise SetupError(f"cannot open X display {self.display}: {exc}") from None
        self._size = self._x.size
        self._start_window_manager()

    def _start_window_manager(self) -> None:
        argv = self.config.window_manager
        if not argv or self._x.wm_running():
            return
        if shutil.which(argv[0]) is None:
            log.warning("window manager %r not found; windows get no decorations or focus handling", argv[0])
            return
        self._wm = spawn(argv, self.display, self._workdir / "wm.log")
        deadline = time.monotonic() + 5.0
        while not self._x.wm_running():
            if self._wm.poll() is not None or time.monotonic() > deadline:
                log.warning("window manager %r did not start: %s", argv[0], log_tail(self._workdir / "wm.log"))
                return
            time.sleep(0.02)

    def _stop_display(self) -> None:
        """Stop WM and Xvfb and drop the connections; tolerant of a server that already died."""
        for name in ("_x", "_screen"):
            connection = self.__dict__.pop(name, None)
            if connection is not None:
                connection.close()
        if self._wm is not None:
            stop(self._wm)
            self._wm = None
        if self._xvfb is not None:
            self._xvfb.stop()
            self._xvfb = None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        try:
            if self._alive():
                with x_errors(self.display):
                    self._release_held()
                    if self._xvfb is None:
                        self._x.restore_keymap()
        except EnvCrashedError:
            pass
        self._stop_apps()
        self._undo_materialized()
        self._stop_display()
        shutil.rmtree(self._workdir, ignore_errors=True)

    def _alive(self) -> bool:
        """Connected, and our own Xvfb (if we started one) still running."""
        return "_x" in self.__dict__ and (self._xvfb is None or self._xvfb.alive)

    def _check(self) -> None:
        if self._closed:
            raise EnvError("this DesktopEnv is closed; create a new one")
        if not self._alive():
            raise EnvCrashedError(f"Xvfb on {self.display} exited ({self._xvfb.process.returncode if self._xvfb else '?'})")

    def _recover(self) -> bool:
        """Restart Xvfb, the window manager and the task's apps after the X server died."""
        if self.config.display is not None or self._closed:
            return False  # a display we do not own is not ours to restart
        self._held_buttons.clear()
        self._held_keys.clear()
        self._stop_apps()
        self._stop_display()
        try:
            self._start_display()
            if self._task is not None:
                self._launch_task(self._task)
        except EnvError as exc:
            log.error("desktop recovery failed: %s", exc)
            return False
        return True

    @property
    def screen_size(self) -> tuple[int, int]:
        return self._size

    # --- episodes -------------------------------------------------------------------------------
    @property
    def sandbox_dir(self) -> Path:
        return self.config.sandbox_dir or self._workdir / "sandbox"

    def workspace(self, name: str) -> Path:
        """The root of the named workspace `setup['workspace']` (it outlives episodes: a segmented task's files)."""
        if len(relative_path(name, "setup.workspace").parts) != 1:
            raise SetupError(f"setup.workspace must be a plain directory name, got {name!r}")
        return self.sandbox_dir / name

    @property
    def materialized(self) -> Materialized | None:
        """The current task's applied materialization plan (its root holds the files its check reads)."""
        return self._materialized

    def reset(self, task: TaskSpec) -> Observation:
        """Stop the last task's apps and undo its materialization; set up and launch this task's; wait for a still screen."""
        if self._closed:
            raise EnvError("this DesktopEnv is closed; create a new one")
        if task.platform is not self.platform:
            raise PlatformMismatchError(f"task {task.id} is for {task.platform.value}; DesktopEnv runs desktop tasks")
        if not self._alive() and not self._recover():
            raise EnvCrashedError(f"the X server on {self.display} died and could not be restarted")
        closing = self._stop_apps()
        with x_errors(self.display):
            self._release_held()
            self._wait_windows_gone(closing)
        self._undo_materialized()
        self._task = task
        if "materialize" in task.setup:
            self._materialize(task)
        self._launch_task(task)
        return self.observe()

    def _materialize(self, task: TaskSpec) -> None:
        """Apply `setup['materialize']` in the task's workspace (or a fresh root) with a fresh home for its apps."""
        plan = MaterializePlan.from_dict(task.setup["materialize"])
        if plan.launch and "launch" in task.setup:
            raise SetupError(f"task {task.id} has both setup.launch and setup.materialize.launch; keep one")
        episode = uuid.uuid4().hex[:12]  # unique also in a sandbox_dir that other envs share
        name = task.setup.get("workspace")
        root = self.workspace(name) if name is not None else self.sandbox_dir / f"episode-{episode}"
        self.sandbox_dir.mkdir(parents=True, exist_ok=True)  # shared by workspaces: no plan's undo may remove it
        self._materialized = apply(plan, root, self._workdir / f"home-{episode}")

    def _undo_materialized(self) -> None:
        if self._materialized is not None:
            self._materialized.undo()
            self._materialized = None

    def _launch_task(self, task: TaskSpec) -> None:
        """Run the materialization plan's launches, else `setup['launch']` (argv lists), else the task's `app`;
        wait for the windows."""
        launch = task.setup.get("launch")
        plans: list[list[str]] = []
        if self._materialized is not None and self._materialized.commands:
            plans = [self._in_sandbox(list(command.argv)) for command in self._materialized.commands]
        elif launch is not None:
            plans = [_argv(item, "setup.launch") for item in launch]
        elif task.app:
            plans = [self._resolve_app(task.app)]
        with x_errors(self.display):
            before_frame = self._screen.grab().raw
            known = set(self._x.client_ids())
            processes = [self._launch(argv) for argv in plans]
            new = self._wait_windows(known, len(processes), processes) if processes else []
            if processes and not new:
                raise SetupError(
                    f"no window appeared within {self.config.launch_timeout_s}s after launching {plans}: "
                    + "; ".join(log_tail(self._apps[p]) for p in processes)
                )
            if new:
                self._x.activate(new[-1])  # the newest window takes the input, as after a user's launch
            self._frame = self._settle(before_frame, hold_s=self.config.settle_quiet_s)

    def _resolve_app(self, name: str) -> list[str]:
        """The argv of app `name`: its `setup['apps']` entry, else the program of that name on PATH if the task's
        `app` or `allowed_apps` names it. A model's LaunchApp comes here too: no other program ever starts."""
        task = self._task
        apps = task.setup.get("apps", {}) if task is not None else {}
        if not isinstance(apps, Mapping):
            raise SetupError(f"task.setup['apps'] must map app names to argv lists, got {type(apps).__name__}")
        if name in apps:
            return _argv(apps[name], f"setup.apps[{name!r}]")
        allowed = sorted({*apps, *([task.app] if task is not None and task.app else []), *self.config.allowed_apps})
        if _is_path(name) or name not in allowed:
            what = "a path" if _is_path(name) else "not an app this task allows"
            raise AppNotAllowedError(
                f"app {name!r} refused, nothing was started: it is {what} (allowed: {', '.join(allowed) or 'none'}); "
                "name an allowed app, or allow it in task.setup['apps'] or DesktopConfig.allowed_apps"
            )
        found = shutil.which(name)
        if found is None:
            raise AppNotFoundError(f"app {name!r} is allowed but no executable of that name is on PATH; install it "
                                   "or add it to task.setup['apps'] as an argv list")
        return [found]

    def _in_sandbox(self, argv: list[str]) -> list[str]:
        """`argv` as run in a materialized task: in its root, with its home and settings environment."""
        if self._materialized is None:
            return argv
        if shutil.which(argv[0]) is None:
            raise AppNotFoundError(f"{argv[0]!r} is not installed or not on PATH; install its Debian package")
        return self._materialized.command(argv).via_env()

    def _launch(self, argv: list[str]) -> subprocess.Popen[bytes]:
        log_path = self._workdir / f"app-{next(self._launches)}.log"
        process = spawn(argv, self.display, log_path)
        self._apps[process] = log_path
        return process

    def _wait_windows(self, known: set[int], count: int, processes: Sequence[subprocess.Popen[bytes]]) -> list[int]:
        """New top-level windows (at least `count`, or what there is at the timeout, or once every process ended)."""
        deadline = time.monotonic() + self.config.launch_timeout_s
        while True:
            new = [w for w in self._x.client_ids() if w not in known]
            if len(new) >= count or time.monotonic() > deadline or all(p.poll() is not None for p in processes):
                self._app_windows.update(new)
                return new
            time.sleep(0.02)

    def _wait_windows_gone(self, windows: set[int], timeout: float = 2.0) -> None:
        """Wait until the WM has dropped `windows`: X reuses the ids of a dead client for the next one, so a
        window still listed from the last task would hide the new app's window from `_wait_windows`."""
        deadline = time.monotonic() + timeout
        while windows & set(self._x.client_ids()) and time.monotonic() < deadline:
            time.sleep(0.02)

    def _stop_apps(self) -> set[int]:
        """Stop every app this env launched; returns the windows they had, which close asynchronously."""
        for process in self._apps:
            stop(process)
        self._apps.clear()
        windows, self._app_windows = self._app_windows, set()
        return windows

    # --- observing ------------------------------------------------------------------------------
    def observe(self) -> Observation:
        self._check()
        with x_errors(self.display):
            shot, self._frame = self._frame or self._screen.grab(), None
            focused = self._x.focused_title()
        return Observation(
            screenshot=Screen.image(shot),
            platform=self.platform,
            size=self.screen_size,
            app=self._task.app if self._task is not None else None,
            info={"display": self.display, "focused": focused},
        )

    def state(self) -> Mapping[str, Any]:
        """The display, its top-level windows (title, class, client geometry), the focused window's title and,
        for a materialized task, its sandbox `root` and the apps' `home`."""
        self._check()
        with x_errors(self.display):
            state = {
                "display": self.display,
                "windows": [w.to_dict() for w in self._x.windows()],
                "focused": self._x.focused_title(),
            }
        if self._materialized is not None:
            state["materialized"] = self._materialized.to_dict()
        return state

    def _settle(self, before: bytearray | None, hold_s: float) -> mss.screenshot.ScreenShot:
        """Grab until the screen shows the input's effect and holds still for `hold_s`, within settle_max_s.

        Fast path: the first grab already differs from `before` and the next one equals it. A screen that
        does not change within settle_quiet_s is taken as an input with no visible effect. Without
        `before` (no input to wait for) the screen only has to hold still.
        """
        cfg = self.config
        start = time.monotonic()
        shot = self._screen.grab()
        changed = before is None or shot.raw != before
        held_from = start
        while True:
            now = time.monotonic()
            if now - start >= cfg.settle_max_s or (not changed and now - start >= cfg.settle_quiet_s):
                return shot
            time.sleep(cfg.settle_poll_s if not changed else min(cfg.settle_poll_s, hold_s))
            grab = self._screen.grab()
            if grab.raw != shot.raw:
                changed, held_from = True, time.monotonic()
            elif changed and time.monotonic() - held_from >= hold_s:
                return grab
            shot = grab

    # --- acting ---------------------------------------------------------------------------------
    def _execute(self, action: Action) -> Mapping[str, Any] | None:
        self._check()
        if action.type in NO_INPUT:
            return None
        with x_errors(self.display):
            before = None if action.type is A.WAIT else self._screen.grab().raw  # a Wait sends no input
            try:
                return self._act(action)
            finally:  # also after a failed Sequence member: what did run is on screen before observe()
                self._x.sync()
                self._frame = self._settle(before, hold_s=self.config.settle_hold_s)

    def _act(self, action: Action) -> Mapping[str, Any] | None:
        handler = HANDLERS.get(action.type)  # None: a no-op inside a Sequence (TakeNote, Finished, ...)
        return handler(self, action) if handler is not None else None

    def _sequence(self, action: S.ActionSequence) -> Mapping[str, Any]:
        infos = [self._act(inner) for inner in action.actions]
        return {"sequence": [dict(i or {}) for i in infos]}

    def _move(self, point: S.Point | None) -> None:
        if point is not None:
            self._x.move(*point)

    def _click(self, action: Any) -> None:
        button, clicks = CLICKS[action.type]
        self._x.move(*action.point)
        for _ in range(clicks):
            self._x.button(button, True)
            self._x.button(button, False)

    def _hover(self, action: S.Hover) -> None:
        self._x.move(*action.point)

    def _drag(self, action: S.Drag) -> None:
        cfg = self.config
        x0, y0 = action.start if action.start is not None else self._x.pointer()
        x1, y1 = action.end
        self._x.move(x0, y0)
        self._x.button(1, True)
        self._pause(cfg.drag_hold_s)
        for i in range(1, cfg.drag_steps + 1):
            self._x.move(x0 + (x1 - x0) * i / cfg.drag_steps, y0 + (y1 - y0) * i / cfg.drag_steps)
            self._pause(cfg.drag_step_s)
        self._pause(cfg.drag_hold_s)
        self._x.button(1, False)

    def _pause(self, seconds: float) -> None:
        """Let the server deliver what was sent and the apps (and WM) react before the next event."""
        self._x.sync()
        time.sleep(seconds)

    def _mouse_down(self, action: S.MouseDown) -> None:
        self._move(action.point)
        self._x.button(1, True)
        self._held_buttons.add(1)

    def _mouse_up(self, action: S.MouseUp) -> None:
        self._move(action.point)
        self._x.button(1, False)
        self._held_buttons.discard(1)

    def _scroll(self, action: S.Scroll) -> None:
        self._move(action.point)
        button = WHEEL[action.direction]
        for _ in range(action.amount or self.config.scroll_notches):
            self._x.button(button, True)
            self._x.button(button, False)

    def _type(self, action: S.Type) -> None:
        """Type text key by key; characters no key produces are bound to scratch keycodes, a batch at a time.

        Xlib clients apply a keymap change as soon as they read it, even before the key events queued
        ahead of it, so the screen must show one batch (the app has read it) before the next rebinds.
        """
        batches = self._scratch_batches([TYPE_KEYS.get(ch) or char_keysym(ch) for ch in action.content])
        for i, batch in enumerate(batches):
            before = self._screen.grab().raw if i < len(batches) - 1 else None
            self._type_batch(batch)
            if before is not None:
                self._settle(before, hold_s=self.config.settle_hold_s)

    def _scratch_batches(self, keysyms: list[int]) -> list[list[int]]:
        """Split keysyms so no part needs more scratch keycodes than there are."""
        batches: list[list[int]] = [[]]
        off_keymap: set[int] = set()  # the current batch's keysyms that need a scratch keycode
        for keysym in keysyms:
            if not self._x.on_keymap(keysym) and keysym not in off_keymap:
                if len(off_keymap) == self._x.scratch_count:
                    batches.append([])
                    off_keymap = set()
                off_keymap.add(keysym)
            batches[-1].append(keysym)
        return batches

    def _type_batch(self, keysyms: list[int]) -> None:
        shift = self._x.keycodes([SHIFT])[0][0]
        for keycode, level in self._x.keycodes(keysyms):
            if level:
                self._x.key(shift, True)
            self._x.key(keycode, True)
            self._x.key(keycode, False)
            if level:
                self._x.key(shift, False)
        self._x.sync()

    def _chord(self, keys: Sequence[str]) -> list[int]:
        """Keycodes to press for `keys`, Shift first when a character sits on the shifted level ('ctrl', '+')."""
        pairs = self._x.keycodes([key_keysym(k) for k in keys])
        keycodes = [keycode for keycode, _ in pairs]
        if any(level for _, level in pairs):
            shift = self._x.keycodes([SHIFT])[0][0]
            keycodes = [shift] + [k for k in keycodes if k != shift]
        return keycodes

    def _hotkey(self, action: S.Hotkey) -> None:
        keycodes = self._chord(action.keys)
        for _ in range(action.repeat):
            for keycode in keycodes:
                self._x.key(keycode, True)
            for keycode in reversed(keycodes):
                self._x.key(keycode, False)

    def _key_down(self, action: S.KeyDown) -> None:
        for key in action.keys:
            keycodes = self._chord([key])
            for keycode in keycodes:
                self._x.key(keycode, True)
            self._held_keys[key.lower()] = keycodes

    def _key_up(self, action: S.KeyUp) -> None:
        for key in action.keys:
            keycodes = self._held_keys.pop(key.lower(), None) or self._chord([key])
            for keycode in reversed(keycodes):
                self._x.key(keycode, False)

    def _release_held(self) -> None:
        for keycodes in self._held_keys.values():
            for keycode in reversed(keycodes):
                self._x.key(keycode, False)
        for button in self._held_buttons:
            self._x.button(button, False)
        self._held_keys.clear()
        self._held_buttons.clear()
        self._x.sync()

    def _launch_app(self, action: S.LaunchApp) -> Mapping[str, Any]:
        argv = self._in_sandbox(self._resolve_app(action.app))
        known = set(self._x.client_ids())
        process = self._launch(argv)
        new = self._wait_windows(known, 1, [process])
        if not new and process.poll() not in (None, 0):
            raise SetupError(
                f"{argv} exited with status {process.returncode} before showing a window: "
                f"{log_tail(self._apps[process])}"
            )
        if new:
            self._x.activate(new[-1])
        return {"launched": argv, "window": self._x.title(new[-1]) if new else None}

    def _wait(self, action: S.Wait) -> None:
        time.sleep(self.config.wait_s if action.seconds is None else action.seconds)


def _is_path(name: str) -> bool:
    """An app name with a directory part (or a NUL): a path, which would start a program no allow-list named."""
    return "/" in name or "\\" in name or "\0" in name or name in (".", "..")


def _argv(value: Any, where: str) -> list[str]:
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) and v for v in value):
        return list(value)
    raise SetupError(f"{where} must be an argv list of non-empty strings, e.g. ['xmessage', 'hi'], got {value!r}")


#: What each desktop action does; an action type missing here is not a desktop action (validate() rejects it).
HANDLERS: Mapping[A, Callable[[DesktopEnv, Any], Mapping[str, Any] | None]] = {
    **{kind: DesktopEnv._click for kind in CLICKS},
    A.HOVER: DesktopEnv._hover,
    A.DRAG: DesktopEnv._drag,
    A.MOUSE_DOWN: DesktopEnv._mouse_down,
    A.MOUSE_UP: DesktopEnv._mouse_up,
    A.SCROLL: DesktopEnv._scroll,
    A.TYPE: DesktopEnv._type,
    A.HOTKEY: DesktopEnv._hotkey,
    A.KEY_DOWN: DesktopEnv._key_down,
    A.KEY_UP: DesktopEnv._key_up,
    A.LAUNCH_APP: DesktopEnv._launch_app,
    A.WAIT: DesktopEnv._wait,
    A.SEQUENCE: DesktopEnv._sequence,
}
check_covers("HANDLERS (with NO_INPUT) needs a handler for every desktop action", set(HANDLERS) | NO_INPUT,
             S.actions_for(Platform.DESKTOP))
