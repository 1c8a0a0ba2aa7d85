"""Sandbox tasks: an instruction, the app state to start from, an exact checker, and a reference solution.

The checker is a pure function of the app's state (`window.uivenus.state()`), so a task is verified
exactly. The reference solution is a generator of unified actions that looks at the *live* DOM before
each move (through `DomQuery`), so it works in both layouts and after any setup; it is how later parts
collect successful trajectories and check that generated tasks are executable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from uivenus.actions.space import Action, Platform
from uivenus.records import TaskSpec

#: The bundled apps, each served from `apps/<name>/index.html`; the launcher opens the others.
APP_NAMES = ("launcher", "settings", "notes", "contacts", "mail", "shop", "files", "calendar")
LAYOUT_PLATFORMS: Mapping[str, Platform] = MappingProxyType({"web": Platform.WEB, "phone": Platform.MOBILE})


class SandboxTaskError(LookupError):
    """An unknown app or task name; the message lists what exists."""


@runtime_checkable
class DomQuery(Protocol):
    """What a reference solution may read of the live page (BrowserEnv implements it)."""

    @property
    def platform(self) -> Platform: ...

    @property
    def screen_size(self) -> tuple[int, int]: ...

    def center(self, selector: str) -> tuple[int, int] | None:
        """Centre of the first visible element matching `selector`, in logical screen pixels;
        None when it is not rendered inside the viewport."""

    def exists(self, selector: str) -> bool:
        """Whether an element matching `selector` is in the DOM (visible or not)."""

    def text(self, selector: str) -> str | None: ...

    def app_state(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    reason: str


Checker = Callable[[Mapping[str, Any]], CheckResult]
Solver = Callable[[DomQuery], Iterator[Action]]


@dataclass(frozen=True)
class SandboxTask:
    """One bundled task of one app."""

    app: str
    name: str
    instructions: tuple[str, ...]  # several phrasings; the first is canonical
    check: Checker
    solve: Solver
    setup: Mapping[str, Any] = field(default_factory=dict)  # app state to start from (merged over defaults)
    max_steps: int = 25

    @property
    def id(self) -> str:
        return f"{self.app}/{self.name}"

    def spec(self, base_url: str, layout: str = "web", phrasing: int = 0) -> TaskSpec:
        """The TaskSpec for this task served from `base_url` (a running SandboxServer) in `layout`."""
        return TaskSpec(
            id=self.id,
            instruction=self.instructions[phrasing % len(self.instructions)],
            platform=LAYOUT_PLATFORMS[layout],
            app=self.app,
            url=app_url(base_url, self.app, layout),
            setup={
                "app_state": dict(self.setup),
                "home_url": app_url(base_url, "launcher", layout),
                "apps": {name: app_url(base_url, name, layout) for name in APP_NAMES if name != "launcher"},
            },
            check={"kind": "sandbox", "task": self.id},
            max_steps=self.max_steps,
            metadata={"layout": layout},
        )


def app_url(base_url: str, app: str, layout: str) -> str:
    """Where a served app starts, in `layout` (`web` or `phone`)."""
    return f"{base_url}/{app}/index.html?layout={layout}"


#: Every bundled task by id ("app/name"); app modules add theirs with `register`.
TASKS: dict[str, SandboxTask] = {}
#: Tasks made at run time (synthesised from a capability catalog): `get_task` and `check_spec` find them,
#: `tasks_of` does not list them (it lists the bundled suites).
DYNAMIC_TASKS: dict[str, SandboxTask] = {}


def register(*tasks: SandboxTask) -> None:
    for task in tasks:
        if task.id in TASKS:
            raise SandboxTaskError(f"sandbox task {task.id} is registered twice")
        TASKS[task.id] = task


def register_dynamic(task: SandboxTask) -> None:
    """Add (or replace: the same synthesised task may be rebuilt) a run-time task; never a bundled id."""
    _load_apps()
    if task.id in TASKS:
        raise SandboxTaskError(f"{task.id} is a bundled task; give the run-time task another name")
    DYNAMIC_TASKS[task.id] = task


def get_task(task_id: str) -> SandboxTask:
    _load_apps()
    task = TASKS.get(task_id) or DYNAMIC_TASKS.get(task_id)
    if task is None:
        app = task_id.partition("/")[0]
        same_app = sorted(t for t in TASKS if t.partition("/")[0] == app)
        known = (f"the {app} app's tasks: {', '.join(same_app)}" if same_app
                 else f"bundled tasks: {', '.join(sorted(TASKS))}")
        raise SandboxTaskError(f"no sandbox task {task_id!r}; {known}")
    return task


def tasks_of(app: str) -> list[SandboxTask]:
    _load_apps()
    return [t for t in TASKS.values() if t.app == app]


def check_spec(spec: TaskSpec, app_state: Mapping[str, Any]) -> CheckResult:
    """Run the checker a sandbox TaskSpec names over the app state read from the page."""
    if not spec.check or spec.check.get("kind") != "sandbox":
        raise SandboxTaskError(f"task {spec.id} has no sandbox check")
    return get_task(spec.check["task"]).check(app_state)


def _load_apps() -> None:
    """Import every module of `suites/` (one per app; each registers its tasks) on first use."""
    import importlib
    import pkgutil

    from uivenus.envs.sandbox import suites

    for module in pkgutil.iter_modules(suites.__path__):
        importlib.import_module(f"{suites.__name__}.{module.name}")
