"""Tasks on real apps: synthesis from an explored catalog into OSWorld-format tasks, and the gate that replays each
reference (and a no-op) from fresh isolated roots on the real file manager, learning from what fails."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path


from uivenus.agent.policies.script import ScriptedPolicy
from uivenus.tasks.app_catalog import Gesture, Locator, RealCatalog
from uivenus.tasks.gate import Gate, RejectionCode
from uivenus.tasks.osworld import load_osworld
from uivenus.tasks.real_gate import ReplayExecutor, gate_rounds, teach_unexplained
from uivenus.tasks.real_synthesis import (
    RealLLMSynthesizer, RealSynthesizer, app_docs, constraint_catalog, osworld_json, write_osworld_tasks,
)
from uivenus.tasks.spec import TaskKind

sys.path.insert(0, str(Path(__file__).parent))
from real_catalog import catalog, desktop_apps, file_manager  # noqa: E402


def two_apps() -> RealCatalog:
    """The file manager twice under two names: enough for a multi-app task's shape (not run)."""
    other = replace(file_manager(launch=("pcmanfm", "/tmp")), app="files")
    return RealCatalog({"pcmanfm": file_manager(), "files": other})


def test_synthesis_makes_runnable_osworld_tasks_of_every_kind(tmp_path: Path) -> None:
    real = two_apps()
    cat = constraint_catalog(real)
    synthesis = RealSynthesizer(real, seed=3).synthesize(cat, 30)
    kinds = {t.kind for t in synthesis.tasks}
    assert kinds == {TaskKind.SINGLE, TaskKind.MULTI, TaskKind.LONG_HORIZON}
    assert any("home_folder" in d.reason and "nothing a checker can read" in d.reason for d in synthesis.dropped)
    write_osworld_tasks(tmp_path, synthesis.tasks)
    loaded = load_osworld(tmp_path)
    assert not loaded.errors and len(loaded.supported) == len(synthesis.tasks)
    for task in synthesis.tasks:
        data = osworld_json(task)
        assert data["config"][0]["type"] == "launch" and len(set(task.phrasings)) >= 2
        for call in task.calls:  # every value is said in every phrasing
            assert all(str(v) in p for v in call.params.values() if v not in ("on", "off") for p in task.phrasings)
    folder = next(t for t in synthesis.tasks
                  if t.kind is TaskKind.SINGLE and t.calls[0].function == "creating_new_folder")
    data = osworld_json(folder)
    name = folder.calls[0].params["name"]
    assert data["evaluator"]["result"]["command"] == ["stat", "-c", "%n", "--", f"/home/user/{name}"]
    assert data["uivenus"]["reference"] == [
        "Wait(seconds=3)", "Hotkey(keys=['ctrl', 'shift', 'n'])", "Wait(seconds=3)", "Click(point=(669, 434))",
        "Hotkey(keys=['ctrl', 'a'])", f"Type(content={name!r})", "Wait(seconds=1)", "Click(point=(851, 480))",
        "Wait(seconds=1)"]
    long = next(t for t in synthesis.tasks if t.kind is TaskKind.LONG_HORIZON)
    steps = osworld_json(long)["uivenus"]["reference"]
    assert "Hotkey(keys=['alt', 'f4'])" in steps and "LaunchApp(app='pcmanfm')" in steps
    assert osworld_json(long)["evaluator"]["conj"] == "and" and len(osworld_json(long)["evaluator"]["func"]) == 2


def test_a_gesture_without_bounds_is_dropped_not_guessed() -> None:
    real = file_manager()
    fn = real.functions["creating_new_folder"]
    lost = replace(fn, gestures=(Gesture("click", Locator("push button", "Apply")),))
    broken = RealCatalog({"pcmanfm": replace(real, functions={"creating_new_folder": lost})})
    synthesis = RealSynthesizer(broken, kinds=("single",)).synthesize(constraint_catalog(broken), 5)
    assert not synthesis.tasks
    assert any("push button 'Apply' has no recorded bounds" in d.reason for d in synthesis.dropped)


def test_llm_synthesizer_reads_catalog_and_docs_and_keeps_grounded_proposals() -> None:
    real = catalog()
    proposals = [
        {"function": "pcmanfm.creating_new_folder", "params": {"name": "Tax 2026"},
         "instruction": "Make a folder called Tax 2026 in my home."},
        {"function": "pcmanfm.view_show_hidden", "params": {"value": "sideways"},
         "instruction": "Show hidden sideways"},
        {"function": "pcmanfm.creating_new_folder", "params": {"name": "Photos"}, "instruction": "Make a folder."},
        {"function": "pcmanfm.format_disk", "params": {}, "instruction": "Format the disk"},
    ]
    policy = ScriptedPolicy([json.dumps(proposals)])
    synthesis = RealLLMSynthesizer(real, policy).synthesize(constraint_catalog(real), 4)
    assert [t.calls[0].params["name"] for t in synthesis.tasks] == ["Tax 2026"]
    assert synthesis.tasks[0].spec.instruction == "Make a folder called Tax 2026 in my home."
    reasons = " | ".join(d.reason for d in synthesis.dropped)
    assert "not one of ['on', 'off']" in reasons and "does not say name='Photos'" in reasons
    assert "format_disk is not an explored function" in reasons
    prompt = policy.requests[0].messages[1].content[0]
    assert "pcmanfm.creating_new_folder: form" in prompt and "Documentation of pcmanfm" in prompt
    assert "pcmanfm --help" in app_docs("pcmanfm")


def test_llm_synthesizer_asks_a_served_model_and_survives_its_garbage(tiny_qwen3_vl, torch_single_thread) -> None:
    from uivenus.agent.policies.base import policy_from_spec
    from uivenus.agent.serve import ServerThread, create_app

    real = catalog()
    model = policy_from_spec(f"hf:{tiny_qwen3_vl}?device=cpu&dtype=float32")
    with model, ServerThread(create_app(model)) as server:
        synthesizer = RealLLMSynthesizer(real, f"openai:{server.base_url}#ui-venus", max_new_tokens=16,
                                         docs={"pcmanfm": "PCManFM is a fast file manager."})
        synthesis = synthesizer.synthesize(constraint_catalog(real), 3)
    assert not synthesis.tasks  # a random model proposes nothing grounded: nothing is made, the reason is said
    assert synthesis.dropped and all(d.reason for d in synthesis.dropped)


def test_gate_replays_references_and_noops_from_fresh_roots_and_learns(tmp_path: Path, fixed_synthesizer) -> None:
    real = desktop_apps()
    cat = constraint_catalog(real)
    made = RealSynthesizer(real, seed=1, kinds=("single", "long_horizon")).synthesize(cat, 40).tasks
    toggles = {t.calls[0].params["value"]: t for t in made if t.calls[0].function == "view_show_hidden"}
    carried = next(t for t in made if t.kind is TaskKind.LONG_HORIZON and t.functions == (
        "mousepad.save_as", "pcmanfm.creating_new_folder"))  # save in the editor, close it, then the file manager
    log = tmp_path / "rejected.jsonl"
    with ReplayExecutor() as executor:
        gate = Gate(cat, executor=executor, log=log, unexplained=teach_unexplained)
        figures, accepted, results = gate_rounds(
            cat, lambda r: fixed_synthesizer([toggles["on"], toggles["off"], carried]), gate, rounds=1, per_round=3)
    on, off, both = results
    assert on.accepted and both.accepted, (on.reasons, both.reasons)
    for result in (on, both):
        runs = dict(result.execution.diagnostics)
        assert runs["reference"]["passed"] and not runs["noop"]["passed"]
    assert not off.accepted and off.reasons[0].code is RejectionCode.NOT_EXECUTABLE
    assert "reference solution fails" in off.reasons[0].message
    assert "noop" not in off.execution.diagnostics and "reference_again" in off.execution.diagnostics
    assert [c.condition["values"] for c in off.learned] == [{"value": "off"}]  # never proposed again
    assert figures[0].proposed == 3 and figures[0].accepted == 2 and figures[0].learned == 1
    assert [t.id for t in accepted] == [on.task.id, both.task.id]
    logged = json.loads(log.read_text().splitlines()[0])
    assert logged["task"] == off.task.id and logged["learned"][0]["condition"]["values"] == {"value": "off"}
    again = RealSynthesizer(real, seed=1, kinds=("single",)).synthesize(cat, 10)
    assert all(t.calls[0].params.get("value") != "off" for t in again.tasks)
    assert any("infeasible" in d.reason for d in again.dropped)


def test_cli_synth_real_writes_task_files_and_refuses_a_bad_catalog(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from uivenus.cli import app

    catalog().save(tmp_path / "catalog.json")
    result = CliRunner().invoke(app, ["tasks", "synth-real", str(tmp_path / "catalog.json"), "--out",
                                      str(tmp_path / "out"), "--n", "4", "--kinds", "single,multi"])
    assert result.exit_code == 0, result.output
    assert "wrote 4 tasks" in result.output and "home_folder" in result.output
    assert len(list((tmp_path / "out/osworld/pcmanfm").glob("*.json"))) == 4
    assert len((tmp_path / "out/tasks.jsonl").read_text().splitlines()) == 4
    (tmp_path / "bad.json").write_text('{"schema": "uivenus.catalog/1"}')
    bad = CliRunner().invoke(app, ["tasks", "synth-real", str(tmp_path / "bad.json"), "--out", str(tmp_path / "o2")])
    assert bad.exit_code != 0 and "not a uivenus.app-catalog/1 catalog" in bad.output
