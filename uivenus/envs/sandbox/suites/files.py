"""Files tasks: rename, delete (confirmed), new folder, move, and a new folder filled by a move.

Checkers compare the whole file tree as a set of paths ("Documents/final.txt", folders end in "/"),
so a solution that renames, moves or deletes anything it was not asked to touch fails too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from uivenus.actions.space import Action, Finished
from uivenus.envs.sandbox.solving import failed, fill, passed, tap, tid
from uivenus.envs.sandbox.tasks import CheckResult, DomQuery, SandboxTask, register

ROOT = "root"


def folder(id: str, name: str, parent: str = ROOT) -> dict[str, Any]:
    return {"id": id, "name": name, "type": "folder", "parent": parent, "size": 0, "modified": "2026-11-02"}


def file(id: str, name: str, parent: str, size: int = 24_000, modified: str = "2026-11-10") -> dict[str, Any]:
    return {"id": id, "name": name, "type": "file", "parent": parent, "size": size, "modified": modified}


#: The tree most tasks start from; tasks add to it.
TREE = (
    folder("docs", "Documents"), folder("photos", "Photos"), folder("downloads", "Downloads"), folder("music", "Music"),
    folder("contracts", "Contracts", "docs"),
    file("f1", "report.txt", "docs", 14_200), file("f2", "budget-2026.xlsx", "docs", 48_100),
    file("f3", "cover-letter.docx", "docs", 22_900), file("f4", "meeting-notes.md", "docs", 3_100),
    file("f5", "lease.pdf", "contracts", 412_000),
    file("f6", "beach.jpg", "photos", 2_400_000), file("f7", "mountains.png", "photos", 3_100_000),
    file("f9", "old-invoice.pdf", "downloads", 88_000), file("f10", "invoice-1042.pdf", "downloads", 91_000),
    file("f11", "setup-installer.dmg", "downloads", 84_000_000), file("f12", "sunset.jpg", "downloads", 2_800_000),
    file("f13", "playlist.m3u", "music", 1_200),
    file("f14", "todo.txt", ROOT, 800),
)
#: A cluttered Downloads folder: on a phone its lower files start below the fold.
CLUTTER = tuple(file(f"d{i}", name, "downloads") for i, name in enumerate((
    "IMG_2041.heic", "IMG_2042.heic", "IMG_2043.heic", "IMG_2044.heic", "IMG_2045.heic", "IMG_2046.heic",
    "boarding-pass.pdf", "concert-tickets.pdf", "driver-update.zip",
    "flight-itinerary.pdf", "font-pack.zip", "notes-export.csv", "podcast-ep12.mp3", "presentation-v3.pptx",
    "receipt-amazon.pdf", "screenshot-01.png", "screenshot-02.png", "tax-form-w2.pdf",
)))


def paths(items: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every item as its full path from the top ("Documents/Contracts/", "Documents/report.txt"); an item in a
    folder that does not exist is under "?<parent id>/", not at the top."""
    by_id = {i["id"]: i for i in items}

    def path(item: Mapping[str, Any]) -> str:
        parts = []
        while True:
            parts.append(item["name"])
            if item["parent"] == ROOT:
                break
            if item["parent"] not in by_id:
                parts.append(f"?{item['parent']}")
                break
            item = by_id[item["parent"]]
        return "/".join(reversed(parts))

    return {path(i) + ("/" if i["type"] == "folder" else "") for i in items}


def _expect_paths(state: Mapping[str, Any], want: set[str], done: str) -> CheckResult:
    have = paths(state.get("items", []))
    if have == want:
        return passed(done)
    missing, extra = sorted(want - have), sorted(have - want)
    return failed(f"the file tree differs: missing {missing or 'nothing'}, unexpected {extra or 'nothing'}")


# --- solving ------------------------------------------------------------------------------------------

def open_folder(q: DomQuery, *names: str) -> Iterator[Action]:
    """Go to the top ("My Files") through the path bar, then open each folder of `names` in turn."""
    if q.exists(tid("crumb", id=ROOT)):
        yield from tap(q, tid("crumb", id=ROOT))
    for name in names:
        yield from tap(q, tid("item", name=name, type="folder"))


def item_action(q: DomQuery, name: str, action: str) -> Iterator[Action]:
    """Open the ⋮ menu of the item `name` in the folder shown and pick `action` (rename/move/delete)."""
    yield from tap(q, f"{tid('item', name=name)} {tid('more')}")
    yield from tap(q, tid(f"menu-{action}"))


def new_folder(q: DomQuery, name: str) -> Iterator[Action]:
    yield from tap(q, tid("new-folder"))
    yield from fill(q, tid("name-input"), name)
    yield from tap(q, tid("new-folder-ok"))


def move(q: DomQuery, name: str, destination: str) -> Iterator[Action]:
    yield from item_action(q, name, "move")
    yield from tap(q, tid("dest", name=destination), within=".dests")
    yield from tap(q, tid("move-ok"))


def solve_rename_report(q: DomQuery) -> Iterator[Action]:
    yield from open_folder(q, "Documents")
    yield from item_action(q, "report.txt", "rename")
    yield from fill(q, tid("name-input"), "final.txt")
    yield from tap(q, tid("rename-ok"))
    yield Finished()


def solve_delete_invoice(q: DomQuery) -> Iterator[Action]:
    yield from open_folder(q, "Downloads")
    yield from item_action(q, "old-invoice.pdf", "delete")
    yield from tap(q, tid("delete-ok"))  # consequential: the file is gone for good
    yield Finished()


def solve_new_folder(q: DomQuery) -> Iterator[Action]:
    yield from open_folder(q, "Documents")
    yield from new_folder(q, "Taxes 2026")
    yield Finished()


def solve_move_sunset(q: DomQuery) -> Iterator[Action]:
    yield from open_folder(q, "Downloads")
    yield from move(q, "sunset.jpg", "Photos")
    yield Finished()


def solve_receipts(q: DomQuery) -> Iterator[Action]:
    yield from open_folder(q, "Documents")
    yield from new_folder(q, "Receipts")
    yield from open_folder(q, "Downloads")
    yield from move(q, "invoice-1042.pdf", "Receipts")
    yield Finished()


# --- the tasks ---------------------------------------------------------------------------------------

def _task(name: str, instructions: tuple[str, ...], items: Sequence[Mapping[str, Any]],
          remove: set[str], add: set[str], done: str, solve) -> SandboxTask:
    """A task whose end state is the setup's paths less `remove`, plus `add`."""
    want = (paths(items) - remove) | add
    return SandboxTask(app="files", name=name, instructions=instructions,
                       setup={"items": [dict(i) for i in items], "nextId": 100},
                       check=lambda s: _expect_paths(s, want, done), solve=solve)


register(
    _task(
        "rename_report",
        ("Rename report.txt in the Documents folder to final.txt.",
         "In Documents, change the name of report.txt to final.txt.",
         "The report in Documents is finished: rename report.txt to final.txt."),
        TREE, {"Documents/report.txt"}, {"Documents/final.txt"}, "Documents/report.txt is now final.txt",
        solve_rename_report,
    ),
    _task(
        "delete_old_invoice",
        ("Delete old-invoice.pdf from the Downloads folder.",
         "Remove the file old-invoice.pdf in Downloads.",
         "I don't need old-invoice.pdf anymore; delete it from Downloads."),
        TREE + CLUTTER, {"Downloads/old-invoice.pdf"}, set(), "Downloads/old-invoice.pdf was deleted",
        solve_delete_invoice,
    ),
    _task(
        "new_folder_taxes",
        ("Create a new folder called \"Taxes 2026\" inside Documents.",
         "Make a folder named Taxes 2026 in the Documents folder.",
         "In Documents, add a folder \"Taxes 2026\"."),
        TREE, set(), {"Documents/Taxes 2026/"}, "Documents/Taxes 2026/ exists",
        solve_new_folder,
    ),
    _task(
        "move_sunset",
        ("Move sunset.jpg from Downloads to the Photos folder.",
         "Put the photo sunset.jpg, now in Downloads, into Photos.",
         "sunset.jpg belongs with my pictures: move it from Downloads into Photos."),
        TREE + CLUTTER[:6], {"Downloads/sunset.jpg"}, {"Photos/sunset.jpg"}, "sunset.jpg is in Photos",
        solve_move_sunset,
    ),
    _task(
        "file_receipt",
        ("Create a folder named Receipts inside Documents and move invoice-1042.pdf from Downloads into it.",
         "Make Documents/Receipts and put invoice-1042.pdf (it's in Downloads) there.",
         "File my invoice: new folder \"Receipts\" in Documents, then move invoice-1042.pdf from Downloads into it."),
        TREE, {"Downloads/invoice-1042.pdf"}, {"Documents/Receipts/", "Documents/Receipts/invoice-1042.pdf"},
        "invoice-1042.pdf is in the new Documents/Receipts folder",
        solve_receipts,
    ),
)
