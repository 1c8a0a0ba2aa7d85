"""The OSWorld-format loader: the public index layout, a plain tree and one file; per-task errors; coverage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uivenus.actions.space import Platform
from uivenus.tasks.osworld import OSWorldError, coverage, load_osworld, read_ids


def task(task_id: str, **changes) -> dict:
    data = {"id": task_id, "snapshot": "os", "instruction": f"do {task_id}", "source": "ours",
            "related_apps": ["os"], "config": [{"type": "execute", "parameters": {"command": ["true"]}}],
            "evaluator": {"func": "exact_match", "result": {"type": "vm_command_line", "command": "echo hi"},
                          "expected": {"type": "rule", "rules": {"expected": "hi\n"}}}}
    data.update(changes)
    return data


def write(path: Path, value) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def lacks_gimp(data) -> tuple[str, ...]:
    """A support check standing in for the registries: tasks using GIMP are unsupported."""
    return ("app 'gimp': not installed",) if "gimp" in data.get("related_apps", []) else ()


@pytest.fixture
def public(tmp_path: Path) -> Path:
    """The public layout: evaluation_examples/test_all.json + examples/<domain>/<id>.json, with bad files."""
    root = tmp_path / "evaluation_examples"
    write(root / "test_all.json", {"os": ["a", "b", "gone"], "gimp": ["g"], "chrome": ["broken", "shape"]})
    write(root / "examples/os/a.json", task("a"))
    write(root / "examples/os/b.json", task("b"))
    write(root / "examples/gimp/g.json", task("g", related_apps=["gimp"]))
    write(root / "examples/chrome/broken.json", '{"id": "broken", "instruction": ')
    write(root / "examples/chrome/shape.json", task("shape", instruction=7,
                                                   evaluator={"func": ["a", "b"], "result": [{"type": "rule"}]}))
    return root


def test_the_public_index_loads_each_task_on_its_own(public: Path) -> None:
    loaded = load_osworld(public, check=lacks_gimp)
    assert [(t.domain, t.id, t.supported) for t in loaded.tasks] == [
        ("os", "a", True), ("os", "b", True), ("gimp", "g", False)]
    errors = {e.id: e.reason for e in loaded.errors}
    assert errors["gone"].startswith("missing task file:") and "gone.json does not exist" in errors["gone"]
    assert errors["broken"].startswith("malformed task:") and "JSON" in errors["broken"]
    # every problem of the file is named, with the field it is in
    assert "instruction: Input should be a valid string" in errors["shape"]
    assert "2 metrics in func but 1 entries in result" in errors["shape"]
    # the index file itself and the directory holding it are the same source
    same = load_osworld(public / "test_all.json", check=lacks_gimp)
    assert [t.id for t in same.tasks] == ["a", "b", "g"] and len(same.errors) == 3


def test_coverage_counts_supported_tasks_and_each_reason(public: Path) -> None:
    report = coverage(load_osworld(public, check=lacks_gimp))
    assert report["tasks"] == 6 and report["supported"] == 2
    assert report["unsupported"] == {"malformed task": 2, "app 'gimp': not installed": 1, "missing task file": 1}
    assert report["domains"]["os"] == {"tasks": 3, "supported": 2}
    assert report["domains"]["chrome"] == {"tasks": 2, "supported": 0}


def test_domains_and_ids_narrow_the_set(public: Path, tmp_path: Path) -> None:
    assert [t.id for t in load_osworld(public, domains=["gimp"], check=lacks_gimp).tasks] == ["g"]
    ids = write(tmp_path / "ids.txt", "# the two os tasks\nb\ng  # and gimp's\n")
    assert read_ids(ids) == {"b", "g"}
    assert [t.id for t in load_osworld(public, ids=read_ids(ids), check=lacks_gimp).tasks] == ["b", "g"]
    assert read_ids(write(tmp_path / "ids.json", {"os": ["a"], "chrome": ["x"]})) == {"a", "x"}
    assert read_ids(write(tmp_path / "list.json", ["a"])) == {"a"}
    with pytest.raises(OSWorldError, match="an ids file is"):
        read_ids(write(tmp_path / "bad.json", {"a": 1}))
    with pytest.raises(OSWorldError, match="no task of domain"):
        load_osworld(public, domains=["vlc"], check=lacks_gimp)


def test_a_plain_tree_and_a_single_file_load_too(tmp_path: Path) -> None:
    write(tmp_path / "tree/writer/w1.json", task("w1"))
    write(tmp_path / "tree/vlc/v1.json", task("v1"))
    write(tmp_path / "tree/writer/w2.json", task("w1"))
    loaded = load_osworld(tmp_path / "tree", check=lambda data: ())
    assert [(t.domain, t.id) for t in loaded.tasks] == [("vlc", "v1"), ("writer", "w1")]
    assert [e.reason.split(":")[0] for e in loaded.errors] == ["duplicate id"]
    single = load_osworld(tmp_path / "tree/writer/w1.json", check=lambda data: ())
    assert [(t.domain, t.id) for t in single.tasks] == [("writer", "w1")]
    with pytest.raises(OSWorldError, match="does not exist"):
        load_osworld(tmp_path / "nowhere", check=lambda data: ())


def test_a_support_check_that_raises_is_that_tasks_error(tmp_path: Path) -> None:
    write(tmp_path / "os/a.json", task("a"))
    write(tmp_path / "os/b.json", task("b"))

    def picky(data):
        if data["id"] == "a":
            raise KeyError("parameters")
        return ()

    loaded = load_osworld(tmp_path, check=picky)
    assert [t.id for t in loaded.tasks] == ["b"]
    assert loaded.errors[0].reason == "support check failed: KeyError: 'parameters'"


def test_to_taskspec_keeps_the_original_json(tmp_path: Path) -> None:
    original = task("a", uivenus={"reference": ["Finished()"], "wrong": ["Finished()"]})
    loaded = load_osworld(write(tmp_path / "os/a.json", original), check=lambda data: ())
    spec = loaded.tasks[0].to_taskspec("wrong", max_steps=7)
    assert spec.platform is Platform.DESKTOP and spec.app == "os" and spec.max_steps == 7
    assert spec.instruction == "do a"
    assert spec.setup["osworld"]["config"] == original["config"]
    assert spec.check == {"kind": "osworld", "evaluator": original["evaluator"], "solution": "wrong"}
    assert spec.to_dict()["metadata"]["osworld"] == original
    assert spec.metadata["domain"] == "os"
    with pytest.raises(OSWorldError, match="unknown solution"):
        loaded.tasks[0].to_taskspec("best")


def test_the_public_sets_shapes_load(tmp_path: Path) -> None:
    """Shapes the public files use: an infeasible task without result/expected, shell-string commands, several
    metrics joined by `conj` with a list of options, extra fields we do not read (`trajectory`, `proxy`)."""
    write(tmp_path / "os/refuse.json", task("refuse", trajectory="trajectories/", evaluator={"func": "infeasible"},
                                            config=[{"type": "execute", "parameters": {
                                                "command": "echo password | sudo -S su - charles", "shell": True}}]))
    write(tmp_path / "chrome/both.json", task("both", proxy=True, evaluator={
        "func": ["is_expected_tabs", "check_direct_json_object"], "conj": "or",
        "result": [{"type": "open_tabs_info"}, {"type": "vm_command_line", "command": "cat x"}],
        "expected": [{"type": "rule", "rules": {"urls": []}}, {"type": "rule", "rules": {"expected": {}}}],
        "options": [{}, {"relativeTime": True}],
        "postconfig": [{"type": "sleep", "parameters": {"seconds": 1}}]}))
    write(tmp_path / "chrome/badconj.json", task("badconj", evaluator={"func": ["a", "b"], "conj": "xor"}))
    loaded = load_osworld(tmp_path, check=lambda data: ())
    assert sorted(t.id for t in loaded.tasks) == ["both", "refuse"]
    assert [e.id for e in loaded.errors] == ["badconj"] and "evaluator.conj" in loaded.errors[0].reason


def test_the_pipeline_loads_osworld_task_files_as_taskspecs(tmp_path: Path) -> None:
    """`tasks run --tasks DIR` takes OSWorld-format files; one that cannot run stops the load, named with why."""
    from uivenus.tasks.collect import PipelineError, load_tasks

    write(tmp_path / "ok/os/a.json", task("a"))
    specs = load_tasks(tmp_path / "ok")
    assert [(s.id, s.check["kind"], s.platform) for s in specs] == [("a", "osworld", Platform.DESKTOP)]
    assert [s.id for s in load_tasks(tmp_path / "ok/os/a.json")] == ["a"]
    write(tmp_path / "bad/os/a.json", task("a"))
    write(tmp_path / "bad/os/b.json", task("b", evaluator={"func": "no_such_metric"}))
    with pytest.raises(PipelineError, match=r"1 OSWorld task\(s\) in .* cannot run: b \(unsupported: metric "
                                            r"'no_such_metric': unknown\)"):
        load_tasks(tmp_path / "bad")
