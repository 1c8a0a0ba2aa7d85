"""DesktopEnv on a real Xvfb with openbox: every desktop action reaches a real app with the intended effect.

The app under test is `desktop_apps/event_logger.py`, a Tk window that writes each event it receives
(button number, double/triple clicks, motion, wheel, keys, the Entry's text, canvas drags) to a JSON-lines
log; xmessage (x11-utils) stands in for a real Debian app. One display serves the whole module; each test
resets it with a fresh app.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from Xlib.display import Display

from uivenus.actions.grammar import format_response
from uivenus.actions.space import (
    ActionSequence,
    Click,
    DoubleClick,
    Drag,
    Finished,
    Hotkey,
    Hover,
    KeyDown,
    KeyUp,
    LaunchApp,
    MiddleClick,
    MouseDown,
    MouseUp,
    Platform,
    PressHome,
    RightClick,
    Scroll,
    TakeNote,
    TripleClick,
    Type,
    Wait,
)
from uivenus.agent.loop import run_episode
from uivenus.agent.policies.base import PolicyBase, PolicyReply, PolicyRequest
from uivenus.agent.safety import Guard
from uivenus.envs.base import Env, OffScreenError, PlatformMismatchError, SetupError
from uivenus.envs.desktop import DesktopConfig, DesktopEnv
from uivenus.envs.x11 import Redrawn, XConnection
from uivenus.records import Outcome, TaskSpec

LOGGER = Path(__file__).parent / "desktop_apps" / "event_logger.py"
TITLE = "Event Logger"
SHIFT_MASK, CONTROL_MASK, BUTTON1_MASK = 1, 4, 256


class EventLog:
    """The event logger's JSON-lines log, read back with short polls (apps log asynchronously)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.touch()

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return [e for e in map(json.loads, lines) if kind is None or e["event"] == kind]

    def wait_for(self, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float = 3.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            events = self.events()
            if predicate(events) or time.monotonic() > deadline:
                return events
            time.sleep(0.02)

    def last(self, kind: str, timeout: float = 3.0) -> dict[str, Any]:
        events = self.wait_for(lambda es: any(e["event"] == kind for e in es), timeout)
        matching = [e for e in events if e["event"] == kind]
        assert matching, f"the app logged no {kind!r} event; got {[e['event'] for e in events]}"
        return matching[-1]

    def text(self) -> str:
        texts = self.events("text")
        return texts[-1]["value"] if texts else ""

    def wait_text(self, expected: str) -> str:
        self.wait_for(lambda es: [e["value"] for e in es if e["event"] == "text"][-1:] == [expected])
        return self.text()

    def center(self, widget: str, dx: int = 0, dy: int = 0) -> tuple[int, int]:
        x, y, w, h = self.last("layout")[widget]
        return x + w // 2 + dx, y + h // 2 + dy


def wait_placed(env: DesktopEnv, events: EventLog, title: str = TITLE) -> None:
    """Wait until the app's last logged layout is where the window finally is (the WM places it after mapping)."""
    def placed(logged: list[dict[str, Any]]) -> bool:
        layouts = [e["pad"][:2] for e in logged if e["event"] == "layout"]
        windows = [w["geometry"][:2] for w in env.state()["windows"] if w["title"] == title]
        return bool(layouts) and len(windows) == 1 and layouts[-1] == [windows[0][0] + 20, windows[0][1] + 20]

    assert placed(events.wait_for(placed)), "the pad sits at (20, 20) in the client area of the app's window"


def logger_argv(log: EventLog, title: str = TITLE) -> list[str]:
    return [sys.executable, str(LOGGER), str(log.path), "--title", title]


def task_for(log: EventLog, **setup: Any) -> TaskSpec:
    return TaskSpec(id="desktop-test", instruction="exercise the logger", platform=Platform.DESKTOP,
                    app="event-logger", setup={"launch": [logger_argv(log)], **setup})


@pytest.fixture(scope="module")
def env() -> Iterator[DesktopEnv]:
    with DesktopEnv() as desktop:
        yield desktop


@pytest.fixture
def log(env: DesktopEnv, tmp_path: Path) -> EventLog:
    """A fresh event logger on the shared display, focused, its layout logged."""
    events = EventLog(tmp_path / "events.jsonl")
    env.reset(task_for(events))
    wait_placed(env, events)
    return events


def pixels(image: Any) -> bytes:
    return image.tobytes()


# --- lifecycle and observation -----------------------------------------------------------------

def test_reset_shows_the_app_and_a_full_size_screenshot(env: DesktopEnv, tmp_path: Path) -> None:
    events = EventLog(tmp_path / "events.jsonl")
    obs = env.reset(task_for(events))
    assert isinstance(env, Env)
    assert obs.platform is Platform.DESKTOP and obs.app == "event-logger"
    assert obs.size == (1280, 800) and obs.screenshot.size == (1280, 800) and obs.screenshot.mode == "RGB"
    assert obs.info["focused"] == TITLE
    state = env.state()
    assert state["display"] == env.display and state["focused"] == TITLE
    (window,) = [w for w in state["windows"] if w["title"] == TITLE]
    assert window["class"] == "Eventlogger"  # Tk capitalises the className it is given
    x, y, width, height = window["geometry"]
    assert (width, height) == (660, 300)
    wait_placed(env, events)


def test_reset_replaces_the_previous_task_apps(env: DesktopEnv, tmp_path: Path) -> None:
    first, second = EventLog(tmp_path / "a.jsonl"), EventLog(tmp_path / "b.jsonl")
    env.reset(task_for(first))
    env.reset(TaskSpec(id="t2", instruction="", platform="desktop", setup={"launch": [logger_argv(second, "Second")]}))
    titles = [w["title"] for w in env.state()["windows"]]
    assert titles == ["Second"]


def test_reset_rejects_bad_setups_and_other_platforms(env: DesktopEnv) -> None:
    dying = [sys.executable, "-c", "import sys; print('no display for me'); sys.exit(3)"]
    with pytest.raises(SetupError, match="no display for me"):
        env.reset(TaskSpec(id="t", instruction="", platform="desktop", setup={"launch": [dying]}))
    with pytest.raises(SetupError, match="argv list"):
        env.reset(TaskSpec(id="t", instruction="", platform="desktop", setup={"launch": ["xmessage hi"]}))
    with pytest.raises(PlatformMismatchError, match="desktop tasks"):
        env.reset(TaskSpec(id="t", instruction="", platform="web", url="http://127.0.0.1/"))


# --- pointer -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("action", "button"), [(Click, 1), (RightClick, 3), (MiddleClick, 2)])
def test_click_lands_on_the_point_with_its_button(env: DesktopEnv, log: EventLog, action: type, button: int) -> None:
    before = pixels(env.observe().screenshot)
    point = log.center("pad")
    result = env.step(action(point=point))
    assert result.executed and result.error is None
    press = log.last("press")
    assert (press["button"], press["x"], press["y"]) == (button, *point)
    assert pixels(result.observation.screenshot) != before  # the pad now shows "presses: 1"


def test_each_clicks_observation_is_the_screen_it_settles_on(env: DesktopEnv, log: EventLog) -> None:
    # the env takes a changed frame as settled when the server reports no drawing since it was grabbed (DAMAGE),
    # instead of grabbing again: whatever it hands over must be what the pad then keeps showing (the pad only:
    # the Entry's cursor blinks on its own)
    x, y, w, h = log.last("layout")["pad"]

    def pad(image: Any) -> bytes:
        return image.crop((x, y, x + w, y + h)).tobytes()

    seen = [pad(env.observe().screenshot)]
    for i in range(8):
        result = env.step(Click(point=log.center("pad", dx=-60 if i % 2 else 60)))
        # counter moved
        assert result.executed and pad(result.observation.screenshot) != seen[-1], (i, dict(result.timings))
        seen.append(pad(result.observation.screenshot))
        time.sleep(0.3)  # past the double-click window; any late redraw would have happened by now
        env.observe()  # the step's own frame, handed out once
        assert pad(env.observe().screenshot) == seen[-1], f"click {i}: the pad changed after the step"
    assert len({*seen}) == len(seen)


def slow_pad(env: DesktopEnv, tmp_path: Path) -> tuple[EventLog, Callable[[Any], bytes]]:
    """Starts the logger app busy 0.6 s before it shows each press; returns its events and a crop of its pad."""
    events = EventLog(tmp_path / "events.jsonl")
    env.reset(TaskSpec(id="slow", instruction="", platform="desktop",
                       setup={"launch": [[*logger_argv(events), "--press-delay", "0.6"]]}))
    wait_placed(env, events)
    x, y, w, h = events.last("layout")["pad"]
    return events, lambda image: image.crop((x, y, x + w, y + h)).tobytes()


def test_a_click_waits_for_an_app_slower_than_the_quiet_window(env: DesktopEnv, tmp_path: Path) -> None:
    # the app is busy 0.6 s before it shows each press, far past settle_quiet_s: the env waits for the app to have
    # handled the click (it answers a _NET_WM_PING only after the click's events), so the observation shows it
    events, pad = slow_pad(env, tmp_path)
    assert env.config.settle_quiet_s < 0.6 < env.config.settle_max_s
    before = pad(env.observe().screenshot)
    result = env.step(Click(point=events.center("pad")))
    assert result.executed and result.timings["execute_s"] >= 0.6
    assert pad(result.observation.screenshot) != before, "the step's screen does not show the press yet"
    time.sleep(0.3)
    assert pad(env.observe().screenshot) == pad(result.observation.screenshot), "the pad changed after the step"


def test_a_step_on_a_still_screen_grabs_nothing_before_its_input(env: DesktopEnv, log: EventLog,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # the last step's settled frame is the next input's "before" while the server reports nothing drawn since: one
    # grab less per step (the Entry's caret blinks, so a few steps may still have to grab)
    order: list[str] = []
    grab, move = env._screen.grab, env._x.move
    monkeypatch.setattr(env._screen, "grab", lambda: order.append("grab") or grab())
    monkeypatch.setattr(env._x, "move", lambda *point: order.append("input") or move(*point))
    env.step(Click(point=log.center("pad", dx=60)))
    grabbed_first = 0
    for i in range(5):
        order.clear()
        result = env.step(Click(point=log.center("pad", dx=-60 if i % 2 else 60)))
        assert result.executed and "grab" in order, order
        grabbed_first += order[0] == "grab"
    assert grabbed_first <= 2, f"{grabbed_first} of 5 steps grabbed the screen before their input"


def test_drawing_between_steps_is_not_taken_for_the_next_inputs_effect(env: DesktopEnv, tmp_path: Path) -> None:
    # a window that appears between two steps changes the screen: the next step must grab its "before" afresh, or
    # the new window would pass for the click's effect and the slow app's press would be missed
    events, pad = slow_pad(env, tmp_path)
    x, y, w, h = events.last("layout")["pad"]
    env.step(Click(point=events.center("pad")))
    display = Display(env.display)
    try:
        screen = display.screen()
        window = screen.root.create_window(x + w + 400, y + h + 100, 120, 60, 0, screen.root_depth,
                                           background_pixel=screen.black_pixel, override_redirect=True)
        window.map()
        display.sync()
        time.sleep(0.1)  # its drawing reported before the next step begins
        before = pad(env.observe().screenshot)
        result = env.step(Click(point=events.center("pad", dx=40)))
        assert result.executed and result.timings["execute_s"] >= 0.6, dict(result.timings)
        assert pad(result.observation.screenshot) != before, "the step's screen does not show the press yet"
    finally:
        display.close()


def test_a_mark_says_whether_anything_was_drawn_since_and_if_before_the_input(env: DesktopEnv) -> None:
    # what lets a step skip grabbing its screen again: drawing after a mark (here another client's window) is reported
    # by the next watch, a still screen is not, a mark taken in between voids the earlier one, and drawing the server
    # did before it processed the input's first request says the marked frame is not what the input met
    env.reset(TaskSpec(id="still", instruction="", platform=Platform.DESKTOP))  # no app: nothing draws
    x, other = XConnection(env.display), Display(env.display)
    screen = other.screen()

    def draw(left: int) -> None:
        window = screen.root.create_window(left, 300, 120, 60, 0, screen.root_depth,
                                           background_pixel=screen.black_pixel, override_redirect=True)
        window.map()
        other.sync()  # the server has drawn it

    try:
        below = env._bar_rows  # the top bar's clock ticks by itself
        x.watch(below)
        assert x.watch(below, since=x.mark()) is Redrawn.NOTHING
        since = x.mark()
        draw(300)
        sent = x.next_serial  # the "input" comes after the drawing
        x.move(5, 5)
        assert x.watch(below, since=since, sent=sent) is Redrawn.BEFORE_INPUT
        since, sent = x.mark(), x.next_serial
        x.move(6, 6)
        x.sync()  # the server has processed the "input" before the drawing
        draw(500)
        assert x.watch(below, since=since, sent=sent) is Redrawn.AFTER_INPUT
        earlier = x.mark()
        x.mark()
        assert x.watch(below, since=earlier) is x.watch(below) is Redrawn.AFTER_INPUT  # not known: grab and compare
    finally:
        other.close()
        x.close()


def test_double_and_triple_click(env: DesktopEnv, log: EventLog) -> None:
    env.step(DoubleClick(point=log.center("pad", dx=-60)))
    kinds = [e["event"] for e in log.wait_for(lambda es: any(e["event"] == "double" for e in es))]
    assert "double" in kinds and "triple" not in kinds
    env.step(TripleClick(point=log.center("pad", dx=60)))  # far from the double click: counted afresh
    triple = log.last("triple")
    assert (triple["x"], triple["y"]) == log.center("pad", dx=60)


def test_hover_moves_the_pointer(env: DesktopEnv, log: EventLog) -> None:
    point = log.center("pad", dx=33, dy=-17)
    assert env.step(Hover(point=point)).executed
    motion = log.last("motion")
    assert (motion["x"], motion["y"]) == point


def test_drag_moves_the_canvas_square(env: DesktopEnv, log: EventLog) -> None:
    canvas_x, canvas_y = log.last("layout")["canvas"][:2]
    start = (canvas_x + 60, canvas_y + 60)  # the square spans 40..80 on the canvas
    env.step(Drag(start=start, end=(start[0] + 100, start[1] + 50)))
    drop = log.last("drop")
    assert drop["start"] == [60, 60] and drop["end"] == [160, 110]
    assert drop["square"] == [140.0, 90.0, 180.0, 130.0]
    before = pixels(env.observe().screenshot)
    env.step(Hover(point=(canvas_x + 160, canvas_y + 110)))
    env.step(Drag(end=(canvas_x + 60, canvas_y + 60)))  # no start: from where the pointer is
    drops = log.wait_for(lambda es: len([e for e in es if e["event"] == "drop"]) == 2)
    assert [e for e in drops if e["event"] == "drop"][-1]["square"] == [40.0, 40.0, 80.0, 80.0]
    assert pixels(env.observe().screenshot) != before


def test_mouse_down_and_up_hold_the_button_across_steps(env: DesktopEnv, log: EventLog) -> None:
    env.step(MouseDown(point=log.center("pad", dx=-50)))
    assert log.last("press")["button"] == 1
    env.step(Hover(point=log.center("pad", dx=50)))
    motion = log.last("motion")
    assert motion["x"] == log.center("pad", dx=50)[0] and motion["state"] & BUTTON1_MASK  # still held
    assert log.events("release") == []
    env.step(MouseUp(point=log.center("pad", dx=70)))
    release = log.last("release")
    assert (release["button"], release["x"]) == (1, log.center("pad", dx=70)[0])


def test_scroll_both_axes(env: DesktopEnv, log: EventLog) -> None:
    point = log.center("pad")
    env.step(Scroll(direction="down", point=point, amount=2))
    env.step(Scroll(direction="up", point=point))  # default: 3 notches
    env.step(Scroll(direction="left", point=point, amount=1))
    env.step(Scroll(direction="right", point=point, amount=1))
    events = log.wait_for(lambda es: len([e for e in es if e["event"] == "press"]) >= 7)
    presses = [(e["button"], bool(e["state"] & SHIFT_MASK)) for e in events if e["event"] == "press"]
    # X wheel buttons 4/5 scroll vertically; Tk 8.6 reports the horizontal buttons 6/7 as Shift+4/5.
    assert presses == [(5, False)] * 2 + [(4, False)] * 3 + [(4, True), (5, True)]


# --- keyboard ----------------------------------------------------------------------------------

def test_type_unicode_text_and_newline(env: DesktopEnv, log: EventLog) -> None:
    env.step(Click(point=log.center("entry")))
    result = env.step(Type(content="héllo wörld ✓"))
    assert result.executed
    assert log.wait_text("héllo wörld ✓") == "héllo wörld ✓"
    keyless = "αβγδεζηθικλμνξοπρστυφχψωабвгдежзийклмнопрс"  # more characters without a key than scratch keycodes
    env.step(Type(content=keyless + "\n"))
    assert log.wait_text("héllo wörld ✓" + keyless) == "héllo wörld ✓" + keyless
    keys = [e["keysym"] for e in log.wait_for(lambda es: es[-1]["event"] == "keyup") if e["event"] == "key"]
    assert keys[-1] == "Return"  # "\n" pressed Enter (an Entry takes no newline)


def test_hotkey_with_repeat_and_modifiers(env: DesktopEnv, log: EventLog) -> None:
    env.step(Click(point=log.center("entry")))
    env.step(Type(content="héllo wörld ✓"))
    env.step(Hotkey(keys=("backspace",), repeat=3))
    assert log.wait_text("héllo wörl") == "héllo wörl"  # "✓", " " and "d" are gone
    env.step(Hotkey(keys=("ctrl", "a")))  # Tk's Entry: Control-a moves to the line start
    control_a = [e for e in log.events("key") if e["keysym"] == "a"][-1]
    assert control_a["state"] & CONTROL_MASK
    env.step(Hotkey(keys=("+",)))  # a shifted character: Shift is added for it
    assert log.wait_text("+héllo wörl") == "+héllo wörl"


def test_key_down_and_up_hold_keys_across_steps(env: DesktopEnv, log: EventLog) -> None:
    env.step(Click(point=log.center("entry")))
    env.step(KeyDown(keys=("shift",)))
    assert log.last("key")["keysym"] == "Shift_L"
    env.step(Hotkey(keys=("b",)))
    assert log.wait_text("B") == "B"
    env.step(KeyUp(keys=("shift",)))
    assert log.last("keyup")["keysym"] == "Shift_L"
    env.step(Hotkey(keys=("c",)))
    assert log.wait_text("Bc") == "Bc"


def test_observation_names_the_focused_window_as_it_changes(env: DesktopEnv, log: EventLog) -> None:
    assert env.observe().info["focused"] == TITLE
    result = env.step(Hotkey(keys=("f2",)))  # the app renames its window
    assert result.observation.info["focused"] == f"{TITLE} (renamed)" == env.state()["focused"]


def test_unknown_key_fails_the_step_with_a_reason(env: DesktopEnv, log: EventLog) -> None:
    result = env.step(Hotkey(keys=("fn", "f1")))
    assert not result.executed and "UnsupportedKeyError" in (result.error or "") and "'fn'" in result.error


def test_sequence_runs_members_in_order(env: DesktopEnv, log: EventLog) -> None:
    result = env.step(ActionSequence(actions=(
        Click(point=log.center("entry")), Type(content="abc"), Hotkey(keys=("backspace",)), Finished(),
    )))
    assert result.executed and len(result.info["sequence"]) == 4
    assert log.wait_text("ab") == "ab"


# --- apps, waiting and no-ops ------------------------------------------------------------------

def test_launch_app_starts_the_tasks_apps_and_the_allowed_ones(env: DesktopEnv, tmp_path: Path) -> None:
    first, second = EventLog(tmp_path / "a.jsonl"), EventLog(tmp_path / "b.jsonl")
    greeter = ["xmessage", "-buttons", "ok:0", "-default", "ok", "hello from uivenus"]
    env.reset(task_for(first, apps={"second": logger_argv(second, "Second"), "greeter": greeter}))
    result = env.step(LaunchApp(app="second"))
    assert result.executed and result.info["window"] == "Second"
    second.last("layout")
    assert sorted(w["title"] for w in env.state()["windows"]) == sorted([TITLE, "Second"])

    result = env.step(LaunchApp(app="greeter"))  # xmessage, a real Debian X app
    assert result.executed and result.info["window"] == "xmessage"
    assert env.state()["focused"] == "xmessage"
    env.step(Hotkey(keys=("enter",)))  # presses its default button, which closes it
    deadline = time.monotonic() + 3
    while "xmessage" in [w["title"] for w in env.state()["windows"]] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [w["title"] for w in env.state()["windows"]].count("xmessage") == 0

    allowing = DesktopConfig(display=env.display, allowed_apps=("l3afpad", "xmessage", "no-such-app-anywhere"))
    with DesktopEnv(allowing) as attached:  # the user's allow-list: programs on PATH by name
        attached.reset(task_for(first))
        result = attached.step(LaunchApp(app="l3afpad"))
        assert result.executed and result.info["launched"][0].endswith("/l3afpad") and result.info["window"]
        result = attached.step(LaunchApp(app="xmessage"))  # started: without a message it prints usage and exits
        assert not result.executed and "usage" in (result.error or "").lower()
        result = attached.step(LaunchApp(app="no-such-app-anywhere"))
        assert not result.executed and "AppNotFoundError" in (result.error or "") and "on PATH" in result.error
    with pytest.raises(ValueError, match="not paths"):
        DesktopConfig(allowed_apps=("/usr/bin/xterm",))


def display_processes(display: str) -> dict[int, list[str]]:
    """Every process running on `display` (its environment says so): pid -> command line."""
    found = {}
    for process in psutil.process_iter(["pid", "cmdline", "environ"]):
        if (process.info["environ"] or {}).get("DISPLAY") == display:
            found[process.info["pid"]] = process.info["cmdline"]
    return found


class ScriptedLaunches(PolicyBase):
    """Replies with fixed actions in order, and notes the processes on the display when first asked (after reset)."""

    name = "scripted-launches"

    def __init__(self, display: str, actions: list[Any]) -> None:
        self.display, self.actions = display, actions
        self.before: dict[int, list[str]] | None = None

    def act(self, request: PolicyRequest) -> PolicyReply:
        if self.before is None:
            self.before = display_processes(self.display)
        frame = request.context["frame"]
        return PolicyReply(format_response(frame.action_to_model(self.actions.pop(0) if self.actions else Finished())))


def test_a_models_launch_app_of_a_program_the_task_did_not_name_starts_nothing(env: DesktopEnv,
                                                                               tmp_path: Path) -> None:
    task = task_for(EventLog(tmp_path / "events.jsonl"), apps={"notes": ["l3afpad"]})
    launches = [LaunchApp(app="l3afpad"), LaunchApp(app="/usr/bin/l3afpad"), LaunchApp(app="../../usr/bin/xmessage"),
                LaunchApp(app="python3")]
    policy = ScriptedLaunches(env.display, list(launches))
    trajectory = run_episode(env, policy, task, guard=Guard("allow", ocr=False))  # the task pipeline's guard mode
    assert trajectory.outcome is Outcome.FINISHED and len(trajectory.steps) == len(launches) + 1  # it went on
    for step, launch in zip(trajectory.steps[:-1], launches, strict=True):
        assert step.action == launch and not step.executed
        assert step.error.startswith("AppNotAllowedError") and "nothing was started" in step.error
        assert "allowed: event-logger, notes" in step.error
    assert "a path" in trajectory.steps[1].error and "a path" in trajectory.steps[2].error
    assert policy.before is not None and display_processes(env.display) == policy.before
    assert not any("l3afpad" in " ".join(cmd) or "xmessage" in " ".join(cmd) for cmd in policy.before.values())
    assert [w["title"] for w in env.state()["windows"]] == [TITLE]
    guard = trajectory.steps[1].info["guard"]  # the guard recorded the path as a system change
    assert (guard["verdict"], guard["category"], guard["rule"]) == ("allowed", "system", "program path")


def test_wait_and_no_op_actions(env: DesktopEnv, log: EventLog) -> None:
    started = time.monotonic()
    assert env.step(Wait(seconds=0.3)).executed
    assert time.monotonic() - started >= 0.3
    for action in (TakeNote(content="remember the pad"), Finished(content="done")):
        result = env.step(action)
        assert result.executed and result.timings["execute_s"] < 0.05
    assert not log.events("press") and not log.events("key")


def test_window_moves_when_its_title_bar_is_dragged(env: DesktopEnv, log: EventLog) -> None:
    display = Display(env.display)  # the WM's frame size is a property of the (active) client window
    try:
        active = display.screen().root.get_full_property(display.intern_atom("_NET_ACTIVE_WINDOW"), 0)
        if active is None:
            pytest.skip("no EWMH window manager on this display (openbox missing)")
        extents = display.create_resource_object("window", active.value[0]).get_full_property(
            display.intern_atom("_NET_FRAME_EXTENTS"), 0)
    finally:
        display.close()
    top = extents.value[2]  # left, right, top, bottom
    (window,) = [w for w in env.state()["windows"] if w["title"] == TITLE]
    x, y = window["geometry"][:2]
    grip = (x + 200, y - top // 2)  # the middle of openbox's title bar
    result = env.step(Drag(start=grip, end=(grip[0] + 120, grip[1] + 60)))
    assert result.executed
    (moved,) = [w for w in env.state()["windows"] if w["title"] == TITLE]
    assert moved["geometry"][:2] == [x + 120, y + 60]
    assert log.wait_for(lambda es: [e for e in es if e["event"] == "layout"][-1]["pad"][:2] == [x + 140, y + 80])


# --- rejected actions and crashes --------------------------------------------------------------

def test_wrong_platform_and_off_screen_points_are_rejected(env: DesktopEnv, log: EventLog) -> None:
    with pytest.raises(PlatformMismatchError, match="desktop"):
        env.step(PressHome())
    with pytest.raises(OffScreenError, match="1280x800"):
        env.step(Click(point=(1280, 10)))
    with pytest.raises(OffScreenError):
        env.step(ActionSequence(actions=(Click(point=log.center("pad")), Drag(start=(5, 5), end=(10, 800)))))
    time.sleep(0.1)
    assert log.events("press") == []  # nothing ran, not even the valid first member


def test_attaches_to_an_existing_display_without_owning_it(env: DesktopEnv, tmp_path: Path) -> None:
    events = EventLog(tmp_path / "events.jsonl")
    with DesktopEnv(DesktopConfig(display=env.display)) as attached:
        assert attached.display == env.display and attached.screen_size == (1280, 800)
        attached.reset(task_for(events, launch=[logger_argv(events, "Attached")]))
        wait_placed(attached, events, "Attached")
        attached.step(Click(point=events.center("entry")))
        attached.step(Type(content="ß→"))  # binds scratch keycodes, which close() gives back
        assert events.wait_text("ß→") == "ß→"
    assert "Attached" not in [w["title"] for w in env.state()["windows"]]  # its app stopped with it
    assert env.step(Wait(seconds=0.01)).executed  # the server itself lives on


def test_runs_without_a_window_manager(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    events = EventLog(tmp_path / "events.jsonl")
    with DesktopEnv(DesktopConfig(width=640, height=480, window_manager=("no-such-wm",))) as bare:
        assert "no-such-wm" in caplog.text
        bare.reset(task_for(events))
        assert [w["title"] for w in bare.state()["windows"]] == [TITLE]  # found through the window tree
        wait_placed(bare, events)
        pad = events.center("pad")
        assert bare.step(Click(point=pad)).executed
        assert events.last("press")["x"] == pad[0]


def test_killed_xvfb_is_detected_and_recovered(tmp_path: Path) -> None:
    events = EventLog(tmp_path / "events.jsonl")
    with DesktopEnv(DesktopConfig(width=800, height=600)) as desktop:
        desktop.reset(task_for(events))
        wait_placed(desktop, events)
        lock = Path(f"/tmp/.X{desktop.display.lstrip(':')}-lock")
        xvfb_pid = int(lock.read_text().strip())
        os.kill(xvfb_pid, signal.SIGKILL)
        time.sleep(0.2)

        result = desktop.step(Click(point=(10, 10)))
        assert not result.executed and "EnvCrashedError" in (result.error or "")
        assert result.info["recovered"] is True
        assert result.observation.screenshot.size == (800, 600)
        assert [w["title"] for w in desktop.state()["windows"]] == [TITLE]  # the task's app was relaunched
        wait_placed(desktop, events)

        pad = events.center("pad")
        assert desktop.step(Click(point=pad)).executed
        assert events.last("press")["x"] == pad[0]
        new_lock = Path(f"/tmp/.X{desktop.display.lstrip(':')}-lock")
        new_pid = int(new_lock.read_text().strip())
    assert not new_lock.exists() and not lock.exists()  # the killed server's leftovers are cleaned up too
    with pytest.raises(ProcessLookupError):
        os.kill(new_pid, 0)
    desktop.close()  # idempotent
