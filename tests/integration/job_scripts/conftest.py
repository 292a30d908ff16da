"""Fixtures for the job-script tests: no process a test starts outlives it. Import path: jobs/payload, the job
scripts' modules by basename, as Azure ML runs them (jobs_util and llama_reference, shared with the unit tests
of the job scripts, are tests.jobs's)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .jobscripts_util import reap_started

SRC = Path(__file__).resolve().parents[3] / "jobs" / "payload"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))


@pytest.fixture(autouse=True)
def reap_processes():
    """Kill every rank and launcher the test started that is still running when it ends.

    A failed assertion or wait skips the test's own kill, and a rank started with `--steps 100000` would
    keep a CPU and its MASTER_PORT for the rest of the session. Launchers lose their whole process group.
    """
    with reap_started():
        yield


@pytest.fixture(scope="module", autouse=True)
def reap_module_processes():
    """The same for processes started by module-scoped fixtures (train's `reference` run)."""
    with reap_started():
        yield
