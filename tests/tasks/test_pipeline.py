"""The pipeline: a round killed mid-way resumes without redoing finished episodes, and `tasks run` / `tasks loop`
collect, verify, summarise and resume through the CLI — all on sandbox apps in real Chromium with the oracle."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import textwrap
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from uivenus.cli.tasks_run import STATS_COLUMNS, loop, run
from uivenus.store import EPISODE_FILE, LABELS_FILE, STEPS_FILE, read_run
from uivenus.tasks.catalog import Catalog, FunctionCall
from uivenus.tasks.catalog_docs import bundled_docs, catalog_from_docs
from uivenus.tasks.collect import episode_id
from uivenus.tasks.executors import SerialExecutor
from uivenus.tasks.functions import app_model
from uivenus.tasks.gate import Gate
from uivenus.tasks.phrasing import compose, phrase_call
from uivenus.tasks.rounds import PLAN_FILE, STATS_FILE, Pipeline, RoundStats
from uivenus.tasks.spec import SynthTask, TaskKind, write_tasks
from uivenus.tasks.synthesis import build_task

APPS = ("settings", "notes", "contacts")


def _catalog() -> Catalog:
    catalog = Catalog()
    for app in APPS:
        catalog.merge(catalog_from_docs(bundled_docs(app)))
    return catalog


def make(catalog: Catalog, key: str, **params: object) -> SynthTask:
    app, name = key.split(".")
    call = FunctionCall(app, name, params)
    return build_task([call], compose([phrase_call(catalog.function(key), call)]), TaskKind.SINGLE,
                      app_model(app).setup, {"synthesizer": "test"})


#: A pipeline round in a process of its own, proposing the tasks of a JSONL file.
ROUND_SCRIPT = textwrap.dedent("""
    import sys
    from uivenus.tasks.catalog import Catalog
    from uivenus.tasks.catalog_docs import bundled_docs, catalog_from_docs
    from uivenus.tasks.executors import SerialExecutor
    from uivenus.tasks.gate import Gate
    from uivenus.tasks.spec import read_tasks
    from uivenus.tasks.synthesis import Synthesis
    from uivenus.tasks.rounds import Pipeline

    class Fixed:
        name = "fixed"
        def synthesize(self, catalog, n):
            return Synthesis(tuple(read_tasks(sys.argv[1]))[:n])

    catalog = Catalog()
    for app in ("settings", "notes", "contacts"):
        catalog.merge(catalog_from_docs(bundled_docs(app)))
    with SerialExecutor() as executor:
        Pipeline(catalog, Fixed(), Gate(catalog), executor, "oracle", sys.argv[2], "killed", progress=False).round(3)
""")


def _fingerprint(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_ino, stat.st_mtime_ns


def test_a_pipeline_killed_mid_round_resumes_without_redoing_finished_episodes(tmp_path: Path,
                                                                              fixed_synthesizer: type) -> None:
    catalog = _catalog()
    tasks = [make(catalog, "settings.set_toggle", which="bluetooth", value="off"),
             make(catalog, "notes.create_note", title="Garden jobs", body="Buy flour and yeast"),
             make(catalog, "contacts.favorite_contact", contact="Farah Haddad")]
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    (tmp_path / "round.py").write_text(ROUND_SCRIPT)
    store, run_dir = tmp_path / "store", tmp_path / "store" / "killed"
    process = subprocess.Popen([sys.executable, str(tmp_path / "round.py"), str(tmp_path / "tasks.jsonl"), str(store)],
                               start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    try:
        while not list(run_dir.glob(f"*/{EPISODE_FILE}")):
            assert process.poll() is None, process.stdout.read().decode()[-2000:]
            assert time.monotonic() < deadline, "no episode finished within 120 s"
            time.sleep(0.1)
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the pipeline, its Playwright driver, everything in its session
        process.wait()
    finished = {p.parent.name for p in run_dir.glob(f"*/{EPISODE_FILE}")}
    verified = {name for name in finished
                if "trace" in json.loads((run_dir / name / EPISODE_FILE).read_text())["verdicts"]}
    before = {name: {f.relative_to(run_dir / name): _fingerprint(f) for f in (run_dir / name).rglob("*")}
              for name in finished}
    assert 1 <= len(finished) < len(tasks)
    assert (run_dir / "pipeline" / "round-001" / PLAN_FILE).exists()
    assert not (run_dir / "pipeline" / "round-001" / STATS_FILE).exists()

    others = [make(catalog, "notes.pin_note", note="Groceries")]  # a restarted round must not propose anew
    with SerialExecutor() as executor:
        stats = Pipeline(_catalog(), fixed_synthesizer(others), Gate(_catalog()), executor, "oracle", store, "killed",
                         progress=False).round(3)
    assert stats.round == 1 and stats.skipped == len(finished) and stats.episodes == len(tasks) - len(finished)
    assert (stats.proposed, stats.accepted, stats.verified_success) == (3, 3, 3)
    episodes = {t.metadata["episode_id"]: t for t in read_run(run_dir)}
    assert set(episodes) == {episode_id(t.spec, "oracle") for t in tasks}  # complete, and nothing else
    assert all(t.complete and t.verdicts["trace"]["outcome"] == "success" for t in episodes.values())
    assert all("resumes" not in t.metadata for t in episodes.values())  # unfinished ones were restarted cleanly
    for name, files in before.items():  # finished episodes were not redone
        for relative, fingerprint in files.items():
            if relative in (Path(EPISODE_FILE), Path(LABELS_FILE)) and name not in verified:
                continue  # finished just before the kill, verified after the restart
            assert _fingerprint(run_dir / name / relative) == fingerprint, (name, relative)
        assert _fingerprint(run_dir / name / STEPS_FILE) == files[Path(STEPS_FILE)]
    saved = RoundStats.from_dict(json.loads((run_dir / "pipeline" / "round-001" / STATS_FILE).read_text()))
    assert saved == stats


@pytest.fixture(scope="module")
def cli() -> typer.Typer:
    app = typer.Typer()
    app.command("run")(run)
    app.command("loop")(loop)
    return app


def test_tasks_run_collects_classifies_learns_and_resumes(cli: typer.Typer, tmp_path: Path) -> None:
    catalog = _catalog()
    catalog.save(tmp_path / "catalog.json")
    write_tasks(tmp_path / "tasks.jsonl", [make(catalog, "settings.set_toggle", which="dark_mode", value="off"),
                                           make(catalog, "contacts.add_contact", name="Omar Haddad", phone="555-01")])
    args = ["run", "--tasks", str(tmp_path / "tasks.jsonl"), "--policy", "oracle", "--executor", "serial",
            "--out", str(tmp_path / "runs"), "--catalog", str(tmp_path / "catalog.json")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "task_invalid" in result.output and "reference_failed" in result.output
    assert "digits_between" in result.output  # the catalog's diff: the constraint it learned
    (constraint,) = Catalog.load(tmp_path / "catalog.json").constraints("contacts.add_contact")
    assert constraint.param == "phone"
    trajectories = read_run(tmp_path / "runs" / "tasks-oracle")
    assert sorted(t.verdicts["trace"]["outcome"] == "success" for t in trajectories) == [False, True]
    again = CliRunner().invoke(cli, args)  # everything is done: nothing runs again
    assert again.exit_code == 0, again.output
    row = next(line for line in again.output.splitlines() if line.count("│") > 5)
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[:4] == ["2", "0", "2", "1"]  # tasks, collected, already done, verified


#: A store directory longer than a terminal line: nothing the CLI must say may hide in a folded or cut line.
LONG_NAME = "a-store-directory-whose-name-is-longer-than-a-whole-line-of-an-80-column-terminal"


@pytest.fixture(scope="module")
def finished_loop(cli: typer.Typer, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path, str]:
    """Two rounds of `tasks loop` run through the CLI in a long store path: its arguments, run directory, output."""
    root = tmp_path_factory.mktemp("loop")
    _catalog().save(root / "catalog.json")
    store = root / LONG_NAME / "runs"
    args = ["loop", "--catalog", str(root / "catalog.json"), "--rounds", "2", "--n", "1", "--kinds", "single",
            "--functions", "settings.set_toggle", "--executor", "serial", "--out", str(store), "--run-id", "loop"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return args, store / "loop", result.output


def test_tasks_loop_runs_rounds_prints_the_summary_and_resumes(cli: typer.Typer,
                                                               finished_loop: tuple[list[str], Path, str]) -> None:
    args, run_dir, output = finished_loop
    stats = [json.loads((run_dir / "pipeline" / f"round-00{i}" / STATS_FILE).read_text()) for i in (1, 2)]
    assert [s["round"] for s in stats] == [1, 2] and all(s["verified_success"] == s["accepted"] == 1 for s in stats)
    assert "round 2: 1 proposed, 1 accepted, 1 verified" in " ".join(output.split())
    assert len(read_run(run_dir)) == 2  # the rounds proposed different tasks
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and "round 1:" not in again.output
    assert f"2 round(s) finished before, not run again: {run_dir}" in again.output.splitlines()


def _uivenus(args: list[str]) -> list[str]:
    return [sys.executable, "-c", "from uivenus.cli import app; app()", "tasks", *args]


def _plain(output: str) -> str:
    """Output without the escape sequences a terminal (or FORCE_COLOR) gets."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output)


def _in_terminal(argv: list[str], columns: int, timeout_s: float = 120.0) -> tuple[int, str]:
    """Run `argv` on a pseudo-terminal `columns` wide (stdin, stdout and stderr); its exit status and output."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                               env={**os.environ, "COLUMNS": str(columns), "TERM": "xterm"})
    os.close(slave)
    chunks, deadline = [], time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            if select.select([master], [], [], 1.0)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every process holding the terminal has exited
                    break
                if not chunk:
                    break
                chunks.append(chunk)
        return process.wait(timeout=10), b"".join(chunks).decode("utf-8", errors="replace")
    finally:
        os.close(master)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def test_tasks_loop_output_is_whole_in_a_pipe_and_in_a_narrow_terminal(finished_loop: tuple[list[str], Path, str],
                                                                      tmp_path: Path) -> None:
    args, run_dir, _ = finished_loop
    saved = [RoundStats.from_dict(json.loads((run_dir / "pipeline" / f"round-00{i}" / STATS_FILE).read_text()))
             for i in (1, 2)]
    message = f"2 round(s) finished before, not run again: {run_dir}"
    # piped into a log with COLUMNS=80: every header and figure of the table, and the message, whole
    with (tmp_path / "log").open("w") as log:
        piped = subprocess.run(_uivenus(args), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                               env={**os.environ, "COLUMNS": "80"}, timeout=120)
    output = _plain((tmp_path / "log").read_text())
    assert piped.returncode == 0, output
    assert message in output.splitlines() and "…" not in output
    header = next(line for line in output.splitlines() if line.startswith("┃"))
    assert [c.strip() for c in header.split("┃")[1:-1]] == [name for name, _ in STATS_COLUMNS]
    rows = {tuple(c.strip() for c in line.split("│")[1:-1]) for line in output.splitlines() if line.startswith("│")}
    assert rows == {tuple(cell(s) for _, cell in STATS_COLUMNS) for s in saved}
    # on an 80-column terminal, where rich folds long lines, the message still comes as one line
    status, output = _in_terminal(_uivenus(args), columns=80)
    assert status == 0, output
    assert message in _plain(output).splitlines()
