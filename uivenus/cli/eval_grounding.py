"""`uivenus eval grounding`: score a policy on a grounding benchmark file (ScreenSpot v1/v2/Pro, OSWorld-G, ours)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from uivenus.cli.console import cli_console
from uivenus.cli.errors import fail

console = cli_console()


def grounding(
    data: Path = typer.Option(..., "--data",
                              help="Annotations JSON file (or a folder of them, e.g. ScreenSpot-Pro's)."),
    images: Path = typer.Option(None, "--images", file_okay=False,
                                help="Folder the image names resolve in (default: DATA's folder's images/, else it)."),
    policy: str = typer.Option(..., "--policy", help="Policy SPEC: oracle, ocr, openai:URL#MODEL, hf:PATH, …"),
    out: Path = typer.Option(..., "--out", file_okay=False, help="Output folder: results JSON, plot, misses page."),
    format: str = typer.Option("uivenus", "--format", help="Annotation format: screenspot, screenspot-v2, "
                                                           "screenspot-pro, osworld-g, uivenus."),
    box_form: str = typer.Option(None, "--box-form",
                                 help="Box form where the format ships several (screenspot-v2): xyxy, xywh, "
                                      "normalized-xyxy."),
    frame: str = typer.Option("rel", "--frame", help="The model's coordinate frame: rel, abs or smart."),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="Requests per act_batch call."),
    workers: int = typer.Option(1, "--workers", min=1, help="Batches in flight at once."),
    limit: int = typer.Option(None, "--limit", min=1, help="Score only the first N items."),
    worst: int = typer.Option(30, "--worst", min=0, help="Misses drawn on the misses page."),
) -> None:
    """Ask a policy to point at every item's target; print accuracy by category and write the report."""
    from uivenus.actions.coords import CoordinateError
    from uivenus.agent.policies import PolicyError, PolicySpecError
    from uivenus.evals.grounding import evaluate_grounding
    from uivenus.evals.grounding_data import GroundingDataError, load_grounding

    try:
        items = load_grounding(data, images, format=format, box_form=box_form)[:limit]
        results = evaluate_grounding(items, policy, out, frame_kind=frame, batch_size=batch_size, workers=workers,
                                     progress=True, worst=worst)
    except (GroundingDataError, PolicySpecError, PolicyError, CoordinateError) as exc:
        fail(str(exc))
    for dimension, rows in results["breakdown"].items():
        table = Table(title=dimension, title_justify="left")
        for column in (dimension, "n", "hits", "accuracy"):
            table.add_column(column, justify="left" if column == dimension else "right")
        for name, row in rows.items():
            table.add_row(name, str(row["n"]), str(row["hits"]), f"{row['accuracy']:.3f}")
        console.print(table)
    console.print(f"{results['policy']}: accuracy {results['accuracy']:.3f} ({results['hits']}/{results['n']}, "
                  f"{results['errors']} unusable replies)")
    console.print(f"results: {results['results_path']}\nplot: {results['plot_path']}\nmisses: {results['misses_path']}")
