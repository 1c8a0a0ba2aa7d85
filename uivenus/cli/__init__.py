"""The `uivenus` command: one typer app with a sub-command group per part of the system."""

from __future__ import annotations

import typer

from uivenus.cli import (
    actions, captcha, demo, env, evaluate, run, runs, serve, synth, tasks, tasks_real, tasks_run, train, verify,
)
from uivenus.cli.errors import DEBUG_ENV, ErrorBoundaryGroup

app = typer.Typer(
    help="uivenus: a GUI agent that acts on phones, browsers and desktops, and the data engine that trains it.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=ErrorBoundaryGroup,
)


@app.callback()
def main(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help=f"Show the traceback of an error (or set {DEBUG_ENV}=1)."),
) -> None:
    """uivenus: a GUI agent that acts on phones, browsers and desktops, and the data engine that trains it.

    Bad input (an unknown env, task or policy, a missing file or path) is one `error: …` line and exit status 1.
    """
    ctx.meta["uivenus.debug"] = debug

app.add_typer(actions.app, name="actions")
app.add_typer(env.app, name="env")
app.add_typer(runs.app, name="runs")
synth.app.command("captcha")(captcha.synth_captcha)
app.add_typer(synth.app, name="synth")
app.add_typer(evaluate.app, name="eval")
tasks.app.command("run")(tasks_run.run)
tasks.app.command("loop")(tasks_run.loop)
tasks.app.command("synth-real")(tasks_real.synth_real)
tasks.app.command("gate-real")(tasks_real.gate_real)
app.add_typer(tasks.app, name="tasks")
app.add_typer(train.app, name="train")
app.command("verify")(verify.verify)
app.command("run")(run.run)
app.command("serve")(serve.serve)
app.command("demo")(demo.demo)
