"""The one registry of task checks: every family's kind is found whatever the caller imported, and a kind nobody
registered is an error that names it and the known kinds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from uivenus.envs.checks import Checker, UnknownCheckKind, check_kinds, checker_for, register_checker, task_checker
from uivenus.records import TaskSpec

REPO = Path(__file__).resolve().parents[2]


def test_every_family_registers_its_kinds() -> None:
    assert set(check_kinds()) >= {"sandbox", "miniwob", "files", "all"}
    assert checker_for("sandbox").solver is not None and checker_for("sandbox").from_state is not None
    assert checker_for("files").solver is not None and checker_for("files").from_state is None
    assert checker_for("miniwob").solver is None


def test_an_unknown_kind_is_an_error_naming_it_and_the_known_kinds() -> None:
    with pytest.raises(UnknownCheckKind) as caught:
        checker_for("pixels")
    assert caught.value.kind == "pixels" and "sandbox" in caught.value.known
    assert str(caught.value) == f"no checker for check kind 'pixels' (known: {', '.join(check_kinds())})"
    with pytest.raises(UnknownCheckKind, match="check kind None"):
        task_checker(TaskSpec(id="t", instruction="x", platform="web", check={"task": "a/b"}))
    assert task_checker(TaskSpec(id="t", instruction="x", platform="web")) is None


def test_a_kind_is_owned_once() -> None:
    with pytest.raises(ValueError, match="'sandbox' is registered twice"):
        register_checker(Checker("sandbox", lambda env, task: {}))


def test_a_fresh_process_that_imports_only_the_loop_finds_the_desktop_checker() -> None:
    script = ("import sys\nimport uivenus.agent.loop\nfrom uivenus.envs.checks import checker_for\n"
              "assert 'uivenus.tasks.desktop' not in sys.modules\n"
              "print(checker_for('files').verdict.__module__, checker_for('all').solver.__module__)")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["uivenus.envs.desktop_checks", "uivenus.envs.desktop_tasks"]
