"""What the metric tests share: LibreOffice headless to make real office files (one conversion batch per module)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest


def _convert(work: Path, files: Sequence[Path], target: str) -> list[Path]:
    """Convert `files` with one `soffice --headless --convert-to target` run into work/<target>/ and return the
    outputs in order (a throwaway profile keeps the run from touching or waiting on the user's)."""
    if shutil.which("soffice") is None:
        pytest.fail("soffice not found: install libreoffice-calc libreoffice-writer libreoffice-impress "
                    "(make system-packages)")
    out = work / target.split(":")[0]
    out.mkdir(exist_ok=True)
    profile = (work / "lo-profile").as_uri()
    subprocess.run(["soffice", f"-env:UserInstallation={profile}", "--headless", "--norestore",
                    "--convert-to", target, "--outdir", str(out), *map(str, files)],
                   check=True, capture_output=True, timeout=120)
    made = [out / f"{f.stem}.{target.split(':')[0]}" for f in files]
    missing = [p.name for p in made if not p.is_file()]
    assert not missing, f"soffice made no {missing}"
    return made


@pytest.fixture(scope="module")
def soffice_convert(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Sequence[Path], str], list[Path]]:
    work = tmp_path_factory.mktemp("soffice")
    return lambda files, target: _convert(work, files, target)
