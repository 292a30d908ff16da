"""Shared by the tests of managed runs (jobs/run/, `python -m jobs run`): the lines a job script prints when
a run ends, and Azure ML answering the quota pre-check with bodies in the REST spec's shape (usages as
`GET .../locations/{region}/usages` lists them, the cluster as `GET .../computes/{name}` returns it)."""

from __future__ import annotations

import json

from .jobs_util import FIXTURES
from .quota_util import USAGES

COMPUTE = json.loads((FIXTURES / "compute-get-amlcompute.json").read_text())
SIGTERM = (
    "interrupted by signal 15 after step {step}/400 (checkpoint step {step} written to /ckpt); exiting 143"
)
TRACEBACK = (
    'Traceback (most recent call last):\n  File "train.py", line 3\nZeroDivisionError: division by zero'
)


def quota_route(method: str, url: str):
    """Azure ML answering the quota pre-check of a job on h100-x4 in eastus: its usages and its cluster."""
    if "/locations/eastus/usages" in url:
        return 200, USAGES
    if "/computes/h100-x4" in url:
        return 200, COMPUTE
    return 404, {"error": {"code": "NotFound", "message": url}}
