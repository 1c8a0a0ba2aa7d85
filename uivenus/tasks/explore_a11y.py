"""Breadth-first exploration of a real (uninstrumented) app through its accessibility tree.

The hook explorer (`explore.py`) reads `window.uivenus.state()`, which only our sandbox apps have; this one reads
what any GTK, Qt, LibreOffice app or web page exposes to assistive technology. A UI state is the hash of the
normalised tree (`tree_hash`: positions, focus, clocks and document text left out). From each state reached within
`max_depth`, every actionable widget not tried before (and every web form) is used once: its effect is the state it
leads to, the tree's diff and the files written in the task root's home, and it becomes a catalog function with its
parameter domains. The explorer then goes back (Escape, else a fresh start and a replay of the state's route).
Whatever goes wrong — no tree, a hang, a crash, a dialog that will not close, a route that no longer replays — is
recorded as a `Failure` and exploration goes on with the next widget or state, until the time is spent.
"""

from __future__ import annotations

import itertools
import re
import time
import urllib.parse
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from uivenus.envs.base import EnvError
from uivenus.envs.elements import UIElement, tree_hash
from uivenus.envs.osworld.a11y_reader import A11yTimeout
from uivenus.tasks.app_catalog import (
    SAVE, AppExploration, AppFunction, Effect, ExploredState, Failure, FailureKind, FileChange, Gesture, GestureKind,
    Locator, TreeDiff, WidgetKind,
)
from uivenus.tasks.catalog import ENUM, Param
from uivenus.tasks.explore_a11y_surfaces import OPTION_ROLES, GestureFailed, Surface
from uivenus.tasks.real_domains import number_param, text_param

__all__ = ["WIDGET_KINDS", "ExploreLimits", "explore_app", "tree_diff"]

#: Which kind of function a role is used as (the registry the explorer plans its gestures from).
WIDGET_KINDS: Mapping[str, WidgetKind] = {
    **dict.fromkeys(("push button", "button"), WidgetKind.BUTTON),
    **dict.fromkeys(("menu", "menu item", "radio menu item", "menuitem", "menuitemradio"), WidgetKind.MENU_ITEM),
    **dict.fromkeys(("toggle button", "check box", "checkbox", "switch", "check menu item", "menuitemcheckbox",
                     "radio button", "radio"), WidgetKind.TOGGLE),
    **dict.fromkeys(("combo box", "combobox"), WidgetKind.CHOICE),
    **dict.fromkeys(("text", "entry", "textbox", "searchbox", "password text"), WidgetKind.TEXT),
    **dict.fromkeys(("spin button", "spinbutton", "slider"), WidgetKind.NUMBER),
    **dict.fromkeys(("page tab", "tab"), WidgetKind.TAB),
    "link": WidgetKind.LINK,
}
#: The order widgets are tried in a state: what opens new states first, what ends the app last.
_PRIORITY = {WidgetKind.FORM: 0, WidgetKind.MENU_ITEM: 1, WidgetKind.TAB: 2, WidgetKind.CHOICE: 3,
             WidgetKind.TOGGLE: 4, WidgetKind.BUTTON: 5, WidgetKind.LINK: 6, WidgetKind.TEXT: 7, WidgetKind.NUMBER: 8}
_ENDS_APP = re.compile(r"\b(quit|exit|close)\b", re.IGNORECASE)
_DIALOG_ROLES = frozenset({"dialog", "alert", "file chooser", "alertdialog"})
_MARKS = ("checked", "selected", "expanded", "pressed")
_DIFF_LIMIT = 40
#: The kinds of a form's fields that take a value (a form's toggles are left as they are).
_FIELD_KINDS = frozenset({WidgetKind.TEXT, WidgetKind.NUMBER, WidgetKind.CHOICE})


@dataclass(frozen=True)
class ExploreLimits:
    """How far and how long to explore one app."""

    max_depth: int = 2
    time_s: float = 120.0
    max_widgets_per_state: int = 40
    sample_text: str = "uivenus"
    launch_wait_s: float = 30.0  # how long a started app may take to show an actionable element


def _snake(text: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return ("f_" + words if words[:1].isdigit() else words)[:60].strip("_")


def _label(e: UIElement) -> str:
    return f"{e.role} {e.name!r}"


def _keyed(elements: Sequence[UIElement]) -> dict[tuple[str, str, int], UIElement]:
    """Shown elements by (role, name, occurrence): the same widget in two trees, wherever it moved."""
    seen: Counter[tuple[str, str]] = Counter()
    out = {}
    for e in elements:
        if "showing" in e.states:
            out[(e.role, e.name, seen[(e.role, e.name)])] = e
            seen[(e.role, e.name)] += 1
    return out


def _marks(e: UIElement) -> str:
    return ",".join(s for s in e.states if s in _MARKS) or "(none)"


def _named(elements: Iterable[UIElement]) -> tuple[str, ...]:
    return tuple(sorted({_label(e) for e in elements if e.name})[:_DIFF_LIMIT])


def tree_diff(before: Sequence[UIElement], after: Sequence[UIElement]) -> TreeDiff:
    """Named elements that appeared or went, and the values and marks (checked, selected, …) that changed."""
    old, new = _keyed(before), _keyed(after)
    changed = []
    for key in old.keys() & new.keys():
        a, b = old[key], new[key]
        if a.value != b.value:
            changed.append(f"{_label(a)}: {a.value[:40]!r} -> {b.value[:40]!r}")
        if _marks(a) != _marks(b):
            changed.append(f"{_label(a)}: {_marks(a)} -> {_marks(b)}")
    return TreeDiff(added=_named(new[k] for k in new.keys() - old.keys()),
                    removed=_named(old[k] for k in old.keys() - new.keys()), changed=sorted(changed)[:_DIFF_LIMIT])


def file_changes(before: Mapping[str, tuple[int, int]], after: Mapping[str, tuple[int, int]]) -> tuple[FileChange, ...]:
    made = [FileChange(p, "created", after[p][0]) for p in after.keys() - before.keys()]
    gone = [FileChange(p, "deleted") for p in before.keys() - after.keys()]
    changed = [FileChange(p, "modified", after[p][0]) for p in after.keys() & before.keys() if after[p] != before[p]]
    return tuple(sorted(made + gone + changed, key=lambda c: c.path))


class _AppGone(EnvError):
    """The app's windows are all gone (it crashed, or a widget quit it)."""


class _Explorer:
    def __init__(self, app: str, surface: Surface, limits: ExploreLimits, clock: Callable[[], float]) -> None:
        self.app, self.surface, self.limits, self.clock = app, surface, limits, clock
        self.deadline = clock() + limits.time_s
        self.states: dict[str, ExploredState] = {}
        self.functions: dict[str, AppFunction] = {}
        self.failures: list[Failure] = []
        self.tried: set[tuple[Any, ...]] = set()
        self.apps: set[str] = set()  # the app's process names on the bus (its windows going means it is gone)
        self.current: tuple[str | None, tuple[UIElement, ...]] = (None, ())
        self.start: str | None = None

    # -- reading --------------------------------------------------------------------------------
    def read(self) -> tuple[str, tuple[UIElement, ...]]:
        elements = self.surface.elements()
        if self.surface.platform == "desktop" and self.apps and not any(
                e.app in self.apps and e.depth > 1 and e.visible for e in elements):
            raise _AppGone("the app's windows are gone")
        sid = tree_hash(elements, extra={"at": self.surface.location()})
        self.current = (sid, elements)
        return self.current

    def read_settled(self, cheap_s: float = 0.5, tries: int = 3) -> tuple[str, tuple[UIElement, ...]]:
        """Read until two reads agree (a page still building itself after its load), when reads are cheap; a slow
        tree (LibreOffice's) is taken as read, the screen having already settled."""
        started = self.clock()
        sid, elements = self.read()
        if self.clock() - started > cheap_s:
            return sid, elements
        for _ in range(tries):
            time.sleep(0.3)
            previous = sid
            sid, elements = self.read()
            if sid == previous:
                break
        return sid, elements

    def add_state(self, sid: str, elements: Sequence[UIElement], route: tuple[Gesture, ...], depth: int) -> bool:
        if sid in self.states:
            return False
        windows = [e for e in elements if e.depth == 2 and e.visible] if self.surface.platform == "desktop" else []
        active = next((e for e in windows if "active" in e.states), windows[-1] if windows else None)
        title = active.name if active is not None else next((e.name for e in elements if e.depth == 1), "")
        shown = tuple(e for e in elements if e.actionable or (e.role == "form" and e.visible))  # a form: one function
        self.states[sid] = ExploredState(sid, title, depth, route, shown)
        return True

    def fail(self, kind: FailureKind, state: str | None, gesture: Gesture | None, detail: str) -> None:
        self.failures.append(Failure(kind, state, gesture, detail[:300]))

    # -- the walk -------------------------------------------------------------------------------
    def run(self) -> AppExploration:
        started = self.clock()
        start = self.start = self.begin()
        queue = deque([start] if start else [])
        truncated = False
        while queue:
            state = self.states[queue.popleft()]
            for plan in self.candidates(state):
                if self.clock() > self.deadline:
                    truncated = True
                    break
                if not self.reach(state):
                    break
                target = self.attempt(state, *plan)
                if target is not None and target not in queue and self.states[target].depth == state.depth + 1 \
                        and state.depth + 1 < self.limits.max_depth:
                    queue.append(target)
            if truncated:
                break
        return AppExploration(self.app, self.surface.platform, self.surface.launch, self.states, self.functions,
                              tuple(self.failures), start, self.limits.max_depth, self.limits.time_s,
                              self.clock() - started, complete=start is not None and not truncated and not queue,
                              documents=self.surface.documents)

    def begin(self) -> str | None:
        """Start the app; the start state's id, or None (recorded) when there is nothing to explore."""
        try:
            sid, elements = self.launch()
        except (EnvError, OSError) as exc:
            self.fail(FailureKind.LAUNCH, None, Gesture(GestureKind.LAUNCH, text=" ".join(self.surface.launch)),
                      f"{type(exc).__name__}: {exc}")
            return None
        placed = [e for e in elements if e.depth > 1 and e.visible]
        if not any(e.actionable for e in placed):
            self.fail(FailureKind.NO_TREE, None, None, "the app exposes no actionable accessible object (no AT-SPI "
                      "bridge, or the toolkit draws its own widgets); nothing to explore")
            return None
        self.apps = {e.app for e in placed if e.app}
        self.add_state(sid, elements, (), 0)
        return sid

    def launch(self) -> tuple[str, tuple[UIElement, ...]]:
        """Start the app afresh and wait (bounded) until it shows something actionable and its tree holds still."""
        self.surface.start()
        deadline = self.clock() + min(self.limits.launch_wait_s, self.limits.time_s)
        previous = None
        while True:
            try:
                sid, elements = self.read()
            except (_AppGone, A11yTimeout):  # still starting: no window yet, or too busy to answer the bus
                if self.clock() > deadline:
                    raise
                time.sleep(0.3)
                continue
            ready = any(e.actionable and e.depth > 1 for e in elements)
            if (ready and sid == previous) or self.clock() > deadline:
                return sid, elements
            previous = sid if ready else None
            time.sleep(0.3)

    def candidates(self, state: ExploredState) -> list[tuple[WidgetKind, UIElement]]:
        """The state's widgets not tried in an earlier state (a menu bar's items are tried once, not under each
        menu), one kind after another in turn (forms and menus first) so a short budget still meets every kind,
        and what would end the app last."""
        by_kind: dict[WidgetKind, list[UIElement]] = {}
        for element in state.elements:
            kind = WidgetKind.FORM if element.role == "form" else WIDGET_KINDS.get(element.role)
            if kind is None:
                continue
            key = (urllib.parse.urlsplit(element.app)[:2] if "://" in element.app else element.app, element.role,
                   element.name, Locator.of(element, state.elements).nth, element.value if kind is WidgetKind.LINK
                   else "")
            if key in self.tried:
                continue
            self.tried.add(key)
            same = by_kind.setdefault(kind, [])
            if not any(e.name == element.name and e.contains(element.center) for e in same):  # type: ignore[arg-type]
                same.append(element)  # not the same widget twice over (LibreOffice shows its menu bar twice)
        turns = [[(kind, e) for e in by_kind[kind] if not _ENDS_APP.search(e.name)]
                 for kind in sorted(by_kind, key=_PRIORITY.__getitem__)]
        plans = [plan for group in itertools.zip_longest(*turns) for plan in group if plan is not None]
        plans += [(kind, e) for kind, elements in by_kind.items() for e in elements if _ENDS_APP.search(e.name)]
        return plans[:self.limits.max_widgets_per_state]

    def reach(self, state: ExploredState) -> bool:
        """Be in `state`: already there, else back at the start by Escape (or a fresh start) and its route replayed."""
        if self.current[0] == state.id:
            return True
        try:
            if not self.escape_to(self.start):
                self.launch()
            for gesture in state.route:
                self.surface.perform(gesture, self.current[1])
                self.read_settled()
        except (EnvError, OSError) as exc:
            self.fail(FailureKind.UNREACHABLE, state.id, None, f"{type(exc).__name__}: {exc}")
            self.current = (None, ())
            return False
        if self.current[0] != state.id:
            self.fail(FailureKind.UNREACHABLE, state.id, None, f"its route {[str(g) for g in state.route]} now leads "
                      f"to another state ({self.current[0]})")
            return False
        return True

    def escape_to(self, sid: str | None, presses: int = 2) -> bool:
        """Go back (Escape, the browser's Back) until the app is in state `sid`; False when it is not."""
        for _ in range(presses):
            if self.current[0] is None or self.current[0] == sid:
                break
            try:
                self.surface.perform(Gesture(GestureKind.BACK), self.current[1])
                self.read_settled()
            except (EnvError, OSError):
                self.current = (None, ())
        return self.current[0] is not None and self.current[0] == sid

    def attempt(self, state: ExploredState, kind: WidgetKind, widget: UIElement) -> str | None:
        """Use one widget from `state`; record the function (and any failure); the state it led to."""
        before = self.current[1]
        files = self.surface.files()
        gestures: tuple[Gesture, ...] = ()
        try:
            gestures, params = self.plan(kind, widget, before, state.title)
            elements = before
            for n, gesture in enumerate(gestures):
                if n:  # the tree between gestures (a form's next field); the last one's is read settled below
                    _, elements = self.read()
                self.surface.perform(gesture, elements)
            target, after = self.read_settled()
        except GestureFailed as exc:
            self.fail(FailureKind.ACTION, state.id, gestures[-1] if gestures else None, str(exc))
            self.current = (None, ())
            return None
        except A11yTimeout as exc:
            self.record(state, kind, widget, gestures, (), Effect(None))
            self.fail(FailureKind.HANG, state.id, gestures[-1] if gestures else None, str(exc))
            self.current = (None, ())
            return None
        except (_AppGone, EnvError, OSError) as exc:
            self.record(state, kind, widget, gestures, (), Effect(None))
            if not _ENDS_APP.search(widget.name):
                self.fail(FailureKind.CRASH, state.id, gestures[-1] if gestures else None,
                          f"{type(exc).__name__}: {exc}")
            self.current = (None, ())
            return None
        effect = Effect(target, tree_diff(before, after), file_changes(files, self.surface.files()))
        self.record(state, kind, widget, gestures, params, effect)
        new = target != state.id and self.surface.inside() and self.add_state(target, after, state.route + gestures,
                                                                                 state.depth + 1)
        self.back(state, target)
        return target if new else None

    def plan(self, kind: WidgetKind, widget: UIElement, elements: Sequence[UIElement], where: str = ""
             ) -> tuple[tuple[Gesture, ...], tuple[Param, ...]]:
        """The gestures that use the widget once, and its parameter domains (typed by role and name, `where`: the
        screen's title)."""
        if kind is WidgetKind.FORM:
            return self.plan_form(widget, elements, where)
        if kind is WidgetKind.TOGGLE:
            toggle = Param("on", ENUM, values=("true", "false"))
            return (Gesture(GestureKind.CLICK, Locator.of(widget, elements)),), (toggle,)
        name = "option" if kind is WidgetKind.CHOICE else _snake(widget.name) or kind.value
        used = self.use_field(kind, widget, elements, where, name)
        return used if used is not None else ((Gesture(GestureKind.CLICK, Locator.of(widget, elements)),), ())

    def use_field(self, kind: WidgetKind, field: UIElement, elements: Sequence[UIElement], where: str, name: str
                  ) -> tuple[tuple[Gesture, ...], tuple[Param, ...]] | None:
        """Typing or choosing a value into one field (text, a number inside its range, another option of a
        choice), with its parameter; None for a field that takes no value (or a choice with one option)."""
        locate = Locator.of(field, elements)
        if kind is WidgetKind.TEXT:
            param = text_param(name, field, where)
            typed = Gesture(GestureKind.TYPE, locate, self.limits.sample_text)
            if self.surface.documents and "multi line" in field.states:  # an opened document: edited, then saved
                return (typed, SAVE), (param,)
            return (typed,), (param,)
        if kind is WidgetKind.NUMBER:
            param = number_param(name, field, where)
            middle = (param.low + param.high) // 2  # type: ignore[operator]  # number_param always sets both
            return (Gesture(GestureKind.TYPE, locate, str(middle)),), (param,)
        if kind is WidgetKind.CHOICE:
            options = self.options(field, elements)
            other = next((o for o in options if o != field.value and o != field.name), None)
            if other is not None:
                return (Gesture(GestureKind.SELECT, locate, other),), (Param(name, ENUM, values=tuple(options)),)
        return None

    def options(self, widget: UIElement, elements: Sequence[UIElement]) -> list[str]:
        """A choice's options: its children where the tree has them (a web select), else what its popup shows."""
        inside = [e.name for e in elements if e.role in OPTION_ROLES and e.name
                  and e.path[:len(widget.path)] == widget.path and e.path != widget.path]
        if inside:
            return list(dict.fromkeys(inside))
        self.surface.perform(Gesture(GestureKind.CLICK, Locator.of(widget, elements)), elements)
        _, shown = self.read()
        before = {(e.role, e.name) for e in elements}
        popup = [e.name for e in shown if e.role in OPTION_ROLES and e.name and e.visible and (e.role, e.name)
                 not in before]
        self.surface.perform(Gesture(GestureKind.BACK), shown)
        self.read()
        return list(dict.fromkeys(popup))

    def plan_form(self, form: UIElement, elements: Sequence[UIElement], where: str = ""
                  ) -> tuple[tuple[Gesture, ...], tuple[Param, ...]]:
        """Fill every field of a form (text, numbers in their ranges, choices) and submit it: one parameter per
        field, in the order the fields are filled, each with its role's domain."""
        inside = [e for e in elements if e.path[:len(form.path)] == form.path and e.actionable and e is not form]
        gestures: list[Gesture] = []
        params: list[Param] = []
        for field in inside:
            kind = WIDGET_KINDS.get(field.role)
            name = _snake(field.name) or f"field_{len(params) + 1}"
            if kind not in _FIELD_KINDS or name in {p.name for p in params}:
                continue
            used = self.use_field(kind, field, elements, where or form.name, name)  # type: ignore[arg-type]
            if used is not None:
                gestures += used[0]
                params += used[1]
        submit = next((e for e in inside if WIDGET_KINDS.get(e.role) is WidgetKind.BUTTON), None)
        if submit is None:
            raise GestureFailed(f"form {form.name!r} has no button to submit it")
        gestures.append(Gesture(GestureKind.CLICK, Locator.of(submit, elements)))
        return tuple(gestures), tuple(params)

    def record(self, state: ExploredState, kind: WidgetKind, widget: UIElement, gestures: tuple[Gesture, ...],
               params: tuple[Param, ...], effect: Effect) -> None:
        context = [g.target.name for g in state.route if g.kind is GestureKind.CLICK and g.target is not None]
        named = ("edit_and_save_document",) if SAVE in gestures else ()  # not the document's text, which it sets
        own = next(n for n in (*named, _snake(widget.name), _snake(widget.value), _snake(widget.role), kind.value) if n)
        base = _snake("_".join([*context, own])) or own
        name, n = base, 1
        while name in self.functions:
            n += 1
            name = f"{base}_{n}"
        what = f"{kind.value} {widget.label()!r}" + (f" (in {' > '.join(context)})" if context else "")
        self.functions[name] = AppFunction(name, kind, state.id, widget, state.route, gestures, params, effect,
                                           description=what)

    def back(self, state: ExploredState, target: str) -> None:
        """Return to `state` by going back; a dialog still open after two tries is recorded as stuck."""
        if not self.escape_to(state.id) and any(e.role in _DIALOG_ROLES and e.visible for e in self.current[1]):
            self.fail(FailureKind.STUCK_DIALOG, target, Gesture(GestureKind.BACK),
                      "going back (Escape) twice did not close the dialog; the app is started afresh")


def explore_app(app: str, surface: Surface, limits: ExploreLimits = ExploreLimits(),
                clock: Callable[[], float] = time.monotonic) -> AppExploration:
    """Explore one app on `surface` within `limits`; failures are in the result, never raised."""
    return _Explorer(app, surface, limits, clock).run()
