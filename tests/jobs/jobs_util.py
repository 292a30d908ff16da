"""Paths and process settings shared by the tests of jobs/ and jobs/payload, and by the job-script tests under
tests/integration: where the repository, the job scripts and the recorded fixtures are, and the environment a
job script or `python -m jobs` is started with."""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "jobs" / "payload"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PY = sys.executable

# Small enough for 2 CPU cores, big enough (9 MB checkpoints) that a write takes long enough to be caught.
# FSDP over the ranks: the mode an 8B model needs (the DDP path has its own tests).
TRAIN_ARGS = [
    "--parallel",
    "fsdp",
    "--steps",
    "36",
    "--n-embd",
    "128",
    "--vocab-size",
    "2048",
    "--block-size",
    "32",
    "--batch-size",
    "2",
    "--grad-accum",
    "2",
    "--ckpt-every",
    "3",
    "--keep",
    "2",
    "--log-every",
    "1",
    "--timeout-min",
    "0.5",
]


def base_env() -> dict[str, str]:
    """This process's environment less Azure ML's launch variables, one thread per process, the repository
    importable: what a job script or `python -m jobs` started by a test runs with."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT")
    }
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONPATH"] = str(REPO)
    return env
