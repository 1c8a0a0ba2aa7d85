"""The package's layering (SYSTEM.md): imports point down only. A module may import its own layer or lower ones;
an import of a higher layer (even inside a function) fails this test with the offending line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "uivenus"

#: Rank of each top-level part of the package; a module may import parts of its own rank or lower.
RANKS = {
    "actions": 0, "records": 0, "files": 0, "progress": 0, "images": 0,
    "store": 1, "envs": 1,
    "agent": 2, "verify": 2, "synth": 2,
    "tasks": 3, "train": 3, "evals": 3, "reports": 3,
    "cli": 4,
}


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "uivenus" else None


def _imports(tree: ast.AST, here: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = here.split(".")[: -node.level]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            if module == "uivenus":
                found += [(node.lineno, f"uivenus.{alias.name}") for alias in node.names]
    return found


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.parent != PACKAGE or p.name != "__init__.py")


def test_every_part_has_a_rank():
    parts = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in _modules()}
    assert parts - {"__main__"} <= set(RANKS), f"parts without a rank: {sorted(parts - set(RANKS))}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path):
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    here = ".".join(rel.parts)  # a package's __init__ counts as a module inside it, as relative imports do
    own = RANKS[rel.parts[1].removesuffix(".py")]
    upward = [f"line {line}: {module}" for line, module in _imports(ast.parse(path.read_text()), here)
              if (part := _part(module)) in RANKS and RANKS[part] > own]
    assert not upward, f"{here} (rank {own}) imports a higher layer: {upward}"
