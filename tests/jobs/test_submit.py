"""`python -m jobs submit` with the real flags, only the HTTP transport a fake (Azure ML's job service as a
smoke job's submit sees it): exit 2 for a canceled job, exit 4 when the status query keeps failing, and a
--logs that is a file refused before anything is created."""

from __future__ import annotations

import json
from pathlib import Path

from jobs.cli import main
from jobs.submit.lifecycle import EXIT_OTHER, EXIT_STATUS, STATUS_RETRIES

from .jobs_azure_fakes import JobService, ml_client
from .jobs_util import FIXTURES

FIXTURE = FIXTURES / "outputs-prod.json"


def run_submit(service: JobService, monkeypatch, tmp_path: Path, *extra: str) -> int:
    """`python -m jobs submit smoke` with the real flags; only the HTTP transport is a fake. azure-core's own
    RetryPolicy (which retries a 500 up to 10 times with backoff) is off, so every answer reaches submit."""
    import jobs.azure_client

    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(service.transport, retry_total=0))
    argv = ["submit", "smoke", "--outputs", str(FIXTURE), "--cluster", "h100-x4", "--no-stream"]
    return main([*argv, "--poll-seconds", "0.01", "--logs", str(tmp_path / "logs"), *extra])


def test_submit_exit_2_when_the_job_is_canceled(tmp_path, monkeypatch, capsys):
    service = JobService("Running", "Canceled")
    assert run_submit(service, monkeypatch, tmp_path, "--json") == EXIT_OTHER == 5
    summary = json.loads(capsys.readouterr().out)
    (job,) = summary["jobs"]
    assert (job["status"], job["exit_code"], summary["exit_code"]) == ("Canceled", 5, 5)
    assert job["verify"] is None  # nothing to verify on a canceled job


def test_submit_exit_4_when_the_status_query_keeps_failing(tmp_path, monkeypatch, capsys):
    service = JobService(500)
    assert run_submit(service, monkeypatch, tmp_path) == EXIT_STATUS == 4
    captured = capsys.readouterr()
    assert service.job_gets() == STATUS_RETRIES
    line = captured.out.strip()
    assert line.startswith("smoke: ") and "Queued (exit 4)" in line
    assert f"status query failed {STATUS_RETRIES} times in a row" in line
    assert "(InternalServerError) try again later" in line
    assert "may still be running: check https://ml.azure.com/runs/" in line
    assert "Traceback" not in captured.err

    service = JobService(500)
    assert run_submit(service, monkeypatch, tmp_path, "--json") == 4
    (job,) = json.loads(capsys.readouterr().out)["jobs"]
    assert job["exit_code"] == 4 and job["status"] == "Queued" and job["logs"] is None


def test_submit_logs_that_is_a_file_exits_2_before_creating_the_job(tmp_path, monkeypatch, capsys):
    service = JobService("Completed")
    afile = tmp_path / "logs.txt"
    afile.write_text("not a folder")
    assert run_submit(service, monkeypatch, tmp_path, "--logs", str(afile)) == 2
    captured = capsys.readouterr()
    assert f"--logs {afile}: is a file, not a folder" in captured.err
    assert service.transport.requests == []  # nothing was sent: no job created
    assert "Traceback" not in captured.err
