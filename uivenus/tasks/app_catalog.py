"""The capability catalog of real (uninstrumented) apps, as the accessibility-tree explorer finds it.

Per app: the UI states reached (identified by a hash of the normalised tree), the functions found in them (a
widget or form a user can act on, its parameter domains, the route of gestures that reaches it from the app's
start, and the effect seen when it was used: the tree's diff and the files written in the task root's home), and
the failures met (no accessibility tree, a hang, a crash, a dialog that would not close), which never stop the
exploration. Gestures name their target by a `Locator` (role, name, occurrence), not by pixels, so a route replays
on a fresh root whatever the window's position. Stored as versioned JSON with sorted keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from uivenus.envs.elements import UIElement
from uivenus.tasks.catalog import CatalogError, CatalogFile, Param, plain_record

__all__ = ["SAVE", "SCHEMA", "AppExploration", "AppFunction", "Effect", "ExploredState", "Failure", "FailureKind",
           "FileChange", "Gesture", "GestureKind", "Locator", "RealCatalog", "TreeDiff", "WidgetKind", "document_steps"]

SCHEMA = "uivenus.app-catalog/1"


class WidgetKind(StrEnum):
    """What kind of control a function is used through (it decides the parameter domain and the gestures)."""

    BUTTON = "button"  # press: no parameter
    MENU_ITEM = "menu_item"  # a command in a menu: no parameter
    TOGGLE = "toggle"  # check box / toggle button: enum on/off
    CHOICE = "choice"  # combo box / radio group / list: enum of its options
    TEXT = "text"  # entry: free text
    NUMBER = "number"  # spin button / slider: int low..high
    TAB = "tab"  # page tab: no parameter (reaches a state)
    LINK = "link"  # web link: no parameter (reaches a state)
    FORM = "form"  # fields + a submit button: one parameter per field


class GestureKind(StrEnum):
    CLICK = "click"  # click the target's centre
    TYPE = "type"  # click the target, select all, type `text`
    SELECT = "select"  # choose option `text` of the target (combo/list)
    KEY = "key"  # press keys `text` ("escape", "ctrl+s"); no target
    BACK = "back"  # leave what the last gesture opened: Escape on a desktop, the browser's Back on the web
    LAUNCH = "launch"  # start the app (`text`: the argv as JSON, or the URL); no target


@dataclass(frozen=True)
class Locator:
    """How to find an element again on a fresh run: its role and name, and which of the equal ones (in tree order)."""

    role: str
    name: str
    nth: int = 0

    @classmethod
    def of(cls, element: UIElement, elements: Sequence[UIElement]) -> Locator:
        same = [e for e in elements if e.role == element.role and e.name == element.name]
        return cls(element.role, element.name, next((i for i, e in enumerate(same) if e.path == element.path), 0))

    def find(self, elements: Sequence[UIElement]) -> UIElement | None:
        """The element this names among `elements` (shown ones first), or None."""
        same = [e for e in elements if e.role == self.role and e.name == self.name]
        shown = [e for e in same if e.visible]
        pool = shown if len(shown) > self.nth else same
        return pool[self.nth] if len(pool) > self.nth else None

    def __str__(self) -> str:
        return f"{self.role} {self.name!r}" + (f" #{self.nth}" if self.nth else "")


@dataclass(frozen=True)
class Gesture:
    """One step of a route: what to do to which element."""

    kind: GestureKind
    target: Locator | None = None
    text: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", GestureKind(self.kind))

    def __str__(self) -> str:
        return " ".join(p for p in (self.kind.value, str(self.target or ""), repr(self.text) if self.text else "") if p)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value}
        if self.target is not None:
            out["target"] = plain_record(self.target)
        if self.text:
            out["text"] = self.text
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Gesture:
        target = data.get("target")
        return cls(data["kind"], Locator(**{"name": "", **target}) if target else None, data.get("text", ""))


#: The gesture that saves an editor's opened document in place (no file chooser): the last one of a function that
#: edits and saves it.
SAVE = Gesture(GestureKind.KEY, text="ctrl+s")


@dataclass(frozen=True)
class TreeDiff:
    """How the tree changed: elements (as "role 'name'") that appeared or went, and values/states that changed."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()  # "check box 'Wrap': checked -> (none)", "entry 'Name': '' -> 'abc'"

    def __post_init__(self) -> None:
        for name in ("added", "removed", "changed"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


@dataclass(frozen=True)
class FileChange:
    """A file the app wrote (or removed) under the task root's home while a function was used."""

    path: str  # relative to /home/user
    change: str  # "created" | "modified" | "deleted"
    size: int = 0


@dataclass(frozen=True)
class Effect:
    """What using a function did: the state it led to, the tree's diff, the files written."""

    target: str | None = None  # the state id after it (None: the app was gone or hung)
    tree: TreeDiff = TreeDiff()
    files: tuple[FileChange, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", tuple(self.files))

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in (("target", self.target), ("tree", plain_record(self.tree)),
                                  ("files", [plain_record(f) for f in self.files])) if v}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Effect:
        return cls(data.get("target"), TreeDiff(**data.get("tree", {})),
                   tuple(FileChange(**f) for f in data.get("files", ())))


class FailureKind(StrEnum):
    NO_TREE = "no_a11y_tree"  # the app shows a window but exposes no accessible objects
    LAUNCH = "launch_failed"  # the app did not start or showed nothing in time
    HANG = "hang"  # the app stopped answering (its tree could not be read in time)
    CRASH = "crash"  # the app's process ended
    STUCK_DIALOG = "stuck_dialog"  # a dialog or menu that neither Escape nor its close button dismissed
    UNREACHABLE = "unreachable"  # a recorded route no longer reaches its state on a fresh replay
    ACTION = "action_failed"  # a gesture could not be carried out (its element was gone or unplaced)


@dataclass(frozen=True)
class Failure:
    """Something that went wrong while exploring, where, and what the explorer did next."""

    kind: FailureKind
    state: str | None = None  # the state it happened in
    gesture: Gesture | None = None  # the gesture that caused it
    detail: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", FailureKind(self.kind))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value}
        if self.state:
            out["state"] = self.state
        if self.gesture is not None:
            out["gesture"] = self.gesture.to_dict()
        if self.detail:
            out["detail"] = self.detail
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Failure:
        gesture = data.get("gesture")
        return cls(data["kind"], data.get("state"), Gesture.from_dict(gesture) if gesture else None,
                   data.get("detail", ""))


@dataclass(frozen=True)
class ExploredState:
    """A UI state reached: its title, how deep, the route from the app's start, and its actionable elements."""

    id: str  # `uivenus.envs.elements.tree_hash` of its tree
    title: str = ""  # the active window's / dialog's / page's name
    depth: int = 0
    route: tuple[Gesture, ...] = ()  # from the app's start (after launch)
    elements: tuple[UIElement, ...] = ()  # the actionable ones, as seen on arrival

    def __post_init__(self) -> None:
        object.__setattr__(self, "route", tuple(self.route))
        object.__setattr__(self, "elements", tuple(self.elements))

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in (("title", self.title), ("depth", self.depth),
                                  ("route", [g.to_dict() for g in self.route]),
                                  ("elements", [e.to_dict() for e in self.elements])) if v}

    @classmethod
    def from_dict(cls, sid: str, data: Mapping[str, Any]) -> ExploredState:
        return cls(sid, data.get("title", ""), int(data.get("depth", 0)),
                   tuple(Gesture.from_dict(g) for g in data.get("route", ())),
                   tuple(UIElement.from_dict(e) for e in data.get("elements", ())))


@dataclass(frozen=True)
class AppFunction:
    """A widget or form of a real app a user can act on, with its parameter domains and the effect seen.

    `route` reaches `state` from the app's start; `gestures` then use the function (with the parameter values seen
    while exploring, e.g. `select` of the first other option); `params` are the domains a task may draw from.
    """

    name: str  # snake_case, unique in the app: "<state title>_<widget label>"
    kind: WidgetKind
    state: str
    widget: UIElement
    route: tuple[Gesture, ...] = ()
    gestures: tuple[Gesture, ...] = ()
    params: tuple[Param, ...] = ()
    effect: Effect | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise CatalogError(f"function name {self.name!r} must be snake_case")
        object.__setattr__(self, "kind", WidgetKind(self.kind))
        for name in ("route", "gestures", "params"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value, "state": self.state, "widget": self.widget.to_dict(),
                               "route": [g.to_dict() for g in self.route],
                               "gestures": [g.to_dict() for g in self.gestures],
                               "params": [plain_record(p) for p in self.params]}
        if self.effect is not None:
            out["effect"] = self.effect.to_dict()
        if self.description:
            out["description"] = self.description
        return out

    @classmethod
    def from_dict(cls, name: str, data: Mapping[str, Any]) -> AppFunction:
        effect = data.get("effect")
        return cls(name, data["kind"], data["state"], UIElement.from_dict(data["widget"]),
                   tuple(Gesture.from_dict(g) for g in data.get("route", ())),
                   tuple(Gesture.from_dict(g) for g in data.get("gestures", ())),
                   tuple(Param(**p) for p in data.get("params", ())),
                   Effect.from_dict(effect) if effect is not None else None, data.get("description", ""))


def document_steps(documents: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """OSWorld config steps that write each document (path under /home/user, text) before the app starts: argv
    form, the text passed as an argument, never put into the shell's script."""
    return [{"type": "execute", "parameters": {"command": ["sh", "-c", 'printf "%s" "$1" > "$2"', "sh", text,
                                                          f"/home/user/{path}"]}} for path, text in documents]


@dataclass(frozen=True)
class AppExploration:
    """Everything the explorer found in one app, and within which bounds."""

    app: str
    platform: str  # "desktop" | "web"
    launch: tuple[str, ...] = ()  # the argv (desktop) or the URL (web) that starts it
    states: Mapping[str, ExploredState] = field(default_factory=dict)
    functions: Mapping[str, AppFunction] = field(default_factory=dict)
    failures: tuple[Failure, ...] = ()
    start: str | None = None  # the state id on launch
    max_depth: int = 0
    time_limit_s: float = 0.0
    elapsed_s: float = 0.0
    complete: bool = False  # every reachable state within max_depth was expanded before the time ran out
    #: Documents made in the task root before the app starts (path under /home/user, text): an editor opened on
    #: one saves with ctrl+s, no file chooser, so its edits become a file a later app can use.
    documents: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "launch", tuple(self.launch))
        object.__setattr__(self, "documents", tuple((str(p), str(t)) for p, t in self.documents))
        object.__setattr__(self, "states", MappingProxyType(dict(sorted(self.states.items()))))
        object.__setattr__(self, "functions", MappingProxyType(dict(sorted(self.functions.items()))))
        object.__setattr__(self, "failures", tuple(self.failures))
        object.__setattr__(self, "elapsed_s", round(float(self.elapsed_s), 3))  # as the file keeps it

    def counts(self) -> dict[str, int]:
        """The figures a report prints: states, functions, failures."""
        return {"states": len(self.states), "functions": len(self.functions), "failures": len(self.failures)}

    def to_dict(self) -> dict[str, Any]:
        return {"platform": self.platform, "launch": list(self.launch), "start": self.start,
                "max_depth": self.max_depth, "time_limit_s": self.time_limit_s,
                "elapsed_s": self.elapsed_s, "complete": self.complete,
                "states": {sid: s.to_dict() for sid, s in self.states.items()},
                "functions": {name: fn.to_dict() for name, fn in self.functions.items()},
                "failures": [f.to_dict() for f in self.failures],
                **({"documents": [list(d) for d in self.documents]} if self.documents else {})}

    @classmethod
    def from_dict(cls, app: str, data: Mapping[str, Any]) -> AppExploration:
        return cls(app, data["platform"], tuple(data.get("launch", ())),
                   {sid: ExploredState.from_dict(sid, s) for sid, s in (data.get("states") or {}).items()},
                   {name: AppFunction.from_dict(name, f) for name, f in (data.get("functions") or {}).items()},
                   tuple(Failure.from_dict(f) for f in data.get("failures", ())), data.get("start"),
                   int(data.get("max_depth", 0)), float(data.get("time_limit_s", 0.0)),
                   float(data.get("elapsed_s", 0.0)), bool(data.get("complete", False)),
                   tuple(tuple(d) for d in data.get("documents", ())))


class RealCatalog(CatalogFile):
    """The explored apps' catalogs in one file (`apps`: app name -> exploration)."""

    def __init__(self, apps: Mapping[str, AppExploration] | None = None) -> None:
        self.apps: dict[str, AppExploration] = dict(sorted((apps or {}).items()))

    def add(self, exploration: AppExploration) -> None:
        """Put (or replace) one app's exploration."""
        self.apps = dict(sorted({**self.apps, exploration.app: exploration}.items()))

    def functions(self) -> list[tuple[str, AppFunction]]:
        return [(app, fn) for app, e in self.apps.items() for fn in e.functions.values()]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "apps": {app: e.to_dict() for app, e in self.apps.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RealCatalog:
        if data.get("schema") != SCHEMA:
            raise CatalogError(f"not a {SCHEMA} catalog (schema {data.get('schema')!r}); write it with "
                               "RealCatalog.save or `uivenus tasks explore-app`")
        try:
            return cls({app: AppExploration.from_dict(app, d) for app, d in data["apps"].items()})
        except (KeyError, TypeError, ValueError) as exc:
            raise CatalogError(f"malformed app catalog: {type(exc).__name__}: {exc}") from None

