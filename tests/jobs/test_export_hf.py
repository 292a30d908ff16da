"""`python -m jobs export-hf`: the jobs command runs jobs/payload/hfexport.py with the flags it parsed (the
export itself is tested in tests/jobs/payload/test_hfexport.py); bad input exits 2 naming the flag."""

from __future__ import annotations

import subprocess

from .jobs_util import PY, REPO, base_env


def jobs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "jobs", *args], env=base_env(), capture_output=True, text=True, timeout=300, cwd=REPO
    )


def test_export_hf_writes_the_folder_from_the_checkpoint(tmp_path):
    p = subprocess.run(
        [
            PY,
            "jobs/payload/train.py",
            "--steps",
            "2",
            "--ckpt",
            str(tmp_path / "ck"),
            "--sync-ckpt",
            "--n-layer",
            "1",
        ],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert p.returncode == 0, p.stderr
    p = jobs("export-hf", "--ckpt", str(tmp_path / "ck"), "--step", "2", "--out", str(tmp_path / "hf"))
    assert p.returncode == 0, p.stderr
    step = tmp_path / "ck" / "step_00000002"
    assert p.stdout == f"exported {step} to {tmp_path / 'hf'}: config.json, model.safetensors\n"


def test_export_hf_refuses_a_missing_checkpoint_and_a_missing_flag(tmp_path):
    p = jobs("export-hf", "--ckpt", str(tmp_path / "none"), "--out", str(tmp_path / "hf"))
    want = f"export-hf: error: --ckpt {tmp_path / 'none'}: no such folder; pass train.py's --ckpt folder\n"
    assert p.returncode == 2 and p.stderr == want
    p = jobs("export-hf", "--ckpt", str(tmp_path))
    assert p.returncode == 2 and "--out" in p.stderr and "Traceback" not in p.stderr
