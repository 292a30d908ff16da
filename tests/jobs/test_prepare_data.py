"""`python -m jobs prepare-data`: the jobs command runs jobs/payload/prepdata.py with the flags it parsed (the
preparation itself is tested in tests/jobs/payload/test_prepdata.py)."""

from __future__ import annotations

import subprocess

import numpy as np

from .jobs_util import PY, REPO, base_env
from .tokenizer_util import word_tokenizer


def test_prepare_data_writes_shards_with_the_model_folders_tokenizer(tmp_path):
    word_tokenizer(tmp_path / "model", 100)
    (tmp_path / "a.txt").write_text("w5 w6 w7\n")
    p = subprocess.run(
        [PY, "-m", "jobs", "prepare-data", "--tokenizer", str(tmp_path / "model"), "--input",
         str(tmp_path / "a.txt"), "--out", str(tmp_path / "data"), "--append-eos", "<eos>"],
        env=base_env(), capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert np.fromfile(tmp_path / "data" / "train_00000.bin", dtype=np.uint16).tolist() == [1, 5, 6, 7, 2]


def test_prepare_data_without_a_tokenizer_exits_2_naming_it(tmp_path):
    p = subprocess.run(
        [PY, "-m", "jobs", "prepare-data", "--tokenizer", str(tmp_path), "--input", str(tmp_path),
         "--out", "x"],
        env=base_env(), capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert p.returncode == 2 and f"--tokenizer {tmp_path}: no tokenizer.json there" in p.stderr
