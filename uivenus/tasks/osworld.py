"""OSWorld-format task files into our records: one loader for the public set, a user's own tasks and ours.

Three layouts load the same way (`load_osworld`):
- an index, `{"<domain>": ["<id>", ...]}` (the public `evaluation_examples/test_all.json`), whose tasks are read
  from `examples/<domain>/<id>.json` beside it — given as the index file or the directory holding `test_all.json`;
- a directory tree of task files (`<domain>/<id>.json`; a task's domain is its folder's name);
- a single task file.

Each task file is checked on its own: a file that is not JSON, or whose `id`/`instruction`/`config`/`evaluator`
do not have the format's shape, becomes a `TaskLoadError` naming the file and the field, and every other task
still loads. A loaded `OSWorldTask` keeps its original JSON and says whether we can run it: `missing` holds each
setup step, getter, metric or app it needs that we lack (from `uivenus.envs.osworld.support`). `to_taskspec`
makes the TaskSpec the desktop env runs; `coverage` counts how many tasks are supported and why the rest are not.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import pydantic

from uivenus.actions.space import Platform
from uivenus.records import TaskSpec, plain

__all__ = [
    "DEFAULT_MAX_STEPS", "INDEX_FILE", "OSWorldError", "OSWorldSet", "OSWorldTask", "SOLUTIONS", "SupportCheck",
    "TaskLoadError", "bundled_tasks_dir", "coverage", "load_osworld", "read_ids",
]

#: The public set's index of every task, and the folder of task files beside it.
INDEX_FILE = "test_all.json"
EXAMPLES_DIR = "examples"
#: OSWorld's usual step budget (its leaderboard reports 15, 50 and 100 steps).
DEFAULT_MAX_STEPS = 15
#: Solutions a task may carry in our extension field `"uivenus"` (played by the checker's solver).
SOLUTIONS = ("reference", "wrong")

#: A task's JSON -> why we cannot run it (empty: supported).
SupportCheck = Callable[[Mapping[str, Any]], Sequence[str]]


class OSWorldError(ValueError):
    """The task source itself cannot be read (no such path, an unreadable index, a bad ids file)."""


# --- the format's shape -------------------------------------------------------------------------------------

class _Step(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow", strict=True)
    type: str
    parameters: dict[str, Any] = {}


class _Evaluator(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow", strict=True)
    func: str | list[str]
    conj: Literal["and", "or"] = "and"
    postconfig: list[_Step] = []

    @pydantic.model_validator(mode="after")
    def _lists_agree(self) -> _Evaluator:
        if isinstance(self.func, list):
            if not self.func:
                raise ValueError("func is an empty list")
            for name in ("result", "expected", "options"):
                value = getattr(self, name, None)
                if isinstance(value, list) and len(value) != len(self.func):
                    raise ValueError(f"{len(self.func)} metrics in func but {len(value)} entries in {name}")
        return self


class _Task(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow", strict=True)
    id: str = pydantic.Field(min_length=1)
    instruction: str
    config: list[_Step] = []
    evaluator: _Evaluator
    related_apps: list[str] = []
    snapshot: str | None = None


def _shape_error(exc: pydantic.ValidationError) -> str:
    """Pydantic's errors as one line naming each field path."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "the task"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


# --- records -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OSWorldTask:
    """One task file as loaded: its domain, where it came from, its original JSON and what we lack to run it."""

    id: str
    domain: str
    source: str
    data: Mapping[str, Any]
    missing: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", MappingProxyType(dict(self.data)))
        object.__setattr__(self, "missing", tuple(self.missing))

    @property
    def supported(self) -> bool:
        return not self.missing

    @property
    def instruction(self) -> str:
        return str(self.data["instruction"])

    def to_taskspec(self, solution: str = "reference", max_steps: int = DEFAULT_MAX_STEPS) -> TaskSpec:
        """The desktop TaskSpec: setup runs the config steps, the check is the task's evaluator, and `solution`
        names which of our extension's action lists the checker's solver plays (for `reference`/`wrong` runs)."""
        if solution not in SOLUTIONS:
            raise OSWorldError(f"unknown solution {solution!r}; use one of {', '.join(SOLUTIONS)}")
        data = plain(self.data)
        apps = list(data.get("related_apps") or [])
        return TaskSpec(
            id=self.id, instruction=self.instruction, platform=Platform.DESKTOP, app=apps[0] if apps else None,
            setup={"osworld": {"id": self.id, "snapshot": data.get("snapshot"), "related_apps": apps,
                               "config": data.get("config") or []}},
            check={"kind": "osworld", "evaluator": data["evaluator"], "solution": solution},
            max_steps=max_steps, metadata={"osworld": data, "domain": self.domain, "source": self.source})


@dataclass(frozen=True)
class TaskLoadError:
    """A task that could not be loaded: which one (as far as known), from where, and why."""

    id: str
    domain: str
    source: str
    reason: str


@dataclass(frozen=True)
class OSWorldSet:
    """Everything a source held: the tasks that loaded (in source order) and the ones that did not."""

    tasks: tuple[OSWorldTask, ...]
    errors: tuple[TaskLoadError, ...] = ()

    @property
    def supported(self) -> tuple[OSWorldTask, ...]:
        return tuple(task for task in self.tasks if task.supported)

    @property
    def domains(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*(t.domain for t in self.tasks), *(e.domain for e in self.errors)]))


# --- reading --------------------------------------------------------------------------------------------------

def _default_check() -> SupportCheck:
    from uivenus.envs.osworld.support import unsupported

    return unsupported


def _is_index(value: Any) -> bool:
    return (isinstance(value, dict) and bool(value)
            and all(isinstance(ids, list) and all(isinstance(i, str) for i in ids) for ids in value.values()))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OSWorldError(f"{path} is not a readable JSON file: {exc}") from None


def _entries(path: Path) -> Iterator[tuple[str, str | None, Path]]:
    """(domain, id the index expects or None, task file) for every task the source names."""
    if path.is_dir() and (path / INDEX_FILE).is_file():
        path = path / INDEX_FILE
    if path.is_dir():
        for file in sorted(path.rglob("*.json")):
            yield file.parent.name, None, file
        return
    if not path.exists():
        raise OSWorldError(f"{path} does not exist; give a task file, a directory of them or an index like "
                           f"{INDEX_FILE}")
    if path.suffix == ".json" and path.stat().st_size < 50_000_000:
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            value = None  # a single malformed task: reported as that task's error
        if _is_index(value):
            examples = path.parent / EXAMPLES_DIR
            for domain, ids in value.items():
                for task_id in ids:
                    yield domain, task_id, examples / domain / f"{task_id}.json"
            return
    yield path.parent.name, None, path


def _load_one(domain: str, expected_id: str | None, file: Path, check: SupportCheck) -> OSWorldTask | TaskLoadError:
    fallback = expected_id or file.stem
    if not file.is_file():
        return TaskLoadError(fallback, domain, str(file), f"missing task file: {file} does not exist")
    try:
        data = _read_json(file)
    except OSWorldError as exc:
        return TaskLoadError(fallback, domain, str(file), f"malformed task: {exc}")
    if not isinstance(data, dict):
        return TaskLoadError(fallback, domain, str(file), f"malformed task: a task is a JSON object, got "
                                                          f"{type(data).__name__}")
    try:
        _Task.model_validate(data)
    except pydantic.ValidationError as exc:
        task_id = data.get("id") if isinstance(data.get("id"), str) and data.get("id") else fallback
        return TaskLoadError(task_id, domain, str(file), f"malformed task: {_shape_error(exc)}")
    if expected_id is not None and data["id"] != expected_id:
        return TaskLoadError(expected_id, domain, str(file),
                             f"malformed task: the index names {expected_id!r} but the file's id is {data['id']!r}")
    try:
        missing = tuple(check(data))
    except Exception as exc:  # noqa: BLE001 - a task the support check trips on is that task's error, not the run's
        return TaskLoadError(data["id"], domain, str(file), f"support check failed: {type(exc).__name__}: {exc}")
    return OSWorldTask(id=data["id"], domain=domain, source=str(file), data=data, missing=missing)


def load_osworld(path: Path | str, *, domains: Iterable[str] | None = None, ids: Iterable[str] | None = None,
                 check: SupportCheck | None = None) -> OSWorldSet:
    """Every task `path` names (an index, a directory tree or one file), optionally only those of `domains` and
    with `ids`; each task checked on its own (`check`: what we lack to run it, default our registries')."""
    check = check or _default_check()
    wanted_domains = set(domains) if domains is not None else None
    wanted_ids = set(ids) if ids is not None else None
    tasks: list[OSWorldTask] = []
    errors: list[TaskLoadError] = []
    seen: dict[str, str] = {}
    for domain, expected_id, file in _entries(Path(path)):
        if wanted_domains is not None and domain not in wanted_domains:
            continue
        if wanted_ids is not None and (expected_id or file.stem) not in wanted_ids:
            continue
        loaded = _load_one(domain, expected_id, file, check)
        if isinstance(loaded, OSWorldTask) and loaded.id in seen:
            loaded = TaskLoadError(loaded.id, domain, loaded.source, f"duplicate id: {seen[loaded.id]} has it too")
        if isinstance(loaded, OSWorldTask):
            seen[loaded.id] = loaded.source
            tasks.append(loaded)
        else:
            errors.append(loaded)
    if wanted_domains is not None and not tasks and not errors:
        raise OSWorldError(f"no task of domain(s) {', '.join(sorted(wanted_domains))} in {path}")
    return OSWorldSet(tuple(tasks), tuple(errors))


def read_ids(path: Path | str) -> frozenset[str]:
    """Task ids from a file: an index (`{domain: [ids]}`), a JSON list, or one id per line (`#` comments)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise OSWorldError(f"cannot read the ids file {path}: {exc}") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
        return frozenset(line for line in lines if line)
    if _is_index(value):
        return frozenset(i for ids in value.values() for i in ids)
    if isinstance(value, list) and all(isinstance(i, str) for i in value):
        return frozenset(value)
    raise OSWorldError(f"{path}: an ids file is an index {{domain: [ids]}}, a JSON list of ids or one id per line")


def coverage(loaded: OSWorldSet) -> dict[str, Any]:
    """`{"tasks": N, "supported": M, "unsupported": {reason: count}}` (a malformed task counts under its error;
    a task lacking several things counts once under each), plus the same per domain."""
    reasons: Counter[str] = Counter()
    per_domain: dict[str, dict[str, int]] = {d: {"tasks": 0, "supported": 0} for d in loaded.domains}
    for task in loaded.tasks:
        reasons.update(task.missing)
        per_domain[task.domain]["tasks"] += 1
        per_domain[task.domain]["supported"] += task.supported
    for error in loaded.errors:
        reasons[error.reason.split(":", 1)[0]] += 1
        per_domain[error.domain]["tasks"] += 1
    return {"tasks": len(loaded.tasks) + len(loaded.errors), "supported": len(loaded.supported),
            "unsupported": dict(reasons.most_common()), "domains": per_domain}


def bundled_tasks_dir() -> Path:
    """Our own OSWorld-format tasks, shipped with the package (`<domain>/<id>.json`)."""
    from importlib import resources

    return Path(str(resources.files("uivenus.tasks").joinpath("data", "osworld")))
