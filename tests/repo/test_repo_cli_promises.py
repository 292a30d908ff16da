"""Promises every command line of the project keeps (docs/jobs.md "Exit codes"), checked in real processes:
a reader that closes stdout early (`--json | head`) ends the program quietly with 141 (128 + SIGPIPE, what a
shell reports for any tool SIGPIPE ended), never with a BrokenPipeError traceback; a usage error under
`--json` still prints one JSON object."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLAN = ["--tokens", "2e9", "--tokens-per-gpu-s", "8200", "--gpus", "16", "--size", "Standard_ND96isr_H100_v5"]
# (module, arguments that print a report on stdout)
REPORTS = {
    "jobs": ["plan", *PLAN, "--json"],
    "jobs-usage-error": ["plan", "--json"],
    "stackconfig": ["dev", "--json"],
    "doubles.localml-usage-error": ["serve", "--bogus", "--json"],
    "preflight-usage-error": ["--bogus", "--json"],
    "preflight-missing-stack": ["no-such-stack", "--json"],
    "doubles.pulumicli-usage-error": ["preview", "--json"],
}


def _module(case: str) -> str:
    return case.split("-")[0]


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "PYTHONUNBUFFERED"])
@pytest.mark.parametrize("case", sorted(REPORTS))
def test_a_closed_stdout_ends_quietly_with_141(case: str, unbuffered: bool) -> None:
    # The read end is closed before the program writes (it is still importing), so its first write gets
    # EPIPE: the situation of `python -m jobs plan ... --json | head -0`. With a buffered stdout (Python's
    # default on a pipe) the EPIPE comes at the last flush, after argparse's usage error has raised
    # SystemExit: a bare Debian machine showed exit 120 and "Exception ignored ... BrokenPipeError" there,
    # which a machine with PYTHONUNBUFFERED=1 had hidden.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-m", _module(case), *REPORTS[case]],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err


@pytest.mark.parametrize("case", sorted(REPORTS))
def test_the_same_command_with_a_reader_prints_one_json_object(case: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", _module(case), *REPORTS[case]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    document = json.loads(proc.stdout)
    if case.endswith("usage-error"):
        assert proc.returncode == 2
        if _module(case) == "preflight":  # the gate's own report schema (docs/preflight.md)
            assert document["summary"] == {"exit_code": 2} and document["errors"][0].endswith("--help")
        else:
            assert document["ok"] is False and document["exit_code"] == 2
    elif case == "preflight-missing-stack":  # an input error, not a usage error: the gate's report schema
        assert proc.returncode == 2 and document["summary"] == {"exit_code": 2}
        assert document["errors"][0].startswith("STACK 'no-such-stack': no Pulumi.no-such-stack.yaml")
    else:
        assert proc.returncode == 0, proc.stderr


def test_ctrl_c_where_a_command_does_not_handle_it_is_130_without_a_traceback(capsys) -> None:
    from stackconfig.cli import run_main

    def interrupted() -> int:
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as exc:
        run_main(interrupted)
    assert exc.value.code == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_a_command_s_own_exit_code_passes_through(capsys) -> None:
    from stackconfig.cli import run_main

    with pytest.raises(SystemExit) as exc:
        run_main(lambda: 5)
    assert exc.value.code == 5
