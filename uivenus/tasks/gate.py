"""The validity gate: only tasks that are new, feasible, safe (unless asked for) and executable go on.

Rejected are duplicates (the same instruction after `normalize_text` — case, punctuation, spacing, numbers — or
the same calls with the same values and setup), tasks that break a known constraint or call a function the
catalog lacks, unsafe tasks (the safety guard's categories — payment, deletion, sending, credentials, system —
on the functions they call and on their instruction) unless unsafe tasks were asked for, and tasks whose
reference solution (or an expert policy) fails to pass their checker. Every rejection carries its reasons
and can be logged as JSONL.

Feedback: when a task fails to execute, the page it failed on is read for what went wrong (a field's error
message, a control left disabled) and turned into a constraint of the catalog, so the sampler never proposes
that value again: "A phone number has 7 to 15 digits" becomes `phone: digits_between 7..15`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from uivenus.envs.base import EnvError
from uivenus.tasks.catalog import VALUE_CONDITIONS, Catalog, Constraint, ConstraintKind
from uivenus.tasks.functions import Infeasible, NotImplementedFunctionError, sandbox_task
from uivenus.tasks.spec import SynthTask, normalize_text, task_digest
from uivenus.tasks.unsafe import unsafe_categories

__all__ = [
    "MESSAGE_RULES", "Execution", "Executor", "Gate", "GateResult", "PolicyExecutor", "Reason", "RejectionCode",
    "ReferenceExecutor", "learn_constraints", "unexplained_constraint",
]


class RejectionCode(StrEnum):
    DUPLICATE = "duplicate"
    INFEASIBLE = "infeasible"
    UNSAFE = "unsafe"
    NOT_EXECUTABLE = "not_executable"


@dataclass(frozen=True)
class Reason:
    code: RejectionCode
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code.value, "message": self.message}


# --- executing ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Execution:
    """How a task's run went: passed or not, the checker's reason, the run's error, and what the page showed
    when it failed (`{"errors": {testid: text}, "disabled": [testid]}`)."""

    task_id: str
    passed: bool
    reason: str
    error: str | None = None
    steps: int = 0
    diagnostics: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "diagnostics", MappingProxyType(dict(self.diagnostics)))

    def to_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "passed": self.passed, "reason": self.reason, "error": self.error,
                "steps": self.steps, "diagnostics": json.loads(json.dumps(dict(self.diagnostics)))}


@runtime_checkable
class Executor(Protocol):
    """Runs tasks (a batch at a time, reusing one browser) and says whether each passed its checker."""

    def execute(self, tasks: Sequence[SynthTask]) -> list[Execution]: ...

    def close(self) -> None: ...


_MODES = {"web": "desktop", "phone": "phone"}


class _SandboxExecutor:
    """A sandbox env for a batch of tasks (given, or opened on first use and closed with the executor)."""

    def __init__(self, layout: str, env: Any | None, progress: bool) -> None:
        if layout not in _MODES:
            raise ValueError(f"layout must be one of {sorted(_MODES)}, got {layout!r}")
        self.layout, self._env, self._owned, self.progress = layout, env, env is None, progress

    @property
    def env(self) -> Any:
        if self._env is None:
            from uivenus.envs.registry import SandboxEnv

            self._env = SandboxEnv("launcher", _MODES[self.layout])
        return self._env

    def close(self) -> None:
        if self._owned and self._env is not None:
            self._env.close()
            self._env = None

    def __enter__(self) -> _SandboxExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def execute(self, tasks: Sequence[SynthTask]) -> list[Execution]:
        from rich.progress import Progress

        out = []
        with Progress(disable=not self.progress, transient=True) as bar:
            job = bar.add_task("executing tasks", total=len(tasks))
            for task in tasks:
                out.append(self._one(task))
                bar.advance(job)
        return out

    def _one(self, task: SynthTask) -> Execution:
        from uivenus.tasks.explore_page import page_facts

        try:
            runnable = sandbox_task(task)
            passed, reason, error, steps = self._run(task, runnable)
        except (NotImplementedFunctionError, Infeasible) as exc:
            return Execution(task.id, False, str(exc))
        except EnvError as exc:
            return Execution(task.id, False, f"the environment failed: {type(exc).__name__}: {exc}")
        return Execution(task.id, passed, reason, error, steps, {} if passed else page_facts(self.env))

    def _run(self, task: SynthTask, runnable: Any) -> tuple[bool, str, str | None, int]:
        raise NotImplementedError


class ReferenceExecutor(_SandboxExecutor):
    """Executes each task's reference solution (the chained moves of its calls) and checks the final state."""

    def __init__(self, layout: str = "web", *, env: Any | None = None, progress: bool = False) -> None:
        super().__init__(layout, env, progress)

    def _run(self, task: SynthTask, runnable: Any) -> tuple[bool, str, str | None, int]:
        from uivenus.envs.sandbox.runner import run_reference

        env = self.env
        run = run_reference(runnable, getattr(env, "browser", env), env.base_url, self.layout)
        return run.passed, run.check.reason, run.error, len(run.actions)


class PolicyExecutor(_SandboxExecutor):
    """Executes each task with a policy through the agent loop (an expert model, or `oracle`, which replays the
    reference solution through the model grammar) and reads the loop's sandbox verdict. The guard runs in
    allow mode: whether a consequential task may exist was the gate's question, not the run's."""

    def __init__(self, policy: Any, layout: str = "web", *, env: Any | None = None, progress: bool = False) -> None:
        from uivenus.agent.policies.base import policy_from_spec

        super().__init__(layout, env, progress)
        self.policy = policy_from_spec(policy) if isinstance(policy, str) else policy

    def _run(self, task: SynthTask, runnable: Any) -> tuple[bool, str, str | None, int]:
        from uivenus.agent.loop import LoopConfig, run_episode
        from uivenus.agent.safety import Guard, GuardMode

        trajectory = run_episode(self.env, self.policy, task.spec, config=LoopConfig(guard=GuardMode.ALLOW),
                                 guard=Guard(GuardMode.ALLOW, ocr=False))
        verdict = trajectory.verdicts.get("sandbox") or {}
        error = trajectory.metadata.get("error")
        reason = verdict.get("reason") or f"the episode ended {trajectory.outcome.value} without a verdict"
        return bool(verdict.get("passed")), reason, error, len(trajectory.steps)


# --- learning from failures -------------------------------------------------------------------------------

def _charset(m: re.Match[str]) -> dict[str, Any]:
    """'Use digits, spaces, ( ) + - only' -> a pattern of exactly those characters."""
    words = {"digits": "0-9", "digit": "0-9", "spaces": " ", "space": " ", "letters": "A-Za-z", "letter": "A-Za-z"}
    allowed = ""
    for token in re.split(r"[,\s]+", m.group(1)):
        if token in words:
            allowed += words[token]
        elif token and token != "and" and len(token) == 1:
            allowed += re.escape(token)
    return {"op": "matches", "pattern": f"[{allowed}]+"} if allowed else {}


#: How a field's error message becomes a condition on the value of the parameter it is about (first match).
MESSAGE_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], dict[str, Any]]], ...] = (
    (re.compile(r"(\d+)\s*(?:to|-|–)\s*(\d+)\s*digits", re.I),
     lambda m: {"op": "digits_between", "min": int(m.group(1)), "max": int(m.group(2))}),
    (re.compile(r"valid e-?mail", re.I), lambda m: {"op": "matches", "pattern": r"[^\s@]+@[^\s@]+\.[^\s@]{2,}"}),
    (re.compile(r"use (.+?) only", re.I), _charset),
    (re.compile(r"at most (\d+) characters", re.I), lambda m: {"op": "max_length", "max": int(m.group(1))}),
    (re.compile(r"required|^enter an? ", re.I), lambda m: {"op": "not_empty"}),
)


def _condition(message: str, value: Any) -> dict[str, Any]:
    """The condition a message states, if it rules out `value`; else one that rules out exactly `value`."""
    for pattern, build in MESSAGE_RULES:
        if (m := pattern.search(message)) and (condition := build(m)):
            if not VALUE_CONDITIONS[condition["op"]](condition, value):
                return condition
    return {"op": "not_in", "values": [value]}


def learn_constraints(task: SynthTask, execution: Execution) -> list[Constraint]:
    """Constraints a failed run teaches, read from the page it failed on.

    A field's error message (`<param>-error`) becomes an `invalid_value` constraint on that parameter; a control
    left disabled with no message to explain it becomes a `disabled` constraint on the call's values together
    (only for single-call tasks, where the culprit is known). A failure the page does not explain teaches nothing.
    """
    if execution.passed:
        return []
    facts = execution.diagnostics
    disabled = list(facts.get("disabled") or ())
    kept = f"; {', '.join(disabled)} stayed disabled" if disabled else ""
    learned = []
    for testid, message in (facts.get("errors") or {}).items():
        name = testid.removesuffix("-error").split("-")[-1].replace("-", "_")
        call = next((c for c in task.calls if name in c.params), None)
        if call is None:
            continue
        value = call.params[name]
        learned.append(Constraint(call.app, call.function, ConstraintKind.INVALID_VALUE, _condition(message, value),
                                  reason=f"{message} ({name}={value!r} was refused{kept})", param=name, source=task.id))
    if not learned and disabled and len(task.calls) == 1:
        call = task.calls[0]
        learned.append(Constraint(call.app, call.function, ConstraintKind.DISABLED,
                                  {"op": "not_combination", "values": dict(call.params)},
                                  reason=f"{', '.join(disabled)} stayed disabled with {dict(call.params)}",
                                  source=task.id))
    return learned


def unexplained_constraint(task: SynthTask, reason: str) -> Constraint | None:
    """What a failure nothing explains teaches a single-function task: never ask for exactly these values again
    (None for a composition, whose culprit is unknown)."""
    if len(task.calls) != 1:
        return None
    call = task.calls[0]
    return Constraint(call.app, call.function, ConstraintKind.PRECONDITION,
                      {"op": "not_combination", "values": dict(call.params)},
                      reason=f"the reference solution fails with {dict(call.params)}: {reason}", source=task.id)


# --- the gate ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GateResult:
    task: SynthTask
    accepted: bool
    reasons: tuple[Reason, ...] = ()
    execution: Execution | None = None
    learned: tuple[Constraint, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task.id, "instruction": self.task.spec.instruction, "accepted": self.accepted,
                "reasons": [r.to_dict() for r in self.reasons],
                "execution": self.execution.to_dict() if self.execution else None,
                "learned": [c.to_dict() for c in self.learned]}


def _masked(task: SynthTask) -> str:
    """The instruction with the calls' text values blanked out (a note titled "Pay rent" asks no payment)."""
    text = task.spec.instruction
    for call in task.calls:
        for value in call.params.values():
            if isinstance(value, str) and len(value) > 2:
                text = re.sub(re.escape(value), "…", text, flags=re.IGNORECASE)
    return text


class Gate:
    """Checks tasks one batch at a time; remembers every task it saw, so later duplicates are caught too.

    `executor` runs the tasks that pass the cheap checks (None: executability is not checked). With `learn`,
    constraints taught by failed runs are added to `catalog` (its version goes up); `unexplained` says what a
    failure the page does not explain teaches (e.g. `unexplained_constraint`). With `log`, each rejection
    is appended to that JSONL file as it is decided.
    """

    def __init__(self, catalog: Catalog, *, allow_unsafe: bool = False, executor: Executor | None = None,
                 learn: bool = True, log: Path | str | None = None,
                 unexplained: Callable[[SynthTask, Execution], Constraint | None] | None = None) -> None:
        self.catalog, self.allow_unsafe, self.executor, self.learn = catalog, allow_unsafe, executor, learn
        self.unexplained = unexplained  # what a failure the page does not explain teaches (None: nothing)
        self.log = Path(log) if log is not None else None
        self._texts: dict[str, str] = {}  # normalised instruction -> task id
        self._signatures: dict[str, str] = {}  # calls + setup digest -> task id

    def check(self, task: SynthTask) -> GateResult:
        return self.check_all([task])[0]

    def check_all(self, tasks: Iterable[SynthTask]) -> list[GateResult]:
        tasks = list(tasks)
        reasons = [self._static(task) for task in tasks]
        runnable = [t for t, r in zip(tasks, reasons, strict=True) if not r]
        executions = {e.task_id: e for e in (self.executor.execute(runnable) if self.executor and runnable else [])}
        results = []
        for task, found in zip(tasks, reasons, strict=True):
            execution = executions.get(task.id)
            learned: list[Constraint] = []
            if execution is not None and not execution.passed:
                detail = f" ({execution.error})" if execution.error else ""
                found.append(Reason(RejectionCode.NOT_EXECUTABLE,
                                    f"the run failed its check: {execution.reason}{detail}"))
                if self.learn:
                    taught = learn_constraints(task, execution)
                    if not taught and self.unexplained is not None:
                        taught = [c for c in (self.unexplained(task, execution),) if c is not None]
                    learned = [c for c in taught if self.catalog.add_constraint(c)]
            results.append(GateResult(task, not found, tuple(found), execution, tuple(learned)))
        self._record(results)
        return results

    def _static(self, task: SynthTask) -> list[Reason]:
        """Duplicate, infeasible and unsafe: everything decided without running the task (it is then remembered)."""
        found = []
        texts = [normalize_text(p) for p in task.phrasings]
        same_text = next((self._texts[t] for t in texts if t in self._texts), None)
        digest = task_digest(task.calls, task.spec.setup)
        if digest in self._signatures:
            found.append(Reason(RejectionCode.DUPLICATE, f"the same calls and values as {self._signatures[digest]}"))
        elif same_text is not None:
            found.append(Reason(RejectionCode.DUPLICATE, f"the same instruction as {same_text}"))
        for text in texts:
            self._texts.setdefault(text, task.id)
        self._signatures.setdefault(digest, task.id)
        for call in task.calls:
            if not self.catalog.has(call.key):
                found.append(Reason(RejectionCode.INFEASIBLE, f"{call.key} is not in the catalog"))
        for call in task.calls:
            for constraint in self.catalog.constraints(call.key):
                if not constraint.allows(call, task.calls):
                    on = f".{constraint.param}={call.params.get(constraint.param)!r}" if constraint.param else ""
                    found.append(Reason(RejectionCode.INFEASIBLE, f"{call.key}{on} breaks a known constraint: "
                                        f"{constraint.reason} (learned from {constraint.source or 'the catalog'})"))
        if not self.allow_unsafe:
            categories = {cat: f"function {call.key}" for call in task.calls if self.catalog.has(call.key)
                          for cat in self.catalog.function(call.key).unsafe}
            for cat, evidence in unsafe_categories([_masked(task)], ("target", "content")).items():
                categories.setdefault(cat, f"instruction says {evidence!r}")
            found += [Reason(RejectionCode.UNSAFE, f"{cat} ({why}); allow unsafe tasks to keep it")
                      for cat, why in sorted(categories.items())]
        return found

    def _record(self, results: Sequence[GateResult]) -> None:
        rejected = [r for r in results if not r.accepted]
        if self.log is None or not rejected:
            return
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("a", encoding="utf-8") as out:
            for result in rejected:
                out.write(json.dumps(result.to_dict(), ensure_ascii=False, sort_keys=True) + "\n")
