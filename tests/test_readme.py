"""README.md works as written: every command of its `sh` blocks runs, in order, in a fresh directory holding copies
of `examples/`, exits 0 without a traceback and writes what its `--out` names.

A line's comment `# needs: WHAT` (a GPU, a device, a server, a checkpoint, minutes of CPU) skips it;
`# test: ARGS` appends a small documented override (the later option wins). Nothing else is skipped.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
UIVENUS = Path(sys.executable).parent / "uivenus"


@dataclass(frozen=True)
class Command:
    line: str
    argv: tuple[str, ...]
    needs: str | None  # why the test skips it
    override: tuple[str, ...]


def readme_commands(text: str) -> list[Command]:
    """Every line of the README's ```sh blocks, with its marker comment read."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M):
        for line in block.splitlines():
            if not line.strip():
                continue
            code, comment = (re.split(r"\s+#\s", line, maxsplit=1) + [""])[:2]  # a `#` inside a URL stays
            comment = comment.strip()
            needs = comment.removeprefix("needs:").strip() if comment.startswith("needs:") else None
            override = tuple(shlex.split(comment.removeprefix("test:"))) if comment.startswith("test:") else ()
            commands.append(Command(line, tuple(shlex.split(code)), needs, override))
    return commands


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))


def test_the_readme_has_commands_and_every_line_is_one():
    assert len(COMMANDS) >= 25
    for command in COMMANDS:
        assert command.argv[0] in ("uivenus", "make"), command.line
        assert not any("<" in arg for arg in command.argv), f"placeholder in {command.line!r}"
        assert command.argv[0] == "uivenus" or command.needs, f"make lines need a `# needs:` marker: {command.line}"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    directory = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "examples", directory / "examples")  # configs/ is not copied: `--config configs/…` finds
    # the shipped copy from any directory
    return directory


def _option(argv: tuple[str, ...], name: str) -> str | None:
    values = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == name]
    return values[-1] if values else None


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c.argv[1:4]) + f"#{i}" for i, c in enumerate(COMMANDS)])
def test_readme_command_runs_as_written(command, scratch):
    if command.needs:
        pytest.skip(f"needs: {command.needs}")
    argv = [str(UIVENUS), *command.argv[1:], *command.override]
    started = time.monotonic()
    result = subprocess.run(argv, cwd=scratch, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "UIVENUS_DEBUG": "0"}, stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - started
    assert result.returncode == 0, f"{command.line}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.stdout.strip(), f"{command.line} printed nothing"
    out = _option(tuple(argv), "--out")
    if out is not None:
        target = scratch / out
        run_id = _option(tuple(argv), "--run-id")
        if run_id is not None:
            target = target / run_id
        assert target.exists(), f"{command.line} did not write {target}"
        assert target.is_file() and target.stat().st_size > 0 or target.is_dir() and any(target.iterdir())
    print(f"{seconds:6.1f} s  {command.line}")
