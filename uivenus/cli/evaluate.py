"""`uivenus eval ...`: the evaluation harnesses, one command each."""

from __future__ import annotations

import typer

from uivenus.cli.captcha import eval_captcha
from uivenus.cli.eval_grounding import grounding
from uivenus.cli.eval_miniwob import miniwob
from uivenus.cli.eval_osworld import osworld
from uivenus.cli.eval_safety import eval_safety
from uivenus.cli.eval_web import web, web_agreement
from uivenus.cli.verify import eval_verifier

app = typer.Typer(help="Evaluate policies (grounding suites, CAPTCHAs, MiniWoB++, OSWorld-format tasks, live-web task "
                  "sets, safety) and verifiers.", no_args_is_help=True)
app.command("grounding")(grounding)
app.command("miniwob")(miniwob)
app.command("osworld")(osworld)
app.command("captcha")(eval_captcha)
app.command("verifier")(eval_verifier)
app.command("web")(web)
app.command("web-agreement")(web_agreement)
app.command("safety")(eval_safety)
