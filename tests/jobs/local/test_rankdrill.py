"""`python -m jobs local train --sigterm-at STEP|random --sigterm-rank R` (jobs/local/rankdrill.py): bad drill
flags are exit 2 naming the flag, before any rank starts. The drill itself, on real ranks, is in
tests/integration/job_scripts/test_job_scripts_rankdrill.py."""

from __future__ import annotations

import subprocess

from ..jobs_util import PY, REPO, TRAIN_ARGS, base_env


def _local(*argv: str, timeout: float = 300) -> tuple[int, str, str]:
    p = subprocess.run(
        [PY, "-m", "jobs", "local", "train", *argv],
        cwd=REPO,
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return p.returncode, p.stdout, p.stderr


def test_bad_drill_flags_are_exit_2(tmp_path):
    for flags, named in (
        (["--sigterm-at", "0"], "--sigterm-at 0"),
        (["--sigterm-at", "soon"], "--sigterm-at soon"),
        (["--sigterm-at", "3", "--sigterm-rank", "2"], "--sigterm-rank 2"),
    ):
        code, _, err = _local("--procs-per-node", "2", *flags, "--", *TRAIN_ARGS, timeout=60)
        assert code == 2 and named in err and "Traceback" not in err, err
