"""smoke.py started on its own, one process: outside a distributed job it explains how to start it, and a bad
size flag is exit 2 naming it. The ranks themselves (gloo on CPU, started by `python -m jobs local` as Azure
ML would start them) are in tests/integration/job_scripts/test_job_scripts_smoke.py."""

from __future__ import annotations

import subprocess

from ..jobs_util import PY, SRC, base_env


def test_smoke_outside_a_distributed_job_explains_how_to_start_it():
    p = subprocess.run(
        [PY, str(SRC / "smoke.py")], env=base_env(), capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 2
    assert "MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE not set" in p.stderr and "Traceback" not in p.stderr


def test_smoke_rejects_a_bad_size_flag():
    p = subprocess.run(
        [PY, str(SRC / "smoke.py"), "--max-bytes", "lots"],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and "--max-bytes" in p.stderr and "Traceback" not in p.stderr
