"""Archive metrics on real zip and tar files: member lists, per-member metrics, and archives that are broken or
try to write outside their folder."""

from __future__ import annotations

import io
import tarfile
import tempfile
import uuid
import zipfile
from pathlib import Path

import pytest

from uivenus.envs.osworld.metrics import metric_for


def _zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as box:
        for name, text in members.items():
            box.writestr(name, text)
    return path


def test_compare_zip_files(tmp_path: Path) -> None:
    gold = _zip(tmp_path / "gold.zip", {"a.txt": "alpha", "b/c.txt": "gamma"})
    same = _zip(tmp_path / "same.zip", {"b/c.txt": "gamma", "a.txt": "alpha"})
    changed = _zip(tmp_path / "changed.zip", {"a.txt": "alpha", "b/c.txt": "delta"})
    fewer = _zip(tmp_path / "fewer.zip", {"a.txt": "alpha"})
    compare = metric_for("compare_zip_files")
    assert compare(same, gold) == 1.0
    assert compare(changed, gold) == 0.0
    assert compare(fewer, gold) == 0.0
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04 nope")
    assert compare(tmp_path / "bad.zip", gold) == 0.0
    assert compare(None, gold) == 0.0


def test_compare_archive_scores_members_with_their_metric(tmp_path: Path) -> None:
    gold = _zip(tmp_path / "gold.zip", {"notes/a.txt": "Alpha  beta", "notes/b.txt": "gamma"})
    result = tmp_path / "result.tar.gz"
    with tarfile.open(result, "w:gz") as box:
        for name, text in {"notes/a.txt": "alpha beta", "notes/b.txt": "GAMMA"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            box.addfile(info, io.BytesIO(text.encode()))
    compare = metric_for("compare_archive")
    assert compare(result, gold, file_path="notes", ignore_blanks=True, ignore_case=True) == 1.0
    assert compare(result, gold, file_path="notes") == 0.0
    half = _zip(tmp_path / "half.zip", {"notes/a.txt": "Alpha  beta", "notes/b.txt": "other"})
    assert compare(half, gold, file_path="notes") == 0.5
    with pytest.raises(ValueError, match="file_type 'audio'"):
        compare(half, gold, file_type="audio")


def test_compare_archive_refuses_members_that_leave_their_folder(tmp_path: Path) -> None:
    escaped = Path(tempfile.gettempdir()) / f"uivenus-escaped-{uuid.uuid4().hex}.txt"  # where ../../ would land
    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as box:
        info = tarfile.TarInfo(f"../../{escaped.name}")
        info.size = 1
        box.addfile(info, io.BytesIO(b"x"))
    gold = _zip(tmp_path / "gold.zip", {escaped.name: "x"})
    assert metric_for("compare_archive")(evil, gold) == 0.0
    assert not escaped.exists()
