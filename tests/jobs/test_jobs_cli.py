"""The shape of `python -m jobs`: the command list in `jobs.cli.COMMANDS`, the one error-detail helper, and
the log-line patterns of `jobs.logpatterns` against the lines the job scripts print."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from azure.core.exceptions import HttpResponseError
from azure.core.rest import HttpRequest
from azure.core.rest._requests_basic import RestRequestsTransportResponse
from azure.mgmt.core.exceptions import ARMErrorFormat

import jobs.cli
import jobs.commands
from jobs import logpatterns
from jobs.cli import COMMANDS, build_parser, main
from jobs.errors import error_detail


def test_every_command_module_is_in_the_command_list_and_adds_that_command():
    modules = {f"jobs.commands.{m.name}" for m in pkgutil.iter_modules(jobs.commands.__path__)}
    assert set(COMMANDS.values()) == modules  # a module left out of COMMANDS is never registered
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == list(COMMANDS)  # --help lists them in the table's order


def test_a_module_that_adds_another_name_than_the_table_says_is_refused(monkeypatch):
    monkeypatch.setattr(jobs.cli, "COMMANDS", {"verify-logs": "jobs.commands.verify"})
    with pytest.raises(RuntimeError, match="'verify-logs'"):
        build_parser()


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert f"    {name}" in out
    for module in COMMANDS.values():
        assert importlib.import_module(module).register


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


@pytest.mark.parametrize(
    ("line", "world"),
    [
        ("world size 4", 4),  # smoke.py, rank 0
        ("smoke rank=3 local_rank=1 node_rank=1 world_size=4 host=node-1 device=cuda:1", 4),  # every rank
        ("model 1.23M params | world size 16 | device cuda | 8192 tokens/step/GPU | peak table", 16),  # train
        ("local_world_size=2", None),  # torchrun's LOCAL_WORLD_SIZE is not the world size
    ],
)
def test_world_size_pattern(line, world):
    m = logpatterns.WORLD_SIZE.search(line)
    assert (int(m.group(1)) if m else None) == world


def test_smoke_rank_line_patterns():
    line = "smoke rank=3 local_rank=1 node_rank=1 world_size=4 host=node-1 device=cuda:1"
    assert logpatterns.RANK.search(line).group(1) == "3"  # not local_rank or node_rank
    assert logpatterns.NODE_RANK.search(line).group(1) == "1"
    assert logpatterns.HOST.search(line).group(1) == "node-1"
    assert logpatterns.PEAK_BUSBW.search("smoke peak busbw: 12.75 GB/s").group(1) == "12.75"
