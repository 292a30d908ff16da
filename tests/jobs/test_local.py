"""`python -m jobs local`: bad values of --nodes and --processes-per-node are exit 2 with one line (and the
--json error document), never a traceback; nothing is started."""

from __future__ import annotations

import json
import subprocess

from jobs.cli import main
from jobs.errors import EXIT_USAGE

from .jobs_util import PY, REPO, base_env


def test_jobs_local_bad_value_under_json_is_the_json_document(capsys):
    assert main(["local", "smoke", "--nodes", "0", "--json"]) == EXIT_USAGE
    out, err = capsys.readouterr()
    assert json.loads(out) == {
        "ok": False,
        "error": "--nodes must be at least 1 (got 0)",
        "exit_code": EXIT_USAGE,
    }
    assert err == "error: --nodes must be at least 1 (got 0)\n"


def test_local_command_rejects_bad_flags_without_a_traceback():
    for flags, needle in (
        (["--nodes", "0"], "--nodes must be at least 1"),
        (["--processes-per-node", "-1"], "--processes-per-node must be at least 1"),
    ):
        p = subprocess.run(
            [PY, "-m", "jobs", "local", "smoke", *flags],
            cwd=REPO,
            env=base_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert p.returncode == 2, p.stderr
        assert needle in p.stderr and "Traceback" not in p.stderr
