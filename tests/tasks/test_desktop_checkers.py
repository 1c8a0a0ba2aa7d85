"""Every desktop family's check on its own, without a desktop: it accepts the files the instruction asks for and
rejects each one-file change of them with a verdict that names the file.

The reference runs (test_desktop_tasks.py) show a check passes the right work and fails none; neither shows that
it reads every file and test it should (a replace-word check that dropped its `not_contains` passed them all).
The expected files here are written from each family's instruction (default parameters), apart from the builders
of the checks. A new family fails `test_every_family_has_expected_files` until it has an entry.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from uivenus.envs.desktop_checks import evaluate
from uivenus.envs.desktop_tasks import FAMILIES, desktop_task
from uivenus.envs.sandbox.mutations import Change, Drop, Edit, unnoticed
from uivenus.envs.sandbox.tasks import CheckResult
from uivenus.tasks.desktop import project_workflow

#: A folder in an expected file tree (files map to their text).
FOLDER = None

LOG = "2026-01-02 started\n2026-01-03 tested\n"
SUMMARY = "Q1 summary\nrevenue up\ncosts flat\n"


#: Family (or workflow) -> (the files its instruction asks for, the one-file edits its check must reject).
EXPECTED: dict[str, tuple[dict[str, Any], list[Edit]]] = {
    "replace_word": (
        {"notes.txt": "Status: final\nThe final plan goes out on Friday.\n"},
        [Change(("notes.txt",)), Drop(("notes.txt",)),
         Change(("notes.txt",), "Status: final\nThe draft plan goes out on Friday.\n"),  # one 'draft' left
         Change(("notes.txt",), "Status: \nThe plan goes out on Friday.\n")],  # 'draft' deleted, 'final' never typed
    ),
    "create_lines": (
        {"todo.txt": "buy milk\ncall Bob\nwrite the report\n"},
        [Change(("todo.txt",)), Drop(("todo.txt",)),
         Change(("todo.txt",), "call Bob\nbuy milk\nwrite the report\n"),  # out of order
         Change(("todo.txt",), "buy milk\ncall Bob\n"),  # a line missing
         Change(("todo.txt",), "buy milk\ncall Bob\nwrite the report\nwrite the report\n")],  # a line twice
    ),
    "append_save_as": (
        {"log.txt": LOG, "log-2026.txt": LOG + "2026-01-05 released\n"},
        [Change(("log.txt",)), Change(("log-2026.txt",)), Drop(("log.txt",)), Drop(("log-2026.txt",)),
         Change(("log.txt",), LOG + "2026-01-05 released\n"),  # the original edited too
         Change(("log-2026.txt",), LOG)],  # saved as, but without the new line
    ),
    "make_folder": (
        {"archive": FOLDER},
        [Drop(("archive",)), Change(("archive",), "")],  # no folder; a file of that name
    ),
    "workflow/project_report": (
        {"reports": FOLDER, "reports/summary.txt": SUMMARY, "draft.txt": "Plan: final\nReview the final today.\n"},
        [Change(("reports/summary.txt",)), Drop(("reports/summary.txt",)), Change(("draft.txt",)), Drop(("draft.txt",)),
         Change(("reports/summary.txt",), SUMMARY.replace("revenue up\n", "")),
         Change(("draft.txt",), "Plan: final\nReview the draft today.\n")],
    ),
}

CHECKS: dict[str, Mapping[str, Any]] = {
    **{name: desktop_task(name).check for name in FAMILIES},
    "workflow/project_report": project_workflow().task.check,
}


def test_every_family_has_expected_files() -> None:
    assert set(EXPECTED) == set(CHECKS), "give each new desktop family its expected files in EXPECTED"


def _checker(check: Mapping[str, Any], tmp_path: Path) -> Callable[[Mapping[str, Any]], CheckResult]:
    """The check as a function of a file tree ({path: text, or FOLDER}), each tree written to a fresh root."""
    roots = itertools.count()

    def judge(files: Mapping[str, Any]) -> CheckResult:
        root = tmp_path / f"root{next(roots)}"
        root.mkdir()
        for path, text in sorted(files.items()):
            target = root / path
            if text is FOLDER:
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
        return evaluate(check, root)

    return judge


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_check_accepts_the_expected_files_and_rejects_each_one_file_change(name: str, tmp_path: Path) -> None:
    files, edits = EXPECTED[name]
    judge = _checker(CHECKS[name], tmp_path)
    assert judge(files).passed
    assert not judge({}).passed  # nothing done
    findings = unnoticed(judge, files, edits)
    assert not findings, "\n".join(map(str, findings))
