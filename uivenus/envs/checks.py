"""The one registry of task checks: for each `task.check["kind"]`, how an episode is judged and how it is solved.

Each environment family registers its kind where the family is defined (`register_checker`): the sandbox apps
(`envs/sandbox/checker.py`: "sandbox"), MiniWoB++ (`envs/miniwob.py`: "miniwob"), the desktop task families
(`envs/desktop_tasks.py`: "files" and "all") and OSWorld tasks (`envs/osworld/checker.py`: "osworld").
`checker_for(kind)` imports those modules itself before it looks, so what a caller happened to import never
decides whether a verdict exists; a kind nobody registered is an `UnknownCheckKind` that names it and the known
kinds, never a silently missing verdict.

A `Checker` has up to three faces of one check:
- `verdict(env, task)`: the verdict on the live env when the episode ends (the agent loop stores it in the
  trajectory's `verdicts` under the kind);
- `from_state(task, state)`: the same judgement from a recorded `env.state()` (the program judge of
  `uivenus.verify`), where the kind can be judged that way;
- `solver(env, task)`: the task's reference solution played live on `env` (what the oracle policy plays);
- `on_terminal(env, action)`: the action that ended the episode, for a check that judges it (a refusal).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from uivenus.actions.space import Action
from uivenus.envs.base import Env
from uivenus.records import TaskSpec

__all__ = [
    "FAMILY_MODULES", "CheckOutcome", "Checker", "SolverFactory", "UnknownCheckKind", "check_kinds", "checker_for",
    "register_checker", "task_checker",
]

#: The modules whose import registers the families' checkers; `checker_for` imports them all before it looks.
FAMILY_MODULES = ("uivenus.envs.sandbox.checker", "uivenus.envs.miniwob", "uivenus.envs.desktop_tasks",
                  "uivenus.envs.web_script", "uivenus.envs.osworld.checker")


@dataclass(frozen=True)
class CheckOutcome:
    """A judgement read from a recorded state: `passed` is None when the state does not let the checker decide."""

    passed: bool | None
    reason: str


LiveVerdict = Callable[[Env, TaskSpec], Mapping[str, Any]]
StateCheck = Callable[[TaskSpec, Mapping[str, Any]], CheckOutcome]
SolverFactory = Callable[[Env, TaskSpec], Iterator[Action]]
TerminalHook = Callable[[Env, Action], None]


@dataclass(frozen=True)
class Checker:
    """How tasks whose `check["kind"]` is `kind` are judged (live, and from a recorded state) and solved."""

    kind: str
    verdict: LiveVerdict  # -> a mapping with at least "passed" and "reason"
    from_state: StateCheck | None = None  # None: a recorded state cannot tell (the desktop's files are gone)
    solver: SolverFactory | None = None  # None: the family has no reference solutions
    on_terminal: TerminalHook | None = None  # told the episode's terminal action (no env runs it) before `verdict`


class UnknownCheckKind(LookupError):
    """A task's check kind has no registered checker; the message names it and the known kinds."""

    def __init__(self, kind: object, known: tuple[str, ...]) -> None:
        self.kind, self.known = kind, known
        super().__init__(f"no checker for check kind {kind!r} (known: {', '.join(known)})")


_CHECKERS: dict[str, Checker] = {}


def register_checker(checker: Checker) -> Checker:
    """Add a family's checker; a kind is registered once (two families cannot both own it)."""
    if checker.kind in _CHECKERS and _CHECKERS[checker.kind] != checker:
        raise ValueError(f"check kind {checker.kind!r} is registered twice")
    _CHECKERS[checker.kind] = checker
    return checker


def _load_families() -> None:
    for name in FAMILY_MODULES:
        importlib.import_module(name)  # cached after the first time; each registers its kinds


def check_kinds() -> tuple[str, ...]:
    """Every registered check kind, sorted."""
    _load_families()
    return tuple(sorted(_CHECKERS))


def checker_for(kind: object) -> Checker:
    """The checker of check kind `kind`; `UnknownCheckKind` when no family registered it."""
    _load_families()
    checker = _CHECKERS.get(kind) if isinstance(kind, str) else None
    if checker is None:
        raise UnknownCheckKind(kind, tuple(sorted(_CHECKERS)))
    return checker


def task_checker(task: TaskSpec) -> Checker | None:
    """The checker of `task`'s check (None for a task without one); `UnknownCheckKind` for a kind nobody owns."""
    return None if not task.check else checker_for(task.check.get("kind"))
