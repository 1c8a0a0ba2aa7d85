"""Task synthesis: concrete tasks grounded in the capability catalog's functions.

The `Synthesizer` protocol, what every synthesizer shares, and the offline one. `TemplateSynthesizer` samples
parameter values from the catalog's domains (vocabularies, enums, ranges, the records the app holds), never a
value or a combination a known constraint forbids, and phrases each task several ways from templates
(`tasks.phrasing`) — single calls, compositions of several calls in one app, and long-horizon tasks that carry a
value remembered in one app into another. The synthesizer that asks a model, `LLMSynthesizer`, is
`tasks.llm_synthesis`; it checks its proposals with `call_problem` and builds them with `build_task` from here.

Every task is built the same way: its calls are run through the functions' state models (`functions.py`),
so a task whose call makes no sense from its starting state is never made, and each task carries the data
its checker needs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from uivenus.envs.sandbox.suites import mail as mail_suite
from uivenus.envs.sandbox.tasks import LAYOUT_PLATFORMS
from uivenus.tasks.catalog import ENUM, INT, Catalog, CatalogError, Function, FunctionCall, Param
from uivenus.tasks.functions import IMPLEMENTATIONS, Infeasible, app_model, apply_call, record_labels
from uivenus.tasks.phrasing import compose, phrase_call
from uivenus.tasks.spec import SynthTask, TaskKind, TaskSpec, normalize_text, task_digest
from uivenus.tasks.vocabularies import VOCABULARIES

__all__ = [
    "MEMORY_SCENARIOS", "Dropped", "MemoryScenario", "ParamSampler", "Synthesis", "Synthesizer",
    "TemplateSynthesizer", "build_task", "call_problem",
]


@dataclass(frozen=True)
class Dropped:
    """A task a synthesizer did not make, and why."""

    reason: str
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Synthesis:
    tasks: tuple[SynthTask, ...]
    dropped: tuple[Dropped, ...] = ()


@runtime_checkable
class Synthesizer(Protocol):
    """Makes up to `n` tasks grounded in `catalog`, saying why it dropped any it considered."""

    name: str

    def synthesize(self, catalog: Catalog, n: int) -> Synthesis: ...


# --- checking a call against the catalog ----------------------------------------------------------------

def _mentioned(value: str, text: str) -> bool:
    return value.lower() in text.lower()


def call_problem(catalog: Catalog, call: FunctionCall, calls: Sequence[FunctionCall] = (),
                 state: Mapping[str, Any] | None = None, instruction: str | None = None) -> str | None:
    """Why `call` is not grounded in the catalog (unknown function or parameter, a value outside its domain, a
    broken constraint, an instruction that does not say the value), or None when it is."""
    try:
        fn = catalog.function(call.key)
    except CatalogError:
        return f"{call.key} is not in the catalog"
    if call.key not in IMPLEMENTATIONS:
        return f"{call.key} has no reference move and model here, so its tasks could not be checked"
    unknown = sorted(set(call.params) - {p.name for p in fn.params})
    if unknown:
        return f"{call.key} has no parameter(s) {unknown}; it takes {[p.name for p in fn.params]}"
    state = app_model(call.app).setup if state is None else state
    for param in fn.params:
        if param.name not in call.params:
            if not param.optional:
                return f"{call.key} needs {param.name!r}"
            continue
        value = call.params[param.name]
        if (why := _outside(call.app, param, value, state)) is not None:
            return f"{call.key}: {param.name}={value!r} {why}"
        said = instruction is None or _mentioned(param.label(value), instruction) or _mentioned(str(value), instruction)
        if not said:
            return f"the instruction does not say {param.name}={param.label(value)!r}"
    broken = catalog.violations([*calls, call])  # the calls before were allowed: what breaks now is this one's doing
    if broken:
        return f"infeasible: {broken[0].reason}"
    return None


def _outside(app: str, param: Param, value: Any, state: Mapping[str, Any]) -> str | None:
    """Why `value` is outside the parameter's domain (None when it is inside)."""
    if param.domain == ENUM:
        return None if str(value) in param.values else f"is not one of {list(param.values)}"
    if param.domain == INT:
        ok = (isinstance(value, int) and not isinstance(value, bool)
              and param.low <= value <= param.high)  # type: ignore[operator]
        return None if ok else f"is not an integer from {param.low} to {param.high}"
    if param.record_key is not None:
        labels = record_labels(app, state, param.record_key)
        return None if value in labels else f"names no {param.record_key} record (there are {labels})"
    return None if isinstance(value, str) and value.strip() else "is not a non-empty text"


# --- sampling ------------------------------------------------------------------------------------------

def _round_values(low: int, high: int) -> list[int]:
    """Values people ask for: every one of a small range, round tens of a wide one."""
    step = 1 if high - low <= 12 else 10
    return [v for v in range(low, high + 1) if v % step == 0]


class ParamSampler:
    """Draws parameter values from the catalog's domains, never ones its constraints forbid."""

    def __init__(self, catalog: Catalog, rng: random.Random, *, attempts: int = 12) -> None:
        self.catalog, self.rng, self.attempts = catalog, rng, attempts

    def candidates(self, fn: Function, param: Param, state: Mapping[str, Any]) -> list[Any]:
        """Every value the domain offers that no constraint on this parameter forbids."""
        if param.domain == ENUM:
            values: list[Any] = list(param.values)
        elif param.domain == INT:
            values = _round_values(param.low, param.high)  # type: ignore[arg-type]
        elif param.record_key is not None:
            values = record_labels(fn.app, state, param.record_key)
        else:
            values = list(VOCABULARIES.get(param.domain, ()))
        probe = [c for c in self.catalog.constraints(fn.key) if c.param == param.name]
        return [v for v in values
                if all(c.allows(FunctionCall(fn.app, fn.name, {param.name: v})) for c in probe)]

    def sample(self, fn: Function, state: Mapping[str, Any], calls: Sequence[FunctionCall] = ()
               ) -> tuple[FunctionCall, dict[str, Any]] | str:
        """A call of `fn` from `state` (and the state it leaves), or why none could be drawn."""
        pools = {}
        for param in fn.params:
            if param.optional and self.rng.random() < 0.5:
                continue
            pool = self.candidates(fn, param, state)
            if not pool:
                return f"no value of {fn.key}.{param.name} ({param.domain}) is allowed from this state"
            pools[param.name] = pool
        why = f"{fn.key}: no sampled call made sense"
        for _ in range(self.attempts):
            call = FunctionCall(fn.app, fn.name, {name: self.rng.choice(pool) for name, pool in pools.items()})
            if (problem := call_problem(self.catalog, call, calls, state)) is not None:
                why = problem
                continue
            try:
                return call, apply_call(state, call)
            except Infeasible as exc:
                why = f"{fn.key}: {exc}"
        return why


def _fold(state: Mapping[str, Any], calls: Sequence[FunctionCall]) -> dict[str, Any] | None:
    """The state after `calls`, or None when one of them makes no sense on the way."""
    out = dict(state)
    for call in calls:
        try:
            out = apply_call(out, call)
        except Infeasible:
            return None
    return out


def _idle_call(setup: Mapping[str, Any], calls: Sequence[FunctionCall]) -> str | None:
    """Why a composition has a call that does not show in its result (undone later, or undoing it all)."""
    final = _fold(setup, calls)
    if final == dict(setup):
        return "the calls undo each other (the result is the starting state)"
    for i, call in enumerate(calls):
        if _fold(setup, [*calls[:i], *calls[i + 1:]]) == final:
            return f"{call.key} {dict(call.params)} leaves no trace in the result"
    return None


# --- long-horizon scenarios ------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemoryScenario:
    """A value shown in one app that a task asks the agent to carry into another: where it is shown, the
    state that shows it, and how to ask for it to be used by each function that can take it."""

    source: str  # the function that shows the value, e.g. "mail.read_message"
    opens: Mapping[str, Any]  # its parameters: which record shows the value
    what: str  # what the value is, in words
    setup: Callable[[str], Mapping[str, Any]]  # the source app's state showing `value`
    sinks: Mapping[str, tuple[str, tuple[str, ...]]]  # function -> (the parameter that takes the value, phrasings)


MEMORY_SCENARIOS: tuple[MemoryScenario, ...] = (
    MemoryScenario(
        source="mail.read_message", opens=MappingProxyType({"message": mail_suite.code_message("0")["subject"]}),
        what="Nimbus verification code",
        setup=lambda code: {"messages": mail_suite.inbox(code=code), "nextId": 100},
        sinks=MappingProxyType({"settings.set_device_name": ("device_name", (
            "Find the verification code Nimbus emailed me and set it as this device's name in Settings.",
            "Open the Nimbus verification email, remember the code, then go to Settings and rename the device to it.",
            "Look up my Nimbus sign-in code in Mail; afterwards, change the device name in Settings to that code.",
        ))}),
    ),
)


# --- building tasks ----------------------------------------------------------------------------------------

def build_task(calls: Sequence[FunctionCall], phrasings: Sequence[str], kind: TaskKind, setup: Mapping[str, Any],
               provenance: Mapping[str, Any], *, layout: str = "web", memory: Mapping[str, Any] | None = None
               ) -> SynthTask:
    """A SynthTask: its spec starts in the first call's app, set up with `setup`, checked by the sandbox checker
    that `functions.sandbox_task` builds from the calls."""
    app = calls[0].app
    task_id = f"{app}/synth-{task_digest(calls, setup)}"
    switches = sum(1 for a, b in zip(calls, calls[1:], strict=False) if a.app != b.app)
    metadata: dict[str, Any] = {"layout": layout, "kind": kind.value, "functions": [c.key for c in calls]}
    if memory is not None:
        metadata["memory"] = dict(memory)
    spec = TaskSpec(id=task_id, instruction=phrasings[0], platform=LAYOUT_PLATFORMS[layout], app=app,
                    setup={"app_state": dict(setup)}, check={"kind": "sandbox", "task": task_id},
                    max_steps=8 + 12 * len(calls) + 6 * switches, metadata=metadata)
    return SynthTask(spec=spec, calls=tuple(calls), phrasings=tuple(phrasings), kind=kind, provenance=provenance)


class TemplateSynthesizer:
    """Offline synthesis: values drawn from the catalog's domains, phrasings from templates."""

    name = "template"
    #: How often each kind of task is drawn.
    WEIGHTS: Mapping[TaskKind, float] = MappingProxyType({TaskKind.SINGLE: 0.5, TaskKind.MULTI: 0.3,
                                                           TaskKind.LONG_HORIZON: 0.2})

    def __init__(self, seed: int = 0, *, kinds: Sequence[TaskKind | str] = tuple(TaskKind), layout: str = "web",
                 functions: Sequence[str] | None = None) -> None:
        self.seed, self.layout = seed, layout
        self.kinds = tuple(TaskKind(k) for k in kinds)
        self.only = None if functions is None else frozenset(functions)

    def synthesize(self, catalog: Catalog, n: int) -> Synthesis:
        rng = random.Random(self.seed)
        sampler = ParamSampler(catalog, rng)
        asked = [fn for fn in catalog.functions() if self.only is None or fn.key in self.only]
        usable = [fn for fn in asked if fn.key in IMPLEMENTATIONS]
        dropped = [Dropped(f"{fn.key} has no reference move and model, so its tasks could not be checked",
                           {"function": fn.key})
                   for fn in asked if fn.key not in IMPLEMENTATIONS]
        makers = {TaskKind.SINGLE: self._single, TaskKind.MULTI: self._multi, TaskKind.LONG_HORIZON: self._long}
        kinds = list(self.kinds)
        tasks: dict[str, SynthTask] = {}
        asked: set[str] = set()  # normalised instructions made so far: the gate would refuse a second one
        provenance = {"synthesizer": self.name, "seed": self.seed, "catalog_version": catalog.version}
        for _ in range(max(8 * n, 20)):
            if len(tasks) >= n or not kinds or not usable:
                break
            kind = rng.choices(kinds, weights=[self.WEIGHTS[k] for k in kinds])[0]
            made = makers[kind](catalog, usable, sampler, rng, provenance)
            if isinstance(made, SynthTask):
                if made.id not in tasks and normalize_text(made.spec.instruction) not in asked:
                    tasks[made.id] = made
                    asked.add(normalize_text(made.spec.instruction))
            elif made.detail.get("kind_impossible"):
                kinds.remove(kind)
                dropped.append(made)
            elif made not in dropped:
                dropped.append(made)
        return Synthesis(tuple(tasks.values()), tuple(dropped))

    def _single(self, catalog: Catalog, usable: list[Function], sampler: ParamSampler, rng: random.Random,
                provenance: Mapping[str, Any]) -> SynthTask | Dropped:
        fn = rng.choice(usable)
        setup = app_model(fn.app).setup
        drawn = sampler.sample(fn, setup)
        if isinstance(drawn, str):
            return Dropped(drawn, {"function": fn.key})
        call = drawn[0]
        return build_task([call], compose([phrase_call(fn, call)]), TaskKind.SINGLE, setup, provenance,
                          layout=self.layout)

    def _multi(self, catalog: Catalog, usable: list[Function], sampler: ParamSampler, rng: random.Random,
               provenance: Mapping[str, Any]) -> SynthTask | Dropped:
        app = rng.choice(sorted({fn.app for fn in usable}))
        own = [fn for fn in usable if fn.app == app]
        state = setup = app_model(app).setup
        calls: list[FunctionCall] = []
        for _ in range(rng.choice((2, 3))):
            fresh = [fn for fn in own if fn.key not in {c.key for c in calls}] or own
            fn = rng.choice(fresh)
            drawn = sampler.sample(fn, state, calls)
            if isinstance(drawn, str):
                continue
            call, state = drawn
            calls.append(call)
        if len(calls) < 2:
            return Dropped(f"no two calls of {app} could be composed from its starting state", {"app": app})
        if (idle := _idle_call(setup, calls)) is not None:
            return Dropped(f"composition {[c.key for c in calls]}: {idle}", {"app": app})
        clauses = [phrase_call(catalog.function(c.key), c) for c in calls]
        return build_task(calls, compose(clauses), TaskKind.MULTI, setup, provenance, layout=self.layout)

    def _long(self, catalog: Catalog, usable: list[Function], sampler: ParamSampler, rng: random.Random,
              provenance: Mapping[str, Any]) -> SynthTask | Dropped:
        keys = {fn.key for fn in usable}
        options = [(s, sink) for s in MEMORY_SCENARIOS if catalog.has(s.source) and s.source in IMPLEMENTATIONS
                   for sink in s.sinks if sink in keys]
        if not options:
            return Dropped("no long-horizon task: the catalog lacks a memory source and a function to carry its value "
                           f"into (known: {[(s.source, list(s.sinks)) for s in MEMORY_SCENARIOS]})",
                           {"kind_impossible": True})
        scenario, sink_key = rng.choice(options)
        code = f"{rng.randrange(100000, 1000000)}"
        setup = scenario.setup(code)
        param, phrasings = scenario.sinks[sink_key]
        first = rng.randrange(len(phrasings))  # the value is not in the words: vary them instead
        phrasings = phrasings[first:] + phrasings[:first]
        source = FunctionCall(*scenario.source.split("."), scenario.opens)
        sink = FunctionCall(*sink_key.split("."), {param: code})
        for call, before, state in ((source, [], setup), (sink, [source], app_model(sink.app).defaults or {})):
            if (problem := call_problem(catalog, call, before, state)) is not None:
                return Dropped(problem, {"function": call.key})
            try:
                apply_call(state, call)
            except Infeasible as exc:
                return Dropped(f"{call.key}: {exc}", {"function": call.key})
        memory = {"source": scenario.source, "what": scenario.what, "value": code}
        return build_task([source, sink], phrasings, TaskKind.LONG_HORIZON, setup, provenance, layout=self.layout,
                          memory=memory)
