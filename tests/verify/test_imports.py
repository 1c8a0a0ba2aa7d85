"""The verify modules import in one direction: each imports alone, and no import (not even one inside a function)
leads back to a module that imports it. `base` holds the records, the Judge protocol and the registry."""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

import uivenus.verify

PACKAGE = "uivenus.verify"
MODULES = sorted(m.name for m in pkgutil.iter_modules(uivenus.verify.__path__))


def verify_imports(path: Path) -> set[str]:
    """The `uivenus.verify` modules that `path` imports anywhere (module level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found |= {name.removeprefix(f"{PACKAGE}.").split(".")[0] for name in names if name.startswith(f"{PACKAGE}.")}
    return found & set(MODULES)


def test_the_verify_modules_import_one_way() -> None:
    graph = {name: verify_imports(Path(uivenus.verify.__path__[0]) / f"{name}.py") for name in MODULES}
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"import circle among the verify modules: {' -> '.join(exc.args[1])}")
    assert graph["base"] == set() and graph["voting"] == {"base"}
    assert all(order.index("base") < order.index(name) for name, imported in graph.items() if "base" in imported)
    assert "judges" not in graph["base"] | graph["voting"]


@pytest.mark.parametrize("name", MODULES)
def test_each_module_imports_alone_in_a_fresh_interpreter(name: str) -> None:
    script = (f"import sys, json; import {PACKAGE}.{name}; "
              f"print(json.dumps(sorted(m for m in sys.modules if m.startswith('{PACKAGE}.'))))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout)
    if name == "base":
        assert loaded == [f"{PACKAGE}.base"]  # the records and the plug point pull in no judge
