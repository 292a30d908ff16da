"""The one console for progress and log lines on stderr (stdout carries only a command's result).

On a terminal: rich as usual (colour, spinners, lines fitted to the window). Anywhere else (a CI log, a
file, a pipe) rich would colour nothing only when it detects that, and would wrap every log line at its
default 80 columns; here each `log` is one plain line, `[HH:MM:SS] message`, never wrapped or padded, with
no colour or highlighting, and `status` spinners print nothing (rich's own behaviour off a terminal).
`FORCE_COLOR` (rich's and the common convention) keeps rich's terminal output wherever it is set."""

from __future__ import annotations

import datetime as dt
import os
import sys
from typing import Any

from rich.console import Console
from rich.text import Text


class PlainLog(Console):
    """A rich Console whose `log` writes one unwrapped, uncoloured line."""

    def log(
        self, *objects: Any, sep: str = " ", end: str = "\n", markup: bool | None = None, **_: Any
    ) -> None:
        stamp = Text(dt.datetime.now().strftime("[%X]"))
        self.print(stamp, *objects, sep=sep, end=end, markup=markup, highlight=False, soft_wrap=True)


def stderr_console() -> Console:
    """The console commands log and show progress on (stderr)."""
    if sys.stderr.isatty() or os.environ.get("FORCE_COLOR"):
        return Console(stderr=True)
    return PlainLog(stderr=True, color_system=None, highlight=False, soft_wrap=True, emoji=False)
