"""Desktop tasks on real Debian apps (l3afpad, pcmanfm) under one Xvfb: materialized files, checks that read what the
apps saved, reference solutions that pass, wrong ones that fail, and segmented workflows that skip finished segments
and resume at the first one whose check does not pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from uivenus.actions.grammar import format_response
from uivenus.actions.space import Finished, Hotkey, Type
from uivenus.agent.loop import run_episode
from uivenus.agent.policies.base import policy_from_spec
from uivenus.agent.policies.script import ScriptedPolicy
from uivenus.agent.safety import Guard
from uivenus.envs.desktop import DesktopEnv
from uivenus.envs.desktop_checks import CheckError, evaluate
from uivenus.envs.desktop_tasks import DEBIAN_PACKAGES, FAMILIES, desktop_task
from uivenus.envs.materialize import MaterializeError
from uivenus.records import Outcome, RecordError
from uivenus.store import TrajectoryStore, read_episode
from uivenus.tasks.desktop import Segment, SegmentedTask, project_workflow
from uivenus.tasks.segments import SegmentStatus, prepare_workspace, run_segments, workspace_name



def test_the_desktop_apps_are_installed():
    """`make test` installs them; a missing one is a broken setup, not a reason to skip the family."""
    assert [p for p in DEBIAN_PACKAGES if shutil.which(p) is None] == []

#: The desktop has no DOM: OCR would read every screen for the guard, which these checks do not need.
GUARD = Guard(ocr=False)
#: An empty solution: give up at once.
FINISH = format_response(Finished())


# --- checks as data -----------------------------------------------------------------------------

def test_file_checks_read_contents_lines_and_folders(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("Status: final\nship it\n")
    (tmp_path / "reports").mkdir()
    passing = {"kind": "files", "expect": [
        {"path": "notes.txt", "contains": ["final", "ship"], "not_contains": "draft", "line_count": 2,
         "lines": ["Status: final", "ship it"], "regex": r"^ship \w+$", "equals": "Status: final\nship it\n"},
        {"path": "reports", "is_dir": True}, {"path": "gone.txt", "exists": False}]}
    assert evaluate(passing, tmp_path).passed
    failing = {"kind": "files", "expect": [{"path": "notes.txt", "contains": "draft", "line_count": 3},
                                           {"path": "missing.txt", "lines": ["x"]},
                                           {"path": "notes.txt", "is_dir": True}]}
    result = evaluate(failing, tmp_path)
    assert not result.passed
    assert "lacks ['draft']" in result.reason and "has 2 lines, not 3" in result.reason
    assert "missing.txt is not a readable file" in result.reason and "notes.txt is not a folder" in result.reason
    assert evaluate({"kind": "all", "checks": [passing, failing]}, tmp_path).passed is False


@pytest.mark.parametrize(("check", "error", "message"), [
    ({"kind": "pixels"}, CheckError, "unknown check kind"),
    ({"kind": "files", "expect": []}, CheckError, "non-empty 'expect'"),
    ({"kind": "files", "expect": [{"path": "a", "size": 3}]}, CheckError, "unknown or missing tests"),
    ({"kind": "files", "expect": [{"path": "a"}]}, CheckError, "unknown or missing tests"),
    ({"kind": "files", "expect": [{"path": "../../etc/passwd", "exists": True}]}, MaterializeError, "sandbox root"),
])
def test_malformed_checks_are_refused(tmp_path: Path, check: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        evaluate(check, tmp_path)


def test_segmented_tasks_validate_dependencies_and_round_trip() -> None:
    workflow = project_workflow()
    assert SegmentedTask.from_dict(json.loads(json.dumps(workflow.to_dict()))) == workflow
    assert [s.id for s in workflow.segments] == ["make_folder", "write_summary", "finalize_notes"]
    assert workflow.segments[1].depends_on == ("make_folder",)
    assert workflow.task.check == {"kind": "all", "checks": [dict(s.check) for s in workflow.segments]}
    assert [f.path for f in workflow.initial_plan().files] == ["draft.txt"] and not workflow.initial_plan().launch
    check = {"kind": "files", "expect": [{"path": "a", "exists": True}]}
    with pytest.raises(RecordError, match="not earlier segments"):
        SegmentedTask(workflow.task, (Segment("b", "x", check, depends_on=("a",)), Segment("a", "y", check)))
    with pytest.raises(RecordError, match="distinct ids"):
        SegmentedTask(workflow.task, (Segment("a", "x", check), Segment("a", "y", check)))


# --- reference solutions in the real apps -------------------------------------------------------

@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_materialized_files_are_edited_by_the_reference_solution_and_the_check_reads_them(
        desktop_env: DesktopEnv, family: str) -> None:
    task = desktop_task(family)
    trajectory = run_episode(desktop_env, policy_from_spec("oracle"), task, guard=GUARD)
    root = desktop_env.materialized.root
    initial = {f["path"]: f["text"] for f in task.setup["materialize"]["files"]}
    assert trajectory.outcome is Outcome.FINISHED, trajectory.metadata.get("error")
    assert trajectory.verdicts["files"] == {"passed": True, "reason": "all files as expected"}
    assert evaluate(task.check, root).passed
    for path, text in initial.items():  # the plan wrote them; the app changed them or left them as the task says
        assert (root / path).exists()
    params = task.metadata["params"]
    if family == "replace_word":
        assert (root / params["file"]).read_text() == initial[params["file"]].replace("draft", "final")
    if family == "create_lines":
        assert (root / params["file"]).read_text().splitlines() == params["lines"]
    if family == "append_save_as":
        assert (root / params["target"]).read_text() == initial[params["file"]] + params["line"]
        assert (root / params["file"]).read_text() == initial[params["file"]]
    if family == "make_folder":
        assert (root / params["folder"]).is_dir()


def test_a_wrong_or_missing_solution_fails_the_check(desktop_env: DesktopEnv) -> None:
    task = desktop_task("replace_word")
    nothing = run_episode(desktop_env, ScriptedPolicy([FINISH]), task, guard=GUARD)
    assert nothing.outcome is Outcome.FINISHED and nothing.verdicts["files"]["passed"] is False
    assert "notes.txt lacks ['final']" in nothing.verdicts["files"]["reason"]
    # types the new word at the top and saves, but leaves every 'draft' in place
    wrong_solution = [format_response(a) for a in (Type(content="final "), Hotkey(keys=("ctrl", "s")), Finished())]
    wrong = run_episode(desktop_env, ScriptedPolicy(wrong_solution), task, guard=GUARD)
    root = desktop_env.materialized.root
    assert (root / "notes.txt").read_text().startswith("final Status: draft")
    assert wrong.verdicts["files"]["passed"] is False and "still holds ['draft']" in wrong.verdicts["files"]["reason"]


# --- segmented workflows ----------------------------------------------------------------------------

def stored(store: TrajectoryStore, run_id: str) -> dict[str, dict]:
    """Episode id -> (segment, passed) of everything the run stored."""
    run_dir = store.run_dir(run_id)
    out = {}
    for directory in sorted(p for p in run_dir.iterdir() if p.is_dir()):
        trajectory = read_episode(directory)
        out[directory.name] = {"segment": trajectory.task.metadata["segment"],
                               "passed": trajectory.verdicts["files"]["passed"]}
    return out


def test_a_segment_already_done_is_skipped_and_each_segment_is_its_own_episode(desktop_env: DesktopEnv,
                                                                                      tmp_path: Path) -> None:
    workflow = project_workflow("desktop/skip")
    store = TrajectoryStore(tmp_path / "runs")
    root = desktop_env.workspace(workspace_name(workflow))
    assert prepare_workspace(workflow, root) is not None and (root / "draft.txt").exists()
    (root / "reports").mkdir()  # segment 1's effect, done before this run
    run = run_segments(desktop_env, policy_from_spec("oracle"), workflow, store=store, run_id="skip", guard=GUARD)
    assert run.resumed and run.resumed_at == "write_summary" and run.passed
    assert [r.status for r in run.results] == [SegmentStatus.SKIPPED, SegmentStatus.PASSED, SegmentStatus.PASSED]
    assert stored(store, "skip") == {
        "desktop_skip.write_summary": {"segment": "write_summary", "passed": True},
        "desktop_skip.finalize_notes": {"segment": "finalize_notes", "passed": True},
    }
    assert (root / "reports/summary.txt").read_text().splitlines() == ["Q1 summary", "revenue up", "costs flat"]
    assert "final" in (root / "draft.txt").read_text() and "draft" not in (root / "draft.txt").read_text()
    again = run_segments(desktop_env, policy_from_spec("oracle"), workflow, store=store, run_id="skip", guard=GUARD)
    assert again.resumed_at is None and len(stored(store, "skip")) == 2, "a finished workflow runs nothing"


def test_a_failed_segment_blocks_its_dependents_and_the_next_run_resumes_there(desktop_env: DesktopEnv,
                                                                                      tmp_path: Path) -> None:
    workflow = project_workflow("desktop/resume")
    store = TrajectoryStore(tmp_path / "runs")
    failed = run_segments(desktop_env, ScriptedPolicy([FINISH]), workflow, store=store, run_id="resume", guard=GUARD)
    assert not failed.resumed and not failed.passed and failed.resumed_at == "make_folder"
    assert [r.status for r in failed.results] == [SegmentStatus.FAILED, SegmentStatus.BLOCKED, SegmentStatus.FAILED]
    assert failed.results[0].verdict == {"passed": False, "reason": "reports is not a folder"}
    root = failed.workspace
    assert root.is_dir() and (root / "draft.txt").exists(), "the workspace outlives its episodes"
    (root / "draft.txt").write_text("Plan: final\nReview the final today.\n")  # segment 3 done by hand meanwhile
    resumed = run_segments(desktop_env, policy_from_spec("oracle"), workflow, store=store, run_id="resume", guard=GUARD)
    assert resumed.resumed and resumed.resumed_at == "make_folder" and resumed.passed
    assert [r.status for r in resumed.results] == [SegmentStatus.PASSED, SegmentStatus.PASSED, SegmentStatus.SKIPPED]
    assert evaluate(workflow.task.check, root).passed
    episodes = stored(store, "resume")
    assert episodes["desktop_resume.make_folder"]["passed"] is False
    assert episodes["desktop_resume.make_folder.2"]["passed"] is True, "a retried segment gets a new episode"
    assert episodes["desktop_resume.write_summary"]["passed"] is True and len(episodes) == 4
