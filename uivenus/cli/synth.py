"""`uivenus synth grounding`: programmatic training data rendered in headless Chromium."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from uivenus.cli.console import cli_console
from uivenus.cli.errors import fail

app = typer.Typer(help="Generate programmatic training data (GUI grounding screens).", no_args_is_help=True)
console = cli_console()


@app.callback()
def main() -> None:
    """Generate programmatic training data."""


def parse_sizes(text: str | None) -> list[tuple[int, int]] | None:
    """'1280x800,390x844' -> [(1280, 800), (390, 844)]; None or '' -> None."""
    if not text:
        return None
    sizes = []
    for part in text.split(","):
        width, sep, height = part.strip().lower().partition("x")
        if not sep or not width.isdigit() or not height.isdigit():
            raise typer.BadParameter(f"sizes must look like 1280x800,390x844; got {part!r}")
        sizes.append((int(width), int(height)))
    return sizes


@app.command("grounding")
def grounding(
    out: Annotated[Path, typer.Option("--out", file_okay=False, help="Output folder: images/ and annotations.json.")],
    n: Annotated[int, typer.Option("--n", min=1, help="Number of screens.")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Same seed, same bytes.")] = 0,
    platforms: Annotated[
        str, typer.Option("--platforms", help="Comma-separated platform styles.")
    ] = "macos,windows,ios,web",
    sizes: Annotated[
        str, typer.Option("--sizes", help="Screen sizes, e.g. 1280x800,390x844 (default: each platform's mix).")
    ] = "",
    workers: Annotated[int, typer.Option("--workers", min=1, help="Browser processes working in parallel.")] = 1,
    simple: Annotated[bool, typer.Option("--simple", help="Few, big elements (tiny-model training screens).")] = False,
    per_sample: Annotated[int, typer.Option("--per-sample", min=1, help="Instructions per screen.")] = 5,
    parquet: Annotated[
        Path | None, typer.Option("--parquet", dir_okay=False, help="Also export a Parquet file here.")
    ] = None,
) -> None:
    """Render n grounding screens with instructions (ScreenSpot-v2-style JSON + PNG)."""
    from uivenus.synth import SynthError
    from uivenus.synth.grounding import export_parquet, generate_grounding

    names = [p.strip() for p in platforms.split(",") if p.strip()]
    try:
        records = generate_grounding(
            n,
            out,
            seed=seed,
            platforms=names,
            sizes=parse_sizes(sizes),
            workers=workers,
            progress=True,
            simple=simple,
            per_sample=per_sample,
        )
        if parquet is not None:
            export_parquet(out, parquet)
    except SynthError as exc:
        fail(str(exc))
    kinds = Counter(r["instruction_kind"] for r in records)
    summary = ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))
    console.print(f"wrote {n} screens and {len(records)} instructions ({summary}) to {out}")
    if parquet is not None:
        console.print(f"parquet: {parquet}")
