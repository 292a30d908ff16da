"""Submitting one job (jobs/submit/lifecycle.py `submit`) through the real MLClient and HTTP pipeline,
answered at the transport: exit 3 when the create is refused, and a status query that fails and is retried."""

from __future__ import annotations

import os

import pytest
from rich.console import Console

from jobs import outputs
from jobs.builders import cluster_target, smoke
from jobs.submit.lifecycle import EXIT_CREATE, EXIT_OK, submit

from ..jobs_azure_fakes import JobService, RoutedTransport, ml_client
from ..jobs_util import FIXTURES

FIXTURE = FIXTURES / "outputs-prod.json"


def test_submit_exit_3_when_create_is_refused(tmp_path):
    transport = RoutedTransport(
        lambda m, u: (
            403,
            {"error": {"code": "AuthorizationFailed", "message": "no access to the workspace"}},
        )
    )
    built = smoke(cluster_target(outputs.from_file(FIXTURE), "h100-x4"))
    out = submit(
        ml_client(transport),
        built,
        console=Console(file=open(os.devnull, "w")),  # noqa: SIM115
        logs_root=tmp_path,
    )
    assert out.exit_code == EXIT_CREATE and out.name is None
    assert out.error.startswith("create failed")
    assert transport.requests  # it went through the HTTP pipeline


@pytest.mark.parametrize(
    "answers",
    [
        (500, 500, "Completed"),
        (500, 500, "Running", 500, 500, "Completed"),  # the count is of failures in a row
    ],
)
def test_submit_retries_a_failing_status_query_and_completes(answers):
    service = JobService(*answers)
    out = submit(
        ml_client(service.transport, retry_total=0),
        smoke(cluster_target(outputs.from_file(FIXTURE), "h100-x4")),
        console=Console(file=open(os.devnull, "w")),  # noqa: SIM115
        stream=False,
        logs_root=None,
        poll_s=0.01,  # what --poll-seconds sets; also the wait between status retries
        verify=False,
    )
    assert (out.status, out.exit_code, out.error) == ("Completed", EXIT_OK, None)
    assert service.job_gets() == len(answers)
    assert out.elapsed_s < 5
