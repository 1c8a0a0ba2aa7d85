"""The CLI's one error boundary: a project error becomes one red line on stderr and exit status 1.

Every layer raises its own typed errors (`EnvSpecError`, `PolicySpecError`, `SandboxTaskError`, `ConfigError`, …);
they share no base class, but all are defined in `uivenus`, so "ours" is any exception whose class or a base
was defined there. A missing or unreadable file (an `OSError` naming it) is one line too. Anything else is a bug
and keeps its traceback. `uivenus --debug …` or `UIVENUS_DEBUG=1` re-raises every error with its traceback.
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click
import typer
from typer.core import TyperGroup

__all__ = ["DEBUG_ENV", "ErrorBoundaryGroup", "error_line", "fail", "is_user_error"]

#: Set to 1 (or pass `--debug`) to see tracebacks of the errors the boundary would print as one line.
DEBUG_ENV = "UIVENUS_DEBUG"


def is_user_error(exc: BaseException) -> bool:
    """Whether `exc` reports bad input or a missing resource (ours, or a file error), rather than a bug."""
    if isinstance(exc, OSError) and getattr(exc, "filename", None) is not None:
        return True
    return any(cls.__module__.split(".")[0] == "uivenus" for cls in type(exc).__mro__)


def error_line(exc: BaseException) -> str:
    """The exception as one line: its message with line breaks folded (or its class name when it has none)."""
    if isinstance(exc, OSError) and exc.filename is not None:
        text = f"{exc.strerror or type(exc).__name__}: {exc.filename}"
    else:
        text = " ".join(str(exc).split()) or type(exc).__name__
    return text


def debugging(ctx: click.Context | None = None) -> bool:
    flag = os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")
    return flag or bool(ctx is not None and ctx.meta.get("uivenus.debug"))


#: Usage errors (bad option values, missing options or files): typer vendors its own click, so both kinds.
_CLICK_ERRORS = tuple({cls for cls in typer.BadParameter.__mro__ if cls.__name__ == "ClickException"}
                      | {click.ClickException})


def _print_error(text: str) -> None:
    from rich.markup import escape

    from uivenus.cli.console import cli_console

    cli_console(stderr=True).print(f"[bold red]error:[/bold red] {escape(text)}", highlight=False, soft_wrap=True)
    sys.stderr.flush()


class ErrorBoundaryGroup(TyperGroup):
    """The top-level group: runs the command, and turns a project error into `error: …` and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _CLICK_ERRORS as exc:  # typer would draw a box around it; one line, with where to get help
            sub = getattr(exc, "ctx", None)
            hint = f" (see {sub.command_path} --help)" if sub is not None else ""
            _print_error(" ".join(exc.format_message().split()) + hint)
            raise typer.Exit(exc.exit_code) from None
        except Exception as exc:  # typer's Exit/Abort are not ours: they pass through
            if debugging(ctx) or not is_user_error(exc):
                raise
            _print_error(error_line(exc))
            raise typer.Exit(1) from None


def fail(message: str, code: int = 1) -> NoReturn:
    """End a command with one `error: …` line on stderr (line breaks folded) and exit status `code`."""
    _print_error(" ".join(message.split()))
    raise typer.Exit(code)
