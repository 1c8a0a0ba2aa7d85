"""Desktop task families on real Debian apps: tasks built from parameters, each with a reference solver.

The families (`FAMILIES`) run on l3afpad (a GTK text editor) and pcmanfm (a file manager), both small Debian
packages that run under Xvfb. A family builds a `TaskSpec` from parameters: an instruction, a materialization
plan (`setup["materialize"]`: the files and app launches the episode starts from; `uivenus.envs.materialize`)
and a check on the files the apps save (`uivenus.envs.desktop_checks`). Each has a keyboard-first reference solver
that reads the live desktop (the focused window's title) between actions, so it waits for dialogs instead of
racing them. This module registers the desktop check kinds ("files", "all") with the one check registry
(`uivenus.envs.checks`), the reference solver included, which the `oracle` policy plays like any policy.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from uivenus.actions.space import Action, Finished, Hotkey, Platform, Type, Wait
from uivenus.envs.base import Env
from uivenus.envs.checks import Checker, register_checker
from uivenus.envs.desktop_checks import CHECK_KINDS, root_verdict, sandbox_root
from uivenus.envs.materialize import FileSpec, MaterializePlan
from uivenus.envs.sandbox.solving import SolverError
from uivenus.records import RecordError, TaskSpec

__all__ = ["APPS", "DEBIAN_PACKAGES", "FAMILIES", "Desk", "Family", "Piece", "desktop_task", "family_params",
           "reference_solver"]

#: Debian packages the desktop family runs (the Makefile installs them).
DEBIAN_PACKAGES = ("l3afpad", "pcmanfm")
#: App roles -> argv of the program that plays them (`{root}` is the sandbox root).
APPS: Mapping[str, tuple[str, ...]] = MappingProxyType({"editor": ("l3afpad",), "files": ("pcmanfm", "{root}")})


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
        instruction=f"In the text editor, replace every '{p['old']}' in {p['file']} with '{p['new']}' and save the "
                    "file.",
        check={"kind": "files", "expect": [{"path": p["file"], "contains": p["new"], "not_contains": p["old"]}]},
        launch=_editor(p["file"]),
        files=(FileSpec(p["file"], text=p["text"]),),
    )


def _editor_on(desk: Desk, file: str) -> str:
    """Wait until the editor that the task opened on `file` has the focus; returns its title (the file's name)."""
    name = PurePosixPath(file).name
    desk.wait_focus(name, f"the editor on {name}")
    return name


def _solve_replace_word(desk: Desk, p: Mapping[str, Any]) -> Iterator[Action]:
    name = _editor_on(desk, p["file"])
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
    _editor_on(desk, p["file"])
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
    Family("create_lines",
           MappingProxyType({"file": "todo.txt", "lines": ("buy milk", "call Bob", "write the report")}),
           _build_create_lines, _solve_create_lines),
    Family("append_save_as", MappingProxyType({"file": "log.txt", "text": "2026-01-02 started\n2026-01-03 tested\n",
                                               "line": "2026-01-05 released", "target": "log-2026.txt"}),
           _build_append_save_as, _solve_append_save_as),
    Family("make_folder", MappingProxyType({"folder": "archive"}), _build_make_folder, _solve_make_folder),
)}


def family_params(name: str, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of an instance of family `name`: its defaults with `overrides`, as plain JSON."""
    if name not in FAMILIES:
        raise KeyError(f"unknown desktop family {name!r}; known: {sorted(FAMILIES)}")
    unknown = set(overrides) - set(FAMILIES[name].defaults)
    if unknown:
        raise RecordError(f"family {name}: unknown parameter(s) {sorted(unknown)}; "
                          f"known: {sorted(FAMILIES[name].defaults)}")
    return json.loads(json.dumps({**FAMILIES[name].defaults, **overrides}))  # plain JSON: tasks round-trip


def desktop_task(name: str, *, task_id: str | None = None, max_steps: int = 20, **params: Any) -> TaskSpec:
    """One task of family `name` (parameters default to the family's), with its materialization plan and check."""
    params = family_params(name, params)
    piece = FAMILIES[name].build(params)
    plan = MaterializePlan(files=piece.files, launch=piece.launch)
    return TaskSpec(
        id=task_id or f"desktop/{name}", instruction=piece.instruction, platform=Platform.DESKTOP,
        setup={"materialize": plan.to_dict()}, check=piece.check, max_steps=max_steps,
        metadata={"family": name, "params": params},
    )


# --- the check kinds of these tasks, with their reference solutions -------------------------------------

def reference_solver(env: Env, task: TaskSpec) -> Iterator[Action]:
    """The reference solution of a family task, started on the live `env` (it reads the desktop as it goes)."""
    name = task.metadata.get("family")
    if name not in FAMILIES:
        raise SolverError(f"task {task.id} names no desktop family (metadata['family']={name!r}); "
                          f"known: {sorted(FAMILIES)}")
    return FAMILIES[name].solve(Desk(env, sandbox_root(env)), task.metadata.get("params", {}))


#: The desktop check kinds: judged by the files in the task's root, solved by the task's family.
DESKTOP_CHECKERS = tuple(register_checker(Checker(kind, root_verdict, solver=reference_solver)) for kind in CHECK_KINDS)
