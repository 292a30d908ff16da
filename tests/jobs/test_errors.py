"""jobs/errors.py: the one error-detail helper (`error_detail`: a failed call in one line) and the exit
codes of `python -m jobs`, one meaning each, as docs/jobs.md's "Exit codes" table lists them."""

from __future__ import annotations

import re

import pytest
from azure.core.exceptions import HttpResponseError
from azure.core.rest import HttpRequest
from azure.core.rest._requests_basic import RestRequestsTransportResponse
from azure.mgmt.core.exceptions import ARMErrorFormat

import jobs.errors
from jobs.errors import error_detail

from .jobs_util import REPO


def _arm_error(status: int, body: bytes) -> HttpResponseError:
    """An HttpResponseError as azure-mgmt-core raises it for an ARM error body (the code path of every
    generated ARM client: `HttpResponseError(response=..., error_format=ARMErrorFormat)`)."""
    import io

    import requests

    raw = requests.Response()
    raw.status_code, raw._content, raw.raw = status, body, io.BytesIO(body)
    raw.headers["Content-Type"] = "application/json"
    request = HttpRequest("GET", "https://management.azure.com/x")
    response = RestRequestsTransportResponse(request=request, internal_response=raw)
    response.read()
    return HttpResponseError(response=response, error_format=ARMErrorFormat)


def test_error_detail_is_the_type_and_the_first_line_of_an_arm_error():
    exc = _arm_error(
        403,
        b'{"error": {"code": "AuthorizationFailed", "message": "The client does not have authorization"}}',
    )
    assert len(str(exc).splitlines()) > 1  # azure-core's message: "(Code) Message", then Code:, Message:
    first = "(AuthorizationFailed) The client does not have authorization"
    assert error_detail(exc) == f"HttpResponseError: {first}"


@pytest.mark.parametrize(
    ("exc", "detail"),
    [
        (RuntimeError(), "RuntimeError: "),
        (RuntimeError("\n  first\nsecond"), "RuntimeError: first"),
        (TimeoutError("read timed out"), "TimeoutError: read timed out"),
    ],
)
def test_error_detail_of_other_exceptions(exc, detail):
    assert error_detail(exc) == detail


def test_error_detail_of_azure_ai_mls_formatted_validation_error_is_its_message():
    """What `ml.jobs.create_or_update` raises for a data asset that does not exist: azure-ai-ml's own
    formatting of its ValidationException, which starts with colour codes and blank lines (printed as an
    empty `MlException: ` before)."""
    from azure.ai.ml._exception_helper import log_and_raise_error
    from azure.ai.ml.exceptions import ErrorTarget, MlException, ValidationErrorType, ValidationException

    message = "Asset local-folder-example does not exist in workspace ws-llm."
    cause = ValidationException(
        message=message,
        no_personal_data_message="Asset {asset_name} does not exist in workspace {workspace_name}.",
        target=ErrorTarget.ASSET,
        error_type=ValidationErrorType.RESOURCE_NOT_FOUND,
    )
    with pytest.raises(MlException) as raised:
        log_and_raise_error(cause)
    assert str(raised.value).splitlines()[0] == ""  # azure-ai-ml's layout, which hid the message
    assert error_detail(raised.value) == f"MlException: {message}"
    assert error_detail(RuntimeError("\x1b[31mred\x1b[39m")) == "RuntimeError: red"


# Distinct exit codes for distinct outcomes, one table (docs/jobs.md "Exit codes").
def test_each_exit_code_has_one_meaning():
    codes = {name: value for name, value in vars(jobs.errors).items() if name.startswith("EXIT_")}
    assert codes == {
        "EXIT_OK": 0,
        "EXIT_FAILED": 1,
        "EXIT_USAGE": 2,
        "EXIT_NOT_CREATED": 3,
        "EXIT_QUERY": 4,
        "EXIT_ENDED_OTHERWISE": 5,
        "EXIT_INTERRUPTED": 130,
        "EXIT_CLOSED_PIPE": 141,
    }
    assert len(set(codes.values())) == len(codes)


def test_a_canceled_job_is_not_the_bad_input_code():
    from jobs.run import loop
    from jobs.submit import lifecycle

    assert lifecycle.EXIT_OTHER == loop.EXIT_OTHER == jobs.errors.EXIT_ENDED_OTHERWISE == 5
    assert lifecycle.EXIT_OTHER != jobs.errors.EXIT_USAGE


def test_the_readme_table_lists_every_code_with_its_meaning():
    readme = (REPO / "docs" / "jobs.md").read_text()
    section = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = {
        int(m.group(1)): m.group(2)
        for m in re.finditer(r"^\| `(\d+)` \| ([^|]+) \|", section, flags=re.MULTILINE)
    }
    codes = {v for k, v in vars(jobs.errors).items() if k.startswith("EXIT_")}
    assert set(rows) == codes
    assert "bad input" in rows[2] and "Canceled" in rows[5] and "Canceled" not in rows[2]
