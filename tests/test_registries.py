"""The import-time checks that tables keyed by action type or field agree: they must hold under `python -O` too,
which strips `assert`, so a broken table fails at import with a `RegistryError` that names the gap."""

from __future__ import annotations

import subprocess
import sys

import pytest

from uivenus.actions.registries import RegistryError, check_covers

#: The modules whose tables are checked when they import.
CHECKED = ("uivenus.actions.space", "uivenus.agent.prompts", "uivenus.agent.policies.random_policy",
           "uivenus.verify.rewards", "uivenus.envs.desktop")


def _optimized(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-O", "-c", script], capture_output=True, text=True, timeout=120)


def test_check_covers_names_what_is_missing_and_what_is_extra() -> None:
    check_covers("same keys", {"a": 1, "b": 2}, ["b", "a"])
    check_covers("a superset", ["a", "b", "c"], ["a"], extra_ok=True)
    with pytest.raises(RegistryError) as caught:
        check_covers("SCORERS needs every field", ["point", "volume"], ["point", "keys", "app"])
    assert str(caught.value) == "SCORERS needs every field: missing ['app', 'keys']; unexpected ['volume']"
    with pytest.raises(RegistryError, match=r"^a superset: missing \['d'\]$"):
        check_covers("a superset", ["a", "b"], ["a", "d"], extra_ok=True)


def test_the_checked_modules_import_under_python_O() -> None:
    script = (f"import importlib, sys\nfor name in {CHECKED!r}: importlib.import_module(name)\n"
              "assert False, 'not stripped'\nprint('optimize', sys.flags.optimize)")
    done = _optimized(script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["optimize", "1"]  # the assert above was stripped: -O was in force


@pytest.mark.parametrize(("module", "table"), [
    ("uivenus.agent.prompts", "_FIELD_PLACEHOLDERS needs a placeholder for every action field"),
    ("uivenus.verify.rewards", "FIELD_SCORERS needs an entry for every action field"),
])
def test_a_field_without_an_entry_fails_the_import_under_python_O(module: str, table: str) -> None:
    """A new action record with a field the module's table lacks: the import must refuse it, -O or not."""
    script = f"""
import dataclasses, importlib
from uivenus.actions import registries, space

@dataclasses.dataclass(frozen=True)
class Louder:
    volume: int = 0

space.ACTION_CLASSES = {{**space.ACTION_CLASSES, "Louder": Louder}}
try:
    importlib.import_module({module!r})
except registries.RegistryError as exc:
    print("RegistryError:", exc)
"""
    done = _optimized(script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"RegistryError: {table}") and "missing ['volume']" in done.stdout, done.stdout
