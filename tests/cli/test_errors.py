"""The CLI's error boundary: bad input to any command group is one `error: …` line and a non-zero exit, with the
traceback only under `--debug` / UIVENUS_DEBUG=1."""

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from uivenus.cli import app

runner = CliRunner()

# (command line, words the one line must contain); files are relative to a scratch directory holding
# bad.json ({"x": 1}) and bad.yaml (an unknown key).
CASES = [
    ("actions parse nope.txt", "'nope.txt' does not exist"),
    ("actions convert --from klingon bad.json", "unknown action format 'klingon'"),
    ("env shot --env browzer", "unknown environment 'browzer'"),
    ("env shot --env sandbox:note", "sandbox needs a bundled app"),
    ("env play --env sandbox:notes --actions nope.json", "'nope.json' does not exist"),
    ("env solve sandbox:notes/fly_to_mars", "no sandbox task 'notes/fly_to_mars'; the notes app's tasks"),
    ("env shot --env android", "adb"),
    ("runs show runs/nope", "runs/nope is not a directory"),
    ("synth grounding --n 0 --out g", "--n"),
    ("synth captcha --n 2 --families klingon --out c", "unknown families ['klingon']"),
    ("eval grounding --data nope.json --images nope --policy ocr --out o", "nope.json not found"),
    ("eval captcha --data nope --policy oracle --out o", "'nope' does not exist"),
    ("eval miniwob --tasks klingon --policy random --out o", "unknown MiniWoB task"),
    ("eval verifier --data nope --judges program", "nope is not a directory"),
    ("verify runs/nope --judges program", "runs/nope is not a directory"),
    ("verify . --judges klingon", "unknown judge spec 'klingon'"),
    ("train sft --config nope.yaml", "no config file 'nope.yaml'; tried nope.yaml, "),
    ("tasks explore --env browzer --out c.json", "explore needs a sandbox app"),
    ("tasks synth --catalog nope.json --n 2 --out t.jsonl", "'nope.json' does not exist"),
    ("tasks loop --rounds 1", "Missing option '--catalog'"),
    ("run x --policy klingon", "unknown policy spec 'klingon'"),
    ("run x --policy hf:./nope", "no checkpoint at ./nope"),
    ("run --task sandbox:notes/fly_to_mars --policy oracle", "no sandbox task"),
    ("run --task notes --policy oracle", "--task must look like sandbox:NAME"),
    ("run Turn-Wi-Fi-off --env sandbox:settings --policy oracle", "needs --task sandbox:APP/TASK"),
    ("serve --policy hf:./checkpoint", "no checkpoint at ./checkpoint"),
]


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("UIVENUS_DEBUG", raising=False)
    (tmp_path / "bad.json").write_text('{"x": 1}')
    (tmp_path / "bad.yaml").write_text("foo: 1\n")
    return tmp_path


@pytest.mark.parametrize(("line", "words"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_error_line(scratch, line, words):
    result = runner.invoke(app, line.split())
    assert result.exit_code in (1, 2), result.output
    assert isinstance(result.exception, SystemExit), result.exception  # no exception escaped the boundary
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert words in lines[0]
    assert "Traceback" not in result.output


def test_every_command_group_has_a_bad_input_case():
    groups = {name for name in (c.name for c in __import__("typer").main.get_command(app).commands.values())}
    covered = {line.split()[0] for line, _ in CASES}
    assert groups - {"demo"} <= covered, groups - covered


def test_the_installed_command_prints_one_line_and_a_traceback_only_when_debugging(scratch):
    command = [sys.executable, "-c", "from uivenus.cli import app; app()", "env", "shot", "--env", "browzer"]
    env = {k: v for k, v in os.environ.items() if k != "UIVENUS_DEBUG"}
    plain = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert plain.returncode == 1
    assert plain.stderr.strip().splitlines() == [plain.stderr.strip()] and "unknown environment" in plain.stderr
    debug = subprocess.run(command, capture_output=True, text=True, env={**env, "UIVENUS_DEBUG": "1"}, timeout=120)
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "EnvSpecError" in debug.stderr
    flag = subprocess.run(command[:3] + ["--debug"] + command[3:], capture_output=True, text=True, env=env,
                          timeout=120)
    assert flag.returncode == 1 and "Traceback" in flag.stderr


def test_a_bug_keeps_its_traceback(scratch):
    from uivenus.cli.errors import is_user_error
    from uivenus.envs.registry import EnvSpecError

    assert is_user_error(EnvSpecError("x")) and is_user_error(FileNotFoundError(2, "No such file", "a.txt"))
    assert not is_user_error(KeyError("x")) and not is_user_error(ZeroDivisionError())
