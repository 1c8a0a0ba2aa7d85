"""The CLI's one rich Console factory: a terminal gets output as wide as it is, a file or pipe gets it whole.

rich sizes a Console that is not writing to a terminal at 80 columns (or $COLUMNS), which cuts tables in logs
and CI output to `rou… pro… 10…`. Every command prints through `cli_console()`, whose width is looked up at
each print, so output redirected after import (`uivenus … > log`, typer's CliRunner) is printed whole too.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleDimensions

__all__ = ["PIPED_WIDTH", "cli_console"]

#: The width of output that does not go to a terminal: tables never expand, so they print at their natural
#: width, and this only has to be more than any of them needs.
PIPED_WIDTH = 10_000


class _CliConsole(Console):
    """A Console as wide as its terminal (at least `min_width`), or PIPED_WIDTH when its file is not a terminal,
    whatever $COLUMNS says (rich fixes $COLUMNS as the width of every output at construction)."""

    def __init__(self, *, min_width: int = 0, **kwargs: Any) -> None:
        self.min_width = min_width
        super().__init__(**kwargs)

    @property
    def size(self) -> ConsoleDimensions:
        width, height = super().size
        isatty = getattr(self.file, "isatty", None)
        try:
            terminal = bool(isatty and isatty())
        except ValueError:  # a closed file
            terminal = False
        return ConsoleDimensions(max(width, self.min_width) if terminal else PIPED_WIDTH, height)


def cli_console(*, min_width: int = 0, stderr: bool = False) -> Console:
    """The Console a command prints through; `min_width` widens a narrower terminal for output that reads badly
    folded (the demo's tables); `stderr` prints to standard error (errors, progress)."""
    return _CliConsole(min_width=min_width, stderr=stderr)
