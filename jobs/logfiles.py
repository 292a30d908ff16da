"""A job's rank logs: `download` fetches them from Azure ML; `rank_logs` finds every rank's log below a
folder, as `jobs.download(all=True)` or the local launcher write them.

Azure ML writes one file per process: `user_logs/std_log_process_<N>.txt`, N the global rank, with
padding that varies (`_0`, `_00`); a retried job writes each attempt under `user_logs/retry_NNN/`
(platform-notes "Logs"). `jobs.download` puts them under `artifacts/user_logs/`. The newest attempt wins.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from azure.ai.ml import MLClient
    from rich.console import Console

_RANK_FILE = re.compile(r"^std_log_process_(\d+)\.txt$")
_RETRY_DIR = re.compile(r"^retry_(\d+)$")


def _attempt(path: Path) -> int:
    for part in reversed(path.parent.parts):
        if m := _RETRY_DIR.match(part):
            return int(m.group(1))
        if part == "user_logs":
            break
    return 0


def rank_logs(root: Path) -> tuple[dict[int, Path], int]:
    """rank -> log file of the newest attempt, and that attempt's number (0 = first)."""
    found: dict[int, dict[int, Path]] = {}
    for path in root.rglob("std_log_process_*.txt"):
        m = _RANK_FILE.match(path.name)
        if not m or "user_logs" not in path.parts:
            continue
        found.setdefault(_attempt(path), {})[int(m.group(1))] = path
    if not found:
        return {}, 0
    newest = max(found)
    return dict(sorted(found[newest].items())), newest


def download(ml: MLClient, name: str, dest: Path, console: Console | None = None) -> Path:
    """Download all of job `name`'s logs and outputs to `dest` with `ml.jobs.download(name, all=True)`,
    which works only once the job is in a terminal state (`JobOperations.download`); a spinner on `console`
    while it runs. Returns `dest`; raises what the SDK raises."""
    waiting = console.status(f"downloading the logs of {name}") if console else contextlib.nullcontext()
    with waiting:
        ml.jobs.download(name, all=True, download_path=str(dest))
    return dest
