"""Where a command writes, checked before anything runs (jobs/paths.py): a `render --out` that is a folder or
below a file is exit 2 naming it."""

from __future__ import annotations

from jobs.cli import main

from .jobs_util import FIXTURES

FIXTURE = str(FIXTURES / "outputs-prod.json")


def test_out_that_is_a_folder_or_below_a_file_exits_2(tmp_path, capsys):
    base = ["render", "smoke", "--cluster", "h100-x4", "--outputs", FIXTURE, "--out"]
    assert main([*base, str(tmp_path)]) == 2
    assert f"--out {tmp_path}: is a folder; pass a file path" in capsys.readouterr().err
    (tmp_path / "afile").write_text("x")
    assert main([*base, str(tmp_path / "afile" / "job.yml")]) == 2
    assert "afile is a file, not a folder" in capsys.readouterr().err
