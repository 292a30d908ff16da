"""One Azurite + local control plane for the module (tests/e2e): started once, stopped at the end."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from doubles.localml import LocalAzureML

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalAzureML]:
    with LocalAzureML(root=tmp_path_factory.mktemp("localml")) as env:
        yield env


@pytest.fixture(scope="module")
def outputs_file(local: LocalAzureML, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dev stack's outputs, as `python -m preflight dev --outputs-file` writes them."""
    path = tmp_path_factory.mktemp("outputs") / "dev-outputs.json"
    r = subprocess.run(
        [sys.executable, "-m", "preflight", "dev", "--outputs-file", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0 and path.exists(), r.stdout + r.stderr
    return path
