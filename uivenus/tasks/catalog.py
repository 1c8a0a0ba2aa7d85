"""The capability catalog: per app, what a user can achieve (functions with parameter domains), the UI states
seen while exploring it, and the constraints learned when tasks failed.

Built by exploring an app (`uivenus.tasks.explore`) and from a written description of its features
(`catalog_from_docs`); the two are merged function by function. Stored as versioned JSON with sorted keys
and sorted lists, so two runs' catalogs diff line by line (`diff_catalogs` gives the same as records).

Naming rules shared by both builders keep their functions apart from each other's by name only when they
really differ: `set_toggle` for a family of switches, `set_<key>` for one setting, `<verb>_<noun>` for what
happens to a record (`create_note`, `delete_contact`, `send_message`), `reset_<app>` for a reset.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from uivenus.files import write_text
from uivenus.records import plain

SCHEMA = "uivenus.catalog/1"
DOCS_DIR = Path(__file__).parent / "docs"


class CatalogError(ValueError):
    """A catalog file or record is malformed, or names an unknown function; the message says which."""


# --- parameter domains ---------------------------------------------------------------------------

#: Values a sampler draws for each text domain, and that exploration types into fields of that domain
#: (the first value). Some are plausible but invalid for some apps (phone numbers with too few digits):
#: learning that is what constraints are for.
VOCABULARIES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "person_name": ("Sam Lee", "Ana Lima", "Priya Nair", "Jonas Berg", "Mei Chen", "Omar Haddad", "Lucia Romano",
                    "Kofi Mensah"),
    "phone": ("555-0142", "+1 (555) 014-7788", "555-01", "020 7946 0321", "12-34", "555-0199", "(555) 273-9917",
              "+1 555 0100 2233 4455 66"),
    "email": ("sam.lee@example.com", "ana.lima@example.org", "priya@example.net", "jonas.berg@example.de",
              "mei.chen@example.com"),
    "title": ("Packing list", "Weekend plans", "Birthday ideas", "Meeting notes", "Reading list", "Garden jobs"),
    "text": ("passport, charger, sunscreen", "Call the plumber on Monday", "Buy flour and yeast",
             "Ask about the budget review", "Water the basil every day"),
    "subject": ("Lunch", "Project update", "Weekend plans", "Quick question", "Train tickets"),
    "device_name": ("Kitchen Tablet", "Living Room Phone", "Travel Phone", "Studio Tablet"),
    "address": ("12 Harbor St, Lisbon", "9 Elm Road, Porto", "4 Mill Lane, Leeds"),
    "card_number": ("4242 4242 4242 4242", "5555 5555 5555 4444"),
    "expiry": ("12/28", "09/27"),
    "cvc": ("123", "321"),
})

#: The text domain of a parameter (or form field) by its name.
FIELD_DOMAINS: Mapping[str, str] = MappingProxyType({
    "name": "person_name", "full_name": "person_name", "phone": "phone", "email": "email", "to": "email",
    "title": "title", "body": "text", "text": "text", "subject": "subject", "device_name": "device_name",
    "address": "address", "card_number": "card_number", "expiry": "expiry", "cvc": "cvc",
})

#: Input types that say what a field holds when its name does not.
INPUT_TYPE_DOMAINS: Mapping[str, str] = MappingProxyType({"tel": "phone", "email": "email"})

ENUM, INT, RECORD_PREFIX = "enum", "int", "record:"


def field_domain(name: str, input_type: str | None = None) -> str:
    """The vocabulary domain of a field called `name` (falls back on its input type, then plain text)."""
    return FIELD_DOMAINS.get(name) or INPUT_TYPE_DOMAINS.get(input_type or "") or "text"


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
            "functions": {name: _plain_record(fn, skip=("app", "name")) for name, fn in self.functions.items()},
            "states": {sid: _plain_record(s, skip=("id",)) for sid, s in self.states.items()},
            "transitions": [_plain_record(t) for t in self.transitions],
            "constraints": [_plain_record(c, skip=("app",)) for c in self.constraints],
        }

    @classmethod
    def from_dict(cls, app: str, data: Mapping[str, Any]) -> AppCatalog:
        functions = {name: Function(app=app, name=name, **{**fn, "params": tuple(Param(**p) for p in fn.get("params", ()))})
                     for name, fn in (data.get("functions") or {}).items()}
        states = {sid: UIState(id=sid, **s) for sid, s in (data.get("states") or {}).items()}
        transitions = tuple(Transition(**t) for t in data.get("transitions") or ())
        constraints = tuple(Constraint(app=app, **c) for c in data.get("constraints") or ())
        return cls(app, functions, states, transitions, constraints)


def _transition_key(t: Transition) -> tuple[str, str, str]:
    return (t.source, t.gesture, t.target)


class Catalog:
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
            raise CatalogError(f"the catalog has no function {key!r}; it has {', '.join(f.key for f in self.functions()) or 'none'}")
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

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def save(self, path: Path | str) -> None:
        """Write atomically (a reader never sees half a catalog)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, self.dumps())

    @classmethod
    def load(cls, path: Path | str) -> Catalog:
        try:
            return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
        except json.JSONDecodeError as exc:
            raise CatalogError(f"{path} is not JSON: {exc}") from None


def _empty(value: Any) -> bool:
    return value is None or value is False or (isinstance(value, (str, tuple, list, Mapping)) and not value)


def _plain_record(record: Any, skip: Iterable[str] = ()) -> dict[str, Any]:
    """A record's fields as JSON data, leaving out `skip` and empty defaults (smaller, steadier diffs)."""
    out = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if f.name in skip:
            continue
        if f.name == "params":
            out[f.name] = [_plain_record(p) for p in value]
        elif not _empty(value):
            out[f.name] = plain(value)
    return out


# --- diffs ---------------------------------------------------------------------------------------

class Change(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


@dataclass(frozen=True)
class DiffEntry:
    app: str
    section: str  # functions, states, transitions, constraints
    key: str
    change: Change

    def __str__(self) -> str:
        mark = {Change.ADDED: "+", Change.REMOVED: "-", Change.CHANGED: "~"}[self.change]
        return f"{mark} {self.app} {self.section[:-1]} {self.key}"


@dataclass(frozen=True)
class CatalogDiff:
    """What changed from one catalog to another, entry by entry."""

    before_version: int
    after_version: int
    entries: tuple[DiffEntry, ...]

    def __bool__(self) -> bool:
        return bool(self.entries)

    def __str__(self) -> str:
        head = f"catalog v{self.before_version} -> v{self.after_version}: {len(self.entries)} change(s)"
        return "\n".join([head, *map(str, self.entries)])


def _sections(cat: AppCatalog) -> dict[str, dict[str, Any]]:
    return {
        "functions": {k: _plain_record(v) for k, v in cat.functions.items()},
        "states": {k: _plain_record(v) for k, v in cat.states.items()},
        "transitions": {f"{t.source} {t.gesture}": _plain_record(t) for t in cat.transitions},
        "constraints": {c.identity: _plain_record(c) for c in cat.constraints},
    }


def diff_catalogs(before: Catalog, after: Catalog) -> CatalogDiff:
    """Functions, states, transitions and constraints added, removed or changed between two catalogs."""
    entries = []
    for app in sorted(set(before.apps) | set(after.apps)):
        old, new = _sections(before.apps.get(app, AppCatalog(app))), _sections(after.apps.get(app, AppCatalog(app)))
        for section in old:
            a, b = old[section], new[section]
            for key in sorted(set(a) | set(b)):
                change = Change.ADDED if key not in a else Change.REMOVED if key not in b else Change.CHANGED
                if change is not Change.CHANGED or a[key] != b[key]:
                    label = key if section != "constraints" else _constraint_label(a.get(key) or b[key])
                    entries.append(DiffEntry(app, section, label, change))
    return CatalogDiff(before.version, after.version, tuple(entries))


def _constraint_label(c: Mapping[str, Any]) -> str:
    on = f".{c['param']}" if c.get("param") else ""
    return f"{c['function']}{on} {c['kind']} {json.dumps(c['condition'], sort_keys=True)}"


# --- safety categories -----------------------------------------------------------------------------

def unsafe_categories(texts: Iterable[str], where: Sequence[str] = ("target",)) -> dict[str, str]:
    """The safety guard's categories that fire on any of `texts` (category -> the words that matched).

    `where` names which of the guard's rule groups read the texts: `target` (what a button does), `field`
    (what a field holds: passwords, card numbers) or `content` (what is typed).
    """
    from uivenus.agent.safety import RULES, Where

    wanted = {Where(w) for w in where}
    found: dict[str, str] = {}
    for text in texts:
        for rule in RULES:
            if rule.where in wanted and rule.category.value not in found and (evidence := rule.match(text)):
                found[rule.category.value] = evidence
    return found


# --- function names ---------------------------------------------------------------------------------

#: Words (in docs sentences and element names) that say what happens to a record, by the verb a function
#: name uses. "save" only says something was stored: the name falls back on it when nothing better is found.
VERBS: Mapping[str, str] = MappingProxyType({
    "new": "create", "create": "create", "write": "create", "add": "add", "compose": "send", "send": "send",
    "reply": "reply", "forward": "forward", "delete": "delete", "remove": "delete", "erase": "delete",
    "pin": "pin", "favorite": "favorite", "favourite": "favorite", "star": "favorite", "edit": "edit",
    "rename": "edit", "update": "edit", "archive": "archive", "read": "read", "open": "read", "reset": "reset",
    "clear": "clear",
})
GENERIC_VERBS: Mapping[str, str] = MappingProxyType({"save": "edit", "submit": "edit", "done": "edit"})
#: Element words that end a train of thought: a verb before one of these did not lead to what followed.
BOUNDARY_WORDS = frozenset({"cancel", "back", "discard", "close"})


def singular(noun: str) -> str:
    """contacts -> contact, messages -> message, boxes -> box (enough for app state keys)."""
    if noun.endswith("ies"):
        return noun[:-3] + "y"
    if noun.endswith(("ses", "xes")):
        return noun[:-2]
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


def plural(noun: str) -> str:
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "es" if noun.endswith(("s", "x")) else noun + "s"


def slug(text: str) -> str:
    """'Wi-Fi' -> 'wifi', 'dark mode' -> 'dark_mode', 'toggle-dark-mode' -> 'toggle_dark_mode'."""
    text = re.sub(r"\b(\w{1,2})-(\w)", r"\1\2", text.strip().lower())  # wi-fi, e-mail
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


# --- from documentation -------------------------------------------------------------------------------

#: Phrases naming a parameter in a docs sentence ("with a name, a phone number and an optional email"),
#: checked in order: (pattern, parameter name).
PARAM_PHRASES: tuple[tuple[str, str], ...] = (
    (r"recipient(?: address)?", "to"), (r"(?:full )?name", "name"), (r"phone(?: number)?", "phone"),
    (r"e-?mail(?: address)?", "email"), (r"title", "title"), (r"body|text", "body"), (r"subject", "subject"),
    (r"(?:postal |shipping )?address", "address"), (r"card number", "card_number"),
    (r"expiry(?: date)?", "expiry"), (r"security code|cvc", "cvc"),
)
#: Verbs whose object is a record the app already holds: the function gets a parameter naming it.
RECORD_VERBS = frozenset({"edit", "pin", "delete", "favorite", "archive", "read", "reply", "forward"})
_ITEM = re.compile(r"^(?P<label>.+?)\s*\(`(?P<id>[^`]+)`\)$|^`(?P<bare>[^`]+)`$")
_INT_RANGE = re.compile(r"(?:an? )?(?P<name>[\w ]+?) from (?P<low>-?\d+) to (?P<high>-?\d+)")
_ENUM_PARAM = re.compile(r"(?:an? )?(?P<name>[\w ]+?) \((?P<items>[^)]*`[^)]*)\)")


def _items(text: str) -> tuple[list[str], dict[str, str]]:
    """'Wi-Fi (`wifi`), Bluetooth (`bluetooth`) or `x`' -> (["wifi", "bluetooth", "x"], labels)."""
    values, labels = [], {}
    for part in re.split(r",\s*|\s+or\s+|\s+and\s+", text.strip().rstrip(".")):
        part = part.strip()
        if not part:
            continue
        m = _ITEM.match(part)
        value = (m.group("id") or m.group("bare")) if m else slug(part)
        values.append(value)
        labels[value] = m.group("label") if m and m.group("label") else part.strip("`")
    return values, labels


def _param_from_phrase(phrase: str) -> Param | None:
    phrase = re.sub(r"^(?:an?|the|its|their)\s+", "", phrase.strip().rstrip(".")).strip()
    optional = phrase.startswith("optional ")
    phrase = re.sub(r"^(?:optional|new)\s+", "", phrase)
    if m := _INT_RANGE.fullmatch(phrase):
        return Param(slug(m.group("name")), INT, low=int(m.group("low")), high=int(m.group("high")), optional=optional)
    if m := _ENUM_PARAM.fullmatch(phrase):
        values, labels = _items(m.group("items"))
        return Param(slug(m.group("name")), ENUM, values=tuple(values), labels=labels, optional=optional)
    for pattern, name in PARAM_PHRASES:
        if re.fullmatch(pattern, phrase):
            return Param(name, field_domain(name), optional=optional)
    return Param(slug(phrase), field_domain(slug(phrase)), optional=optional) if phrase else None


def _split_list(text: str) -> list[str]:
    """'a, b and c (x or y)' -> ['a', 'b', 'c (x or y)']: commas and 'and' outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char == ",":
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    out = []
    for part in parts:
        out.extend(re.split(r"\s+and\s+(?![^(]*\))", part.strip().removeprefix("and ")))
    return [p for p in out if p.strip()]


def _params(text: str | None) -> tuple[Param, ...]:
    if not text:
        return ()
    return tuple(p for p in (_param_from_phrase(part) for part in _split_list(text)) if p is not None)


def _toggle_rule(m: re.Match[str], app: str) -> Function:
    values, labels = _items(m.group("items"))
    return Function(app, "set_toggle", params=(Param("which", ENUM, tuple(values), labels),
                                              Param("value", ENUM, ("on", "off"))))


def _range_rule(m: re.Match[str], app: str) -> Function:
    key = slug(m.group("key").split()[-1])
    return Function(app, f"set_{key}", params=(Param(key, INT, low=int(m.group("low")), high=int(m.group("high"))),))


def _choice_rule(m: re.Match[str], app: str) -> Function:
    key = slug(m.group("key").split()[-1])
    values, labels = _items(m.group("items"))
    return Function(app, f"set_{key}", params=(Param(key, ENUM, tuple(values), labels),))


def _set_text_rule(m: re.Match[str], app: str) -> Function:
    key = slug(m.group("key"))
    return Function(app, f"set_{key}", params=(Param(key, field_domain(key)),))


def _named_rule(m: re.Match[str], app: str) -> Function:
    return Function(app, m.group("name"), params=_params(m.group("rest").partition(" with ")[2]))


def _verb_rule(m: re.Match[str], app: str) -> Function | None:
    verb = VERBS.get(m.group("verb").lower())
    if verb is None:
        return None
    noun = singular(slug(m.group("noun")))
    own = slug(m.group("noun")) == app  # "reset all settings" acts on the app itself
    name = f"{verb}_to_{slug(m.group('dest'))}" if m.group("dest") else f"{verb}_{app if own else noun}"
    params = _params(m.group("params"))
    if (verb in RECORD_VERBS or m.group("dest")) and not own:  # "add a product to the cart" names a product
        params = (Param(noun, RECORD_PREFIX + plural(noun)),) + params
    return Function(app, name, params=params)


_VERB_SENTENCE = re.compile(
    r"(?P<verb>\w+) (?:a|an|the|all|one|every) (?P<noun>[\w-]+)(?: to the (?P<dest>\w+))?"
    r"(?: to their defaults| as an? \w+| from the \w+)?(?: with (?P<params>.+?))?\.?$", re.IGNORECASE)

#: The sentence patterns a docs bullet may follow, tried in order; each builds one function.
DOC_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], str], Function | None]], ...] = (
    (re.compile(r"`(?P<name>[a-z][a-z0-9_]*)`:\s*(?P<rest>.+)$"), _named_rule),
    (re.compile(r"turn (?:a )?(?:switch|setting) on or off:\s*(?P<items>.+)$", re.IGNORECASE), _toggle_rule),
    (re.compile(r"set the (?P<key>[\w ]+?) to a value from (?P<low>-?\d+) to (?P<high>-?\d+)\.?$", re.IGNORECASE), _range_rule),
    (re.compile(r"(?:change|set) the (?P<key>[\w ]+?) to one of:\s*(?P<items>.+)$", re.IGNORECASE), _choice_rule),
    (re.compile(r"set the (?P<key>[\w ]+?) to an? (?:new )?(?:name|text|value)\.?$", re.IGNORECASE), _set_text_rule),
    (_VERB_SENTENCE, _verb_rule),
)


def catalog_from_docs(text: str, app: str | None = None) -> Catalog:
    """Functions from a written description of an app's features.

    Markdown: a `# app` heading opens an app (or pass `app`); each bullet is one feature written in one of the
    `DOC_RULES` patterns, e.g. "Add a contact with a name, a phone number and an optional email address."
    Enumerations name their values as `Label (`id`)`. A bullet no rule understands is an error that quotes it.
    """
    found: dict[str, dict[str, Function]] = {}
    current = app
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("# "):
            current = slug(line[2:])
            continue
        if not line.startswith(("- ", "* ")):
            continue
        sentence = line[2:].strip()
        if current is None:
            raise CatalogError(f"docs bullet {sentence!r} comes before any '# app' heading (or pass app=)")
        fn = next((built for pattern, rule in DOC_RULES if (m := pattern.match(sentence))
                   and (built := rule(m, current)) is not None), None)
        if fn is None:
            raise CatalogError(f"no docs rule understands {sentence!r}; write it like 'Create a note with a title "
                               "and a body.' or name it: '`function_name`: what it does with a …'")
        params_text = [p.name.replace("_", " ") for p in fn.params]
        unsafe = {**unsafe_categories([sentence]), **unsafe_categories(params_text, ("field",))}
        fn = replace(fn, description=sentence, unsafe=tuple(unsafe), sources=("docs",), evidence=(f"docs: {sentence}",))
        same_app = found.setdefault(current, {})
        same_app[fn.name] = same_app[fn.name].merged(fn) if fn.name in same_app else fn
    return Catalog({name: AppCatalog(name, fns) for name, fns in found.items()})


def bundled_docs(app: str) -> str:
    """The feature description shipped for a sandbox app (`uivenus/tasks/docs/<app>.md`)."""
    path = DOCS_DIR / f"{app}.md"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in DOCS_DIR.glob("*.md")))
        raise CatalogError(f"no bundled docs for {app!r}; apps with docs: {known}")
    return path.read_text(encoding="utf-8")
