"""Where a command writes (`render --out`, `quota --write`, `submit --logs`), checked before anything runs.

A target that is a folder where a file is wanted (or a file where a folder is wanted), that lies below a
file, or that cannot be written is a `UsageError` (exit 2) naming the flag, raised before the job is built,
created in Azure or a live query is made. Missing parent folders are fine: they are created, and the
checks return them so the command can say so.
"""

from __future__ import annotations

import os
from pathlib import Path

from jobs.errors import UsageError


def _missing_folders(folder: Path, flag: str, shown: Path) -> list[Path]:
    """The folders that must be created for `folder` to exist (outermost first); refuse when they cannot."""
    missing: list[Path] = []
    p = folder
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    if not p.is_dir():
        raise UsageError(f"{flag} {shown}: {p} is a file, not a folder; pick a path inside a folder")
    if not os.access(p, os.W_OK | os.X_OK):
        raise UsageError(
            f"{flag} {shown}: cannot write in {p} (permission denied); pick a folder you can write to"
        )
    return list(reversed(missing))


def check_out_file(path: Path, flag: str, example: str = "job.yml") -> list[Path]:
    """A file a command will write: not a folder, writable; returns the parent folders it will create."""
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; pass a file path, e.g. {flag} {path / example}")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{flag} {path}: the file is not writable; fix its permissions or pick another path")
    return _missing_folders(path.parent, flag, path)


def check_out_dir(path: Path, flag: str) -> list[Path]:
    """A folder a command will write into: not a file, writable; returns the folders it will create."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: is a file, not a folder; pass a folder (created if missing)")
    return _missing_folders(path, flag, path)
