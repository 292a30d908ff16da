"""train.py started on its own, one process: a --ckpt folder of the checkpoint format before DCP is refused
with the fix. train.py under faults on real ranks is in
tests/integration/job_scripts/test_job_scripts_train.py."""

from __future__ import annotations

import subprocess

from ..jobs_util import PY, SRC, base_env


def test_checkpoints_of_the_format_before_dcp_are_refused_with_the_fix(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "step_00000100.pt").write_bytes(b"old")
    (ckpt / "step_00000100.pt.sha256").write_text("0  step_00000100.pt\n")
    p = subprocess.run(
        [PY, str(SRC / "train.py"), "--ckpt", str(ckpt), "--steps", "3"],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.startswith(
        f"train.py: error: --ckpt {ckpt} holds checkpoints of the format before DCP (step_00000100.pt, ...)"
    )
    assert "pass a new --ckpt folder" in p.stderr
    assert sorted(q.name for q in ckpt.iterdir()) == ["step_00000100.pt", "step_00000100.pt.sha256"]
