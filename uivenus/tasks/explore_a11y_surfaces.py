"""Where the accessibility-tree explorer acts: a desktop app in a fresh isolated task root, or a web app's page.

A `Surface` starts the app afresh (so a route replays from the same start), reads its elements, carries out a
gesture on the element its locator names (through the env's ordinary actions: clicks, keys, typing), and lists the
files under the app's home (a desktop app's writes are part of a function's effect). The explorer knows nothing
of desktops or browsers beyond this.
"""

from __future__ import annotations

import os
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from uivenus.actions.space import Action, Click, Hotkey, Platform, PressBack, SelectOption, Type
from uivenus.envs.base import EnvError
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.desktop import DesktopConfig, DesktopEnv
from uivenus.envs.desktop_look import DesktopLook
from uivenus.envs.elements import UIElement
from uivenus.records import TaskSpec
from uivenus.tasks.app_catalog import Gesture, GestureKind, document_steps

__all__ = ["OPTION_ROLES", "DesktopSurface", "GestureFailed", "Surface", "WebSurface"]

#: Roles of a choice's options (a GTK combo's popup menu, a list, a web select's options).
OPTION_ROLES = frozenset({"menu item", "list item", "option", "radio menu item", "check menu item", "table cell"})
_SKIPPED_DIRS = (".cache", ".dbus", ".local/share/gvfs-metadata")
MAX_FILES = 5000


class GestureFailed(EnvError):
    """A gesture could not be carried out: its element is not on screen (or has no place)."""


class Surface(Protocol):
    """The explorer's plug point: one app, started afresh on demand."""

    platform: str
    launch: tuple[str, ...]
    documents: tuple[tuple[str, str], ...]  # made before the app starts (path under /home/user, text)

    def start(self) -> None: ...

    def elements(self) -> tuple[UIElement, ...]: ...

    def perform(self, gesture: Gesture, elements: Sequence[UIElement]) -> None: ...

    def files(self) -> Mapping[str, tuple[int, int]]: ...

    def location(self) -> str: ...

    def inside(self) -> bool: ...

    def close(self) -> None: ...


def _located(gesture: Gesture, elements: Sequence[UIElement]) -> UIElement:
    element = gesture.target.find(elements) if gesture.target is not None else None
    if element is None or element.center is None:
        raise GestureFailed(f"{gesture}: its element is not on screen")
    return element


def _keys(text: str) -> tuple[str, ...]:
    return tuple(text.split("+"))


class DesktopSurface:
    """A desktop app in a fresh OSWorld task root (its own home, processes and AT-SPI bus) on our own Xvfb."""

    platform = "desktop"

    def __init__(self, argv: Sequence[str], *, env: DesktopEnv | None = None, settle_s: float = 1.5,
                 documents: Sequence[tuple[str, str]] = ()) -> None:
        self.launch = tuple(argv)
        self.documents = tuple(documents)
        self.settle_s = settle_s
        self._own = env is None
        self.env = env or DesktopEnv(DesktopConfig(look=DesktopLook(icons=False)))  # icons: pcmanfm on the bus

    def _task(self) -> TaskSpec:
        original = {"id": "explore", "instruction": "explore", "related_apps": [], "evaluator": {"func": "infeasible"},
                    "config": [*document_steps(self.documents),
                               {"type": "launch", "parameters": {"command": list(self.launch)}},
                               {"type": "sleep", "parameters": {"seconds": self.settle_s}}]}
        return TaskSpec(id="explore", instruction="explore", platform=Platform.DESKTOP, setup={"osworld": original})

    def start(self) -> None:
        self.env.reset(self._task())

    def elements(self) -> tuple[UIElement, ...]:
        return self.env.elements(fresh=True)  # read again on one screen: the bus reports changes after the screen

    def perform(self, gesture: Gesture, elements: Sequence[UIElement]) -> None:
        if gesture.kind in (GestureKind.KEY, GestureKind.BACK):
            self._step(Hotkey(keys=_keys(gesture.text or "escape")))
            return
        element = _located(gesture, elements)
        self._step(Click(point=element.center))
        if gesture.kind is GestureKind.TYPE:
            self._step(Hotkey(keys=("ctrl", "a")))
            self._step(Type(content=gesture.text))
        elif gesture.kind is GestureKind.SELECT:
            time.sleep(0.2)
            shown = self.elements()
            option = next((e for e in shown if e.role in OPTION_ROLES and e.name == gesture.text and e.visible), None)
            if option is None:
                self._step(Hotkey(keys=("escape",)))
                raise GestureFailed(f"{gesture}: no option {gesture.text!r} showed")
            self._step(Click(point=option.center))  # type: ignore[arg-type] - visible implies a centre
        time.sleep(0.15)  # the accessibility bus reports a change a moment after the screen shows it

    def _step(self, action: Action) -> None:
        result = self.env.step(action)
        if not result.executed:
            raise GestureFailed(f"{action.type}: {result.error}")

    def files(self) -> Mapping[str, tuple[int, int]]:
        session = self.env.osworld
        return home_files(session.root.host_path("/home/user")) if session is not None else {}

    def location(self) -> str:
        return ""

    def inside(self) -> bool:
        """Always: the root holds nothing but the app."""
        return True

    def close(self) -> None:
        if self._own:
            self.env.close()


def home_files(home: Path) -> dict[str, tuple[int, int]]:
    """Every file under `home` (caches left out): relative path -> (size, modification time in ns)."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, names in os.walk(home):
        relative = os.path.relpath(folder, home)
        dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(relative, d)) not in _SKIPPED_DIRS]
        for name in names:
            path = os.path.join(folder, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            found[os.path.normpath(os.path.join(relative, name))] = (info.st_size, info.st_mtime_ns)
            if len(found) >= MAX_FILES:
                return found
    return found


class WebSurface:
    """A web app's page in a fresh browser context; the explorer stays on the app's own origin."""

    platform = "web"
    documents: tuple[tuple[str, str], ...] = ()

    def __init__(self, url: str, *, env: BrowserEnv | None = None) -> None:
        self.launch = (url,)
        self._own = env is None
        self.env = env or BrowserEnv()

    def start(self) -> None:
        self.env.reset(TaskSpec(id="explore", instruction="explore", platform=Platform.WEB, url=self.launch[0]))

    def elements(self) -> tuple[UIElement, ...]:
        return self.env.elements()

    def perform(self, gesture: Gesture, elements: Sequence[UIElement]) -> None:
        if gesture.kind is GestureKind.KEY:
            self._step(Hotkey(keys=_keys(gesture.text)))
            return
        if gesture.kind is GestureKind.BACK:
            self._step(PressBack())
            return
        element = _located(gesture, elements)
        if gesture.kind is GestureKind.SELECT:
            options = [e.name for e in elements if e.role == "option" and e.path[:len(element.path)] == element.path]
            if gesture.text not in options:
                raise GestureFailed(f"{gesture}: the select has no option {gesture.text!r} ({options})")
            self._step(SelectOption(index=options.index(gesture.text), point=element.center))
            return
        self._step(Click(point=element.center))  # type: ignore[arg-type] - located elements have a centre
        if gesture.kind is GestureKind.TYPE:
            self._step(Hotkey(keys=("ctrl", "a")))
            self._step(Type(content=gesture.text))

    def _step(self, action: Action) -> None:
        result = self.env.step(action)
        if not result.executed:
            raise GestureFailed(f"{action.type}: {result.error}")

    def files(self) -> Mapping[str, tuple[int, int]]:
        return {}

    def location(self) -> str:
        """The page's URL without its query: a new page is a new state even where its tree looks alike."""
        return self.env.url().split("?")[0]

    def inside(self) -> bool:
        """Whether the page is still on the app's own origin (a link out is a function, not a state to explore)."""
        return urllib.parse.urlsplit(self.location())[:2] == urllib.parse.urlsplit(self.launch[0])[:2]

    def close(self) -> None:
        if self._own:
            self.env.close()
