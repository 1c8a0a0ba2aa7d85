"""Memory for long-horizon tasks: TakeNote contents carried in the conversation, optionally across episodes.

Within an episode every note the model takes is shown to it again on every later step (the notes part of
`conversation.build_messages`). When the user asks for it, notes also persist in a `NotesFile` — one JSON-lines
file per user and task family — so the next episode of the same family starts with them. Each note is one line
written with a single append, so concurrent episodes never interleave and a crash can cut only the last line,
which readers skip.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["Memory", "NotesError", "NotesFile", "family_of"]

_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class NotesError(ValueError):
    """A notes file cannot be used (bad user/family name, unreadable file); the message says what to fix."""


def _safe_name(kind: str, value: str) -> str:
    name = _NAME.sub("_", value.strip()).strip("._")
    if not name:
        raise NotesError(f"{kind} {value!r} gives an empty file name; use letters, digits, '.', '_' or '-'")
    return name[:120]


def family_of(task_id: str, app: str | None = None) -> str:
    """The task family whose notes an episode shares: the app, else the task id up to its first '/'."""
    return app or task_id.split("/", 1)[0]


@dataclass(frozen=True)
class NotesFile:
    """Notes kept across episodes at `path` (JSON lines: {"note", "task", "at"})."""

    path: Path

    @classmethod
    def for_family(cls, root: str | os.PathLike[str], user: str, family: str) -> NotesFile:
        """`ROOT/<user>/<family>.jsonl`."""
        return cls(Path(root) / _safe_name("user", user) / f"{_safe_name('task family', family)}.jsonl")

    def load(self) -> tuple[str, ...]:
        """The notes stored so far, oldest first (a line cut short by a crash is skipped)."""
        try:
            data = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ()
        except OSError as exc:
            raise NotesError(f"cannot read notes file {self.path}: {exc.strerror}") from None
        notes = []
        for line in data.splitlines():
            try:
                note = json.loads(line)["note"]
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(note, str) and note.strip():
                notes.append(note)
        return tuple(notes)

    def append(self, note: str, *, task: str | None = None) -> None:
        """Add one note with a single O_APPEND write (whole lines only, even with several writers)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        record = {"note": note, "task": task, "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # a crash cut the last line short: start ours on a fresh one
            os.write(fd, line)
        finally:
            os.close(fd)


class Memory:
    """The notes of one episode (earlier episodes' notes first, when a notes file is attached)."""

    def __init__(self, notes: Iterable[str] = (), *, notes_file: NotesFile | None = None,
                 task_id: str | None = None) -> None:
        self.notes_file = notes_file
        self.task_id = task_id
        self._notes: list[str] = [*(notes_file.load() if notes_file else ()), *notes]

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(self._notes)

    def take(self, content: str) -> None:
        """Remember `content` for the rest of the episode (and later episodes, with a notes file)."""
        content = content.strip()
        if not content:
            return
        self._notes.append(content)
        if self.notes_file is not None:
            self.notes_file.append(content, task=self.task_id)
