"""`uivenus synth captcha` and `uivenus eval captcha`: interactive CAPTCHA pages and Pass@1 on them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
from rich.table import Table

from uivenus.cli.console import cli_console

console = cli_console()


def _names(text: str) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] or None


def synth_captcha(
    out: Path = typer.Option(..., "--out", file_okay=False, help="Output folder: <id>.html and instances.jsonl."),
    n: int = typer.Option(16, "--n", min=1, help="Number of instances (families cycle fastest)."),
    seed: int = typer.Option(0, "--seed", help="Same seed, same bytes."),
    families: str = typer.Option("", "--families", help="Comma-separated families (default: all)."),
    difficulty: str = typer.Option("", "--difficulty", help="One level: easy, medium or hard (default: all, cycling)."),
    layouts: str = typer.Option("desktop", "--layouts", help="Comma-separated page layouts: desktop, phone."),
) -> None:
    """Generate CAPTCHA instances, each with its verified solution as unified actions."""
    from uivenus.synth.captcha import CaptchaError, generate_captchas

    try:
        instances = generate_captchas(n, out, seed=seed, families=_names(families), difficulty=difficulty or None,
                                      layouts=tuple(_names(layouts) or ("desktop",)))
    except CaptchaError as exc:
        raise typer.BadParameter(str(exc)) from None
    counts = Counter(instance.family for instance in instances)
    console.print(f"wrote {len(instances)} instances to {out}: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def eval_captcha(
    data: Path = typer.Option(None, "--data", exists=True, file_okay=False,
                              help="A folder from `uivenus synth captcha` (or give --site)."),
    site: str = typer.Option(None, "--site", help="A CAPTCHA site that grades itself (Open CaptchaWorld shape)."),
    verdict: str = typer.Option("response:/api/check_answer#correct", "--verdict",
                                help="With --site: response:<url-pattern>#<json-field> or dom:<selector>."),
    types: str = typer.Option("", "--types", help="With --site: comma-separated puzzle types (page opened with "
                                                  "?type=<Type>); default: the site's own choice."),
    n: int = typer.Option(1, "--n", min=1, help="With --site: puzzles per type (or in all, without --types)."),
    policy: str = typer.Option("oracle", "--policy",
                               help="Policy SPEC: oracle, ocr, hf:PATH, openai:URL#MODEL, nano …"),
    out: Path = typer.Option(Path("runs/captcha-eval"), "--out", help="Where results JSON and the plot go."),
    max_steps: int = typer.Option(3, "--max-steps", min=1, help="Turns per instance before it counts as failed."),
) -> None:
    """Pass@1 of a policy per CAPTCHA family (or site puzzle type) and overall, graded by each page's own code."""
    if (data is None) == (site is None):
        raise typer.BadParameter("give either --data (generated instances) or --site (a self-grading site)")
    if site is not None:
        from uivenus.evals.captcha_site import evaluate_captcha_site

        results = evaluate_captcha_site(site, verdict, policy, out, types=_names(types) or (), n=n,
                                        max_steps=max_steps)
        groups, title, label = results["per_type"], f"CAPTCHA site Pass@1 · {results['policy']}", "type"
    else:
        from uivenus.evals.captcha import evaluate_captchas

        results = evaluate_captchas(data, policy, out, max_steps=max_steps, progress=True)
        groups, title, label = results["per_family"], f"CAPTCHA Pass@1 · {results['policy']}", "family"
    table = Table(title=title)
    table.add_column(label)
    table.add_column("instances", justify="right")
    table.add_column("Pass@1", justify="right")
    for family, rate in sorted(groups.items()):
        table.add_row(family, str(rate["n"]), f"{rate['pass_at_1']:.3f}")
    table.add_row("[bold]all (micro)[/bold]", str(results["n"]), f"[bold]{results['pass_at_1']:.3f}[/bold]")
    console.print(table)
    console.print(f"wrote {results['results_path']} and {results['plot_path']}")
