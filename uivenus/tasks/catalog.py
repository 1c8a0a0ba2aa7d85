"""The capability catalog: per app, what a user can achieve (functions with parameter domains), the UI states
seen while exploring it, and the constraints learned when tasks failed.

Built by exploring an app (`uivenus.tasks.explore`) and from a written description of its features
(`uivenus.tasks.catalog_docs`); the two are merged function by function. Stored as versioned JSON with sorted keys
and sorted lists, so two runs' catalogs diff line by line (`uivenus.tasks.catalog_diff` gives the same as records).
This module holds the records, their merging and the file format; the builders, the diff and the words they use
live beside it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any, Self

from uivenus.files import write_text
from uivenus.records import plain

__all__ = [
    "ENUM", "INT", "RECORD_PREFIX", "SCHEMA", "VALUE_CONDITIONS", "AppCatalog", "Catalog", "CatalogError", "Condition",
    "Constraint", "ConstraintKind", "Function", "FunctionCall", "Param", "Transition", "UIState", "plain_record",
]

SCHEMA = "uivenus.catalog/1"


class CatalogError(ValueError):
    """A catalog file or record is malformed, or names an unknown function; the message says which."""


# --- parameters ------------------------------------------------------------------------------------

ENUM, INT, RECORD_PREFIX = "enum", "int", "record:"


@dataclass(frozen=True)
class Param:
    """One parameter of a function and the values it may take.

    `domain` is a vocabulary name (`person_name`, `phone`, …), `enum` (one of `values`, read in an instruction
    as `labels[value]`), `int` (`low`..`high`) or `record:<state key>` (the label of a record the app holds).
    """

    name: str
    domain: str = "text"
    values: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    low: int | None = None
    high: int | None = None
    optional: bool = False

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise CatalogError(f"parameter name {self.name!r} must be snake_case")
        object.__setattr__(self, "values", tuple(self.values))
        object.__setattr__(self, "labels", MappingProxyType(dict(self.labels)))
        if self.domain == ENUM and not self.values:
            raise CatalogError(f"enum parameter {self.name!r} needs values")
        if self.domain == INT and (self.low is None or self.high is None or self.low > self.high):
            raise CatalogError(f"int parameter {self.name!r} needs low <= high, got {self.low}..{self.high}")

    @property
    def record_key(self) -> str | None:
        """The state key whose records this parameter names (None for other domains)."""
        return self.domain[len(RECORD_PREFIX):] if self.domain.startswith(RECORD_PREFIX) else None

    def label(self, value: Any) -> str:
        """How `value` reads in an instruction."""
        return self.labels.get(str(value), str(value))

    def merged(self, other: Param) -> Param:
        """This parameter with what `other` knows added: the more specific domain, all values, either optional."""
        domain = self.domain if _specificity(self.domain) >= _specificity(other.domain) else other.domain
        values = self.values + tuple(v for v in other.values if v not in self.values)
        return replace(self, domain=domain, values=values if domain == ENUM else (),
                       labels={**other.labels, **self.labels}, low=self.low if self.low is not None else other.low,
                       high=self.high if self.high is not None else other.high,
                       optional=self.optional or other.optional)


def _specificity(domain: str) -> int:
    return 0 if domain == "text" else 2 if domain in (ENUM, INT) or domain.startswith(RECORD_PREFIX) else 1


# --- records ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Function:
    """Something a user can achieve in an app, with its parameters and what it changes."""

    app: str
    name: str
    description: str = ""
    params: tuple[Param, ...] = ()
    effects: tuple[str, ...] = ()  # state keys it changes: "wifi", "notes[+]", "notes[].pinned"
    unsafe: tuple[str, ...] = ()  # the guard's categories it falls under (payment, deletion, sending, …)
    sources: tuple[str, ...] = ()  # "docs", "exploration"
    evidence: tuple[str, ...] = ()  # the doc line, or the gestures that did it while exploring

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise CatalogError(f"function name {self.name!r} must be snake_case")
        object.__setattr__(self, "params", tuple(self.params))
        for name in ("effects", "unsafe", "sources", "evidence"):
            object.__setattr__(self, name, tuple(sorted(set(getattr(self, name)))))
        names = [p.name for p in self.params]
        if len(names) != len(set(names)):
            raise CatalogError(f"{self.key} lists a parameter twice: {names}")

    @property
    def key(self) -> str:
        return f"{self.app}.{self.name}"

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def merged(self, other: Function) -> Function:
        params = list(self.params)
        for p in other.params:
            mine = self.param(p.name)
            if mine is None:
                params.append(p)
            else:
                params[params.index(mine)] = mine.merged(p)
        return replace(self, description=self.description or other.description, params=tuple(params),
                       effects=self.effects + other.effects, unsafe=self.unsafe + other.unsafe,
                       sources=self.sources + other.sources, evidence=self.evidence + other.evidence)


@dataclass(frozen=True)
class UIState:
    """A screen seen while exploring: the interactive elements it shows and how it was reached."""

    id: str  # hash of the route and the element kinds shown
    title: str = ""
    route: str = ""  # the URL hash, record ids generalised ("#note/*")
    depth: int = 0
    reached_by: tuple[str, ...] = ()  # the gestures from the app's start screen
    elements: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()  # elements shown disabled on arrival (e.g. Save before a form is filled)

    def __post_init__(self) -> None:
        for name in ("reached_by", "elements", "disabled"):
            object.__setattr__(self, name, tuple(getattr(self, name)))


@dataclass(frozen=True)
class Transition:
    """One gesture tried on a screen: where it led and which state keys it changed."""

    source: str
    gesture: str
    target: str
    effects: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "effects", tuple(self.effects))


class ConstraintKind(StrEnum):
    PRECONDITION = "precondition"  # what must hold before (or alongside) the function
    DISABLED = "disabled"  # a control stays disabled for these parameters
    INVALID_VALUE = "invalid_value"  # the app refuses this parameter's value


Condition = Callable[[Mapping[str, Any], Any], bool]


def _digits(value: Any) -> int:
    return len(re.sub(r"\D", "", str(value)))


#: What each condition op demands of a parameter value (True: the value is allowed).
VALUE_CONDITIONS: dict[str, Condition] = {
    "digits_between": lambda c, v: c["min"] <= _digits(v) <= c["max"],
    "matches": lambda c, v: re.fullmatch(c["pattern"], str(v)) is not None,
    "not_empty": lambda c, v: bool(str(v).strip()),
    "not_in": lambda c, v: v not in c["values"],
    "max_length": lambda c, v: len(str(v)) <= c["max"],
}


@dataclass(frozen=True)
class FunctionCall:
    """One use of a catalog function with concrete parameter values."""

    app: str
    function: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def key(self) -> str:
        return f"{self.app}.{self.function}"

    def to_dict(self) -> dict[str, Any]:
        return {"app": self.app, "function": self.function, "params": dict(self.params)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FunctionCall:
        return cls(app=data["app"], function=data["function"], params=data.get("params") or {})


@dataclass(frozen=True)
class Constraint:
    """What the app demands of a function's use, learned from a failure (or written down).

    `condition` is data: `{"op": "digits_between", "min": 7, "max": 15}` on `param`, or, with no param, a
    condition on the whole call: `{"op": "not_with", "function": "notes.delete_note"}` (never in the same
    task) or `{"op": "not_combination", "values": {...}}` (never these values together).
    """

    app: str
    function: str
    kind: ConstraintKind
    condition: Mapping[str, Any]
    reason: str
    param: str | None = None
    source: str = ""  # the task whose failure taught it

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ConstraintKind(self.kind))
        object.__setattr__(self, "condition", MappingProxyType(dict(self.condition)))
        op = self.condition.get("op")
        known = set(VALUE_CONDITIONS) if self.param else set(_CALL_CONDITIONS)
        if op not in known:
            raise CatalogError(f"constraint op {op!r} is unknown {'for a parameter' if self.param else 'for a call'}; "
                               f"known: {', '.join(sorted(known))}")

    @property
    def key(self) -> str:
        return f"{self.app}.{self.function}"

    @property
    def identity(self) -> str:
        """What makes two constraints the same (reason and source aside)."""
        return json.dumps([self.key, self.kind.value, self.param, plain(self.condition)], sort_keys=True)

    def allows(self, call: FunctionCall, calls: Sequence[FunctionCall] = ()) -> bool:
        """Whether `call` (one of `calls`, the whole task) keeps this constraint."""
        if call.key != self.key:
            return True
        if self.param is None:
            return _CALL_CONDITIONS[self.condition["op"]](self.condition, call, calls)
        if self.param not in call.params:
            return True
        return VALUE_CONDITIONS[self.condition["op"]](self.condition, call.params[self.param])

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}


_CALL_CONDITIONS: dict[str, Callable[[Mapping[str, Any], FunctionCall, Sequence[FunctionCall]], bool]] = {
    "not_with": lambda c, call, calls: all(other.key != c["function"] for other in calls if other is not call),
    "not_combination": lambda c, call, calls: any(call.params.get(k) != v for k, v in c["values"].items()),
}



# --- the catalog -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AppCatalog:
    """Everything known about one app."""

    app: str
    functions: Mapping[str, Function] = field(default_factory=dict)
    states: Mapping[str, UIState] = field(default_factory=dict)
    transitions: tuple[Transition, ...] = ()
    constraints: tuple[Constraint, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "functions", MappingProxyType(dict(sorted(self.functions.items()))))
        object.__setattr__(self, "states", MappingProxyType(dict(sorted(self.states.items()))))
        object.__setattr__(self, "transitions", tuple(sorted(set(self.transitions), key=_transition_key)))
        unique = {c.identity: c for c in reversed(self.constraints)}  # the first of equals wins
        object.__setattr__(self, "constraints", tuple(sorted(unique.values(), key=lambda c: c.identity)))

    def merged(self, other: AppCatalog) -> AppCatalog:
        functions = dict(self.functions)
        for name, fn in other.functions.items():
            functions[name] = functions[name].merged(fn) if name in functions else fn
        return AppCatalog(self.app, functions, {**other.states, **self.states},
                          self.transitions + other.transitions, self.constraints + other.constraints)

    def to_dict(self) -> dict[str, Any]:
        return {
            "functions": {name: plain_record(fn, skip=("app", "name")) for name, fn in self.functions.items()},
            "states": {sid: plain_record(s, skip=("id",)) for sid, s in self.states.items()},
            "transitions": [plain_record(t) for t in self.transitions],
            "constraints": [plain_record(c, skip=("app",)) for c in self.constraints],
        }

    @classmethod
    def from_dict(cls, app: str, data: Mapping[str, Any]) -> AppCatalog:
        functions = {name: Function(app=app, name=name,
                                    **{**fn, "params": tuple(Param(**p) for p in fn.get("params", ()))})
                     for name, fn in (data.get("functions") or {}).items()}
        states = {sid: UIState(id=sid, **s) for sid, s in (data.get("states") or {}).items()}
        transitions = tuple(Transition(**t) for t in data.get("transitions") or ())
        constraints = tuple(Constraint(app=app, **c) for c in data.get("constraints") or ())
        return cls(app, functions, states, transitions, constraints)


def _transition_key(t: Transition) -> tuple[str, str, str]:
    return (t.source, t.gesture, t.target)


class CatalogFile:
    """A catalog kept as one JSON file: `to_dict`/`from_dict` say what is in it, this says how it is written and
    read back (atomically; a file that is not JSON is a `CatalogError` naming it)."""

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        raise NotImplementedError

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def save(self, path: Path | str) -> None:
        """Write atomically (a reader never sees half a catalog)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, self.dumps())

    @classmethod
    def load(cls, path: Path | str) -> Self:
        try:
            return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
        except json.JSONDecodeError as exc:
            raise CatalogError(f"{path} is not JSON: {exc}") from None


class Catalog(CatalogFile):
    """The apps' catalogs under one version number, which every change increments."""

    def __init__(self, apps: Mapping[str, AppCatalog] | None = None, version: int = 1) -> None:
        self.apps: dict[str, AppCatalog] = dict(sorted((apps or {}).items()))
        self.version = version

    # -- reading -------------------------------------------------------------------------------------

    def functions(self) -> list[Function]:
        return [fn for app in self.apps.values() for fn in app.functions.values()]

    def function(self, key: str) -> Function:
        """The function `app.name`; `CatalogError` listing what exists when there is none."""
        app, _, name = key.partition(".")
        fn = self.apps.get(app, AppCatalog(app)).functions.get(name)
        if fn is None:
            known = ", ".join(f.key for f in self.functions()) or "none"
            raise CatalogError(f"the catalog has no function {key!r}; it has {known}")
        return fn

    def has(self, key: str) -> bool:
        app, _, name = key.partition(".")
        return app in self.apps and name in self.apps[app].functions

    def constraints(self, key: str | None = None) -> list[Constraint]:
        every = [c for app in self.apps.values() for c in app.constraints]
        return every if key is None else [c for c in every if c.key == key]

    def violations(self, calls: Sequence[FunctionCall]) -> list[Constraint]:
        """The known constraints that `calls` (one task) break."""
        return [c for call in calls for c in self.constraints(call.key) if not c.allows(call, calls)]

    # -- changing (each change that changes something bumps the version) ------------------------------

    def merge(self, other: Catalog) -> bool:
        """Add everything `other` knows; True when this catalog changed (its version then went up by one)."""
        merged = dict(self.apps)
        for app, cat in other.apps.items():
            merged[app] = merged[app].merged(cat) if app in merged else cat
        if merged == self.apps:
            return False
        self.apps = dict(sorted(merged.items()))
        self.version += 1
        return True

    def add_function(self, fn: Function) -> bool:
        return self.merge(Catalog({fn.app: AppCatalog(fn.app, {fn.name: fn})}))

    def add_constraint(self, constraint: Constraint) -> bool:
        """Record a constraint of a known function; False when an equal one is already there."""
        self.function(constraint.key)
        return self.merge(Catalog({constraint.app: AppCatalog(constraint.app, constraints=(constraint,))}))

    # -- files ----------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "version": self.version, "apps": {a: c.to_dict() for a, c in self.apps.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Catalog:
        if data.get("schema") != SCHEMA:
            raise CatalogError(f"not a {SCHEMA} catalog (schema {data.get('schema')!r}); write it with Catalog.save")
        try:
            return cls({app: AppCatalog.from_dict(app, d) for app, d in data["apps"].items()}, int(data["version"]))
        except (KeyError, TypeError) as exc:
            raise CatalogError(f"malformed catalog: {exc}") from None



def _empty(value: Any) -> bool:
    return value is None or value is False or (isinstance(value, (str, tuple, list, Mapping)) and not value)


def plain_record(record: Any, skip: Iterable[str] = ()) -> dict[str, Any]:
    """A record's fields as JSON data, leaving out `skip` and empty defaults (smaller, steadier diffs)."""
    out = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if f.name in skip:
            continue
        if f.name == "params":
            out[f.name] = [plain_record(p) for p in value]
        elif not _empty(value):
            out[f.name] = plain(value)
    return out

