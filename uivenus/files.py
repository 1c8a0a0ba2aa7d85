"""Whole files: every file that must never be seen half-written is written here, and only here.

A writer works on a dot-prefixed temporary sibling of the target (same directory, so the same file system);
when it finishes, the sibling is flushed to disk (`fsync`) and moved onto the target with `os.replace`. A
reader therefore finds the target absent, old, or whole; a writer that fails, or a process killed mid-write,
leaves the old target untouched, and any failure removes the sibling. `fsync=False` skips the flush to disk
(the file is still whole for readers; only a power cut can lose it).

    write_text(path, text)                       # also write_bytes, write_json, write_jsonl
    with atomic_path(path) as tmp:               # for writers that need a path: Parquet, checkpoint folders
        writer.save(tmp)

It sits beside `records` at the bottom of the layers and imports nothing of ours.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["atomic_path", "write_bytes", "write_json", "write_jsonl", "write_text"]


def _sibling(path: Path, tag: str) -> Path:
    """A dot-prefixed name beside `path` that no other writer (process or thread) picks."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.{tag}")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(path: Path) -> None:
    """Flush a file, or a folder with everything in it, to disk."""
    if path.is_dir():
        for folder, _, names in os.walk(path):
            for name in names:
                if not os.path.islink(os.path.join(folder, name)):
                    _fsync(Path(folder, name))
            _fsync(Path(folder))
    else:
        _fsync(path)


def _replace(tmp: Path, path: Path) -> None:
    """`os.replace`, also for a folder onto an existing folder (which it cannot replace in one step: the old
    one is moved aside first, so `path` is briefly absent, never half-written)."""
    if tmp.is_dir() and path.is_dir() and not path.is_symlink():
        old = _sibling(path, "old")
        os.replace(path, old)
        try:
            os.replace(tmp, path)
        except BaseException:
            os.replace(old, path)
            raise
        shutil.rmtree(old)
    else:
        os.replace(tmp, path)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, fsync: bool = True, temp: str | os.PathLike[str] | None = None
                ) -> Iterator[Path]:
    """Yield a temporary sibling of `path` to write (a file or a folder); when the block ends cleanly it is
    flushed to disk and moved onto `path`; when the block raises, it is removed and `path` is left as it was.

    `temp` names the sibling for writers in several processes that must agree on it (a checkpoint every rank
    writes into); a stale one left by a killed run is removed first. By default the name is unique to this call.
    """
    path = Path(path)
    tmp = Path(temp) if temp is not None else _sibling(path, "tmp")
    _remove(tmp)
    try:
        yield tmp
        if not tmp.exists():
            raise FileNotFoundError(f"nothing was written to {tmp}, so {path} was left as it was")
        if fsync:
            _fsync_tree(tmp)
        _replace(tmp, path)
        if fsync:
            _fsync(path.parent)  # the rename itself
    except BaseException:
        _remove(tmp)
        raise


def write_bytes(path: str | os.PathLike[str], data: bytes, *, fsync: bool = True) -> Path:
    """Write `data` to `path` whole (see the module docstring); returns the path."""
    with atomic_path(path, fsync=fsync) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text(path: str | os.PathLike[str], text: str, *, fsync: bool = True) -> Path:
    """Write `text` (UTF-8, newlines as given) to `path` whole; returns the path."""
    return write_bytes(path, text.encode("utf-8"), fsync=fsync)


def write_json(path: str | os.PathLike[str], value: Any, *, indent: int | None = 2, sort_keys: bool = False,
               fsync: bool = True) -> Path:
    """Write `value` as JSON (UTF-8 unescaped, one trailing newline) to `path` whole; returns the path.

    A value JSON cannot hold raises `TypeError`/`ValueError` before anything is written."""
    text = json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=False) + "\n"
    return write_text(path, text, fsync=fsync)


def write_jsonl(path: str | os.PathLike[str], values: Iterable[Any], *, sort_keys: bool = False,
                fsync: bool = True) -> int:
    """Write one JSON line per value (UTF-8 unescaped) to `path` whole, streaming; returns how many lines.

    The reader is `uivenus.records.read_jsonl`."""
    count = 0
    with atomic_path(path, fsync=fsync) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as out:
        for value in values:
            out.write(json.dumps(value, ensure_ascii=False, sort_keys=sort_keys) + "\n")
            count += 1
    return count
