"""Citations resolve in a clone: no tracked file cites the research folder beside the repository
(`shared/reference/...`, `../shared`), which users of the repository do not have; the copy they have is
docs/reference/."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = re.compile(r"\.\./shared\b|(?<![\w.-])shared/reference\b")


def _tracked() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
    ).stdout.decode()
    return [ROOT / name for name in listed.split("\0") if name]


def cites_outside(text: str) -> list[str]:
    """The lines of `text` that cite the folder outside the repository."""
    return [line.strip() for line in text.splitlines() if OUTSIDE.search(line)]


def test_the_pattern_finds_both_spellings_and_spares_the_repository_copy() -> None:
    assert cites_outside("see shared/reference/azure-notes.md §4\nx = 1\n(../shared/design.md)")
    assert cites_outside("Path(...).parent / 'shared/reference/azure-gpu-sizes.yaml'")
    assert not cites_outside("docs/reference/azure-notes.md §4; the shared pool; reference/shared")


def test_no_tracked_file_cites_the_folder_outside_the_repository() -> None:
    me = Path(__file__).resolve()
    found = []
    for path in _tracked():
        if path.resolve() == me or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary
        found += [f"{path.relative_to(ROOT)}: {line}" for line in cites_outside(text)]
    assert not found, "cite docs/reference/ (the copy in the repository) instead:\n" + "\n".join(found)
