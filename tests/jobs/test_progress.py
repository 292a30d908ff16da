"""The one console for progress and log lines on stderr (jobs/progress.py): CI-friendly off a terminal, rich's
console with FORCE_COLOR."""

from __future__ import annotations

import re


# CI-friendly progress: off a terminal, one log line per call, never wrapped at rich's 80 columns, no colour.
def test_log_lines_off_a_terminal_are_one_plain_line_each(capsys, monkeypatch):
    from jobs.progress import PlainLog, stderr_console

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    console = stderr_console()
    assert isinstance(console, PlainLog)
    long = "smoke h100-x4-0123: Running; waiting for nodes: " + "cluster h100-x4: allocation Resizing; " * 5
    console.log(long.strip(), markup=False)
    console.log("[bold]2[/bold] nodes 0/2")
    console.log("[not markup] 0/2", markup=False)
    with console.status("waiting"):
        pass
    lines = capsys.readouterr().err.splitlines()
    assert [re.sub(r"^\[\d\d:\d\d:\d\d\] ", "", line) for line in lines] == [
        long.strip(),
        "2 nodes 0/2",
        "[not markup] 0/2",
    ]
    assert all("\x1b" not in line for line in lines)


def test_force_color_keeps_rich_terminal_output(monkeypatch):
    from rich.console import Console

    from jobs.progress import PlainLog, stderr_console

    monkeypatch.setenv("FORCE_COLOR", "1")
    console = stderr_console()
    assert isinstance(console, Console) and not isinstance(console, PlainLog)
