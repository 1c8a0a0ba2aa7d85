"""Materialization plans: exact files and folders inside the root, strict refusal of unsafe plans, a faithful undo,
and the DesktopEnv hook that applies a plan on reset, launches its app in the root with a private home, and undoes
it on the next reset and on close (real Xvfb, real l3afpad)."""

from __future__ import annotations

import base64
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from uivenus.actions.space import Platform
from uivenus.envs.base import SetupError
from uivenus.envs.desktop import DesktopConfig, DesktopEnv
from uivenus.envs.materialize import HOME_ENV, MaterializeError, MaterializePlan, apply
from uivenus.records import TaskSpec

PNG_BYTES = bytes([0x89, 0x50, 0x4E, 0x47, 0, 1, 2, 255])


def plan(**data: object) -> MaterializePlan:
    return MaterializePlan.from_dict(data)


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` -> its bytes (None for a folder)."""
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


# --- apply ----------------------------------------------------------------------------------------

def test_apply_creates_exact_files_folders_and_settings_inside_the_root(tmp_path: Path) -> None:
    root, home = tmp_path / "root", tmp_path / "home"
    done = apply(plan(
        files=[{"path": "notes.txt", "text": "draft é\nline 2\n"},
               {"path": "docs/deep/logo.png", "base64": base64.b64encode(PNG_BYTES).decode()}],
        folders=["empty", "docs/inbox"],
        launch=[["l3afpad", "{root}/notes.txt"]],
        settings={"env": {"LANG": "C.UTF-8", "NOTES": "{root}/notes.txt"},
                  "files": [{"path": ".config/l3afpad/l3afpadrc", "text": "0\n0\nMonospace 12\n"}]},
    ), root, home)
    assert tree(root) == {
        "docs": None, "docs/deep": None, "docs/deep/logo.png": PNG_BYTES, "docs/inbox": None,
        "empty": None, "notes.txt": "draft é\nline 2\n".encode(),
    }
    assert (home / ".config/l3afpad/l3afpadrc").read_text() == "0\n0\nMonospace 12\n"
    (command,) = done.commands
    assert command.argv == ("l3afpad", f"{root}/notes.txt") and command.cwd == root
    assert command.env["HOME"] == str(home) and command.env["XDG_CONFIG_HOME"] == f"{home}/.config"
    assert command.env["NOTES"] == f"{root}/notes.txt" and set(HOME_ENV) < set(command.env)
    argv = command.via_env()
    assert argv[:4] == ["env", "-C", str(root), "--"] and argv[-2:] == ["l3afpad", f"{root}/notes.txt"]
    assert f"HOME={home}" in argv


def test_plans_round_trip_through_json_data() -> None:
    original = plan(files=[{"path": "a.txt", "text": "x"}], folders=["f"], launch=[["pcmanfm", "{root}"]],
                    settings={"env": {"A": "1"}, "files": [{"path": ".a", "base64": "AAE="}]})
    assert MaterializePlan.from_dict(original.to_dict()) == original


@pytest.mark.parametrize(("data", "message"), [
    ({"files": [{"path": "../escape.txt", "text": "x"}]}, "inside the sandbox root"),
    ({"files": [{"path": "a/../../escape.txt", "text": "x"}]}, "inside the sandbox root"),
    ({"files": [{"path": "/etc/passwd", "text": "x"}]}, "inside the sandbox root"),
    ({"folders": [".."]}, "inside the sandbox root"),
    ({"folders": ["."]}, "inside the sandbox root"),
    ({"settings": {"files": [{"path": "../.bashrc", "text": "x"}]}}, "inside the sandbox root"),
    ({"files": [{"path": "a.txt"}]}, "exactly one of 'text' or 'base64'"),
    ({"files": [{"path": "a.txt", "text": "x", "base64": "eA=="}]}, "exactly one"),
    ({"files": [{"path": "a.bin", "base64": "not base64!"}]}, "not valid base64"),
    ({"files": [{"path": "a.txt", "text": "1"}, {"path": "./a.txt", "text": "2"}]}, "more than once"),
    ({"files": [{"path": "d", "text": "1"}], "folders": ["d"]}, "both as a file and as a folder"),
    ({"launch": "l3afpad notes.txt; rm -rf ~"}, "no shell strings"),
    ({"launch": [[]]}, "non-empty argv"),
    ({"launch": [["HOME=/ l3afpad"]]}, "program name or an absolute path"),
    ({"settings": {"env": {"BAD NAME": "x"}}}, "not a valid environment variable name"),
    ({"settings": {"env": {"A": 1}}}, "must be a string"),
    ({"scripts": ["x"]}, "unknown key"),
])
def test_unsafe_or_malformed_plans_are_refused(data: dict, message: str) -> None:
    with pytest.raises(MaterializeError, match=message) as caught:
        MaterializePlan.from_dict(data)
    assert isinstance(caught.value, SetupError), "a bad plan is a setup error: the env reports it at reset"


def test_a_link_inside_the_root_cannot_carry_a_write_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir(), outside.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(MaterializeError, match="through a link"):
        apply(plan(files=[{"path": "link/evil.txt", "text": "x"}]), root, tmp_path / "home")
    assert list(outside.iterdir()) == [] and not (tmp_path / "home").exists()


def test_a_plan_with_apps_needs_a_home(tmp_path: Path) -> None:
    with pytest.raises(MaterializeError, match="needs a home"):
        apply(plan(launch=[["l3afpad"]]), tmp_path / "root")


# --- undo -----------------------------------------------------------------------------------------

def test_undo_restores_the_previous_state(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "kept").mkdir(parents=True)
    (root / "kept/old.txt").write_text("old contents")
    (root / "kept/old.txt").chmod(0o640)
    (root / "untouched.txt").write_text("stay")
    before = tree(root)
    done = apply(plan(files=[{"path": "kept/old.txt", "text": "NEW"}, {"path": "new/dir/a.txt", "text": "a"}],
                      folders=["kept/sub"], settings={"files": [{"path": ".cfg", "text": "c"}]}),
                 root, tmp_path / "home")
    assert (root / "kept/old.txt").read_text() == "NEW" and (root / "new/dir/a.txt").exists()
    (root / "new/dir/made-by-the-app.txt").write_text("inside a created folder")
    (root / "kept/old.txt").write_text("edited by the agent")
    done.undo()
    assert tree(root) == before
    assert (root / "kept/old.txt").stat().st_mode & 0o777 == 0o640
    assert not (tmp_path / "home").exists(), "a home the plan created goes with the undo"
    done.undo()  # idempotent
    assert tree(root) == before


def test_undo_removes_a_root_the_plan_created(tmp_path: Path) -> None:
    root = tmp_path / "fresh" / "root"
    apply(plan(files=[{"path": "a.txt", "text": "a"}]), root).undo()
    assert not (tmp_path / "fresh").exists()


def test_a_failure_half_way_undoes_what_was_applied(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "taken").mkdir(parents=True)
    (root / "first.txt").write_text("original")
    with pytest.raises(MaterializeError, match="exists as a folder"):
        apply(plan(files=[{"path": "first.txt", "text": "changed"}, {"path": "made/x.txt", "text": "x"},
                          {"path": "taken", "text": "clash"}]), root)
    assert tree(root) == {"first.txt": b"original", "taken": None}


# --- the DesktopEnv hook (real Xvfb and l3afpad) --------------------------------------------------

needs_editor = pytest.mark.skipif(shutil.which("l3afpad") is None, reason="l3afpad is not installed (make setup)")


@pytest.fixture(scope="module")
def env() -> Iterator[DesktopEnv]:
    with DesktopEnv(DesktopConfig(width=1024, height=768)) as desktop:
        yield desktop


def editor_task(text: str = "materialized\n", **setup: object) -> TaskSpec:
    return TaskSpec(id="materialize-test", instruction="look at the note", platform=Platform.DESKTOP, setup={
        "materialize": {"files": [{"path": "docs/note.txt", "text": text}], "folders": ["out"],
                        "launch": [["l3afpad", "{root}/docs/note.txt"]],
                        "settings": {"env": {"UIVENUS_MARK": "{root}"}}},
        **setup,
    })


def process_of(argument: str) -> int:
    """The pid of the process whose command line holds `argument` (a path unique to one episode)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if argument.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                    return int(entry.name)
            except OSError:
                continue
    raise AssertionError(f"no process runs with {argument}")


@needs_editor
def test_reset_materializes_launches_in_the_root_and_the_next_reset_undoes(env: DesktopEnv) -> None:
    obs = env.reset(editor_task())
    state = env.state()
    root, home = Path(state["materialized"]["root"]), Path(state["materialized"]["home"])
    assert root.is_relative_to(env.sandbox_dir) and tree(root) == {
        "docs": None, "docs/note.txt": b"materialized\n", "out": None}
    assert obs.info["focused"] == "note.txt", "the editor opened the materialized document"
    pid = process_of(f"{root}/docs/note.txt")
    environ = dict(item.split("=", 1) for item in
                   Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0") if "=" in item)
    assert environ["HOME"] == str(home) and environ["UIVENUS_MARK"] == str(root)
    assert Path(os.readlink(f"/proc/{pid}/cwd")) == root

    env.reset(TaskSpec(id="plain", instruction="nothing", platform=Platform.DESKTOP))
    assert not root.exists() and not home.exists(), "the next reset undid the plan"
    assert "materialized" not in env.state() and not Path(f"/proc/{pid}").exists()


@needs_editor
def test_a_named_workspace_keeps_what_was_there_and_close_undoes(tmp_path: Path) -> None:
    with DesktopEnv(DesktopConfig(width=640, height=480, sandbox_dir=tmp_path)) as desktop:
        workspace = desktop.workspace("project")
        (workspace / "docs").mkdir(parents=True)
        (workspace / "docs/note.txt").write_text("earlier work\n")
        (workspace / "keep.txt").write_text("keep")
        desktop.reset(editor_task("seeded\n", workspace="project"))
        assert (workspace / "docs/note.txt").read_text() == "seeded\n"
        with pytest.raises(SetupError, match="plain directory name"):
            desktop.workspace("a/b")
    assert tree(workspace) == {"docs": None, "docs/note.txt": b"earlier work\n", "keep.txt": b"keep"}


def test_a_bad_plan_fails_the_reset_with_a_setup_error(env: DesktopEnv) -> None:
    task = TaskSpec(id="bad", instruction="x", platform=Platform.DESKTOP,
                    setup={"materialize": {"files": [{"path": "../../x.txt", "text": "x"}]}})
    with pytest.raises(MaterializeError, match="inside the sandbox root"):
        env.reset(task)
