"""Automatic exploration of a sandbox app: try its interactive elements breadth-first, record the screens and
transitions, and infer the app's functions from which state keys each gesture changed.

How it walks: on arriving at a screen the explorer fills its text fields with a sample of each field's domain
(so a form's Save can do something), then taps one untried element (or picks another option of a `<select>`),
and reads where that led and what the app state (`window.uivenus.state()`) became. It keeps to the screen it
is on while that has untried elements, and otherwise goes to the earliest-found screen that still has some —
along known navigation edges when it can, by resetting the app and replaying the gestures that first reached
that screen when it must. An element whose tap only navigated is not tried again on other screens (a sidebar
link does the same everywhere). Bounded by actions, depth and resets.

A screen is identified by its route (the URL hash, record ids generalised: "#edit/*") and the set of element
kinds it shows (test ids), not by its text, so a switch flipping or a note being added does not make a new
screen, while a form for a new contact and the same form editing one are two screens. Functions are named by the rules
of `naming.py` from the state change, the gesture and the verb-bearing elements tapped since the previous change
("new-note", then "save-note" → `create_note`).

This module is the walk. Reading a page (its elements, what it shows went wrong) is explore_page.py's job, through
BrowserEnv's `query_dom`; turning a state change into a named function is explore_effects.py's.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from uivenus.actions.space import Action
from uivenus.envs.base import EnvError
from uivenus.envs.sandbox.solving import SolverError, choose, fill, tap
from uivenus.envs.sandbox.tasks import APP_NAMES, LAYOUT_PLATFORMS, app_url
from uivenus.records import TaskSpec
from uivenus.tasks.catalog import AppCatalog, Catalog, Function, Transition, UIState
from uivenus.tasks.explore_effects import Effect, infer_function, since_boundary, state_changes
from uivenus.tasks.explore_page import (
    Element, ExploreError, Gesture, field_value, read_elements,
)

__all__ = [
    "ExploreLimits", "explore_app",
]


@dataclass(frozen=True)
class ExploreLimits:
    """How far exploration may go."""

    max_actions: int = 60  # gestures that try an element (fills and replays are not counted)
    max_depth: int = 4  # screens further than this from the start are recorded but not explored
    max_resets: int = 10  # app resets (each costs a page load) for going back to an earlier screen


@dataclass
class _Screen:
    id: str
    title: str
    route: str
    depth: int
    path: tuple[Gesture, ...]  # the gestures since a reset that first reached it
    settled: int  # path[settled:] are the gestures since the path's last state change
    elements: list[Element]
    disabled: tuple[str, ...]
    tried: set[str] = field(default_factory=set)
    lost: bool = False  # replaying its path led elsewhere: it cannot be reached again


# --- the walk ----------------------------------------------------------------------------------------

class _Explorer:
    def __init__(self, env: Any, app: str, spec: TaskSpec, limits: ExploreLimits) -> None:
        self.env, self.app, self.spec, self.limits = env, app, spec, limits
        self.screens: dict[str, _Screen] = {}
        self.transitions: list[Transition] = []
        self.effects: list[Effect] = []
        self.navigates: dict[str, str] = {}  # element kind -> the screen its tap led to, changing nothing
        self.actions = self.resets = 0
        self.current: str | None = None
        self.history: list[Gesture] = []  # gestures since the last reset
        self.settled = 0  # history[settled:] are the gestures since the last state change

    # -- reading and acting ----------------------------------------------------------------------------

    def _state(self) -> Mapping[str, Any] | None:
        try:
            return self.env.app_state()
        except EnvError:
            return None

    def _read(self) -> tuple[str, str, str, list[Element]]:
        """The screen's id (its route and the element kinds it shows), title, route and elements."""
        for attempt in range(2):
            try:
                title, route, elements = read_elements(self.env)
                break
            except EnvError:  # the document was being replaced: read again
                if attempt:
                    raise
        kinds = sorted({e.kind for e in elements if not e.covered})
        return hashlib.sha1("\n".join([route, *kinds]).encode()).hexdigest()[:12], title, route, elements

    def _drive(self, moves: Iterator[Action]) -> bool:
        try:
            for action in moves:
                if not self.env.step(action).executed:
                    return False
        except SolverError:
            return False
        return True

    def _perform(self, gesture: Gesture) -> bool:
        selector = gesture.element.selector
        if gesture.action == "fill":
            moves = fill(self.env, selector, gesture.value or "")
        elif gesture.action == "select":
            moves = choose(self.env, selector, gesture.value or "")
        else:
            moves = tap(self.env, selector)
        self.history.append(gesture)
        return self._drive(moves)

    def _reset(self) -> None:
        self.env.reset(self.spec)
        self.resets += 1
        self.history, self.settled = [], 0

    def _typed(self) -> dict[str, Element]:
        return {g.value: g.element for g in self.history if g.action == "fill" and g.value is not None}

    def _arrive(self, parent: str | None) -> str:
        """Note the screen now shown (new ones get the path that reached them) and fill its text fields."""
        sid, title, route, elements = self._read()
        if sid not in self.screens:
            depth = 0 if parent is None else self.screens[parent].depth + 1
            self.screens[sid] = _Screen(sid, title, route, depth, tuple(self.history), self.settled, elements,
                                        tuple(sorted({e.kind for e in elements if e.disabled and not e.covered})))
        self.current = sid
        filled = False
        for element in elements:
            if element.gesture == "fill" and not element.covered and not element.disabled:
                value = field_value(element)
                if element.value != value:
                    self._perform(Gesture("fill", element, value))
                    filled = True
        self.screens[sid].elements = self._read()[3] if filled else elements
        return sid

    # -- choosing -------------------------------------------------------------------------------------

    def _edges(self) -> dict[tuple[str, str], str]:
        """(screen, element kind) -> screen, for every navigation-only element a screen shows (a sidebar link
        tapped on one screen is taken to lead to the same place from the others)."""
        return {(s.id, e.kind): self.navigates[e.kind] for s in self.screens.values() for e in s.elements
                if e.kind in self.navigates and not e.covered and not e.disabled}

    def _distances(self) -> dict[str, int]:
        """Each screen's fewest navigation taps from the start screen (discovery depth where none are known)."""
        edges = self._edges()
        start = next(iter(self.screens))
        best, queue = {start: 0}, deque([start])
        while queue:
            at = queue.popleft()
            for (source, _), to in edges.items():
                if source == at and to not in best:
                    best[to] = best[at] + 1
                    queue.append(to)
        return {sid: min(best.get(sid, s.depth), s.depth) for sid, s in self.screens.items()}

    def _untried(self, screen: _Screen, depth: int) -> list[Element]:
        """Elements still to try on `screen`, those shown on the fewest screens first (a screen's own content
        before the chrome every screen shares), then in document order."""
        if screen.lost or depth > self.limits.max_depth:
            return []
        todo = [e for e in screen.elements if e.gesture in ("tap", "select") and not e.covered and not e.disabled
                and e.kind not in screen.tried and e.kind not in self.navigates]
        shown = {e.kind: sum(any(x.kind == e.kind for x in s.elements) for s in self.screens.values()) for e in todo}
        return sorted(todo, key=lambda e: shown[e.kind])

    def _next(self) -> tuple[str, Element] | None:
        depth = self._distances()
        if self.current is not None and (here := self._untried(self.screens[self.current], depth[self.current])):
            return self.current, here[0]
        for screen in sorted(self.screens.values(), key=lambda s: depth[s.id]):  # breadth first
            if todo := self._untried(screen, depth[screen.id]):
                return screen.id, todo[0]
        return None

    def _route(self, target: str) -> list[str] | None:
        """Element kinds to tap from the current screen to `target` along known navigation edges."""
        if self.current is None:
            return None
        edges = self._edges()
        seen, queue = {self.current}, deque([(self.current, [])])
        while queue:
            at, path = queue.popleft()
            if at == target:
                return path
            for (source, kind), to in edges.items():
                if source == at and to not in seen and len(path) < 4:
                    seen.add(to)
                    queue.append((to, [*path, kind]))
        return None

    def _goto(self, target: str) -> bool:
        route = self._route(target)
        if route is not None:
            for kind in route:
                element = next((e for e in self.screens[self.current].elements if e.kind == kind), None)
                if element is None or not self._perform(Gesture("tap", element)):
                    break
                self._arrive(self.current)
            if self.current == target:
                return True
        if self.resets >= self.limits.max_resets:
            return False
        self._reset()
        screen = self.screens[target]
        for gesture in screen.path:
            if not self._perform(gesture):
                break
        self.settled = screen.settled
        self.current = self._read()[0]
        if self.current != target:
            self.screens[target].lost = True
            return False
        self._arrive(target)
        return True

    # -- trying one element ---------------------------------------------------------------------------

    def _try(self, screen_id: str, element: Element) -> None:
        screen = self.screens[screen_id]
        screen.tried.add(element.kind)
        before = self._state() or {}
        if element.gesture == "select":
            other = next((v for v, _ in element.options if v != element.value), None)
            if other is None:
                return
            gesture = Gesture("select", element, other)
        else:
            gesture = Gesture("tap", element)
        self.actions += 1
        done = self._perform(gesture)
        after = self._state()
        if after is None:  # the gesture left the app: note it and start over next time
            self.transitions.append(Transition(screen_id, str(gesture), "outside"))
            self.current = None
            return
        changes = tuple(state_changes(before, after)) if done else ()
        if changes:
            chain = since_boundary(self.history[self.settled:])
            self.effects.append(Effect(gesture, chain, changes, self._typed()))
            self.settled = len(self.history)
        target = self._arrive(screen_id)
        self.transitions.append(Transition(screen_id, str(gesture), target, tuple(c.effect for c in changes)))
        if not changes and target != screen_id:
            self.navigates[element.kind] = target

    def run(self) -> None:
        self._reset()
        self._arrive(parent=None)
        while self.actions < self.limits.max_actions:
            step = self._next()
            if step is None:
                return
            screen_id, element = step
            if screen_id != self.current:
                if not self._goto(screen_id) and self.resets >= self.limits.max_resets:
                    return
                continue  # choose again on the screen we reached
            self._try(screen_id, element)

    # -- what was learned -------------------------------------------------------------------------------

    def catalog(self) -> Catalog:
        functions: dict[str, Function] = {}
        for effect in self.effects:
            fn = infer_function(self.app, effect)
            functions[fn.name] = functions[fn.name].merged(fn) if fn.name in functions else fn
        states = {s.id: UIState(s.id, s.title, s.route, s.depth, tuple(map(str, s.path)),
                                tuple(sorted({e.kind for e in s.elements if not e.covered})), s.disabled)
                  for s in self.screens.values()}
        return Catalog({self.app: AppCatalog(self.app, functions, states, tuple(self.transitions))})


# --- entry point ---------------------------------------------------------------------------------------

def explore_app(env: Any, app: str, base_url: str, *, layout: str = "web", setup: Mapping[str, Any] | None = None,
                limits: ExploreLimits = ExploreLimits()) -> Catalog:
    """Explore the sandbox `app` served from `base_url` in `env` (a BrowserEnv or a sandbox env) and return
    its catalog: the functions inferred, the screens seen and the transitions tried."""
    if app not in APP_NAMES:
        raise ExploreError(f"{app!r} is not a sandbox app; apps: {', '.join(APP_NAMES)}")
    urls = {"home_url": app_url(base_url, "launcher", layout),
            "apps": {name: app_url(base_url, name, layout) for name in APP_NAMES if name != "launcher"}}
    spec = TaskSpec(id=f"explore/{app}", instruction=f"explore the {app} app", platform=LAYOUT_PLATFORMS[layout],
                    app=app, url=app_url(base_url, app, layout),
                    setup={**urls, **({"app_state": dict(setup)} if setup is not None else {})})
    explorer = _Explorer(env, app, spec, limits)
    explorer.run()
    return explorer.catalog()

