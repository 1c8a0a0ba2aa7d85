"""Desktop tasks on real Debian apps: file checks as data, segmented workflows, and a family of tasks with reference solutions.

A desktop task is a `TaskSpec` whose `setup["materialize"]` is a `MaterializePlan` (the files, folders, app
settings and launches the episode starts from; `uivenus.envs.materialize`) and whose `check` is data read by
the registry `CHECK_KINDS`, e.g. ``{"kind": "files", "expect": [{"path": "notes.txt", "contains": "final",
"not_contains": "draft"}]}``. Checks read the files the apps produced in the episode's sandbox root, so a
task is verified by what was saved, not by what the screen shows.

A long workflow is a `SegmentedTask`: the whole task plus `Segment`s, each with its own instruction, check and
launch and the segments it depends on, so collection and verification can run per segment and a run can
resume at the first segment whose check does not pass yet (`uivenus.tasks.segments`).

The family (`FAMILIES`) runs on l3afpad (a GTK text editor) and pcmanfm (a file manager), both small Debian
packages that run under Xvfb. Each family builds a task from parameters and has a keyboard-first reference
solver that reads the live desktop (the focused window's title) between actions, so it waits for dialogs
instead of racing them. The agent loop hands them to the `oracle` (`SOLVERS`), which plays them like any policy.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from uivenus.actions.space import Action, Finished, Hotkey, Platform, Type, Wait
from uivenus.agent.loop import CHECKERS, SOLVERS
from uivenus.envs.base import Env, EnvError
from uivenus.envs.materialize import FileSpec, MaterializePlan, safe_path
from uivenus.envs.sandbox.solving import SolverError
from uivenus.envs.sandbox.tasks import CheckResult
from uivenus.records import RecordError, TaskSpec

#: Debian packages the desktop family runs (the Makefile installs them).
DEBIAN_PACKAGES = ("l3afpad", "pcmanfm")
#: App roles -> argv of the program that plays them (`{root}` is the sandbox root).
APPS: Mapping[str, tuple[str, ...]] = MappingProxyType({"editor": ("l3afpad",), "files": ("pcmanfm", "{root}")})


class CheckError(ValueError):
    """A check is malformed (unknown kind or test, wrong value type); the message names the field to fix."""


# --- checks: data evaluated against the sandbox root ------------------------------------------------

def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _strings(value: Any, test: str) -> list[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
        raise CheckError(f"'{test}' takes a string or a list of strings, got {value!r}")
    return list(values)


def _exists(path: Path, want: Any) -> str | None:
    return None if path.exists() == bool(want) else ("is missing" if want else "exists but should not")


def _is_dir(path: Path, want: Any) -> str | None:
    return None if path.is_dir() == bool(want) else ("is not a folder" if want else "is a folder")


def _equals(path: Path, want: Any) -> str | None:
    text = _read(path)
    return None if text == _strings(want, "equals")[0] else f"holds {text!r}, not {want!r}"


def _contains(path: Path, want: Any) -> str | None:
    text = _read(path)
    missing = [s for s in _strings(want, "contains") if s not in text]
    return f"lacks {missing}" if missing else None


def _not_contains(path: Path, want: Any) -> str | None:
    text = _read(path)
    present = [s for s in _strings(want, "not_contains") if s in text]
    return f"still holds {present}" if present else None


def _lines(path: Path, want: Any) -> str | None:
    lines = _read(path).splitlines()
    return None if lines == _strings(want, "lines") else f"has lines {lines}, not {list(want)}"


def _line_count(path: Path, want: Any) -> str | None:
    if isinstance(want, bool) or not isinstance(want, int):
        raise CheckError(f"'line_count' takes an integer, got {want!r}")
    count = len(_read(path).splitlines())
    return None if count == want else f"has {count} lines, not {want}"


def _regex(path: Path, want: Any) -> str | None:
    try:
        pattern = re.compile(_strings(want, "regex")[0], re.MULTILINE)
    except re.error as exc:
        raise CheckError(f"'regex' {want!r} does not compile: {exc}") from None
    return None if pattern.search(_read(path)) else f"does not match /{pattern.pattern}/"


FileTest = Callable[[Path, Any], str | None]
#: Test name -> (reads the file's text?, test returning None when it holds or why not).
FILE_TESTS: dict[str, tuple[bool, FileTest]] = {
    "exists": (False, _exists),
    "is_dir": (False, _is_dir),
    "equals": (True, _equals),
    "contains": (True, _contains),
    "not_contains": (True, _not_contains),
    "lines": (True, _lines),
    "line_count": (True, _line_count),
    "regex": (True, _regex),
}


def check_files(check: Mapping[str, Any], root: Path) -> CheckResult:
    """Every expectation of `check["expect"]` holds for its path under `root` (content tests need a file)."""
    expects = check.get("expect")
    if not isinstance(expects, (list, tuple)) or not expects:
        raise CheckError(f"a files check needs a non-empty 'expect' list, got {expects!r}")
    failures = []
    for i, expect in enumerate(expects):
        if not isinstance(expect, Mapping) or "path" not in expect:
            raise CheckError(f"expect[{i}] must be a mapping with a 'path', got {expect!r}")
        unknown = set(expect) - {"path"} - set(FILE_TESTS)
        if unknown or len(expect) == 1:
            raise CheckError(f"expect[{i}]: unknown or missing tests {sorted(unknown)}; known: {sorted(FILE_TESTS)}")
        path = safe_path(root, expect["path"], f"expect[{i}].path")
        for name, want in expect.items():
            if name == "path":
                continue
            reads, test = FILE_TESTS[name]
            why = ("is not a readable file" if reads and not path.is_file() else test(path, want))
            if why is not None:
                failures.append(f"{expect['path']} {why}")
    return CheckResult(not failures, "; ".join(failures) or "all files as expected")


def check_all(check: Mapping[str, Any], root: Path) -> CheckResult:
    """Every check of `check["checks"]` passes (a segmented task's whole-task check)."""
    checks = check.get("checks")
    if not isinstance(checks, (list, tuple)) or not checks:
        raise CheckError(f"an 'all' check needs a non-empty 'checks' list, got {checks!r}")
    results = [evaluate(c, root) for c in checks]
    failed = [r.reason for r in results if not r.passed]
    return CheckResult(not failed, "; ".join(failed) or "every check passed")


#: Check kind -> how it is judged against the sandbox root.
CHECK_KINDS: dict[str, Callable[[Mapping[str, Any], Path], CheckResult]] = {"files": check_files, "all": check_all}


def evaluate(check: Mapping[str, Any], root: str | Path) -> CheckResult:
    """Judge `check` (data) against the files under `root`."""
    kind = check.get("kind") if isinstance(check, Mapping) else None
    if kind not in CHECK_KINDS:
        raise CheckError(f"unknown check kind {kind!r}; known: {sorted(CHECK_KINDS)}")
    return CHECK_KINDS[kind](check, Path(root))


def sandbox_root(env: Env) -> Path:
    """The sandbox root of the env's current materialized task (from `env.state()`)."""
    materialized = env.state().get("materialized")
    if not materialized:
        raise EnvError("the env holds no materialized task; give the task a setup['materialize'] plan")
    return Path(materialized["root"])


def _root_verdict(env: Env, task: TaskSpec) -> Mapping[str, Any]:
    try:
        result = evaluate(task.check or {}, sandbox_root(env))
    except (EnvError, CheckError) as exc:  # MaterializeError (a check path leaving the root) is an EnvError
        return {"passed": False, "reason": f"{type(exc).__name__}: {exc}"}
    return {"passed": result.passed, "reason": result.reason}


for _kind in CHECK_KINDS:  # the agent loop judges desktop tasks by the files in their root
    CHECKERS[_kind] = _root_verdict


# --- segmented tasks ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Segment:
    """One subtask of a long workflow: its own instruction, check and launch; it starts after `depends_on`."""

    id: str
    instruction: str
    check: Mapping[str, Any]
    depends_on: tuple[str, ...] = ()
    launch: tuple[tuple[str, ...], ...] | None = None  # None: the whole task's launches
    max_steps: int | None = None  # None: the whole task's budget
    metadata: Mapping[str, Any] = field(default_factory=dict)  # e.g. the family and params of its reference solver

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", self.id):
            raise RecordError(f"Segment.id must be letters, digits, '_' or '-', got {self.id!r}")
        if not isinstance(self.check, Mapping) or self.check.get("kind") not in CHECK_KINDS:
            raise RecordError(f"segment {self.id}: check must be a mapping with a kind in {sorted(CHECK_KINDS)}")
        object.__setattr__(self, "depends_on", tuple(self.depends_on))
        if self.launch is not None:
            object.__setattr__(self, "launch", tuple(tuple(argv) for argv in self.launch))
        object.__setattr__(self, "check", MappingProxyType(dict(self.check)))
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "instruction": self.instruction, "check": dict(self.check),
                "depends_on": list(self.depends_on),
                "launch": None if self.launch is None else [list(a) for a in self.launch],
                "max_steps": self.max_steps, "metadata": dict(self.metadata)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Segment:
        return cls(**dict(data))


@dataclass(frozen=True)
class SegmentedTask:
    """A long desktop task and its segments, listed after the segments they depend on (so there are no cycles)."""

    task: TaskSpec
    segments: tuple[Segment, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "segments", tuple(self.segments))
        ids = [s.id for s in self.segments]
        if not ids or len(set(ids)) != len(ids):
            raise RecordError(f"task {self.task.id}: segments need distinct ids, got {ids}")
        MaterializePlan.from_dict(self.task.setup.get("materialize", {}))
        seen: set[str] = set()
        for segment in self.segments:
            unknown = [d for d in segment.depends_on if d not in seen]
            if unknown:
                raise RecordError(f"segment {segment.id} depends on {unknown}, which are not earlier segments "
                                  "(list segments after what they depend on; cycles are impossible then)")
            seen.add(segment.id)

    @property
    def plan(self) -> MaterializePlan:
        return MaterializePlan.from_dict(self.task.setup.get("materialize", {}))

    def initial_plan(self) -> MaterializePlan:
        """The files and folders the workflow starts from (no launches, no settings): written once into its workspace."""
        plan = self.plan
        return MaterializePlan(files=plan.files, folders=plan.folders)

    def segment_task(self, segment: Segment, workspace: str) -> TaskSpec:
        """The episode of one segment: the shared `workspace` as root, the segment's launches, check and budget."""
        plan = self.plan
        launch = plan.launch if segment.launch is None else segment.launch
        materialize = MaterializePlan(launch=launch, settings=plan.settings).to_dict()
        return TaskSpec(
            id=f"{self.task.id}/{segment.id}", instruction=segment.instruction, platform=self.task.platform,
            app=self.task.app, setup={"workspace": workspace, "materialize": materialize}, check=segment.check,
            max_steps=segment.max_steps or self.task.max_steps,
            metadata={**segment.metadata, "parent": self.task.id, "segment": segment.id},
        )

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task.to_dict(), "segments": [s.to_dict() for s in self.segments]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SegmentedTask:
        return cls(TaskSpec.from_dict(data["task"]), tuple(Segment.from_dict(s) for s in data["segments"]))


# --- the family: tasks built from parameters, with reference solvers -----------------------------------

@dataclass(frozen=True)
class Piece:
    """What one family instance needs: the instruction, the check, the app launches and the starting files."""

    instruction: str
    check: Mapping[str, Any]
    launch: tuple[tuple[str, ...], ...]
    files: tuple[FileSpec, ...] = ()


class Desk:
    """What a reference solver reads from the live desktop between its actions: the root and the window titles."""

    def __init__(self, env: Env, root: Path, timeout_s: float = 10.0) -> None:
        self.env, self.root, self.timeout_s = env, root, timeout_s

    def wait_for(self, predicate: Callable[[str, list[str]], bool], what: str, timeout_s: float | None = None) -> None:
        """Poll until `predicate(focused title, all window titles)` holds; SolverError after the timeout."""
        deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
        while True:
            state = self.env.state()
            focused, titles = state.get("focused") or "", [w["title"] for w in state.get("windows", [])]
            if predicate(focused, titles):
                return
            if time.monotonic() > deadline:
                raise SolverError(f"waited for {what}; the focused window is {focused!r}, the windows {titles}")
            time.sleep(0.02)

    def wait_focus(self, title: str, what: str) -> None:
        self.wait_for(lambda focused, _: focused == title, what)


Solver = Callable[[Desk, Mapping[str, Any]], Iterator[Action]]


@dataclass(frozen=True)
class Family:
    """A kind of desktop task: default parameters, how an instance is built, and its reference solver."""

    name: str
    defaults: Mapping[str, Any]
    build: Callable[[Mapping[str, Any]], Piece]
    solve: Solver


def _editor(*paths: str) -> tuple[tuple[str, ...], ...]:
    return ((*APPS["editor"], *(f"{{root}}/{p}" for p in paths)),)


def _save_dialog(desk: Desk, name: str) -> Iterator[Action]:
    """Answer an open GTK save dialog with `name` (relative to the folder it shows, or absolute).

    The dialog completes a typed path in the background and ignores Enter until it has, so the solver
    pauses after typing and presses Enter again while the dialog still holds the focus.
    """
    desk.wait_for(lambda focused, _: focused.startswith("Save"), "the save dialog")
    yield Hotkey(keys=("ctrl", "a"))  # "Save As" proposes the current name with its stem selected
    yield Type(content=name)
    yield Wait(seconds=0.5)
    for _ in range(3):
        yield Hotkey(keys=("enter",))
        try:
            desk.wait_for(lambda focused, _: not focused.startswith("Save"), "the save dialog to close", timeout_s=3.0)
            return
        except SolverError:
            continue
    raise SolverError(f"the save dialog did not accept {name!r}")


def _build_replace_word(p: Mapping[str, Any]) -> Piece:
    return Piece(
        instruction=f"In the text editor, replace every '{p['old']}' in {p['file']} with '{p['new']}' and save the file.",
        check={"kind": "files", "expect": [{"path": p["file"], "contains": p["new"], "not_contains": p["old"]}]},
        launch=_editor(p["file"]),
        files=(FileSpec(p["file"], text=p["text"]),),
    )


def _solve_replace_word(desk: Desk, p: Mapping[str, Any]) -> Iterator[Action]:
    name = PurePosixPath(p["file"]).name
    desk.wait_focus(name, f"the editor on {name}")
    yield Hotkey(keys=("ctrl", "h"))
    desk.wait_focus("Replace", "the Replace dialog")
    yield Type(content=p["old"])
    yield Hotkey(keys=("tab",))
    yield Type(content=p["new"])
    yield Hotkey(keys=("tab",), repeat=2)  # past "Match case" to "Replace all at once"
    yield Hotkey(keys=("space",))
    yield Hotkey(keys=("tab",), repeat=2)  # past "Cancel" to "Find and Replace"
    yield Hotkey(keys=("enter",))
    desk.wait_for(lambda focused, titles: focused == "" and "Replace" not in titles, "the 'strings replaced' message")
    yield Hotkey(keys=("enter",))
    desk.wait_focus(f"*{name}", "the edited document")
    yield Hotkey(keys=("ctrl", "s"))
    desk.wait_focus(name, "the save")
    yield Finished()


def _build_create_lines(p: Mapping[str, Any]) -> Piece:
    lines = list(p["lines"])
    listed = ", ".join(f"'{line}'" for line in lines)
    return Piece(
        instruction=f"In the text editor, write a new file {p['file']} with {len(lines)} lines: {listed}; save it.",
        check={"kind": "files", "expect": [{"path": p["file"], "lines": lines}]},
        launch=_editor(),
    )


def _solve_create_lines(desk: Desk, p: Mapping[str, Any]) -> Iterator[Action]:
    desk.wait_for(lambda focused, _: "Untitled" in focused, "the editor's new document")
    yield Type(content="\n".join(p["lines"]))
    yield Hotkey(keys=("ctrl", "s"))
    yield from _save_dialog(desk, p["file"])  # the dialog opens in the root (the editor's working directory)
    desk.wait_focus(PurePosixPath(p["file"]).name, "the saved document")
    yield Finished()


def _build_append_save_as(p: Mapping[str, Any]) -> Piece:
    lines = [*p["text"].splitlines(), p["line"]]
    return Piece(
        instruction=(f"In the text editor, add the line '{p['line']}' at the end of {p['file']} and save it "
                     f"as {p['target']} in the same folder, leaving {p['file']} as it was."),
        check={"kind": "files", "expect": [{"path": p["target"], "lines": lines},
                                           {"path": p["file"], "equals": p["text"]}]},
        launch=_editor(p["file"]),
        files=(FileSpec(p["file"], text=p["text"]),),
    )


def _solve_append_save_as(desk: Desk, p: Mapping[str, Any]) -> Iterator[Action]:
    name = PurePosixPath(p["file"]).name
    desk.wait_focus(name, f"the editor on {name}")
    yield Hotkey(keys=("ctrl", "end"))
    yield Type(content=("" if p["text"].endswith("\n") else "\n") + p["line"])
    yield Hotkey(keys=("ctrl", "shift", "s"))
    yield from _save_dialog(desk, PurePosixPath(p["target"]).name)  # the dialog shows the file's folder
    desk.wait_focus(PurePosixPath(p["target"]).name, "the saved copy")
    yield Finished()


def _build_make_folder(p: Mapping[str, Any]) -> Piece:
    return Piece(
        instruction=f"In the file manager, create a new folder named {p['folder']} in the folder it shows.",
        check={"kind": "files", "expect": [{"path": p["folder"], "is_dir": True}]},
        launch=(APPS["files"],),
    )


def _solve_make_folder(desk: Desk, p: Mapping[str, Any]) -> Iterator[Action]:
    desk.wait_focus(desk.root.name, "the file manager on the root")
    yield Hotkey(keys=("ctrl", "shift", "n"))
    desk.wait_for(lambda focused, _: "New Folder" in focused, "the new-folder prompt")
    yield Hotkey(keys=("ctrl", "a"))
    yield Type(content=p["folder"])
    yield Hotkey(keys=("enter",))
    desk.wait_focus(desk.root.name, "the file manager again")
    yield Finished()


#: Family name -> family; each builds tasks on the apps of `APPS`.
FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("replace_word", MappingProxyType({"file": "notes.txt", "old": "draft", "new": "final",
                                             "text": "Status: draft\nThe draft plan goes out on Friday.\n"}),
           _build_replace_word, _solve_replace_word),
    Family("create_lines", MappingProxyType({"file": "todo.txt", "lines": ("buy milk", "call Bob", "write the report")}),
           _build_create_lines, _solve_create_lines),
    Family("append_save_as", MappingProxyType({"file": "log.txt", "text": "2026-01-02 started\n2026-01-03 tested\n",
                                               "line": "2026-01-05 released", "target": "log-2026.txt"}),
           _build_append_save_as, _solve_append_save_as),
    Family("make_folder", MappingProxyType({"folder": "archive"}), _build_make_folder, _solve_make_folder),
)}


def _params(name: str, overrides: Mapping[str, Any]) -> dict[str, Any]:
    if name not in FAMILIES:
        raise KeyError(f"unknown desktop family {name!r}; known: {sorted(FAMILIES)}")
    unknown = set(overrides) - set(FAMILIES[name].defaults)
    if unknown:
        raise RecordError(f"family {name}: unknown parameter(s) {sorted(unknown)}; known: {sorted(FAMILIES[name].defaults)}")
    return json.loads(json.dumps({**FAMILIES[name].defaults, **overrides}))  # plain JSON: tasks round-trip


def desktop_task(name: str, *, task_id: str | None = None, max_steps: int = 20, **params: Any) -> TaskSpec:
    """One task of family `name` (parameters default to the family's), with its materialization plan and check."""
    params = _params(name, params)
    piece = FAMILIES[name].build(params)
    plan = MaterializePlan(files=piece.files, launch=piece.launch)
    return TaskSpec(
        id=task_id or f"desktop/{name}", instruction=piece.instruction, platform=Platform.DESKTOP,
        setup={"materialize": plan.to_dict()}, check=piece.check, max_steps=max_steps,
        metadata={"family": name, "params": params},
    )


def workflow_task(task_id: str, steps: Sequence[tuple[str, str, Mapping[str, Any], Sequence[str]]], *,
                  max_steps: int = 20) -> SegmentedTask:
    """A segmented task from family instances: `steps` are (segment id, family, params, depends_on).

    The whole task starts from every segment's files, launches every app the segments use, and passes
    when all segment checks do; each segment keeps its own instruction, check, launch and solver.
    """
    segments, files, launches = [], [], []
    for segment_id, name, overrides, depends_on in steps:
        params = _params(name, overrides)
        piece = FAMILIES[name].build(params)
        files += piece.files
        launches += [argv for argv in piece.launch if argv not in launches]
        segments.append(Segment(segment_id, piece.instruction, piece.check, tuple(depends_on), piece.launch,
                                max_steps=max_steps, metadata={"family": name, "params": params}))
    instruction = "Do these in order: " + " ".join(f"({i}) {s.instruction}" for i, s in enumerate(segments, 1))
    task = TaskSpec(
        id=task_id, instruction=instruction, platform=Platform.DESKTOP,
        setup={"materialize": MaterializePlan(files=tuple(files), launch=tuple(launches)).to_dict()},
        check={"kind": "all", "checks": [dict(s.check) for s in segments]}, max_steps=max_steps * len(segments),
        metadata={"segments": [s.id for s in segments]},
    )
    return SegmentedTask(task, tuple(segments))


def project_workflow(task_id: str = "desktop/project_report") -> SegmentedTask:
    """The bundled long workflow: make a folder in the file manager, write a summary into it, finalize the notes."""
    return workflow_task(task_id, [
        ("make_folder", "make_folder", {"folder": "reports"}, ()),
        ("write_summary", "create_lines", {"file": "reports/summary.txt",
                                           "lines": ("Q1 summary", "revenue up", "costs flat")}, ("make_folder",)),
        ("finalize_notes", "replace_word", {"file": "draft.txt", "text": "Plan: draft\nReview the draft today.\n"}, ()),
    ])


# --- playing reference solutions through the agent loop -----------------------------------------------

def reference_solver(env: Env, task: TaskSpec) -> Iterator[Action]:
    """The reference solution of a family task, started on the live `env` (it reads the desktop as it goes)."""
    name = task.metadata.get("family")
    if name not in FAMILIES:
        raise SolverError(f"task {task.id} names no desktop family (metadata['family']={name!r}); "
                          f"known: {sorted(FAMILIES)}")
    return FAMILIES[name].solve(Desk(env, sandbox_root(env)), task.metadata.get("params", {}))


for _kind in CHECK_KINDS:  # the oracle plays desktop tasks by their family's reference solver
    SOLVERS[_kind] = reference_solver
