"""Whole files: a target is absent, old or whole; a failed writer leaves the old file and no temporary behind."""

import json
import subprocess
import sys

import pytest

from uivenus.files import atomic_path, write_bytes, write_json, write_jsonl, write_text
from uivenus.records import read_jsonl


def leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


class WriterCrash(RuntimeError):
    pass


@pytest.mark.parametrize("fsync", [True, False])
def test_writes_replace_the_old_file_whole(tmp_path, fsync):
    path = tmp_path / "a.json"
    write_text(path, "old", fsync=fsync)
    assert write_json(path, {"b": 1, "a": "é"}, sort_keys=True, fsync=fsync) == path
    assert path.read_text(encoding="utf-8") == '{\n  "a": "é",\n  "b": 1\n}\n'
    write_bytes(path, b"\x00\x01", fsync=fsync)
    assert path.read_bytes() == b"\x00\x01" and leftovers(tmp_path) == []


def test_a_writer_that_raises_mid_write_leaves_the_old_file_and_no_temp(tmp_path):
    path = tmp_path / "episode.json"
    write_text(path, "old and whole")
    with pytest.raises(WriterCrash), atomic_path(path) as tmp:
        tmp.write_text("half of the new")
        raise WriterCrash("killed mid-write")
    assert path.read_text() == "old and whole" and leftovers(tmp_path) == []


def test_a_value_json_cannot_hold_writes_nothing(tmp_path):
    path = tmp_path / "stats.json"
    write_json(path, {"ok": True})
    with pytest.raises(TypeError):
        write_json(path, {"not json": object()})
    assert json.loads(path.read_text()) == {"ok": True} and leftovers(tmp_path) == []


def test_jsonl_streams_lines_and_a_failing_source_keeps_the_old_file(tmp_path):
    path = tmp_path / "feedback.jsonl"
    assert write_jsonl(path, ({"i": i, "why": "é"} for i in range(3)), sort_keys=True) == 3
    assert [value for _, value in read_jsonl(path, ValueError)] == [{"i": 0, "why": "é"}, {"i": 1, "why": "é"},
                                                                    {"i": 2, "why": "é"}]

    def source():
        yield {"i": 9}
        raise WriterCrash("the producer died after one line")

    with pytest.raises(WriterCrash):
        write_jsonl(path, source())
    assert len(path.read_text().splitlines()) == 3 and leftovers(tmp_path) == []
    assert write_jsonl(tmp_path / "empty.jsonl", []) == 0 and (tmp_path / "empty.jsonl").read_text() == ""


def test_a_failing_replace_removes_the_temp(tmp_path):
    path = tmp_path / "target"
    (path / "inside").mkdir(parents=True)  # a file cannot replace a non-empty folder
    with pytest.raises(OSError):
        write_text(path, "new")
    assert (path / "inside").is_dir() and leftovers(tmp_path) == []


def test_a_writer_that_writes_nothing_is_an_error_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "out.parquet"
    write_bytes(path, b"old")
    with pytest.raises(FileNotFoundError, match="nothing was written"), atomic_path(path):
        pass
    assert path.read_bytes() == b"old"


def test_a_folder_is_replaced_whole_or_not_at_all(tmp_path):
    final = tmp_path / "step-1"
    with atomic_path(final) as tmp:
        (tmp / "model").mkdir(parents=True)
        (tmp / "model" / "weights.bin").write_bytes(b"v1")
    with pytest.raises(WriterCrash), atomic_path(final) as tmp:
        (tmp / "model").mkdir(parents=True)
        (tmp / "model" / "weights.bin").write_bytes(b"half of v2")
        raise WriterCrash("killed while saving")
    assert (final / "model" / "weights.bin").read_bytes() == b"v1" and leftovers(tmp_path) == []
    with atomic_path(final) as tmp:
        tmp.mkdir()
        (tmp / "trainer.json").write_text("{}")
    assert sorted(p.name for p in final.iterdir()) == ["trainer.json"] and leftovers(tmp_path) == []


def test_a_named_temp_left_by_a_killed_run_is_cleared_first(tmp_path):
    partial = tmp_path / ".step-2.partial"
    (partial / "stale").mkdir(parents=True)
    with atomic_path(tmp_path / "step-2", temp=partial) as tmp:
        assert tmp == partial and not tmp.exists()
        tmp.mkdir()
        (tmp / "fresh").write_text("x")
    assert [p.name for p in (tmp_path / "step-2").iterdir()] == ["fresh"] and not partial.exists()


def test_a_process_killed_mid_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "catalog.json"
    write_text(path, "old and whole")
    script = ("import os, sys; from uivenus.files import atomic_path\n"
              "with atomic_path(sys.argv[1]) as tmp:\n"
              "    tmp.write_text('half of the new')\n"
              "    os._exit(9)\n")
    assert subprocess.run([sys.executable, "-c", script, str(path)]).returncode == 9
    assert path.read_text() == "old and whole"
    # no cleanup runs in a killed process: its temp stays a hidden sibling, which no reader takes for the file
    assert [name.startswith(".catalog.json.") for name in leftovers(tmp_path)] == [True]
