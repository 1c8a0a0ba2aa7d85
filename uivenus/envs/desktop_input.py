"""Pointer and keyboard input on an X display through XTEST: what each input action of the unified space sends.

Key names of the action space map to X keysyms (`KEYSYM_NAMES`, `key_keysym`); text is typed key by key, with
characters that no key produces bound to scratch keycodes a batch at a time; held buttons and keys (MouseDown,
KeyDown) are remembered so that they can be released. `DesktopEnv` (`envs/desktop.py`) owns one `XInput` per
display connection and dispatches the input actions to it through `INPUT_HANDLERS`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from Xlib import XK

from uivenus.actions import space as S
from uivenus.actions.space import ActionType as A
from uivenus.actions.space import Direction
from uivenus.envs.base import EnvError
from uivenus.envs.x11 import Screen, XConnection, char_keysym

if TYPE_CHECKING:
    from mss.screenshot import ScreenShot

    from uivenus.envs.desktop import DesktopConfig

__all__ = ["CLICKS", "INPUT_HANDLERS", "KEYSYM_NAMES", "TYPE_KEYS", "WHEEL", "UnsupportedKeyError", "XInput",
           "key_keysym"]

XK.load_keysym_group("xf86")


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
#: Pause between a key's release and its next press, so the X server stamps them in different milliseconds.
REPEAT_GAP_S = 0.003
#: (button, clicks) of each click action.
CLICKS: Mapping[A, tuple[int, int]] = {
    A.CLICK: (1, 1), A.DOUBLE_CLICK: (1, 2), A.TRIPLE_CLICK: (1, 3), A.RIGHT_CLICK: (3, 1), A.MIDDLE_CLICK: (2, 1),
}
#: Wheel buttons of each scroll direction (X11: 4/5 vertical, 6/7 horizontal).
WHEEL: Mapping[Direction, int] = {Direction.UP: 4, Direction.DOWN: 5, Direction.LEFT: 6, Direction.RIGHT: 7}


def key_keysym(key: str) -> int:
    """The keysym of one action-space key name; single letters are case-insensitive ('C' is the c key)."""
    name = KEYSYM_NAMES.get(key.lower())
    if name is not None:
        return XK.string_to_keysym(name)
    if len(key) == 1:
        return char_keysym(key.lower() if key.isascii() and key.isalpha() else key)
    raise UnsupportedKeyError(f"key {key!r} has no X11 keysym; leave it out or use another key")


class XInput:
    """Sends the input actions to one display connection; `settle(before, hold_s)` waits for a still screen
    (between batches of typed text that rebind scratch keycodes)."""

    def __init__(self, x: XConnection, screen: Screen, config: DesktopConfig,
                 settle: Callable[[ScreenShot | None, float], Any]) -> None:
        self.x, self.screen, self.config, self.settle = x, screen, config, settle
        self.held_buttons: set[int] = set()
        self.held_keys: dict[str, list[int]] = {}  # key name -> keycodes pressed by KeyDown

    def _move(self, point: S.Point | None) -> None:
        if point is not None:
            self.x.move(*point)

    def click(self, action: Any) -> None:
        button, clicks = CLICKS[action.type]
        self.x.move(*action.point)
        for _ in range(clicks):
            self.x.button(button, True)
            self.x.button(button, False)

    def hover(self, action: S.Hover) -> None:
        self.x.move(*action.point)

    def drag(self, action: S.Drag) -> None:
        cfg = self.config
        x0, y0 = action.start if action.start is not None else self.x.pointer()
        x1, y1 = action.end
        self.x.move(x0, y0)
        self.x.button(1, True)
        self._pause(cfg.drag_hold_s)
        for i in range(1, cfg.drag_steps + 1):
            self.x.move(x0 + (x1 - x0) * i / cfg.drag_steps, y0 + (y1 - y0) * i / cfg.drag_steps)
            self._pause(cfg.drag_step_s)
        self._pause(cfg.drag_hold_s)
        self.x.button(1, False)

    def _pause(self, seconds: float) -> None:
        """Let the server deliver what was sent and the apps (and WM) react before the next event."""
        self.x.sync()
        time.sleep(seconds)

    def mouse_down(self, action: S.MouseDown) -> None:
        self._move(action.point)
        self.x.button(1, True)
        self.held_buttons.add(1)

    def mouse_up(self, action: S.MouseUp) -> None:
        self._move(action.point)
        self.x.button(1, False)
        self.held_buttons.discard(1)

    def scroll(self, action: S.Scroll) -> None:
        self._move(action.point)
        button = WHEEL[action.direction]
        for _ in range(action.amount or self.config.scroll_notches):
            self.x.button(button, True)
            self.x.button(button, False)

    def type(self, action: S.Type) -> None:
        """Type text key by key; characters no key produces are bound to scratch keycodes, a batch at a time.

        Xlib clients apply a keymap change as soon as they read it, even before the key events queued
        ahead of it, so the screen must show one batch (the app has read it) before the next rebinds.
        """
        batches = self._scratch_batches([TYPE_KEYS.get(ch) or char_keysym(ch) for ch in action.content])
        for i, batch in enumerate(batches):
            before = self.screen.grab() if i < len(batches) - 1 else None
            self._type_batch(batch)
            if before is not None:
                self.settle(before, self.config.settle_hold_s)

    def _scratch_batches(self, keysyms: list[int]) -> list[list[int]]:
        """Split keysyms so no part needs more scratch keycodes than there are."""
        batches: list[list[int]] = [[]]
        off_keymap: set[int] = set()  # the current batch's keysyms that need a scratch keycode
        for keysym in keysyms:
            if not self.x.on_keymap(keysym) and keysym not in off_keymap:
                if len(off_keymap) == self.x.scratch_count:
                    batches.append([])
                    off_keymap = set()
                off_keymap.add(keysym)
            batches[-1].append(keysym)
        return batches

    def _type_batch(self, keysyms: list[int]) -> None:
        shift = self.x.keycodes([SHIFT])[0][0]
        previous = None
        for keycode, level in self.x.keycodes(keysyms):
            if keycode == previous:  # a release and a press of one key in the same millisecond read as autorepeat
                self._pause(REPEAT_GAP_S)  # to LibreOffice's VCL, which then drops a doubled letter ("Weekly")
            previous = keycode
            if level:
                self.x.key(shift, True)
            self.x.key(keycode, True)
            self.x.key(keycode, False)
            if level:
                self.x.key(shift, False)
        self.x.sync()

    def _chord(self, keys: Sequence[str]) -> list[int]:
        """Keycodes to press for `keys`, Shift first when a character sits on the shifted level ('ctrl', '+')."""
        pairs = self.x.keycodes([key_keysym(k) for k in keys])
        keycodes = [keycode for keycode, _ in pairs]
        if any(level for _, level in pairs):
            shift = self.x.keycodes([SHIFT])[0][0]
            keycodes = [shift] + [k for k in keycodes if k != shift]
        return keycodes

    def hotkey(self, action: S.Hotkey) -> None:
        keycodes = self._chord(action.keys)
        for _ in range(action.repeat):
            for keycode in keycodes:
                self.x.key(keycode, True)
            for keycode in reversed(keycodes):
                self.x.key(keycode, False)

    def key_down(self, action: S.KeyDown) -> None:
        for key in action.keys:
            keycodes = self._chord([key])
            for keycode in keycodes:
                self.x.key(keycode, True)
            self.held_keys[key.lower()] = keycodes

    def key_up(self, action: S.KeyUp) -> None:
        for key in action.keys:
            keycodes = self.held_keys.pop(key.lower(), None) or self._chord([key])
            for keycode in reversed(keycodes):
                self.x.key(keycode, False)

    def release_held(self) -> None:
        for keycodes in self.held_keys.values():
            for keycode in reversed(keycodes):
                self.x.key(keycode, False)
        for button in self.held_buttons:
            self.x.button(button, False)
        self.held_keys.clear()
        self.held_buttons.clear()
        self.x.sync()


#: What each input action sends; `DesktopEnv.HANDLERS` has the actions the env carries out itself.
INPUT_HANDLERS: Mapping[A, Callable[[XInput, Any], None]] = {
    **{kind: XInput.click for kind in CLICKS},
    A.HOVER: XInput.hover,
    A.DRAG: XInput.drag,
    A.MOUSE_DOWN: XInput.mouse_down,
    A.MOUSE_UP: XInput.mouse_up,
    A.SCROLL: XInput.scroll,
    A.TYPE: XInput.type,
    A.HOTKEY: XInput.hotkey,
    A.KEY_DOWN: XInput.key_down,
    A.KEY_UP: XInput.key_up,
}
