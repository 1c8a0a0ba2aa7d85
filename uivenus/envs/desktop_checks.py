"""Desktop checks as data, judged by the files the apps saved in the episode's sandbox root.

A desktop task's `check` is data read by the registry `CHECK_KINDS`, e.g. ``{"kind": "files", "expect":
[{"path": "notes.txt", "contains": "final", "not_contains": "draft"}]}``, or ``{"kind": "all", "checks": [...]}``
(every check passes: a segmented task's whole-task check). Checks read the files under the root the env
materialized for the task, so a task is verified by what was saved, not by what the screen shows. The desktop
task families (`uivenus.envs.desktop_tasks`) register these kinds with the one check registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from uivenus.envs.base import Env, EnvError
from uivenus.envs.materialize import safe_path
from uivenus.envs.sandbox.tasks import CheckResult
from uivenus.records import TaskSpec

__all__ = ["CHECK_KINDS", "FILE_TESTS", "CheckError", "check_all", "check_files", "evaluate", "root_verdict",
           "sandbox_root"]


class CheckError(ValueError):
    """A check is malformed (unknown kind or test, wrong value type); the message names the field to fix."""


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


def root_verdict(env: Env, task: TaskSpec) -> Mapping[str, Any]:
    """The verdict of `task`'s check on the files in the env's sandbox root when the episode ends."""
    try:
        result = evaluate(task.check or {}, sandbox_root(env))
    except (EnvError, CheckError) as exc:  # MaterializeError (a check path leaving the root) is an EnvError
        return {"passed": False, "reason": f"{type(exc).__name__}: {exc}"}
    return {"passed": result.passed, "reason": result.reason}
