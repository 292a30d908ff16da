"""The one MLClient (jobs/azure_client.py) without Azure credentials: the real DefaultAzureCredential,
limited by AZURE_TOKEN_CREDENTIALS (read by azure-identity's `_credentials/default.py`) to
EnvironmentCredential with no AZURE_* variables set, so the chain fails at once and offline. Each command
prints one line on stderr and its documented exit code; the SDK's noise is silenced and nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.azure_client import NO_CREDENTIALS

from .jobs_util import FIXTURES, REPO

FIXTURE = str(FIXTURES / "outputs-prod.json")


def run_jobs(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AZURE_", "AZUREML_", "ARM_", "IDENTITY_", "MSI_", "IMDS_"))
    }
    env["AZURE_TOKEN_CREDENTIALS"] = "EnvironmentCredential"
    env["PYTHONPATH"] = str(REPO)  # run from tmp_path, so a job-logs folder would land there
    return subprocess.run(
        [sys.executable, "-m", "jobs", *argv],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["submit", "smoke", "--outputs", FIXTURE, "--cluster", "h100-x4"], 3),
        (["audit", "--outputs", FIXTURE], 4),
        (["quota", "--outputs", FIXTURE, "--regions", "eastus"], 4),
        (["check-deploy", "--outputs", FIXTURE], 4),
        (["scaling", "--jobs", "job-a", "job-b", "--outputs", FIXTURE], 4),  # not bad input: Azure unasked
    ],
)
def test_no_credentials_is_one_line_and_the_documented_exit_code(tmp_path, argv, code):
    p = run_jobs(tmp_path, *argv)
    assert p.returncode == code, p.stderr
    assert p.stderr == f"error: {NO_CREDENTIALS}\n"  # no credential-chain dump, no traceback
    assert not (tmp_path / "job-logs").exists() or not any((tmp_path / "job-logs").iterdir())


def test_no_credentials_json_on_stdout(tmp_path):
    p = run_jobs(tmp_path, "audit", "--outputs", FIXTURE, "--json")
    assert p.returncode == 4
    body = json.loads(p.stdout)
    assert body["ok"] is False and body["error"] == NO_CREDENTIALS and body["exit_code"] == 4


def test_sdk_noise_is_silenced_and_nothing_else():
    """The loggers azure-ai-ml writes the noise to: only those messages are dropped. A handler on each
    logger itself sees what any handler above it would (logger level and filters apply first)."""
    import logging

    from jobs.azure_client import quiet_sdk_logs

    class Keep(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.DEBUG)
            self.messages: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.messages.append(record.getMessage())

    quiet_sdk_logs()
    keep = Keep()
    ops = logging.getLogger("azure.ai.ml.operations._job_operations")
    experimental = logging.getLogger("azure.ai.ml._utils._experimental")
    saved = ops.level
    ops.setLevel(logging.INFO)  # as MLClient's INFO handler on azure.ai.ml would let through
    for logger in (ops, experimental):
        logger.addHandler(keep)
    try:
        ops.info("Proceeding with no tenant id appended to studio URL\n")
        ops.info("Downloading artifact x to y")
        experimental.warning("Class X: This is an experimental class, and may change at any time.")
    finally:
        for logger in (ops, experimental):
            logger.removeHandler(keep)
        ops.setLevel(saved)
    assert keep.messages == ["Downloading artifact x to y"]
    assert logging.getLogger("azure.identity").getEffectiveLevel() == logging.CRITICAL
