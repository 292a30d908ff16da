"""`python -m jobs run`: what it refuses before creating a job (a health job, which a resubmit cannot help; a
job the quota cannot fit, exit 3, answered at the HTTP transport), and its bad flags (exit 2)."""

from __future__ import annotations

import json

import pytest

from jobs.cli import main

from .jobs_azure_fakes import RoutedTransport, ml_client
from .jobs_util import FIXTURES
from .runs_util import quota_route


def test_run_refuses_health_a_check_is_not_resubmitted(capsys):
    from jobs.cli import main

    outputs = str(FIXTURES / "outputs-prod.json")
    assert main(["run", "health", "--outputs", outputs, "--cluster", "h100-x4"]) == 2
    assert "use `python -m jobs submit health`" in capsys.readouterr().err


OUTPUTS = str(FIXTURES / "outputs-prod.json")


def test_run_refuses_a_job_that_cannot_fit_with_exit_3_before_creating_it(monkeypatch, capsys, tmp_path):
    import jobs.azure_client

    transport = RoutedTransport(quota_route)
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    argv = [
        "run",
        "smoke",
        "--outputs",
        OUTPUTS,
        "--cluster",
        "h100-x4",
        "--nodes",
        "3",
        "--logs",
        str(tmp_path),
        "--json",
    ]
    assert main(argv) == 3
    out = capsys.readouterr()
    body = json.loads(out.out)
    assert body["ok"] is False and body["exit_code"] == 3
    assert "needs 288 vCPUs, 0 of 192 are in use (0 held by this cluster), 192 free" in body["error"]
    assert body["quota"]["fits"] is False
    assert not [r for r in transport.requests if r.method == "PUT"]  # nothing was created


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--max-restarts", "-1"], "--max-restarts -1"),
        (["--max-hours", "0"], "--max-hours 0"),
        (["--backoff-seconds", "nan"], "--backoff-seconds nan"),
        (["--poll-seconds", "0"], "--poll-seconds 0"),
    ],
)
def test_bad_run_flags_are_exit_2(capsys, tmp_path, flags, named):
    argv = ["run", "smoke", "--outputs", OUTPUTS, "--cluster", "h100-x4", "--logs", str(tmp_path), *flags]
    assert main(argv) == 2
    assert f"error: {named}" in capsys.readouterr().err
