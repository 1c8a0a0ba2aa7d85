"""Task synthesis for real apps: tasks from the explorer's catalog (`tasks.app_catalog`), each an OSWorld-format task.

A task is a `SynthTask` whose spec is the OSWorld TaskSpec (`tasks.osworld.OSWorldTask.to_taskspec`): its config
launches the app, its evaluator is the functions' checks (`tasks.real_checks`), and our extension field
`"uivenus": {"reference": [...]}` holds the reference solution — the explorer's route to each function and the
gestures that use it, with the task's values, as action calls placed at the elements' recorded bounds. The OSWorld
runner runs it unchanged; the validity gate (`tasks.real_gate`) replays that reference from a fresh root.

Three kinds: one function (SINGLE); two functions of one app, the second acting on an element the first leaves
in place (or the first returning to the start screen) (MULTI); a function of one app that writes a file, then, after
closing it, one of another app (LONG_HORIZON). Values come from the parameters' domains (never one a learned constraint
forbids); phrasings from per-widget templates joined by `tasks.phrasing`. `RealLLMSynthesizer` asks a model instead,
showing it the catalog and the apps' own documentation (`/usr/share/doc`, `--help`, man pages).
"""

from __future__ import annotations

import gzip
import json
import random
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from uivenus.actions.calls import format_action
from uivenus.actions.space import Action, Click, Hotkey, LaunchApp, Type, Wait
from uivenus.agent.policies.base import Policy
from uivenus.files import write_json
from uivenus.records import plain
from uivenus.tasks.app_catalog import (
    SAVE, AppExploration, AppFunction, Gesture, GestureKind, RealCatalog, WidgetKind, document_steps,
)
from uivenus.tasks.catalog import ENUM, INT, AppCatalog, Catalog, Function, FunctionCall
from uivenus.tasks.llm_synthesis import ProposalSynthesizer
from uivenus.tasks.osworld import OSWorldTask
from uivenus.tasks.phrasing import compose, sentence
from uivenus.tasks.real_checks import TOGGLE_VALUES, Check, evaluator, function_check, param_gestures
from uivenus.tasks.real_domains import typed_param, value_problem
from uivenus.tasks.spec import SynthTask, TaskKind, normalize_text, task_digest
from uivenus.tasks.synthesis import Dropped, ParamSampler, Synthesis

__all__ = [
    "KIND_PHRASES", "SAVED_PHRASES", "RealLLMSynthesizer", "RealSynthesizer", "Unplaceable", "app_docs",
    "constraint_catalog", "osworld_json", "phrasing_problems", "real_task", "reference_actions", "write_osworld_tasks",
]

#: Seconds the reference waits for an app's window before acting, after each gesture of a route (a new screen
#: opens), after typing into a field, and after its last gesture.
SETTLE_S, ROUTE_S, TYPED_S, AFTER_S = 3, 3, 1, 1


class Unplaceable(ValueError):
    """A gesture's element has no recorded bounds in the catalog, so no reference action can be placed."""


# --- the catalog the gate reads ----------------------------------------------------------------------------

def _typed_params(exploration: AppExploration, fn: AppFunction) -> tuple[Any, ...]:
    """The function's parameters with their domains typed by role and name (`tasks.real_domains`): a catalog
    explored before domains were typed says only "text" or "number"."""
    state = exploration.states.get(fn.state)
    where = state.title if state is not None else ""
    widget = fn.widget if len(fn.params) == 1 else None  # a form's fields are known by their names only
    return tuple(typed_param(p, widget, where) for p in fn.params)


def constraint_catalog(real: RealCatalog, known: Catalog | None = None) -> Catalog:
    """The explored functions as a (sandbox-style) `Catalog` with typed parameters, which holds the constraints
    the gate learns; the constraints of `known` (an earlier run's) are kept."""
    apps = {}
    for name, exploration in real.apps.items():
        functions = {fn.name: Function(name, fn.name, fn.description or fn.widget.label(),
                                       _typed_params(exploration, fn), sources=("exploration",),
                                       evidence=tuple(str(g) for g in fn.gestures))
                     for fn in exploration.functions.values()}
        kept = tuple(known.apps[name].constraints) if known is not None and name in known.apps else ()
        apps[name] = AppCatalog(name, functions, constraints=tuple(c for c in kept if c.function in functions))
    return Catalog(apps)


# --- the reference solution ------------------------------------------------------------------------------------

def _state_elements(exploration: AppExploration, route: Sequence[Gesture], fallback: str | None) -> list:
    """The elements shown where a gesture is made: the state reached by exactly `route`, else `fallback`'s."""
    for state in exploration.states.values():
        if tuple(state.route) == tuple(route):
            return list(state.elements)
    return list(exploration.states[fallback].elements) if fallback in exploration.states else []


def _gesture_actions(gesture: Gesture, elements: Sequence[Any], everywhere: Sequence[Any]) -> list[Action]:
    """The actions that make one gesture, at its element's recorded centre."""
    if gesture.kind is GestureKind.KEY:
        return [Hotkey(keys=tuple(k.strip().lower() for k in gesture.text.split("+") if k.strip()))]
    if gesture.kind is GestureKind.LAUNCH:
        return []  # the task's config launches the app
    point = None
    if gesture.target is not None:
        element = gesture.target.find(elements) or gesture.target.find(everywhere)
        point = element.center if element is not None else None
        if point is None:
            raise Unplaceable(f"{gesture.target} has no recorded bounds in the catalog")
    at = [Click(point=point)] if point is not None else []
    if gesture.kind is GestureKind.CLICK:
        return at
    if gesture.kind is GestureKind.TYPE:
        # a field may react to typing (completion pop-ups, validation): let it settle before the next gesture
        return [*at, *([Hotkey(keys=("ctrl", "a"))] if at else []), Type(content=gesture.text), Wait(seconds=TYPED_S)]
    return [*at, Type(content=gesture.text + "\n")]  # SELECT: a list or combo takes its option's typed name


def reference_actions(exploration: AppExploration, fn: AppFunction, params: Mapping[str, Any]) -> list[Action]:
    """The route from the app's start to `fn`'s state, then its gestures with the task's values."""
    everywhere = [e for s in exploration.states.values() for e in s.elements] + [fn.widget]
    actions: list[Action] = []
    for i, gesture in enumerate(fn.route):
        actions += _gesture_actions(gesture, _state_elements(exploration, fn.route[:i], exploration.start), everywhere)
        actions.append(Wait(seconds=ROUTE_S))  # each route gesture opens a screen (a menu, a dialog): let it draw
    carried = param_gestures(fn)
    here = _state_elements(exploration, fn.route, fn.state)
    for i, gesture in enumerate(fn.gestures):
        if i in carried and carried[i] in params:
            gesture = Gesture(gesture.kind, gesture.target, str(params[carried[i]]))
        actions += _gesture_actions(gesture, here, everywhere)
    return actions


# --- phrasing --------------------------------------------------------------------------------------------------

#: Clauses asking for one use of a function, by its widget's kind ({label}: the widget, quoted when it has a
#: name, {where}: its screen, {app}, {value}: the parameter's label, {fields}: a form's values).
KIND_PHRASES: Mapping[WidgetKind, tuple[str, ...]] = MappingProxyType({
    WidgetKind.TOGGLE: ('turn {value} {label} in {app}', 'switch the {label} option {value}',
                        'in {app}, set {label} {value}'),
    WidgetKind.TEXT: ('set {label} to "{value}" in {app}', 'type "{value}" into {label} ({where})',
                      'in {app}, enter "{value}" in {label}'),
    WidgetKind.NUMBER: ('set {label} to {value} in {app}', 'change {label} to {value}',
                        'in {app}, make {label} {value}'),
    WidgetKind.CHOICE: ('choose "{value}" for {label} in {app}', 'set {label} to "{value}"',
                        'in {app}, pick "{value}" in {label}'),
    WidgetKind.FORM: ('in {app}, use "{where}" with {fields}', 'open "{where}" in {app} and enter {fields}',
                      'fill in "{where}" in {app}: {fields}'),
    WidgetKind.BUTTON: ('press {label} in {app}', 'in {app}, click the {label} button', 'use {label} in {app}'),
    WidgetKind.MENU_ITEM: ('choose {label} from the menu in {app}', 'run the {label} command in {app}',
                           'in {app}, use the menu item {label}'),
    WidgetKind.TAB: ('open the {label} tab in {app}', 'switch to the {label} tab of {app}',
                     'in {app}, go to {label}'),
    WidgetKind.LINK: ('follow the {label} link in {app}', 'open {label} in {app}', 'in {app}, go to {label}'),
})
#: Clauses asking to replace an opened document's text and save it ({document}: its file name, {program}: the editor).
SAVED_PHRASES = ('in {program}, replace the text of {document} with "{value}" and save it',
                 'make "{value}" the whole text of {document} in {program}, then save the file',
                 'edit {document} in {program} so that it reads "{value}", and save it')
#: Kinds whose unnamed widget can still be said (by its role: "the text field"); an unnamed button cannot.
_SAID_BY_ROLE = frozenset({WidgetKind.TEXT, WidgetKind.NUMBER, WidgetKind.CHOICE, WidgetKind.FORM})


def _widget_words(fn: AppFunction) -> str:
    """How an instruction names the widget: its name quoted, else (a field) its role, never a typed value."""
    if fn.widget.name.strip():
        return f'"{fn.widget.name}"'
    return f"the {fn.widget.role} field" if fn.kind in _SAID_BY_ROLE else ""


def _clauses(exploration: AppExploration, fn: AppFunction, call: FunctionCall) -> list[str]:
    state = exploration.states.get(fn.state)
    values = {k: (fn.params[[p.name for p in fn.params].index(k)].label(v) if k in {p.name for p in fn.params}
                  else str(v)) for k, v in call.params.items()}
    if fn.kind is WidgetKind.TOGGLE:  # "turn on", whatever the catalog calls the values
        values = {k: {True: "on", False: "off"}.get(TOGGLE_VALUES.get(str(v).lower()), v) for k, v in values.items()}
    label = _widget_words(fn)
    words = {"label": label, "where": (state.title if state and state.title else label.strip('"')),
             "app": exploration.app, "value": next(iter(values.values()), ""),
             "fields": ", ".join(f'{k.replace("_", " ")} "{v}"' for k, v in values.items())}
    templates = KIND_PHRASES[fn.kind]
    if SAVE in fn.gestures and exploration.documents:
        words |= {"program": _program(exploration), "document": PurePosixPath(exploration.documents[0][0]).name}
        templates = SAVED_PHRASES
    elif fn.kind is WidgetKind.FORM or len(values) > 1:
        templates = KIND_PHRASES[WidgetKind.FORM]
    return [t.format(**words) for t in templates]


# --- building tasks -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Use:
    """One function used with values: where it is, its call, its check and its reference actions."""

    exploration: AppExploration
    fn: AppFunction
    call: FunctionCall
    check: Check
    actions: tuple[Action, ...]


def _use(exploration: AppExploration, fn: AppFunction, params: Mapping[str, Any]) -> _Use | Dropped:
    key = f"{exploration.app}.{fn.name}"
    check = function_check(fn, params)
    if check is None:
        return Dropped(f"{key}: its use changed nothing a checker can read (no file written, no value shown)",
                       {"function": key})
    try:
        actions = reference_actions(exploration, fn, params)
    except Unplaceable as exc:
        return Dropped(f"{key}: {exc}", {"function": key})
    return _Use(exploration, fn, FunctionCall(exploration.app, fn.name, params), check, tuple(actions))


def _config(exploration: AppExploration) -> list[dict[str, Any]]:
    if exploration.platform == "web":
        return [{"type": "launch", "parameters": {"command": ["chromium", *exploration.launch]}}]
    launch = {"type": "launch", "parameters": {"command": list(exploration.launch)}}
    return [*document_steps(exploration.documents), launch]


def _program(exploration: AppExploration) -> str:
    return "chromium" if exploration.platform == "web" else Path(exploration.launch[0]).name


def real_task(uses: Sequence[_Use], phrasings: Sequence[str], kind: TaskKind, provenance: Mapping[str, Any]
              ) -> SynthTask:
    """The SynthTask of `uses` (in order): an OSWorld task launching the first app; a later app is opened by the
    reference with `LaunchApp` after the one before is closed."""
    first = uses[0].exploration
    actions: list[Action] = [Wait(seconds=SETTLE_S)]
    for before, use in zip((None, *uses), uses):
        if before is not None and before.exploration.app != use.exploration.app:
            actions += [Hotkey(keys=("alt", "f4")), Wait(seconds=AFTER_S),
                        LaunchApp(app=_program(use.exploration)), Wait(seconds=SETTLE_S)]
        actions += [*use.actions, Wait(seconds=AFTER_S)]  # its effect lands before anything else is pressed
    calls = [u.call for u in uses]
    apps = list(dict.fromkeys(_program(u.exploration) for u in uses))
    config = _config(first)
    digest = task_digest(calls, {"config": config})
    data = {"id": f"{first.app}-{digest}", "snapshot": first.app, "instruction": phrasings[0],
            "source": "uivenus-synth-real", "config": config, "related_apps": apps,
            "evaluator": evaluator([u.check for u in uses]),
            "uivenus": {"name": "+".join(c.key for c in calls), "kind": kind.value,
                        "reference": [format_action(a) for a in actions]}}
    spec = OSWorldTask(data["id"], first.app, "synth-real", data).to_taskspec("reference", len(actions) + 1)
    return SynthTask(spec=spec, calls=tuple(calls), phrasings=tuple(phrasings), kind=kind, provenance=provenance)


def osworld_json(task: SynthTask) -> dict[str, Any]:
    """The OSWorld task file of a synthesised real-app task."""
    return plain(task.spec.metadata["osworld"])


# --- the offline synthesizer -----------------------------------------------------------------------------

class RealSynthesizer:
    """Tasks drawn from the explored functions: every function with values from its domains, compositions of two
    functions that return to the start screen, and file-writing functions followed by another app's."""

    name = "real-template"

    def __init__(self, real: RealCatalog, seed: int = 0, *, kinds: Sequence[TaskKind | str] = tuple(TaskKind),
                 values_per_function: int = 2) -> None:
        self.real, self.seed, self.values_per_function = real, seed, values_per_function
        self.kinds = tuple(TaskKind(k) for k in kinds)

    def _uses(self, catalog: Catalog, rng: random.Random) -> tuple[list[_Use], list[Dropped]]:
        sampler = ParamSampler(catalog, rng)
        uses: list[_Use] = []
        dropped: list[Dropped] = []
        for app, exploration in self.real.apps.items():
            for fn in exploration.functions.values():
                if not catalog.has(f"{app}.{fn.name}"):
                    continue
                spec = catalog.function(f"{app}.{fn.name}")
                pools = [sampler.candidates(spec, p, {}) for p in spec.params]
                if any(not pool for pool in pools):
                    dropped.append(Dropped(f"{spec.key}: every value of a parameter is ruled out",
                                           {"function": spec.key}))
                    continue
                combos = {json.dumps({p.name: rng.choice(pool) for p, pool in zip(spec.params, pools)}, sort_keys=True)
                          for _ in range(4 * self.values_per_function)}
                for combo in sorted(combos)[: self.values_per_function]:
                    params = json.loads(combo)
                    call = FunctionCall(app, fn.name, params)
                    if (broken := catalog.violations([call])):
                        dropped.append(Dropped(f"infeasible: {broken[0].reason}", {"function": spec.key}))
                        continue
                    made = _use(exploration, fn, params)
                    (dropped if isinstance(made, Dropped) else uses).append(made)  # type: ignore[arg-type]
        return uses, dropped

    def synthesize(self, catalog: Catalog, n: int) -> Synthesis:
        rng = random.Random(self.seed)
        uses, dropped = self._uses(catalog, rng)
        provenance = {"synthesizer": self.name, "seed": self.seed, "catalog_version": catalog.version}
        candidates: list[tuple[list[_Use], TaskKind]] = []
        if TaskKind.SINGLE in self.kinds:
            candidates += [([u], TaskKind.SINGLE) for u in uses]
        if TaskKind.MULTI in self.kinds:
            candidates += [([a, b], TaskKind.MULTI) for a in uses for b in uses
                           if a.exploration.app == b.exploration.app and a.fn.name != b.fn.name and _follows(a, b)]
        if TaskKind.LONG_HORIZON in self.kinds:
            candidates += [([a, b], TaskKind.LONG_HORIZON) for a in uses for b in uses
                           if a.check.durable and a.exploration.app != b.exploration.app
                           and b.exploration.platform == "desktop" and not b.exploration.documents]  # opened bare
        rng.shuffle(candidates)
        tasks: dict[str, SynthTask] = {}
        asked: set[str] = set()
        for chosen, kind in _interleave(candidates, n):
            clauses = [_clauses(u.exploration, u.fn, u.call) for u in chosen]
            task = real_task(chosen, compose(clauses), kind, provenance)
            if (problems := phrasing_problems(task, catalog, self.real)):
                dropped.append(Dropped(f"odd task: {problems[0]}", {"task": task.id}))
                continue
            if task.id not in tasks and normalize_text(task.spec.instruction) not in asked:
                tasks[task.id] = task
                asked.add(normalize_text(task.spec.instruction))
        return Synthesis(tuple(tasks.values()), tuple(dropped))


def _said(param: Any, value: Any) -> str:
    """The words an instruction says a value with (a toggle's "on"/"off", an option's label)."""
    if param.domain == ENUM and str(value).lower() in TOGGLE_VALUES and set(param.values) <= set(TOGGLE_VALUES):
        return "on" if TOGGLE_VALUES[str(value).lower()] else "off"
    return str(param.label(value))


def phrasing_problems(task: SynthTask, catalog: Catalog, real: RealCatalog) -> list[str]:
    """What makes a task thin or odd: a widget it cannot name, a value its field would not take (a sentence in a
    font box, a number out of range), a phrasing that leaves a value unsaid or holds empty quotes; [] when none."""
    problems: list[str] = []
    said: list[str] = []
    for call in task.calls:
        fn = real.apps[call.app].functions[call.function]
        if not _widget_words(fn):
            problems.append(f"{call.key}: its {fn.widget.role} has no name to ask for it by")
        for param in catalog.function(call.key).params:
            if param.name in call.params:
                if (why := value_problem(param, call.params[param.name])) is not None:
                    problems.append(f"{call.key}: {why}")
                said.append(_said(param, call.params[param.name]))
    for phrasing in task.phrasings:
        if '""' in phrasing or "{" in phrasing or "  " in phrasing:
            problems.append(f"malformed phrasing {phrasing!r}")
        problems += [f"{phrasing!r} does not say {word!r}" for word in said if word.lower() not in phrasing.lower()]
    return problems


def _follows(first: _Use, then: _Use) -> bool:
    """Whether `then` can be done right after `first` in one app: `first` returns the app to its start screen, or
    the element `then` acts on first is shown (at its recorded place) where `first` leaves the app."""
    target = first.fn.effect.target if first.fn.effect is not None else None
    if target is not None and target == first.exploration.start:
        return True
    state = first.exploration.states.get(target) if target is not None else None
    opening = next((g for g in (*then.fn.route, *then.fn.gestures) if g.target is not None), None)
    if state is None or opening is None:
        return False
    found = opening.target.find(state.elements)
    known = opening.target.find([e for s in then.exploration.states.values() for e in s.elements] + [then.fn.widget])
    return found is not None and known is not None and found.bounds == known.bounds


def _interleave(candidates: list[tuple[list[_Use], TaskKind]], n: int) -> list[tuple[list[_Use], TaskKind]]:
    """Up to `n` candidates taking each kind in turn, so a small round still has every kind."""
    by_kind: dict[TaskKind, list[tuple[list[_Use], TaskKind]]] = {}
    for candidate in candidates:
        by_kind.setdefault(candidate[1], []).append(candidate)
    out: list[tuple[list[_Use], TaskKind]] = []
    while len(out) < n and any(by_kind.values()):
        for kind in list(by_kind):
            if by_kind[kind] and len(out) < n:
                out.append(by_kind[kind].pop(0))
    return out


# --- the model-driven synthesizer -----------------------------------------------------------------------------

#: How much of each documentation source a prompt holds (characters).
DOC_CHARS = 2500


def _man_page(program: str) -> str:
    """The program's man page as plain text (roff requests dropped), or ""."""
    for path in sorted(Path("/usr/share/man").glob(f"man*/{program}.*")):
        try:
            raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        except (OSError, gzip.BadGzipFile):
            continue
        lines = [re.sub(r"\\f[BIRP]|\\-|\\\(..", "", line) for line in raw.decode("utf-8", "replace").splitlines()]
        return "\n".join(line for line in lines if line and not line.startswith((".", "'\\\""))).strip()
    return ""


def _help_text(program: str) -> str:
    """What `program --help` prints (argv form, a few seconds at most), or ""."""
    path = shutil.which(program)
    if path is None:
        return ""
    try:
        done = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (done.stdout or done.stderr).strip()


def _doc_files(package: str) -> str:
    folder = Path("/usr/share/doc") / package
    texts = []
    for path in sorted(folder.glob("README*")) if folder.is_dir() else ():
        try:
            raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            texts.append(raw.decode("utf-8", "replace"))
        except (OSError, gzip.BadGzipFile):
            continue
    return "\n".join(texts).strip()


def app_docs(program: str) -> str:
    """The app's own documentation: its README under /usr/share/doc, `--help`, and its man page (each cut short)."""
    parts = [(f"/usr/share/doc/{program}", _doc_files(program)), (f"{program} --help", _help_text(program)),
             (f"man {program}", _man_page(program))]
    return "\n\n".join(f"[{where}]\n{text[:DOC_CHARS]}" for where, text in parts if text)


def _domain(param: Any) -> str:
    if param.domain == ENUM:
        return "one of " + ", ".join(param.values)
    if param.domain == INT:
        return f"an integer from {param.low} to {param.high}"
    return "text"


def real_catalog_prompt(real: RealCatalog, catalog: Catalog, docs: Mapping[str, str], n: int) -> str:
    """The model's user message: each explored function (its widget, screen, parameters), the learned
    constraints, and each app's documentation."""
    lines = ["Capability catalog of real apps, found by exploring their screens (the only functions you may use):"]
    for app, fn in real.functions():
        if not catalog.has(f"{app}.{fn.name}"):
            continue
        state = real.apps[app].states.get(fn.state)
        where = f" on screen {state.title!r}" if state and state.title else ""
        lines.append(f"- {app}.{fn.name}: {fn.kind.value} {fn.widget.label()!r}{where}"
                     + (f" — {fn.description}" if fn.description else ""))
        lines += [f"    {p.name}: {_domain(p)}" for p in fn.params]
    if constraints := catalog.constraints():
        lines.append("\nConstraints learned from failed tasks (never break them):")
        lines += [f"- {c.key}: {c.reason}" for c in constraints]
    for app, text in docs.items():
        if text:
            lines.append(f"\nDocumentation of {app}:\n{text}")
    lines.append(f"\nPropose {n} different tasks as a JSON list.")
    return "\n".join(lines)


class RealLLMSynthesizer(ProposalSynthesizer):
    """Single-function tasks proposed by a model that reads the explored catalog and the apps' documentation; a
    proposal is kept only when it names an explored function, values inside its domains that no constraint
    forbids, and an instruction that says every value. Its check and reference come from the catalog, never the
    model."""

    name = "real-llm"

    def __init__(self, real: RealCatalog, policy: Policy | str, *, docs: Mapping[str, str] | None = None,
                 temperature: float = 0.7, max_new_tokens: int = 2048) -> None:
        super().__init__(policy, temperature=temperature, max_new_tokens=max_new_tokens)
        self.real = real
        self.docs = docs

    def _docs(self) -> dict[str, str]:
        if self.docs is not None:
            return dict(self.docs)
        return {app: app_docs(_program(e)) for app, e in self.real.apps.items()}

    def _prompt(self, catalog: Catalog, n: int) -> str:
        return real_catalog_prompt(self.real, catalog, self._docs(), n)

    def _task(self, catalog: Catalog, item: Any, provenance: Mapping[str, Any]) -> SynthTask | Dropped:
        app, name = item["function"].split(".")
        exploration = self.real.apps.get(app)
        fn = exploration.functions.get(name) if exploration is not None else None
        if fn is None or not catalog.has(item["function"]):
            return Dropped(f"{item['function']} is not an explored function", {"item": item})
        params = dict(item.get("params") or {})
        instruction = " ".join(item["instruction"].split())
        if (problem := _value_problem(catalog.function(item["function"]), params, instruction)) is not None:
            return Dropped(problem, {"item": item})
        if broken := catalog.violations([FunctionCall(app, name, params)]):
            return Dropped(f"infeasible: {broken[0].reason}", {"item": item})
        made = _use(exploration, fn, params)
        if isinstance(made, Dropped):
            return made
        phrasings = tuple(dict.fromkeys([sentence(instruction), *compose([_clauses(exploration, fn, made.call)])]))
        task = real_task([made], phrasings, TaskKind.SINGLE, provenance)
        if problems := phrasing_problems(task, catalog, self.real):
            return Dropped(f"odd task: {problems[0]}", {"item": item})
        return task


def _value_problem(fn: Function, params: Mapping[str, Any], instruction: str) -> str | None:
    """Why the proposed values do not fit the function (unknown or missing parameter, outside its domain, not
    said in the instruction), or None."""
    names = {p.name for p in fn.params}
    if unknown := sorted(set(params) - names):
        return f"{fn.key} has no parameter(s) {unknown}; it takes {sorted(names)}"
    for param in fn.params:
        if param.name not in params:
            return f"{fn.key} needs {param.name!r}"
        value = params[param.name]
        if (why := value_problem(param, value)) is not None:
            return f"{fn.key}: {why}"
        if str(param.label(value)).lower() not in instruction.lower() and str(value).lower() not in instruction.lower():
            return f"the instruction does not say {param.name}={param.label(value)!r}"
    return None


def write_osworld_tasks(folder: Path | str, tasks: Sequence[SynthTask]) -> list[Path]:
    """Each task's OSWorld file as `folder/<app>/<id>.json` (the directory tree `uivenus eval osworld` reads)."""
    paths = []
    for task in tasks:
        data = osworld_json(task)
        path = Path(folder) / str(task.calls[0].app) / f"{data['id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        paths.append(write_json(path, data))
    return paths
