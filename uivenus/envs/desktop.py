"""The desktop environment: real X11 apps on a private Xvfb, input through XTEST, screenshots through MIT-SHM.

Each action is turned into fake pointer and key events (no shell, no xdotool strings built from model
output); after input the env grabs the screen until it shows the effect and holds still, so a
screenshot is never taken in the middle of a redraw. The X mechanics live in `x11.py`, the input each action
sends in `desktop_input.py` and the starting of the task's apps in `desktop_apps.py`; this module runs the
display, sets up each task and decides what every action of the unified space means on a desktop.
"""

from __future__ import annotations

import atexit
import logging
import os
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

from uivenus.actions import space as S
from uivenus.actions.registries import check_covers
from uivenus.actions.space import Action, Platform
from uivenus.actions.space import ActionType as A
from uivenus.envs.base import (
    ACTS_ON_POINT, HIT_ELEMENT, EnvBase, EnvCrashedError, EnvError, Observation, PlatformMismatchError, SetupError,
)
from uivenus.envs.desktop_apps import AppLauncher, AppNotAllowedError, is_path
from uivenus.envs.desktop_input import INPUT_HANDLERS, XInput
from uivenus.envs.desktop_look import BAR_HEIGHT, DesktopLook, desktop_icons_argv, panel_argvs, wallpaper
from uivenus.envs.elements import UIElement, element_at, hit_record
from uivenus.envs.materialize import Materialized, MaterializePlan, apply, relative_path
from uivenus.envs.osworld.a11y_reader import A11yError, A11yReader
from uivenus.envs.osworld.apps import app_argv
from uivenus.envs.osworld.session import OSWorldSession
from uivenus.envs.x11 import SERVER_GONE, Redrawn, Screen, XConnection, Xvfb, log_tail, spawn, stop, x_errors
from uivenus.records import TaskSpec

log = logging.getLogger(__name__)


#: Actions that only speak to the agent loop; they touch nothing on screen.
NO_INPUT = frozenset({A.TAKE_NOTE, A.ANSWER, A.CALL_USER, A.FINISHED})


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
    settle_ask_s: float = 0.1  # an input without an effect yet after this long asks the apps if they handled it
    settle_hold_s: float = 0.0  # a changed frame must stay identical this long (0: the next grab) to count as settled
    settle_max_s: float = 1.0  # the screen is taken as it is after this long, even if still animating
    settle_poll_s: float = 0.001  # pause between grabs on a server without DAMAGE (else its reports wake the wait)
    drag_steps: int = 10  # pointer moves between press and release (WMs and apps need motion events)
    drag_step_s: float = 0.01
    drag_hold_s: float = 0.05  # pause after the press and before the release (a WM starts a move on its own time)
    scroll_notches: int = 3  # wheel clicks of a Scroll without an amount
    wait_s: float = 1.0  # length of a Wait without seconds
    sandbox_dir: Path | None = None  # where materialized tasks' roots live (None: inside the env's own temp dir)
    allowed_apps: tuple[str, ...] = ()  # programs on PATH LaunchApp may start in any task, besides the task's own
    unsafe_host: bool = False  # OSWorld tasks run their setup and apps on the bare host instead of in bubblewrap
    osworld_launch_timeout_s: float = 40.0  # how long an OSWorld step waits for an app's window (LibreOffice is slow)
    downloads: Path | None = None  # the OSWorld download cache (None: ~/.cache/uivenus/osworld-downloads)
    offline: bool = False  # OSWorld downloads come only from that cache
    look: DesktopLook = DesktopLook()  # panels and wallpaper of a display the env starts itself

    def __post_init__(self) -> None:
        if self.width < 16 or self.height < 16:
            raise ValueError(f"DesktopConfig: screen must be at least 16x16, got {self.width}x{self.height}")
        if self.drag_steps < 1 or self.scroll_notches < 1:
            raise ValueError("DesktopConfig: drag_steps and scroll_notches must be >= 1")
        paths = [name for name in self.allowed_apps if not name or is_path(name)]
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
        self._panels: list[subprocess.Popen[bytes]] = []  # the look's panels on the host (none during OSWorld tasks)
        self._bar_rows = 0  # how many of the screen's top rows are the top bar, which settling ignores
        self._apps = AppLauncher(self._workdir, launch_timeout_s=config.launch_timeout_s,
                                 allowed_apps=config.allowed_apps)
        self._task: TaskSpec | None = None
        self._frame: mss.screenshot.ScreenShot | None = None  # the settled grab of the last step, for observe()
        self._settled: mss.screenshot.ScreenShot | None = None  # the next input's "before" while still shown
        self._materialized: Materialized | None = None  # the current task's materialization plan, applied
        self._osworld: OSWorldSession | None = None  # the current OSWorld task's isolated root and context
        self._a11y: A11yReader | None = None  # reads the OSWorld root's accessibility tree, started with the session
        self._shown: tuple[UIElement, ...] | None = None  # elements() as read of the current screen, until it changes
        self.last_action: Action | None = None  # the last action the episode executed (a refusal ends OSWorld tasks)
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
        self._settled = None
        self._input = XInput(self._x, self._screen, cfg, self._settle)
        self._start_window_manager()
        if cfg.display is None:  # a display we attach to keeps its own look
            self._dress()

    def _dress(self) -> None:
        """Wallpaper and the host's panels (`DesktopConfig.look`)."""
        feh = wallpaper(self.config.look, self._workdir / "wallpaper.png", self._size)
        if feh is not None:
            subprocess.run(feh, env={**os.environ, "DISPLAY": self.display}, capture_output=True, timeout=10)
        self._start_panels()

    def _start_panels(self) -> None:
        self._panels = [spawn(argv, self.display, self._workdir / "panel.log")
                        for argv in panel_argvs(self.config.look, self._workdir / "panels", self._size[1])]
        if self._panels:  # the top bar's clock ticks on its own: no input's effect (see `_differs`)
            self._bar_rows = BAR_HEIGHT
        self._wait_panels(len(self._panels))

    def _wait_panels(self, count: int, timeout: float = 5.0) -> None:
        """Wait until `count` panels are up, so the first screenshot already shows them (every run looks the same)."""
        deadline = time.monotonic() + timeout
        with x_errors(self.display):
            while count and self._x.dock_count() < count and time.monotonic() < deadline:
                time.sleep(0.02)

    def _stop_panels(self) -> None:
        for panel in self._panels:
            stop(panel)
        self._panels = []

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
        self.__dict__.pop("_input", None)
        for name in ("_x", "_screen"):
            connection = self.__dict__.pop(name, None)
            if connection is not None:
                connection.close()
        self._stop_panels()
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
                    self._input.release_held()
                    if self._xvfb is None:
                        self._x.restore_keymap()
        except EnvCrashedError:
            pass
        self._apps.stop_all()
        self._close_osworld()
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
            code = self._xvfb.process.returncode if self._xvfb else "?"
            raise EnvCrashedError(f"Xvfb on {self.display} exited ({code})")

    def _recover(self) -> bool:
        """Restart Xvfb, the window manager and the task's apps after the X server died."""
        if self.config.display is not None or self._closed:
            return False  # a display we do not own is not ours to restart
        self._apps.stop_all()
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
        """Stop the last task's apps and undo its materialization; set up and launch this task's; wait for a still
        screen."""
        if self._closed:
            raise EnvError("this DesktopEnv is closed; create a new one")
        if task.platform is not self.platform:
            raise PlatformMismatchError(f"task {task.id} is for {task.platform.value}; DesktopEnv runs desktop tasks")
        if not self._alive() and not self._recover():
            raise EnvCrashedError(f"the X server on {self.display} died and could not be restarted")
        closing = self._apps.stop_all()
        self._close_osworld()
        with x_errors(self.display):
            self._input.release_held()
            self._apps.wait_windows_gone(self._x, closing)
        self._undo_materialized()
        self._task, self.last_action, self._shown = task, None, None  # no read of the last task's screen
        if "osworld" in task.setup:
            self._start_osworld(task)
            return self.observe()
        if "materialize" in task.setup:
            self._materialize(task)
        self._launch_task(task)
        return self.observe()

    @property
    def osworld(self) -> OSWorldSession | None:
        """The current OSWorld task's session (its root and the context its evaluator reads), if any."""
        return self._osworld

    def _start_osworld(self, task: TaskSpec) -> None:
        """Make the task's isolated root and run its OSWorld config steps, its apps under our window manager."""
        config = task.setup["osworld"]
        if not isinstance(config, Mapping):
            raise SetupError(f"task {task.id}: setup['osworld'] must be the OSWorld task's mapping, got {config!r}")
        cfg = self.config
        self._osworld = OSWorldSession(config, _SessionDesktop(self), self.display, unsafe_host=cfg.unsafe_host,
                                       parent=cfg.sandbox_dir, downloads=cfg.downloads, offline=cfg.offline)
        self._dress_root(self._osworld)
        with x_errors(self.display):
            before = self._screen.grab()
            self._osworld.start()
            try:
                self._reader().start()  # its helper loads while the apps settle, not on the first click's hit read
            except A11yError as exc:  # no pyatspi here: reads say so when asked
                log.info("no accessibility helper: %s", exc)
            self._frame = self._settle(before, hold_s=cfg.settle_quiet_s)

    def _dress_root(self, session: OSWorldSession) -> None:
        """The task's own panels (a launcher starts its app in the root) and its ~/Desktop icons."""
        self._stop_panels()
        root, look = session.root, self.config.look
        tint2 = "/home/user/.config/tint2"
        panels = panel_argvs(look, root.host_path(tint2), self._size[1], tint2)
        for argv in panels:
            root.spawn(argv)
        self._wait_panels(len(panels))
        picture = self._workdir / "wallpaper.png"
        if picture.is_file():
            inside = "/home/user/.local/share/backgrounds/uivenus.png"
            root.host_path(inside).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(picture, root.host_path(inside))
            root.host_path("/home/user/.fehbg").write_text(f"#!/bin/sh\nfeh --no-fehbg --bg-fill '{inside}'\n")
            icons = desktop_icons_argv(look, root.host_path("/home/user"), inside)
            if icons is not None:
                root.spawn(icons)

    def _close_osworld(self) -> None:
        if self._a11y is not None:
            self._a11y.close()
            self._a11y = None
        if self._osworld is not None:
            self._osworld.close()
            self._osworld = None
            if not self._closed and self._alive() and self.config.display is None:
                self._start_panels()

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
        """Start the task's apps (`AppLauncher.task_argvs`) and wait for their windows and a still screen."""
        plans = self._apps.task_argvs(task, self._materialized)
        with x_errors(self.display):
            before_frame = self._screen.grab()
            known = set(self._x.client_ids())
            processes = [self._apps.launch(argv, self.display) for argv in plans]
            new = self._apps.wait_windows(self._x, known, len(processes), processes) if processes else []
            if processes and not new:
                raise SetupError(
                    f"no window appeared within {self.config.launch_timeout_s}s after launching {plans}: "
                    + "; ".join(self._apps.log_tail(p) for p in processes)
                )
            if new:
                self._x.activate(new[-1])  # the newest window takes the input, as after a user's launch
            self._frame = self._settle(before_frame, hold_s=self.config.settle_quiet_s)

    # --- observing ------------------------------------------------------------------------------
    def observe(self) -> Observation:
        self._check()
        self._shown = None  # a new screen
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

    def elements(self, *, fresh: bool = False) -> tuple[UIElement, ...]:
        """The shown UI elements of the task's apps, read over its root's AT-SPI bus (only on request: a step reads
        only what its point hits). One read per screen: the guard and the listing share it until the next capture or
        action; `fresh` reads the bus again, for whoever waits on one screen for an app to show itself there.
        `A11yError` when the tree cannot be read (no pyatspi, a hung app)."""
        reader = self._reader()  # outside a task's root there is no tree, whatever was read before
        if fresh or self._shown is None:
            self._shown = reader.elements()
        return self._shown

    def _reader(self) -> A11yReader:
        if self._osworld is None:
            raise EnvError("elements() reads the accessibility bus of an OSWorld task's root: reset with a task "
                           "whose setup has 'osworld' (uivenus.tasks.osworld loads them)")
        if self._a11y is None:
            self._a11y = A11yReader(self._osworld.root)
        return self._a11y

    def _hit(self, action: Action) -> dict[str, Any] | None:
        """What a pointer action's point hits (None when there is no tree to ask): in the elements read of this
        screen when someone read them (the guard does, every step), else read from the bus just before it acts."""
        point = getattr(action, "point", None) if isinstance(action, ACTS_ON_POINT) else None
        if point is None or self._osworld is None:
            return None
        if self._shown is not None:  # the same read the guard judged the action on; no round trip to the apps
            return hit_record(element_at(self._shown, point))
        try:
            return hit_record(self._reader().hit(point))
        except A11yError as exc:
            log.info("no hit record: %s", exc)
            return None

    def state(self) -> Mapping[str, Any]:
        """The display, its top-level windows (title, class, client geometry), the focused window's title and,
        for a materialized task, its sandbox `root` and the apps' `home` (for an OSWorld task, its session)."""
        self._check()
        with x_errors(self.display):
            state = {
                "display": self.display,
                "windows": [w.to_dict() for w in self._x.windows()],
                "focused": self._x.focused_title(),
            }
        if self._materialized is not None:
            state["materialized"] = self._materialized.to_dict()
        if self._osworld is not None:
            state["osworld"] = self._osworld.to_dict()
        return state

    def _before(self) -> tuple[mss.screenshot.ScreenShot, int]:
        """The screen before an input, and the mark (`XConnection.mark`) since which it is on screen: the last settled
        frame while the server has reported nothing drawn since it was confirmed (`XConnection.still`), else a grab."""
        since = self._x.still() if self._settled is not None else None
        if since is not None and self._settled is not None:
            return self._settled, since
        since = self._x.mark()
        return self._screen.grab(), since

    def _settle(self, before: mss.screenshot.ScreenShot | None, hold_s: float, ask_apps: bool = False,
                since: int | None = None, sent: int | None = None) -> mss.screenshot.ScreenShot:
        """`_grab_settled`, remembering the frame for the next input's `_before`."""
        shot = self._grab_settled(before, hold_s, ask_apps, since, sent)
        self._settled = shot
        return shot

    def _grab_settled(self, before: mss.screenshot.ScreenShot | None, hold_s: float, ask_apps: bool,
                      since: int | None, sent: int | None) -> mss.screenshot.ScreenShot:
        """Grab until the screen shows the input's effect and holds still for `hold_s`, within settle_max_s.

        The server's reports of drawing (DAMAGE) say when to grab: the wait for the input's effect sleeps until
        something is drawn, and a changed frame after which nothing was drawn is confirmed without grabbing again.
        The watch's starting round trip is also the one that makes sure the server has processed the input.
        A screen that does not change within settle_quiet_s is taken as an input with no visible effect; with
        `ask_apps`, an input without an effect after settle_ask_s asks the apps whether they have handled it
        (`XConnection.ping_apps`), and the screen must also stay unchanged for half of settle_quiet_s after their
        answer, however late a loaded machine lets them give it. Without `before` (no input to wait for) the
        screen only has to hold still. When nothing was drawn since mark `since` (the one `before` was taken at)
        until the input was processed, `before` is still the screen and is not grabbed again; when something was
        drawn before the input (request `sent`) was processed, `before` is not what the input met, so the screen as
        grabbed now counts as unchanged and the input's effect must show as a change from it or be vouched for by
        the apps' answer (a slower step, never a change that was not the input's taken for its effect).
        """
        cfg = self.config
        start = time.monotonic()
        answered: Callable[[], bool] | None = None  # the apps' answer, once asked
        quiet_until = None if ask_apps else start + cfg.settle_quiet_s  # no change until then: no visible effect

        def answer_came() -> bool:
            return quiet_until is None and answered is not None and answered()

        found = self._x.watch(below=self._bar_rows, since=since, sent=sent)  # drawing from here on is reported
        shot = before if before is not None and found is Redrawn.NOTHING else self._screen.grab()
        if found is Redrawn.BEFORE_INPUT:
            before = shot
        changed = before is None or (shot is not before and self._differs(shot.raw, before.raw))
        held_from = start
        while True:
            now = time.monotonic()
            if quiet_until is None and not changed:
                if answered is None and now - start >= cfg.settle_ask_s:
                    answered = self._x.ping_apps(start + cfg.settle_max_s - now)
                if answered is not None and answered():
                    quiet_until = max(start + cfg.settle_quiet_s, now + cfg.settle_quiet_s / 2)
            if now - start >= cfg.settle_max_s or (not changed and quiet_until is not None and now >= quiet_until):
                return shot
            if changed:
                wait = held_from + hold_s - now
            elif quiet_until is not None:
                wait = quiet_until - now
            else:
                wait = start + cfg.settle_ask_s - now if answered is None else cfg.settle_max_s
            wait = min(max(wait, 0.0), start + cfg.settle_max_s - now)
            if not self._x.drawn(wait, answer_came, cfg.settle_poll_s):
                if changed and time.monotonic() - held_from >= hold_s:
                    return shot  # the screen is still `shot`
                continue
            grab = self._screen.grab()
            if self._differs(grab.raw, shot.raw):
                changed, held_from = True, time.monotonic()
            elif changed and time.monotonic() - held_from >= hold_s:
                return grab
            shot = grab

    def _differs(self, frame: bytearray, other: bytearray) -> bool:
        """Two frames differ below the top bar (whose clock changes by itself; the whole-frame test is the fast path;
        `startswith` at an offset compares the rest in place, where slicing would copy both frames)."""
        skip = self._bar_rows * self._size[0] * 4
        return frame != other and (not skip or not frame.startswith(memoryview(other)[skip:], skip))

    # --- acting ---------------------------------------------------------------------------------
    def _execute(self, action: Action) -> Mapping[str, Any] | None:
        self._check()
        self.last_action = action
        if action.type in NO_INPUT:
            return None
        with x_errors(self.display):
            before, since = (None, None) if action.type is A.WAIT else self._before()  # a Wait sends no input
            sent = self._x.next_serial  # the input's first request
            hit, self._shown = self._hit(action), None  # the screen read is about to change
            try:
                info = self._act(action)
                return info if hit is None else {**(info or {}), HIT_ELEMENT: hit}
            finally:  # also after a failed Sequence member: what did run is on screen before observe()
                self._frame = self._settle(before, self.config.settle_hold_s, ask_apps=before is not None, since=since,
                                           sent=sent)

    def _act(self, action: Action) -> Mapping[str, Any] | None:
        sends = INPUT_HANDLERS.get(action.type)
        if sends is not None:
            return sends(self._input, action)
        handler = HANDLERS.get(action.type)  # None: a no-op inside a Sequence (TakeNote, Finished, ...)
        return handler(self, action) if handler is not None else None

    def _sequence(self, action: S.ActionSequence) -> Mapping[str, Any]:
        infos = [self._act(inner) for inner in action.actions]
        return {"sequence": [dict(i or {}) for i in infos]}

    def _launch_app(self, action: S.LaunchApp) -> Mapping[str, Any]:
        if self._osworld is not None:
            return self._launch_osworld_app(action.app)
        argv = self._apps.in_sandbox(self._apps.resolve(action.app, self._task), self._materialized)
        known = set(self._x.client_ids())
        process = self._apps.launch(argv, self.display)
        new = self._apps.wait_windows(self._x, known, 1, [process])
        if not new and process.poll() not in (None, 0):
            raise SetupError(
                f"{argv} exited with status {process.returncode} before showing a window: "
                f"{self._apps.log_tail(process)}"
            )
        if new:
            self._x.activate(new[-1])
        return {"launched": argv, "window": self._x.title(new[-1]) if new else None}

    def _launch_osworld_app(self, name: str) -> Mapping[str, Any]:
        """LaunchApp in an OSWorld task: one of the task's `related_apps` (or `allowed_apps`), inside its root."""
        session = self._osworld
        assert session is not None
        allowed = sorted({*session.task_json.get("related_apps", ()), *self.config.allowed_apps})
        if name not in allowed:
            raise AppNotAllowedError(f"app {name!r} refused, nothing was started: this OSWorld task allows "
                                     f"{', '.join(allowed) or 'no app'}")
        title = _SessionDesktop(self).launch(app_argv([name], cdp_port=session.context.cdp_port))
        return {"launched": name, "window": title}

    def _wait(self, action: S.Wait) -> None:
        time.sleep(self.config.wait_s if action.seconds is None else action.seconds)


class _SessionDesktop:
    """The live desktop as an OSWorld session's steps see it (`osworld.context.Desktop`): apps start in its root."""

    def __init__(self, env: DesktopEnv) -> None:
        self.env = env

    def launch(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> str | None:
        desktop, session = self.env, self.env.osworld
        if session is None:
            raise SetupError("no OSWorld task is running on this desktop")
        with x_errors(desktop.display):
            known = set(desktop._x.client_ids())
            process = session.root.spawn(argv, env=env)
            new = desktop._apps.wait_windows(desktop._x, known, 1, [process],
                                             timeout=desktop.config.osworld_launch_timeout_s)
            if not new:
                return None
            desktop._x.activate(new[-1])
            return desktop._x.title(new[-1])

    def _matches(self, name: str, strict: bool, by_class: bool) -> list[int]:
        found = []
        for window in self.env._x.windows():
            value = window.wm_class if by_class else window.title
            if value == name if strict else name.lower() in value.lower():
                found.append(window.id)
        return found

    def activate(self, name: str, *, strict: bool = False, by_class: bool = False) -> bool:
        with x_errors(self.env.display):
            found = self._matches(name, strict, by_class)
            return bool(found) and self.env._x.activate(found[0])

    def window_titles(self) -> list[str]:
        with x_errors(self.env.display):
            return [w.title for w in self.env._x.windows()]

    def screen_size(self) -> tuple[int, int]:
        return self.env.screen_size

    def window_size(self, wm_class: str) -> tuple[int, int] | None:
        with x_errors(self.env.display):
            sizes = [w.geometry[2:] for w in self.env._x.windows() if w.wm_class.lower() == wm_class.lower()]
        return (sizes[0][0], sizes[0][1]) if sizes else None

    def wait_title(self, part: str) -> str | None:
        deadline = time.monotonic() + self.env.config.osworld_launch_timeout_s
        while time.monotonic() < deadline:
            found = [title for title in self.window_titles() if part in title]
            if found:
                self.activate(found[0], strict=True)
                return found[0]
            time.sleep(0.05)
        return None


#: What the env itself does for the desktop actions that are not input (`INPUT_HANDLERS`); an action type missing
#: from both is not a desktop action (validate() rejects it).
HANDLERS: Mapping[A, Callable[[DesktopEnv, Any], Mapping[str, Any] | None]] = {
    A.LAUNCH_APP: DesktopEnv._launch_app,
    A.WAIT: DesktopEnv._wait,
    A.SEQUENCE: DesktopEnv._sequence,
}
check_covers("INPUT_HANDLERS and HANDLERS (with NO_INPUT) need a handler for every desktop action",
             set(INPUT_HANDLERS) | set(HANDLERS) | NO_INPUT, S.actions_for(Platform.DESKTOP))
