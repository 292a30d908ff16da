"""Fixtures for the job-script tests: no process a test starts outlives it."""

from __future__ import annotations

import pytest
from jobscripts_util import reap_started


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
