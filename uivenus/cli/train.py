"""`uivenus train sft|rl|mopd|recipe --config FILE [key=value ...]`: the training stages and the miniature recipe.

Every stage writes metrics.jsonl and TensorBoard logs into its out_dir (with a rich progress bar); the commands
also plot the curves to `<out_dir>/curves.png`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from uivenus.cli.console import cli_console
from uivenus.cli.errors import fail

app = typer.Typer(help="Train: Stage I (sft), Stage II (rl), Stage III (mopd), or the whole miniature recipe.",
                  no_args_is_help=True)
console = cli_console()

ConfigOption = Annotated[Path, typer.Option("--config", dir_okay=False,
                                             help="YAML config file; one not found here is looked up among the "
                                                  "shipped configs/ (`configs/nano.yaml` or `nano`).")]
Overrides = Annotated[list[str] | None, typer.Argument(help="key=value overrides, e.g. max_steps=50 lr=1e-4.")]


def _load(config: Path, cls: type, overrides: list[str] | None) -> Any:
    from uivenus.train.config import ConfigError, load_config

    try:
        return load_config(config, cls, overrides or [])
    except (ConfigError, ValueError) as exc:
        fail(f"config error: {exc}", code=2)


def _stage(config: Any, train: Callable[[Any], Path]) -> None:
    from uivenus.train.plots import PlotError, plot_metrics
    from uivenus.train.trainer import METRICS, TrainError

    try:
        final = train(config)
    except TrainError as exc:
        fail(f"training failed: {exc}")
    try:
        plot = plot_metrics(config.out_dir / METRICS, config.out_dir / "curves.png", title=str(config.out_dir))
        console.print(f"curves: {plot}")
    except PlotError as exc:
        console.print(f"[yellow]no curves plotted:[/yellow] {exc}")
    console.print(f"metrics: {config.out_dir / METRICS}  tensorboard: {config.out_dir / 'tensorboard'}")
    console.print(f"[bold green]final model:[/bold green] {final}")


@app.command("sft")
def sft(
    config: ConfigOption,
    overrides: Overrides = None,
    tiny_base: Annotated[bool, typer.Option("--tiny-base", help="Build the tiny random Qwen3-VL model at the "
                                            "config's `model` path first when nothing is there (CPU runs).")] = False,
) -> None:
    """Stage I: supervised training on trajectories, grounding and CAPTCHA samples."""
    from uivenus.train.sft import SFTConfig, train_sft

    settings = _load(config, SFTConfig, overrides)
    if tiny_base and not Path(settings.model).exists():
        from uivenus.train.tiny import build_tiny_qwen3_vl

        build_tiny_qwen3_vl(settings.model)
        console.print(f"built the tiny base model at {settings.model}")
    _stage(settings, train_sft)


@app.command("rl")
def rl(config: ConfigOption, overrides: Overrides = None) -> None:
    """Stage II: step-level RL for one domain's expert."""
    from uivenus.train.rl import RLConfig, train_rl

    _stage(_load(config, RLConfig, overrides), train_rl)


@app.command("mopd")
def mopd(config: ConfigOption, overrides: Overrides = None) -> None:
    """Stage III: multi-teacher on-policy distillation of the experts into one student."""
    from uivenus.train.mopd import MOPDConfig, train_mopd

    _stage(_load(config, MOPDConfig, overrides), train_mopd)


@app.command("recipe")
def recipe(config: ConfigOption, overrides: Overrides = None) -> None:
    """The miniature recipe: Stage I once, then every seed's experts, students and baselines, held-out evaluation,
    and the comparison (mean ± sd over seeds)."""
    from uivenus.train.recipe import PLOT_FILE, RESULTS_FILE, RecipeConfig, results_table, run_recipe
    from uivenus.train.trainer import TrainError

    settings = _load(config, RecipeConfig, overrides)
    try:
        result = run_recipe(settings, log=lambda line: console.print(f"[bold]{line}[/bold]"))
    except TrainError as exc:
        fail(f"recipe failed: {exc}")
    console.print(f"Held-out scores, mean ± sd over seeds {', '.join(map(str, settings.seeds))}:", markup=False)
    console.print(results_table(result.summary), markup=False, highlight=False)
    console.print(f"results: {result.out_dir / RESULTS_FILE}  plot: {result.out_dir / PLOT_FILE}  "
                  f"curves: {result.out_dir / 'plots'}")
    if result.shipped:
        console.print(f"[bold green]shipped the MOPD student to[/bold green] {result.shipped}")
