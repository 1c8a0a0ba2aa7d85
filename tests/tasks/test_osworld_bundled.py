"""Our own OSWorld-format task set (uivenus/tasks/data/osworld): it all loads and is fully supported, every task
carries a reference and a wrong solution in our action grammar, and a sample of them replayed on the real desktop
(Xvfb, bubblewrap, LibreOffice) passes its evaluator with the reference and fails it with the wrong one.
The replay of the whole set is `uivenus eval osworld --tasks bundled --policy reference|wrong` (minutes)."""

from __future__ import annotations

import json
from pathlib import Path

from uivenus.actions.calls import parse_action
from uivenus.actions.space import ActionType
from uivenus.evals.osworld import evaluate_osworld
from uivenus.tasks.osworld import bundled_tasks_dir, coverage, load_osworld

#: A quick terminal task and an office one, by our name for them (the `uivenus.name` field).
SAMPLE = ("make-directory", "sum-total")


def test_the_set_loads_fully_supported_over_at_least_six_domains() -> None:
    loaded = load_osworld(bundled_tasks_dir())
    assert loaded.errors == ()
    report = coverage(loaded)
    assert report["tasks"] >= 30 and report["supported"] == report["tasks"] and report["unsupported"] == {}
    assert len(loaded.domains) >= 6
    assert all(count["tasks"] >= 2 for count in report["domains"].values())


def test_every_task_is_ours_and_carries_a_reference_and_a_wrong_solution() -> None:
    tasks = load_osworld(bundled_tasks_dir()).tasks
    names = [task.data["uivenus"]["name"] for task in tasks]
    assert len(set(names)) == len(names) and len({task.id for task in tasks}) == len(tasks)
    for task in tasks:
        assert Path(task.source).stem == task.id and task.data["source"] == "uivenus", task.source
        solutions = {kind: [parse_action(text) for text in task.data["uivenus"][kind]]
                     for kind in ("reference", "wrong")}
        assert solutions["reference"] != solutions["wrong"], task.id
        assert all(0 < len(actions) < 15 for actions in solutions.values()), task.id  # within the default step budget
    infeasible = [task for task in tasks if task.data["evaluator"]["func"] == "infeasible"]
    assert infeasible
    for task in infeasible:
        last = {kind: parse_action(task.data["uivenus"][kind][-1]).type for kind in ("reference", "wrong")}
        assert last == {"reference": ActionType.CALL_USER, "wrong": ActionType.FINISHED}


def test_a_sample_replays_the_reference_to_success_and_the_wrong_solution_to_failure(tmp_path: Path) -> None:
    tasks = load_osworld(bundled_tasks_dir()).tasks
    ids = [task.id for task in tasks if task.data["uivenus"]["name"] in SAMPLE]
    assert len(ids) == len(SAMPLE)
    for policy, success in (("reference", True), ("wrong", False)):
        out = tmp_path / policy
        evaluate_osworld(bundled_tasks_dir(), policy, out, ids=ids, executor="serial", progress=False)
        results = json.loads((out / "results.json").read_text())
        assert sorted(r["id"] for r in results) == sorted(ids)
        assert all((r["success"], r["error"]) == (success, None) for r in results), results
