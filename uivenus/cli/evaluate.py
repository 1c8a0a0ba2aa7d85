"""`uivenus eval ...`: the evaluation harnesses, one command each."""

from __future__ import annotations

import typer

from uivenus.cli.captcha import eval_captcha
from uivenus.cli.eval_grounding import grounding
from uivenus.cli.eval_miniwob import miniwob
from uivenus.cli.eval_safety import eval_safety
from uivenus.cli.verify import eval_verifier

app = typer.Typer(help="Evaluate policies (grounding suites, CAPTCHAs, MiniWoB++, safety) and verifiers.", no_args_is_help=True)
app.command("grounding")(grounding)
app.command("miniwob")(miniwob)
app.command("captcha")(eval_captcha)
app.command("verifier")(eval_verifier)
app.command("safety")(eval_safety)
