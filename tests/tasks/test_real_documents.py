"""Explored two-app tasks: the real editor (mousepad) explored on a document its task root is given, so saving is
ctrl+s (no file chooser) and the catalog knows a function that writes a user file; then a task that edits and
saves it, closes the editor and goes on in the real file manager, accepted by the gate from fresh roots."""

from __future__ import annotations

import sys
from pathlib import Path

from uivenus.tasks.app_catalog import SAVE, FileChange, RealCatalog, WidgetKind
from uivenus.tasks.explore_a11y import ExploreLimits, explore_app
from uivenus.tasks.explore_a11y_apps import app_surface
from uivenus.tasks.gate import Gate
from uivenus.tasks.real_gate import ReplayExecutor, gate_rounds, teach_unexplained
from uivenus.tasks.real_synthesis import RealSynthesizer, constraint_catalog, osworld_json
from uivenus.tasks.spec import TaskKind

sys.path.insert(0, str(Path(__file__).parent))
from real_catalog import file_manager  # noqa: E402


def test_an_editor_on_a_given_document_saves_it_and_a_two_app_task_passes_the_gate(tmp_path: Path,
                                                                                   fixed_synthesizer) -> None:
    with app_surface("notes") as surface:  # mousepad on /home/user/notes.txt, written in its root beforehand
        notes = explore_app("notes", surface, ExploreLimits(max_depth=1, time_s=240, max_widgets_per_state=4,
                                                            launch_wait_s=60))
    saving = notes.functions["edit_and_save_document"]
    assert saving.kind is WidgetKind.TEXT and saving.gestures[-1] == SAVE
    assert FileChange("notes.txt", "modified", len("uivenus")) in saving.effect.files  # type: ignore[union-attr]
    assert saving.params[0].domain == "text" and notes.documents == (("notes.txt", "Meeting notes\n"),)
    path = tmp_path / "catalog.json"
    RealCatalog({"notes": notes}).save(path)
    real = RealCatalog.load(path)
    assert real.apps["notes"] == notes
    real.add(file_manager())
    cat = constraint_catalog(real)
    made = RealSynthesizer(real, seed=0, kinds=("long_horizon",)).synthesize(cat, 20).tasks
    task = next(t for t in made if t.functions == ("notes.edit_and_save_document", "pcmanfm.creating_new_folder"))
    data = osworld_json(task)
    text = task.calls[0].params["text"]
    assert data["config"][0]["type"] == "execute" and data["config"][1]["parameters"]["command"] == [
        "mousepad", "/home/user/notes.txt"]
    assert data["related_apps"] == ["mousepad", "pcmanfm"] and "notes.txt" in task.spec.instruction
    assert f'"{text}"' in task.spec.instruction and "save" in task.spec.instruction
    assert data["evaluator"]["func"] == ["file_contains", "exact_match"]
    assert data["evaluator"]["result"][0] == {"type": "vm_file", "path": "/home/user/notes.txt", "dest": "notes.txt"}
    with ReplayExecutor() as executor:  # the reference from a fresh root passes, a no-op does not
        gate = Gate(cat, executor=executor, log=tmp_path / "rejected.jsonl", unexplained=teach_unexplained)
        figures, accepted, results = gate_rounds(cat, lambda r: fixed_synthesizer([task]), gate, rounds=1,
                                                 per_round=1)
        replayed = executor.run(accepted[0], "oracle")  # the accepted task, replayed from one more fresh root
    assert replayed["passed"], replayed
    (result,) = results
    assert result.accepted, result.reasons
    runs = dict(result.execution.diagnostics)
    assert runs["reference"]["passed"] and not runs["noop"]["passed"]
    assert figures[0].accepted == 1 and [t.kind for t in accepted] == [TaskKind.LONG_HORIZON]
