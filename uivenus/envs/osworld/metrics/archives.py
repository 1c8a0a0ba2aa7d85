"""Archive metrics: two .zip (or tar) files compared member by member, each member with the metric for its kind."""

from __future__ import annotations

import difflib
import io
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pypdf import PdfReader

from uivenus.envs.osworld.metrics.documents import compare_docx_files
from uivenus.envs.osworld.metrics.images import compare_images
from uivenus.envs.osworld.metrics.pdfs import compare_pdfs
from uivenus.envs.osworld.metrics.registry import metric
from uivenus.envs.osworld.metrics.slides import compare_pptx_files
from uivenus.envs.osworld.metrics.tables import compare_csv, compare_table
from uivenus.envs.osworld.metrics.text import compare_text_file

__all__ = ["ARCHIVE_MEMBER_METRICS", "compare_archive", "compare_zip_files"]

#: compare_archive's `file_type` option: which metric compares two unpacked members.
ARCHIVE_MEMBER_METRICS: Mapping[str, Callable[..., float]] = {
    "text": compare_text_file, "pdf": compare_pdfs, "docx": compare_docx_files, "ppt": compare_pptx_files,
    "image": compare_images, "csv": compare_csv, "table": compare_table,
}


def _pdf_bytes_text(blob: bytes) -> str:
    return "".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(blob)).pages)


@metric("compare_zip_files")
def compare_zip_files(result: Any, expected: Any) -> float:
    """1.0 when both zips hold the same member names, PDFs with text at least 95% alike, others byte-equal."""
    try:
        with zipfile.ZipFile(str(result)) as mine, zipfile.ZipFile(str(expected)) as theirs:
            if set(mine.namelist()) != set(theirs.namelist()):
                return 0.0
            for name in mine.namelist():
                a, b = mine.read(name), theirs.read(name)
                if name.lower().endswith(".pdf"):
                    if difflib.SequenceMatcher(None, _pdf_bytes_text(a), _pdf_bytes_text(b)).ratio() < 0.95:
                        return 0.0
                elif a != b:
                    return 0.0
    except Exception:  # noqa: BLE001 - a missing, damaged or non-zip file (or a damaged PDF inside) is unreadable
        return 0.0
    return 1.0


def _unpack(archive: Path, into: Path) -> bool:
    """Unpack a zip or tar archive safely (no member may land outside `into`); False when it is not one."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as box:
                box.extractall(into)  # zipfile strips absolute paths and ".." itself
            return True
        with tarfile.open(archive) as box:
            box.extractall(into, filter="data")  # refuses links and paths that leave `into`
        return True
    except (tarfile.TarError, zipfile.BadZipFile, OSError):
        return False


@metric("compare_archive")
def compare_archive(result: Any, expected: Any, *, file_path: str = "", file_type: str = "text",
                    **options: Any) -> float:
    """The two archives' members under `file_path` must have the same names; the score is the mean of the
    `file_type` metric (see `ARCHIVE_MEMBER_METRICS`) over member pairs, with the remaining options passed on."""
    compare = ARCHIVE_MEMBER_METRICS.get(file_type)
    if compare is None:
        raise ValueError(f"compare_archive: file_type {file_type!r} is not one of {', '.join(ARCHIVE_MEMBER_METRICS)}")
    if result is None or expected is None or not Path(result).is_file() or not Path(expected).is_file():
        return 0.0
    work = Path(tempfile.mkdtemp(prefix="uivenus-archive-"))
    try:
        mine, theirs = work / "result", work / "expected"
        if not _unpack(Path(result), mine) or not _unpack(Path(expected), theirs):
            return 0.0
        names = sorted(p.name for p in (mine / file_path).iterdir()) if (mine / file_path).is_dir() else []
        wanted = sorted(p.name for p in (theirs / file_path).iterdir()) if (theirs / file_path).is_dir() else []
        if names != wanted or not names:
            return 0.0
        scores = [compare(mine / file_path / n, theirs / file_path / n, **options) for n in names]
        return sum(scores) / len(scores)
    finally:
        shutil.rmtree(work, ignore_errors=True)
