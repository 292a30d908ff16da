"""The launch contract the job scripts read (jobs/payload/distenv.py): started outside a distributed launch,
each script names itself and the `python -m jobs local` command that starts it, exit 2."""

from __future__ import annotations

import subprocess

import pytest

from ..jobs_util import PY, SRC, base_env


@pytest.mark.parametrize(("script", "kind"), [("smoke.py", "smoke"), ("health.py", "health")])
def test_outside_a_distributed_launch_each_script_names_itself_and_its_local_command(script, kind):
    launch = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")
    env = {k: v for k, v in base_env().items() if k not in launch}
    p = subprocess.run([PY, str(SRC / script)], cwd=SRC, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert p.stderr.strip() == (
        f"{script}: error: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE not set: run it as an Azure ML PyTorch "
        f"job, under torchrun, or with `python -m jobs local {kind} --nodes N --procs-per-node P`"
    )
