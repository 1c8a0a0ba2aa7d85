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
screen, while a form for a new contact and the same form editing one are two screens. Functions are named by the rules of `naming.py` from the
state change, the gesture and the verb-bearing elements tapped since the previous change ("new-note", then
"save-note" → `create_note`).

Reading the page: BrowserEnv has no public call listing its elements, so `read_elements` runs one fixed,
read-only script through the page-evaluation channel BrowserEnv's own DOM queries use (`_evaluate`).
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from uivenus.actions.space import Action
from uivenus.envs.base import EnvError
from uivenus.envs.sandbox.solving import SolverError, choose, fill, tap, tid
from uivenus.envs.sandbox.tasks import APP_NAMES, LAYOUT_PLATFORMS, app_url
from uivenus.records import TaskSpec
from uivenus.tasks.catalog import ENUM, INT, RECORD_PREFIX, AppCatalog, Catalog, Function, Param, Transition, UIState
from uivenus.tasks.naming import BOUNDARY_WORDS, GENERIC_VERBS, VERBS, singular, slug
from uivenus.tasks.unsafe import unsafe_categories
from uivenus.tasks.vocabularies import VOCABULARIES, field_domain

__all__ = ["ELEMENTS_JS", "Element", "ExploreError", "ExploreLimits", "Gesture", "PAGE_FACTS_JS", "explore_app",
           "page_facts", "read_elements"]


class ExploreError(RuntimeError):
    """The environment cannot be explored (no DOM to read, not a sandbox app)."""


#: Every visible interactive element with a test id (or DOM id): what it is, its state, whether something
#: covers its centre (a modal over the page). Field clear buttons are left out: they belong to their field.
ELEMENTS_JS = r"""
() => {
  const SEL = "button, a[href], input, textarea, select, [role=switch], [role=radio], [role=button], [role=tab], [tabindex]";
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim().slice(0, 80);
  const out = [];
  for (const el of document.querySelectorAll(SEL)) {
    const testid = el.dataset.testid || null;
    if ((!testid && !el.id) || el.dataset.role === "clear" || el.type === "hidden") continue;
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (r.width <= 0 || r.height <= 0 || style.visibility === "hidden" || Number(style.opacity) === 0) continue;
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    let covered = false;
    if (x >= 0 && y >= 0 && x < innerWidth && y < innerHeight) {
      const top = document.elementFromPoint(x, y);
      covered = !!top && !(top === el || el.contains(top) || top.contains(el));
    }
    const data = Object.assign({}, el.dataset);
    delete data.testid;
    out.push({
      testid, domid: el.id || null, tag: el.tagName.toLowerCase(), type: (el.getAttribute("type") || "").toLowerCase(),
      role: el.getAttribute("role"), label: clean(el.getAttribute("aria-label") || el.innerText || el.placeholder || el.title),
      disabled: !!el.disabled || el.getAttribute("aria-disabled") === "true", covered, data,
      value: "value" in el && el.tagName !== "BUTTON" ? String(el.value) : null,
      min: el.min || null, max: el.max || null,
      options: el.tagName === "SELECT" ? Array.from(el.options).map((o) => [o.value, clean(o.text)]) : [],
    });
  }
  const heading = Array.from(document.querySelectorAll("h1, h2")).find((h) => h.getBoundingClientRect().height > 0);
  return {title: document.title, heading: heading ? clean(heading.innerText) : "", route: location.hash, elements: out};
}
"""

#: What a page says went wrong: the texts of visible `*-error` elements and the visible disabled controls.
PAGE_FACTS_JS = r"""
() => {
  const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const errors = {};
  for (const el of document.querySelectorAll("[data-testid$='-error'], [role=alert]")) {
    const text = (el.innerText || "").trim();
    if (text && shown(el)) errors[el.dataset.testid || el.id || "alert"] = text;
  }
  const disabled = Array.from(document.querySelectorAll("button:disabled, [aria-disabled=true]"))
    .filter(shown).map((el) => el.dataset.testid || el.id).filter(Boolean);
  return {errors, disabled};
}
"""

_FILL_TYPES = frozenset({"", "text", "tel", "email", "url", "number", "password"})


def _probe(env: Any, script: str) -> Any:
    """Run a fixed read-only script on the env's page (see the module docstring)."""
    evaluate = getattr(env, "_evaluate", None)
    if not callable(evaluate):
        raise ExploreError(f"{type(env).__name__} has no DOM to read; explore a BrowserEnv or a sandbox env")
    return evaluate(script, None)


@dataclass(frozen=True)
class Element:
    """One interactive element as read from the page."""

    selector: str
    kind: str  # the test id (or #dom-id): one element kind, shared by the rows of a list
    tag: str
    type: str
    role: str | None
    label: str
    disabled: bool
    covered: bool
    data: Mapping[str, str] = field(default_factory=dict)
    value: str | None = None
    low: str | None = None
    high: str | None = None
    options: tuple[tuple[str, str], ...] = ()

    @property
    def gesture(self) -> str:
        """How exploration uses it: fill (a text field), select (a drop-down), tap (anything else), skip."""
        if self.tag == "textarea" or (self.tag == "input" and self.type in _FILL_TYPES):
            return "skip" if "search" in self.kind else "fill"
        if self.tag == "input" and self.type in ("search", "file"):
            return "skip"
        return "select" if self.tag == "select" else "tap"

    @property
    def words(self) -> list[str]:
        return self.kind.lstrip("#").replace("_", "-").split("-")


def route_pattern(route: str) -> str:
    """A URL hash with record ids generalised: '#edit/c12' -> '#edit/*', '#/message/m100' -> '#/message/*'."""
    return "/".join("*" if re.fullmatch(r"[a-z]{0,2}\d+", part) else part for part in route.split("/"))


def read_elements(env: Any) -> tuple[str, str, list[Element]]:
    """The page's heading, its route (URL hash, ids generalised) and its visible interactive elements."""
    raw = _probe(env, ELEMENTS_JS)
    elements = []
    for e in raw["elements"]:
        if e["testid"]:
            kind = e["testid"]
            selector = tid(kind, id=e["data"]["id"]) if "id" in e["data"] else tid(kind)
        else:
            kind = selector = f"#{e['domid']}"
        elements.append(Element(selector, kind, e["tag"], e["type"], e["role"], e["label"], e["disabled"],
                                e["covered"], e["data"], e["value"], e["min"], e["max"],
                                tuple((v, t) for v, t in e["options"])))
    return raw["heading"] or raw["title"], route_pattern(raw["route"]), elements


def page_facts(env: Any) -> dict[str, Any]:
    """What the page shows went wrong: `{"errors": {testid: text}, "disabled": [testid, ...]}`."""
    try:
        return dict(_probe(env, PAGE_FACTS_JS))
    except EnvError:
        return {"errors": {}, "disabled": []}


def field_value(element: Element) -> str:
    """What exploration types into a field: the first sample of the field's domain."""
    name = slug(element.kind)
    short = "_".join(name.split("_")[1:]) or name
    domain = field_domain(name) if field_domain(name) != "text" else field_domain(short, element.type)
    return VOCABULARIES.get(domain, ("Sample text",))[0]


@dataclass(frozen=True)
class Gesture:
    """One exploration gesture, replayable: tap, fill (with `value`) or select (the option `value`)."""

    action: str
    element: Element
    value: str | None = None

    def __str__(self) -> str:
        record = self.element.data.get("id")
        return (f"{self.action} {self.element.kind}" + (f"[{record}]" if record else "")
                + (f" = {self.value!r}" if self.value is not None else ""))


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


@dataclass(frozen=True)
class _Change:
    kind: str  # set, add, remove, update
    key: str
    field: str | None = None
    record: Mapping[str, Any] | None = None
    value: Any = None

    @property
    def effect(self) -> str:
        return {"set": self.key, "add": f"{self.key}[+]", "remove": f"{self.key}[-]",
                "update": f"{self.key}[].{self.field}"}[self.kind]


@dataclass(frozen=True)
class _Effect:
    gesture: Gesture
    chain: tuple[Gesture, ...]  # the gestures that led to the change (since the last one, or a cancel)
    changes: tuple[_Change, ...]
    typed: Mapping[str, Element]  # the values typed into fields since the app was reset -> their fields


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(r, Mapping) and "id" in r for r in value)


def state_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[_Change]:
    """What differs between two app states: top-level keys set, records added, removed or updated."""
    out: list[_Change] = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if _is_records(old) and _is_records(new):
            olds, news = {r["id"]: r for r in old}, {r["id"]: r for r in new}
            out += [_Change("add", key, record=news[i]) for i in news if i not in olds]
            out += [_Change("remove", key, record=olds[i]) for i in olds if i not in news]
            out += [_Change("update", key, f, record=news[i], value=news[i].get(f))
                    for i in news if i in olds for f in sorted(set(olds[i]) | set(news[i]))
                    if olds[i].get(f) != news[i].get(f)]
        else:
            out.append(_Change("set", key, value=new))
    return out


# --- the walk ----------------------------------------------------------------------------------------

class _Explorer:
    def __init__(self, env: Any, app: str, spec: TaskSpec, limits: ExploreLimits) -> None:
        self.env, self.app, self.spec, self.limits = env, app, spec, limits
        self.screens: dict[str, _Screen] = {}
        self.transitions: list[Transition] = []
        self.effects: list[_Effect] = []
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
            chain = _since_boundary(self.history[self.settled:])
            self.effects.append(_Effect(gesture, chain, changes, self._typed()))
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
            fn = _infer(self.app, effect)
            functions[fn.name] = functions[fn.name].merged(fn) if fn.name in functions else fn
        states = {s.id: UIState(s.id, s.title, s.route, s.depth, tuple(map(str, s.path)),
                                tuple(sorted({e.kind for e in s.elements if not e.covered})), s.disabled)
                  for s in self.screens.values()}
        return Catalog({self.app: AppCatalog(self.app, functions, states, tuple(self.transitions))})


# --- naming what was seen ------------------------------------------------------------------------------

#: Which verbs can name which kind of change (a "pin" tapped before a note was created did not create it).
_VERBS_FOR: Mapping[str, frozenset[str]] = {
    "add": frozenset({"create", "add", "send", "reply", "forward"}),
    "remove": frozenset({"delete", "clear"}),
    "update": frozenset({"edit", "pin", "favorite", "archive", "read", "delete"}),
    "set": frozenset({"reset", "clear"}),
}
_DEFAULT_VERBS: Mapping[str, str] = {"add": "add", "remove": "delete", "update": "edit"}


def _since_boundary(chain: Sequence[Gesture]) -> tuple[Gesture, ...]:
    """The gestures after the last cancel/back tap: what came before it did not lead to what followed."""
    cut = max((i + 1 for i, g in enumerate(chain) if g.action != "fill" and BOUNDARY_WORDS & set(g.element.words)),
              default=0)
    return tuple(chain[cut:])


def _verb(chain: Sequence[Gesture], kind: str) -> str | None:
    """The verb of the nearest tapped element before the change that can name it."""
    fallback = None
    for gesture in reversed(chain):
        if gesture.action == "fill":
            continue
        for word in gesture.element.words:
            if VERBS.get(word) in _VERBS_FOR[kind]:
                return VERBS[word]
            if fallback is None and kind == "update" and word in GENERIC_VERBS:
                fallback = GENERIC_VERBS[word]
    return fallback


def _is_counter(key: str) -> bool:
    """State keys that only count (the next id to hand out: nextId, nextOrder), not something a user set."""
    return key.startswith("next")


def _infer(app: str, effect: _Effect) -> Function:
    """One function from one observed state change."""
    changes = [c for c in effect.changes if not _is_counter(c.key)] or list(effect.changes)
    record_changes = [c for c in changes if c.kind != "set"]
    tapped = [text for g in effect.chain if g.action != "fill" for text in (g.element.label, g.element.kind) if text]
    fields = [g.element.kind.replace("-", " ") for g in effect.chain if g.action == "fill"]
    unsafe = {**unsafe_categories(tapped), **unsafe_categories(fields, ("field",))}
    evidence = " > ".join(map(str, effect.chain))
    base = dict(effects=tuple(c.effect for c in effect.changes), unsafe=tuple(unsafe), sources=("exploration",),
                evidence=(evidence,))
    if record_changes:
        fn = _record_function(app, effect, record_changes)
    else:
        fn = _setting_function(app, effect, changes)
    return replace(fn, **base)


def _record_function(app: str, effect: _Effect, changes: list[_Change]) -> Function:
    kind = next(k for k in ("add", "remove", "update") if any(c.kind == k for c in changes))
    change = next(c for c in changes if c.kind == kind)
    noun = singular(change.key)
    filled = effect.typed
    verb = _verb(effect.chain, kind)
    updated = [c for c in changes if c.kind == "update" and c.key == change.key]
    if verb is None and kind == "update" and all(isinstance(c.value, bool) for c in updated):
        name = f"set_{noun}_{slug(updated[0].field or 'flag')}"
    else:
        name = f"{verb or _DEFAULT_VERBS[kind]}_{noun}"
    params: list[Param] = []
    if kind != "add":
        params.append(Param(noun, RECORD_PREFIX + change.key))
    record = change.record or {}
    sources = record.items() if kind == "add" else [(c.field, c.value) for c in updated]
    for key, value in sources:
        if isinstance(value, str) and value in filled and key and slug(key) != noun:
            params.append(Param(slug(key), field_domain(slug(key), filled[value].type)))
    return Function(app, name, params=tuple(params))


def _switch_key(element: Element) -> str | None:
    if element.role != "switch":
        return None
    return element.data.get("key") or "_".join(slug(element.kind).split("_")[1:]) or None


def _setting_function(app: str, effect: _Effect, changes: list[_Change]) -> Function:
    element = effect.gesture.element
    keys = [c.key for c in changes]
    switch = _switch_key(element)
    if switch in keys and isinstance(next(c.value for c in changes if c.key == switch), bool):
        return Function(app, "set_toggle", params=(
            Param("which", ENUM, (switch,), {switch: element.label or switch}), Param("value", ENUM, ("on", "off"))))
    verb = _verb(effect.chain, "set")
    if verb is not None:  # "reset", even when only one setting differed from its default
        return Function(app, f"{verb}_{app}")
    if len(keys) > 1:
        return Function(app, slug(element.kind))
    key = keys[0]
    value = changes[0].value
    if element.tag == "input" and element.type == "range":
        param = Param(slug(key), INT, low=int(float(element.low or 0)), high=int(float(element.high or 100)))
    elif element.gesture == "select":
        param = Param(slug(key), ENUM, tuple(v for v, _ in element.options), {v: t for v, t in element.options})
    elif isinstance(value, str) and value in effect.typed:
        param = Param(slug(key), field_domain(slug(key), effect.typed[value].type))
    else:
        param = Param(slug(key), ENUM, (str(value),), {str(value): element.label or str(value)})
    return Function(app, f"set_{slug(key)}", params=(param,))


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

