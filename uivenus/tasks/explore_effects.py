"""What an exploration gesture did, and the catalog function it reveals.

`state_changes` compares the app state (`window.uivenus.state()`) before and after a gesture: top-level keys set,
records added, removed or updated. `infer_function` names one `Function` from one such change by the rules of
naming.py: the kind of change, the gesture, and the verb-bearing elements tapped since the previous change
("new-note", then "save-note" -> `create_note`); its parameters come from the values typed into fields. Apart from
the walk (explore.py) because inferring what an app can do from what was seen is one job and seeing it another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from uivenus.tasks.catalog import ENUM, INT, RECORD_PREFIX, Function, Param
from uivenus.tasks.explore_page import Element, Gesture
from uivenus.tasks.naming import BOUNDARY_WORDS, GENERIC_VERBS, VERBS, singular, slug
from uivenus.tasks.unsafe import unsafe_categories
from uivenus.tasks.vocabularies import field_domain

__all__ = ["Change", "Effect", "infer_function", "since_boundary", "state_changes"]


@dataclass(frozen=True)
class Change:
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
class Effect:
    gesture: Gesture
    chain: tuple[Gesture, ...]  # the gestures that led to the change (since the last one, or a cancel)
    changes: tuple[Change, ...]
    typed: Mapping[str, Element]  # the values typed into fields since the app was reset -> their fields


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(r, Mapping) and "id" in r for r in value)


def state_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    """What differs between two app states: top-level keys set, records added, removed or updated."""
    out: list[Change] = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if _is_records(old) and _is_records(new):
            olds, news = {r["id"]: r for r in old}, {r["id"]: r for r in new}
            out += [Change("add", key, record=news[i]) for i in news if i not in olds]
            out += [Change("remove", key, record=olds[i]) for i in olds if i not in news]
            out += [Change("update", key, f, record=news[i], value=news[i].get(f))
                    for i in news if i in olds for f in sorted(set(olds[i]) | set(news[i]))
                    if olds[i].get(f) != news[i].get(f)]
        else:
            out.append(Change("set", key, value=new))
    return out


# --- naming what was seen ------------------------------------------------------------------------------

#: Which verbs can name which kind of change (a "pin" tapped before a note was created did not create it).
_VERBS_FOR: Mapping[str, frozenset[str]] = {
    "add": frozenset({"create", "add", "send", "reply", "forward"}),
    "remove": frozenset({"delete", "clear"}),
    "update": frozenset({"edit", "pin", "favorite", "archive", "read", "delete"}),
    "set": frozenset({"reset", "clear"}),
}
_DEFAULT_VERBS: Mapping[str, str] = {"add": "add", "remove": "delete", "update": "edit"}


def since_boundary(chain: Sequence[Gesture]) -> tuple[Gesture, ...]:
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


def infer_function(app: str, effect: Effect) -> Function:
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


def _record_function(app: str, effect: Effect, changes: list[Change]) -> Function:
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


def _setting_function(app: str, effect: Effect, changes: list[Change]) -> Function:
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
