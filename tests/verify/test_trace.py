"""The trace verifier with the programmatic and OCR-evidence judges on real sandbox trajectories (Chromium),
recorded by the labelled-set builder: reference runs succeed; truncated, task-swapped and undone ones do not."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from uivenus.actions.space import Finished
from uivenus.envs.base import HIT_ELEMENT
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.sandbox import SandboxServer, get_task
from uivenus.evals.verifier_data import BuildPlan, Perturbation, build_sandbox, record_episode
from uivenus.records import Step, TaskSpec, Trajectory
from uivenus.store import TrajectoryStore, read_episode
from uivenus.verify.base import StepLabel, TraceOutcome, VerifyError, Vote
from uivenus.verify.judges import OcrJudge, ProgramJudge
from uivenus.verify.signals import HIT_KEY
from uivenus.verify.trace import (
    build_evidence, read_trace, score_screenshots, select_key_screenshots, verify_episode, verify_trace,
)

TASK = "contacts/add_contact"
KINDS = (Perturbation.TRUNCATED, Perturbation.TASK_SWAPPED, Perturbation.HARMFUL_APPENDED)


@pytest.fixture(scope="module")
def labelled(sandbox_server: SandboxServer, web_env: BrowserEnv, tmp_path_factory: pytest.TempPathFactory
             ) -> Mapping[str, Path]:
    """The reference run of TASK and three hard negatives, plus a truncated run whose agent claims success."""
    root = tmp_path_factory.mktemp("trace")
    summary = build_sandbox(root, web_env, sandbox_server.base_url,
                            BuildPlan(tasks=(TASK,), phrasings=1, perturbations=KINDS, miniwob_seeds=0))
    assert not summary.failed, summary.failed
    run = root / "sandbox-web"
    episodes = {kind.value: run / f"contacts.add_contact.{kind.value}" for kind in KINDS}
    episodes["reference"] = run / "contacts.add_contact.reference.p0"

    reference = read_episode(episodes["reference"])
    spec = get_task(TASK).spec(sandbox_server.base_url)
    web_env.reset(spec)
    unsaved = [s.action for s in reference.steps[:-2]]  # everything but Save and Finished
    claimed = record_episode(TrajectoryStore(root), "claims", "claims-done", web_env, spec,
                             [*unsaved, Finished(content="Done: Ana Lima is saved in the contacts.")],
                             truth=lambda state: (False, "unsaved"), perturbation=Perturbation.TRUNCATED)
    episodes["claimed"] = claimed.directory
    return episodes


JUDGES = (ProgramJudge(), OcrJudge())


def _verify(path: Path, judges=JUDGES, rule: str = "majority"):
    return verify_trace(read_episode(path), path, judges, rule)


def test_truth_is_recorded(labelled: Mapping[str, Path]) -> None:
    truths = {name: read_episode(path).metadata["truth"] for name, path in labelled.items() if name != "claimed"}
    assert truths == {"reference": "success", "truncated": "failure", "task_swapped": "failure",
                      "harmful_appended": "failure"}
    swapped = read_episode(labelled["task_swapped"])
    assert swapped.task.id == "contacts/add_contact_with_email"  # the trajectory of TASK, judged as another task
    assert swapped.metadata["swapped_from"] == TASK


def test_reference_succeeds_and_hard_negatives_do_not(labelled: Mapping[str, Path]) -> None:
    reference = _verify(labelled["reference"])
    assert reference.outcome is TraceOutcome.SUCCESS
    assert {v.judge: v.vote for v in reference.verdicts} == {"program": Vote.SUCCESS, "ocr": Vote.SUCCESS}
    assert reference.steps[-1].label is StepLabel.CORRECT  # Finished with the goal met

    truncated = _verify(labelled["truncated"])  # the form is filled but never saved
    assert truncated.outcome in (TraceOutcome.PARTIAL, TraceOutcome.FAILED)
    assert truncated.outcome is TraceOutcome.PARTIAL and truncated.progress == 1.0  # the values show, unsaved

    swapped = _verify(labelled["task_swapped"])
    assert swapped.outcome is TraceOutcome.FAILED
    assert {v.judge: v.vote for v in swapped.verdicts} == {"program": Vote.FAILURE, "ocr": Vote.FAILURE}

    undone = _verify(labelled["harmful_appended"])  # added, then deleted again
    assert undone.outcome is TraceOutcome.FAILED and undone.progress == 0.0
    assert undone.steps[-1].label is StepLabel.INCORRECT  # claims done while the goal is not met


def test_the_final_state_decides(labelled: Mapping[str, Path]) -> None:
    """Success later undone is failure: neither judge calls the undone episode a success."""
    undone = {v.judge: v for v in _verify(labelled["harmful_appended"]).verdicts}
    assert undone["program"].vote is Vote.FAILURE
    assert undone["ocr"].vote is not Vote.SUCCESS
    assert any("gone" in line for line in undone["ocr"].evidence)  # seen on an earlier screen, not on the final one
    alone = _verify(labelled["harmful_appended"], (OcrJudge(),))
    assert alone.outcome is TraceOutcome.UNKNOWN  # the OCR judge abstains: no judge decided, never success


def test_evidence_is_factual(labelled: Mapping[str, Path]) -> None:
    trajectory = read_episode(labelled["claimed"])
    evidence = build_evidence(trajectory, labelled["claimed"])
    assert evidence.extra["agent_claim"] == "Done: Ana Lima is saved in the contacts."
    assert not any("saved in the contacts" in line for line in evidence.history)
    assert re.fullmatch(r"step 0: Click at \(\d+, \d+\) on 'Add contact' -> executed", evidence.history[0])
    assert evidence.history[2] == "step 2: Type(content='Ana Lima') -> executed"
    assert evidence.history[-1] == f"step {len(trajectory.steps) - 1}: Finished"
    kept = evidence.extra["kept"]
    assert kept[0] == 0 and kept[-1] == len(trajectory.steps) - 1 and len(kept) <= 4
    assert len(evidence.screenshots) == len(evidence.screen_texts) == len(kept)
    assert evidence.final_state["app_state"]["contacts"]  # env.state() after the last step, for the program judge
    result = _verify(labelled["claimed"])
    assert result.outcome is not TraceOutcome.SUCCESS  # the claim does not count


def test_one_reading_serves_the_verdict_and_the_calibration(labelled: Mapping[str, Path]) -> None:
    """`read_trace` loads, reads and shrinks each screen once; the verdict is decided from that same reading."""
    trajectory = read_episode(labelled["truncated"])
    reading = read_trace(trajectory, labelled["truncated"])
    n = len(trajectory.steps)
    assert len(reading.screens) == len(reading.texts) == len(reading.changes) == n and reading.changes[-1] is None
    assert all(reading.evidence.screenshots[j] is reading.screens[i] for j, i in enumerate(reading.kept))
    result = verify_trace(trajectory, labelled["truncated"], JUDGES)
    assert result.kept == reading.kept and result.key_points == reading.evidence.key_points
    assert result.progress == reading.progress() == 1.0  # the form's values show on the final screen, unsaved
    unjudged = reading.label_steps()  # no goal verdict: only the terminal step's label may differ
    assert [s.label for s in unjudged[:-1]] == [s.label for s in result.steps[:-1]]
    assert unjudged[-1].label is not result.steps[-1].label


def test_ocr_off_reads_no_act_targets_from_pixels(labelled: Mapping[str, Path]) -> None:
    """Without DOM hit records, `ocr=False` must leave act targets unknown instead of running OCR on the screens
    (collection verifies with OCR off)."""
    stored = read_episode(labelled["truncated"])
    def blind(step: Step) -> Step:
        env = {k: v for k, v in (step.info.get("env") or {}).items() if k != HIT_ELEMENT}
        return dataclasses.replace(step, info={**{k: v for k, v in step.info.items() if k != HIT_KEY}, "env": env})
    trajectory = dataclasses.replace(stored, steps=tuple(blind(s) for s in stored.steps))
    read = read_trace(trajectory, labelled["truncated"], ocr=True).evidence.acts
    assert any(act.target is not None for act in read)  # OCR finds what the clicks hit
    unread = read_trace(trajectory, labelled["truncated"], ocr=False).evidence.acts
    assert [act.index for act in unread] == [act.index for act in read]
    assert all(act.target is None for act in unread)


def test_verdicts_and_labels_are_written(labelled: Mapping[str, Path]) -> None:
    result = verify_episode(labelled["truncated"], JUDGES, "weighted")
    stored = read_episode(labelled["truncated"])
    assert stored.verdicts["trace"]["outcome"] == result.outcome.value
    assert stored.verdicts["trace"]["vote"]["rule"] == "weighted"
    assert [s.labels["step_label"] for s in stored.steps] == [s.label.value for s in result.steps]
    assert all("step_signals" in s.labels for s in stored.steps)
    with pytest.raises(VerifyError, match="at least one judge"):
        verify_trace(stored, labelled["truncated"], ())


def test_key_screenshot_scores_and_selection() -> None:
    points = ("Add a contact named Ana Lima with the number 555-0101",)
    texts = ["Contacts\nBruno Costa", "Contacts\nBruno Costa", "New contact\nAna Lima", "Ana Lima\n555-0101",
             "Contacts\nAna Lima 555-0101\nBruno Costa", "Contacts\nAna Lima 555-0101\nBruno Costa"]
    assert score_screenshots(points, texts) == [1, 1, 4, 4, 4, 3]
    assert score_screenshots(points, texts, [None, 0.0, 0.2, 0.01, 0.3, 0.0]) == [1, 1, 5, 4, 5, 3]
    task = TaskSpec(id="t", instruction=points[0], platform="web")
    trajectory = Trajectory(task=task, steps=tuple(Step(index=i, screen=f"screens/{i}.png") for i in range(6)))
    assert select_key_screenshots(trajectory, points, texts, k=4) == (0, 3, 4, 5)  # best two, later ones first
    assert select_key_screenshots(trajectory, points, texts, k=2) == (0, 5)
    plain = ["x"] * 6
    assert select_key_screenshots(trajectory, points, plain, k=4) == (0, 5)  # nothing scores 3: first and final
    with pytest.raises(VerifyError):
        select_key_screenshots(trajectory, points, texts, k=1)
