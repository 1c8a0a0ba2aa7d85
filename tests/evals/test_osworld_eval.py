"""`uivenus eval osworld`: plan-only coverage, per-task errors that never count as success, and real episodes on
the native desktop judged by each task's own evaluator (resumed without rerunning finished tasks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from uivenus.agent.element_listing import A11Y_HEADER
from uivenus.agent.loop import A11Y_TREE_KEY
from uivenus.cli.eval_osworld import osworld
from uivenus.envs.registry import EnvSpecError, make_env
from uivenus.evals.osworld import ENV_SPECS, evaluate_osworld
from uivenus.store import RUN_FILE, read_episode

from ..gtk_windows import INVOICE

app = typer.Typer()
app.command()(osworld)
runner = CliRunner()


def write(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def os_task(task_id: str, **changes) -> dict:
    data = {"id": task_id, "snapshot": "os", "instruction": f"task {task_id}", "source": "test",
            "related_apps": ["os"], "config": [],
            "evaluator": {"func": "exact_match", "result": {"type": "vm_command_line", "command": "echo hi"},
                          "expected": {"type": "rule", "rules": {"expected": "hi"}}}}
    data.update(changes)
    return data


def test_plan_only_writes_coverage_and_runs_nothing(tmp_path: Path) -> None:
    write(tmp_path / "tasks/os/a.json", os_task("a"))
    write(tmp_path / "tasks/os/b.json", os_task("b", evaluator={"func": "no_such_metric"}))
    write(tmp_path / "tasks/drive/c.json", os_task("c", config=[{"type": "googledrive", "parameters": {}}]))
    write(tmp_path / "tasks/os/d.json", "{not json")
    out = tmp_path / "out"
    result = runner.invoke(app, ["--tasks", str(tmp_path / "tasks"), "--out", str(out), "--plan-only"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "coverage.json").read_text())
    assert report["tasks"] == 4 and report["supported"] == 1
    assert report["unsupported"]["malformed task"] == 1
    reasons = " | ".join(report["unsupported"])
    assert "no_such_metric" in reasons and "googledrive" in reasons
    assert "coverage: 1/4 tasks supported" in result.output and "d.json" in result.output
    assert not (out / "runs").exists() and not (out / "results.json").exists()
    ids = write(tmp_path / "ids.txt", "a\nc\n")
    narrowed = runner.invoke(app, ["--tasks", str(tmp_path / "tasks"), "--out", str(out), "--plan-only",
                                   "--domains", "os", "--ids", str(ids)])
    assert narrowed.exit_code == 0, narrowed.output
    assert json.loads((out / "coverage.json").read_text())["tasks"] == 1
    empty = runner.invoke(app, ["--tasks", str(tmp_path / "tasks"), "--out", str(out), "--plan-only", "--domains", ","])
    assert empty.exit_code != 0 and "--domains takes a comma-separated list" in empty.output


def test_tasks_that_cannot_run_are_errors_in_results_and_never_successes(tmp_path: Path) -> None:
    write(tmp_path / "tasks/os/bad.json", os_task("bad", evaluator={"func": "no_such_metric", "result": {}}))
    write(tmp_path / "tasks/os/broken.json", '{"id": "broken"')
    summary = evaluate_osworld(tmp_path / "tasks", "noop", tmp_path / "out", executor="serial", progress=False)
    results = json.loads((tmp_path / "out/results.json").read_text())
    assert [(r["id"], r["domain"], r["success"], r["score"]) for r in results] == [
        ("bad", "os", False, 0.0), ("broken", "os", False, 0.0)]
    assert results[0]["error"].startswith("unsupported:") and "no_such_metric" in results[0]["error"]
    assert results[1]["error"].startswith("malformed task:")
    assert summary["overall"] == {**summary["overall"], "tasks": 2, "successes": 0, "errors": 1, "unsupported": 1}
    assert summary["ran"] == 0
    index = (tmp_path / "out/report/index.html").read_text()
    assert 'href="os.html"' in index and "0/2" in index
    assert "no_such_metric" in (tmp_path / "out/report/os.html").read_text()


def shell_task(task_id: str, expected: str, **changes) -> dict:
    """An `os` task whose setup writes a file in the root's home and whose evaluator reads it back."""
    data = os_task(task_id, config=[{"type": "execute", "parameters": {
        "command": ["sh", "-c", "echo hi > /home/user/note.txt"]}}])
    data["evaluator"] = {"func": "exact_match",
                         "result": {"type": "vm_command_line", "command": ["cat", "/home/user/note.txt"]},
                         "expected": {"type": "rule", "rules": {"expected": expected}}}
    data.update(changes)
    return data


def test_episodes_are_judged_by_their_evaluators_and_a_rerun_resumes(tmp_path: Path) -> None:
    """Real episodes on the desktop (Xvfb, bubblewrap): the noop floor passes a task its setup already satisfies,
    fails one it does not, and a failed download and an evaluator that raises are errors, never successes."""
    tasks = tmp_path / "tasks"
    write(tasks / "os/done.json", shell_task("done", "hi\n"))
    write(tasks / "os/not-done.json", shell_task("not-done", "bye\n"))
    raising = shell_task("raises", "hi\n")
    raising["evaluator"]["expected"] = {"type": "rule", "rules": {"no_expected_key": 1}}
    write(tasks / "os/raises.json", raising)
    write(tasks / "os/offline.json", shell_task("offline", "hi\n", config=[{"type": "download", "parameters": {
        "files": [{"url": "http://127.0.0.1:9/missing.xlsx", "path": "/home/user/missing.xlsx"}]}}]))
    out = tmp_path / "out"
    summary = evaluate_osworld(tasks, "noop", out, executor="serial", progress=False)
    results = {r["id"]: r for r in json.loads((out / "results.json").read_text())}
    assert results["done"] == {**results["done"], "success": True, "score": 1.0, "error": None, "steps": 1}
    assert results["not-done"] == {**results["not-done"], "success": False, "score": 0.0, "error": None}
    assert results["raises"]["success"] is False and "no_expected_key" not in str(results["raises"]["reason"])
    assert results["raises"]["error"] and "expected" in results["raises"]["error"]
    assert results["offline"]["success"] is False and "127.0.0.1:9/missing.xlsx" in results["offline"]["error"]
    assert summary["ran"] == 4 and summary["overall"]["successes"] == 1 and summary["overall"]["errors"] == 2
    assert summary["overall"]["seconds_per_episode"] > 0
    # the same command again: nothing is rerun, the results are the same
    again = evaluate_osworld(tasks, "noop", out, executor="serial", progress=False)
    assert again["ran"] == 0 and again["skipped"] == 4
    assert json.loads((out / "results.json").read_text()) == list(results.values())


def test_unsafe_host_is_a_desktop_spec_asked_for_by_name() -> None:
    """`--unsafe-host` reaches the workers as the env spec `desktop:unsafe-host`; plain `desktop` keeps bubblewrap."""
    assert ENV_SPECS == {False: "desktop", True: "desktop:unsafe-host"}
    for spec, unsafe in ENV_SPECS.items():
        env = make_env(unsafe)
        try:
            assert env.config.unsafe_host is spec
        finally:
            env.close()
    with pytest.raises(EnvSpecError, match="takes no argument or one of unsafe-host"):
        make_env("desktop:unsafe")


def test_reference_and_wrong_replay_each_tasks_own_solutions(tmp_path: Path) -> None:
    """`reference` and `wrong` play the task's stored solutions (through the oracle, out of band) in a terminal
    the setup opened: the reference passes the evaluator, the wrong one does not. Each ends with a wait, as an agent
    would: the shell runs the typed command after the keys reach it, and the evaluator reads the home right away."""
    data = os_task("touch", config=[{"type": "launch", "parameters": {"command": ["xterm"]}}],
                   uivenus={"reference": ["Wait(seconds=2)", "Type(content='touch ~/made.txt\\n')", "Wait(seconds=1)"],
                            "wrong": ["Wait(seconds=2)", "Type(content='touch ~/other.txt\\n')", "Wait(seconds=1)"]})
    data["evaluator"] = {"func": "check_include_exclude",
                         "result": {"type": "vm_command_line", "command": ["ls", "/home/user"]},
                         "expected": {"type": "rule", "rules": {"include": ["made.txt"], "exclude": []}}}
    write(tmp_path / "tasks/os/touch.json", data)
    for policy, success in (("reference", True), ("wrong", False)):
        summary = evaluate_osworld(tmp_path / "tasks", policy, tmp_path / policy, executor="serial", progress=False)
        [result] = summary["results"]
        assert (result.success, result.error, result.steps) == (success, None, 4), result


def test_an_unknown_policy_fails_before_anything_runs(tmp_path: Path) -> None:
    write(tmp_path / "tasks/os/a.json", os_task("a"))
    result = runner.invoke(app, ["--tasks", str(tmp_path / "tasks"), "--out", str(tmp_path / "out"),
                                 "--policy", "nope:x", "--executor", "serial"])
    assert result.exit_code != 0
    assert "unknown policy spec 'nope:x'" in str(result.exception) and "reference / wrong" in str(result.exception)
    assert not (tmp_path / "out/runs").exists()


def test_an_episode_past_its_time_limit_is_an_error_and_the_run_goes_on(tmp_path: Path) -> None:
    """`--time-limit`: a replayed solution that keeps the desktop busy past the limit ends unjudged — an error that
    names the limit, never a success, even though its evaluator would pass — and the next task still runs and passes."""
    slow = shell_task("slow", "hi\n", uivenus={"reference": ["Wait(seconds=3)", "Wait(seconds=3)", "Wait(seconds=3)"]})
    quick = shell_task("quick", "hi\n", uivenus={"reference": ["Wait(seconds=0.1)"]})
    for data in (slow, quick):
        write(tmp_path / f"tasks/os/{data['id']}.json", data)
    result = runner.invoke(app, ["--tasks", str(tmp_path / "tasks"), "--out", str(tmp_path / "out"), "--policy",
                                 "reference", "--time-limit", "5", "--executor", "serial", "--no-progress"])
    assert result.exit_code == 0, result.output
    results = {r["id"]: r for r in json.loads((tmp_path / "out/results.json").read_text())}
    assert results["slow"]["success"] is False and results["slow"]["outcome"] == "error"
    assert results["slow"]["error"].startswith("time limit: the episode ran past 5 s after 2 step(s)")
    assert results["quick"]["success"] is True and results["quick"]["error"] is None
    assert json.loads((tmp_path / "out/summary.json").read_text())["time_limit_s"] == 5


def test_the_a11y_listing_reaches_the_policy_and_the_run_records_it(tmp_path: Path) -> None:
    """`--observation screenshot_a11y_tree` as in `uivenus run`: each step of a real GTK app in a task root lists its
    elements beside the screenshot; the summary and the run say which observation they ran with."""
    data = os_task("gtk", config=[{"type": "launch", "parameters": {"command": INVOICE}}],
                   uivenus={"reference": ["Wait(seconds=1)"] * 4})
    data["evaluator"]["expected"]["rules"]["expected"] = "hi\n"  # `echo hi`'s output: the episode passes
    write(tmp_path / "tasks/os/gtk.json", data)
    args = ["--tasks", str(tmp_path / "tasks"), "--out", str(tmp_path / "out"), "--policy", "reference",
            "--executor", "serial", "--no-progress"]
    wrong = runner.invoke(app, [*args, "--observation", "a11y"])
    assert wrong.exit_code != 0 and "screenshot_a11y_tree" in wrong.output
    assert not (tmp_path / "out").exists()  # refused before anything ran
    result = runner.invoke(app, [*args, "--observation", "screenshot_a11y_tree", "--a11y-limit", "30"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert (summary["observation"], summary["a11y_limit"], summary["overall"]["successes"]) == (
        "screenshot_a11y_tree", 30, 1)
    run = tmp_path / "out/runs/osworld-reference"
    assert json.loads((run / RUN_FILE).read_text())["metadata"]["observation"] == "screenshot_a11y_tree"
    [episode] = [read_episode(d) for d in run.iterdir() if d.is_dir()]
    listings = [step.info[A11Y_TREE_KEY] for step in episode.steps]
    assert len(listings) == 5 and all(text.startswith(A11Y_HEADER) for text in listings)
    assert any("push button\tSend invoice" in text and "\tACME Ltd\t" in text for text in listings)
