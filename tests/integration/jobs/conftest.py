"""Import path: tests/jobs, for the helpers the tests of jobs/ share (jobs_util)."""

from __future__ import annotations

import sys
from pathlib import Path

JOBS_TESTS = Path(__file__).resolve().parents[2] / "jobs"
if str(JOBS_TESTS) not in sys.path:
    sys.path.insert(0, str(JOBS_TESTS))
