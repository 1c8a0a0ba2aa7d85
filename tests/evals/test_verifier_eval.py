"""The verifier calibration harness on a small labelled set recorded in real Chromium (a sandbox task with every
perturbation, a MiniWoB task with its oracle, a wrong click and the random policy), and the two CLI commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from uivenus.cli.verify import eval_verifier, verify
from uivenus.evals.verifier import calibrate, find_labelled, format_table, score
from uivenus.evals.verifier_data import BuildPlan, build_dataset
from uivenus.store import read_episode
from uivenus.verify.base import VerifyError
from uivenus.verify.voting import Decision

PLAN = BuildPlan(tasks=("settings/wifi_off_bluetooth_on",), phrasings=2, random_steps=2,
                 miniwob_tasks=("click-test-2",), miniwob_seeds=1)
runner = CliRunner()


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("labelled")
    summary = build_dataset(root, PLAN, progress=False)
    assert not summary.failed, summary.failed
    assert sum(summary.recorded.values()) == 2 + len(PLAN.perturbations) + 1 + len(PLAN.miniwob_perturbations)
    return root


def test_the_labelled_set_carries_truth_kind_and_final_state(data: Path, capfd: pytest.CaptureFixture) -> None:
    episodes, skipped = find_labelled(data)
    assert not skipped
    kinds = {(e.source, e.kind): e.truth for e in episodes}
    assert kinds[("sandbox", "truncated")] is False and kinds[("sandbox", "harmful_appended")] is False
    assert kinds[("sandbox", "task_swapped")] is False and kinds[("miniwob", "last_replaced")] is False
    references = [e for e in episodes if e.kind == "reference"]
    assert len(references) == 3 and all(e.truth for e in references)
    for episode in episodes:
        assert episode.trajectory.steps[-1].action.is_terminal  # the final screen is stored
        assert "final_state" in episode.trajectory.metadata and episode.trajectory.steps[0].info["screen_text"]
    capfd.readouterr()
    assert build_dataset(data, PLAN, progress=False).skipped == len(episodes)  # resumable: nothing recorded again
    assert capfd.readouterr().err == ""  # progress=False is quiet
    assert PLAN.episodes() == len(episodes)
    assert build_dataset(data, PLAN, progress=True).skipped == len(episodes)
    lines = capfd.readouterr().err.splitlines()  # not a terminal: plain lines, the last one the total
    assert lines[-1].startswith(f"verifier build: {len(episodes)}/{len(episodes)} episodes, ")
    assert "done in" in lines[-1]
    assert any("(already recorded)" in line for line in lines[:-1]), lines


def test_score_counts_abstentions_as_disagreement() -> None:
    pairs = [(True, Decision.SUCCESS), (True, Decision.UNKNOWN), (False, Decision.SUCCESS), (False, Decision.FAILURE),
             (False, Decision.UNKNOWN)]
    metrics = score(pairs)
    assert (metrics["tp"], metrics["fp"], metrics["tn"], metrics["fn"], metrics["undecided"]) == (1, 1, 1, 0, 2)
    assert metrics["agreement"] == 2 / 5 and metrics["coverage"] == 3 / 5 and metrics["agreement_decided"] == 2 / 3
    assert metrics["precision"] == 1 / 2 and metrics["recall"] == 1 / 2 and metrics["false_success_rate"] == 1 / 3
    assert score([])["agreement"] is None


def test_calibration_report(data: Path, tmp_path: Path) -> None:
    report = calibrate(data, ("program", "ocr", "acts"), ("majority", "unanimous", "weighted"), out_dir=tmp_path,
                       progress=False)
    assert report["n"] == 11 and report["hard_negatives"] == 8
    assert report["voters"] == ["program", "ocr", "acts", "vote:majority", "vote:unanimous", "vote:weighted"]
    program = report["overall"]["program"]  # the checker is the truth here: it must agree everywhere
    assert program["agreement"] == 1.0 and program["false_success_rate"] == 0.0 and program["coverage"] == 1.0
    for voter in report["voters"]:
        metrics = report["overall"][voter]
        assert metrics["n"] == 11 and metrics["tp"] + metrics["fp"] + metrics["tn"] + metrics["fn"] \
            + metrics["undecided"] == 11
    assert report["overall"]["vote:unanimous"]["false_success_rate"] <= report["overall"]["ocr"]["false_success_rate"]
    assert {"sandbox/truncated", "sandbox/task_swapped", "sandbox/harmful_appended", "miniwob/reference",
            "miniwob/random_policy"} <= set(report["by_kind"])
    assert report["by_kind"]["miniwob/reference"]["ocr"]["coverage"] == 0.0  # the instruction is on every screen
    for kind in ("reference", "last_replaced", "truncated"):  # what the clicks hit decides where text cannot
        acts = report["by_kind"][f"miniwob/{kind}"]["acts"]
        assert acts["coverage"] == 1.0 and acts["agreement"] == 1.0, (kind, acts)
    assert report["overall"]["acts"]["false_success_rate"] == 0.0
    stored = json.loads(Path(report["report_path"]).read_text())
    assert stored["overall"] == report["overall"] and len(stored["records"]) == 11
    table = Path(report["table_path"]).read_text()
    assert "| sandbox/harmful_appended | 1 (0/1) |" in table and table == format_table(report) + "\n"
    assert Path(report["plot_path"]).stat().st_size > 0
    subset = calibrate(data, ("program",), ("unanimous",), limit=4, progress=False)
    assert subset["n"] == 4 and len(subset["by_kind"]) == 4  # taken in turn from each kind
    with pytest.raises(VerifyError, match="unknown voting rule"):
        calibrate(data, ("program",), ("plurality",), progress=False)


def test_calibration_refuses_unlabelled_data(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(Exception, match="neither a run directory|no labelled episodes"):
        calibrate(tmp_path / "empty", progress=False)


def _app(command) -> typer.Typer:
    app = typer.Typer()
    app.command()(command)
    return app


def test_verify_command_writes_verdicts_beside_the_run(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "verdicts.json"
    result = runner.invoke(_app(verify), [str(data / "miniwob"), "--judges", "program,ocr", "--vote", "unanimous",
                                          "--out", str(out), "--no-ocr"])
    assert result.exit_code == 0, result.output
    assert "4 episodes verified" in result.output
    written = {r["episode"]: r for r in json.loads(out.read_text())}
    assert written["click-test-2.s0.reference"]["outcome"] == "success"
    assert written["click-test-2.s0.last_replaced"]["outcome"] == "failed"
    stored = read_episode(data / "miniwob" / "click-test-2.s0.reference")
    assert stored.verdicts["trace"]["vote"]["rule"] == "unanimous"
    assert stored.steps[0].labels["step_label"] == "correct"
    bad = runner.invoke(_app(verify), [str(data / "miniwob"), "--judges", "oracle-judge"])
    assert bad.exit_code == 1 and "unknown judge spec" in bad.output


def test_eval_verifier_command(data: Path, tmp_path: Path) -> None:
    result = runner.invoke(_app(eval_verifier), ["--data", str(data / "miniwob"), "--judges", "program,ocr",
                                                 "--vote", "majority,weighted", "--out", str(tmp_path),
                                                 "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "4 labelled episodes (1 success, 3 failure; 3 hard negatives)" in result.output
    held_out = runner.invoke(_app(eval_verifier), ["--data", str(data / "miniwob"), "--split", "held_out",
                                                   "--no-progress"])
    assert held_out.exit_code == 1 and "no labelled episodes of split 'held_out'" in held_out.output
    assert "miniwob/last_replaced" in result.output
    assert "vote:weighted" in (tmp_path / "verifier_table.md").read_text()
    bad = runner.invoke(_app(eval_verifier), ["--data", str(data), "--vote", "plurality", "--no-progress"])
    assert bad.exit_code == 1 and "unknown voting rule" in bad.output
    # before -> after: the earlier report scored only the program judge; acts is new, so its "before" is –
    compared = runner.invoke(_app(eval_verifier), ["--data", str(data / "miniwob"), "--judges", "program,acts",
                                                   "--vote", "majority", "--out", str(tmp_path / "after"),
                                                   "--compare", str(tmp_path / "verifier_report.json"),
                                                   "--no-progress"])
    assert compared.exit_code == 0, compared.output
    row = [line for line in compared.output.splitlines() if line.startswith("| all |")][-1]  # the comparison
    assert row.startswith("| all | 4 | 100% / 0% / 100% → 100% / 0% / 100% | – → 100% / 0% / 100% |"), row
    not_a_report = runner.invoke(_app(eval_verifier), ["--data", str(data / "miniwob"), "--compare",
                                                       str(tmp_path / "verifier_table.md"), "--no-progress"])
    assert not_a_report.exit_code == 1 and "cannot read the verifier report" in not_a_report.output


def test_bad_episodes_abstain_or_are_reported_and_the_run_goes_on(data: Path, tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "miniwob"
    shutil.copytree(data / "miniwob", run)
    steps = run / "click-test-2.s0.last_replaced" / "steps.jsonl"
    steps.write_bytes(steps.read_bytes()[:-40])  # a truncated steps file: episode.json counts more steps
    shutil.rmtree(run / "click-test-2.s0.reference" / "screens")  # missing screenshots
    out = tmp_path / "verdicts.json"
    result = runner.invoke(_app(verify), [str(run), "--judges", "ocr,acts", "--out", str(out), "--no-ocr"])
    assert result.exit_code == 0, result.output
    assert "not verified" in result.output and "click-test-2.s0.last_replaced" in result.output
    written = {r["episode"]: r for r in json.loads(out.read_text())}
    assert "error" in written["click-test-2.s0.last_replaced"]
    verdicts = {v["judge"]: v for v in written["click-test-2.s0.reference"]["verdicts"]}
    assert verdicts["ocr"]["vote"] == "abstain" and verdicts["ocr"]["reason"] == "no screens to read"
    assert verdicts["acts"]["vote"] == "success"  # the recorded DOM hits still say what the click acted on
    assert written["click-test-2.s0.truncated"]["outcome"] == "failed"
