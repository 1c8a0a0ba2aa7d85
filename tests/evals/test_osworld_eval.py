"""`uivenus eval osworld`: plan-only coverage, per-task errors that never count as success, and real episodes on
the native desktop judged by each task's own evaluator (resumed without rerunning finished tasks)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from uivenus.cli.eval_osworld import osworld
from uivenus.evals.osworld import evaluate_osworld

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
