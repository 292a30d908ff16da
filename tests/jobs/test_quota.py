"""`python -m jobs quota` (and the query failures of `audit`) against azure-ai-ml's real HTTP pipeline,
answered at the transport: its region flag checked and normalised, the --write target checked before the live
query, exit 4 with the --json document when a query fails, and bad input under --json."""

from __future__ import annotations

import json

import pytest

from jobs.cli import main

from .jobs_azure_fakes import RoutedTransport, ml_client
from .jobs_util import FIXTURES
from .quota_util import usage_route


def test_quota_cli_rejects_empty_regions(capsys):
    assert main(["quota", "--outputs", str(FIXTURES / "outputs-prod.json"), "--regions", " , "]) == 2
    assert "--regions" in capsys.readouterr().err


def _no_azure(monkeypatch):
    import jobs.azure_client

    def refuse(*a, **k):
        raise AssertionError("the live query ran before --write was checked")

    monkeypatch.setattr(jobs.azure_client, "ml_client", refuse)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "is a folder; pass a file path, e.g. --write"),
        (lambda p: p.write_bytes(b"\xff\xfe{}"), "not UTF-8 text"),
        (lambda p: p.write_text("[1]"), "expected a JSON object"),
    ],
)
def test_quota_write_target_is_checked_before_the_live_query(tmp_path, monkeypatch, capsys, make, message):
    _no_azure(monkeypatch)
    target = tmp_path / "prod.json"
    make(target)
    argv = ["quota", "--outputs", str(FIXTURES / "outputs-prod.json"), "--write", str(target)]
    assert main(argv) == 2
    assert f"--write {target}: {message}" in capsys.readouterr().err


def _refused(method: str, url: str):
    return 403, {"error": {"code": "AuthorizationFailed", "message": "no access to the workspace"}}


@pytest.mark.parametrize(
    ("argv", "what"),
    [(["quota", "--regions", "eastus"], "usage query failed"), (["audit"], "job list query failed")],
)
def test_failed_query_exits_4_with_json_on_stdout(monkeypatch, capsys, argv, what):
    import jobs.azure_client

    transport = RoutedTransport(_refused)
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    assert main([*argv, "--outputs", str(FIXTURES / "outputs-prod.json"), "--json"]) == 4
    captured = capsys.readouterr()
    body = json.loads(captured.out)
    assert body["ok"] is False and body["exit_code"] == 4
    assert body["error"].startswith(what) and "AuthorizationFailed" in body["error"]
    assert captured.err.startswith(f"error: {what}") and len(captured.err.splitlines()) == 1
    assert transport.requests  # the query was really sent


def test_bad_input_under_json_is_json_too(capsys):
    argv = ["quota", "--outputs", str(FIXTURES / "outputs-prod.json"), "--regions", " , ", "--json"]
    assert main(argv) == 2
    body = json.loads(capsys.readouterr().out)
    message = "--regions: empty; pass e.g. --regions eastus,westus3"
    assert body == {"ok": False, "error": message, "exit_code": 2}


def test_quota_regions_are_checked_and_normalised(monkeypatch, capsys):
    _no_azure(monkeypatch)
    argv = ["quota", "--outputs", str(FIXTURES / "outputs-prod.json"), "--regions", "eastus,westeurop"]
    assert main(argv) == 2
    message = "--regions westeurop: not a known Azure region; did you mean westeurope?"
    assert message in capsys.readouterr().err
    import jobs.azure_client

    transport = RoutedTransport(usage_route)
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    argv = ["quota", "--outputs", str(FIXTURES / "outputs-prod.json"), "--regions", "East US", "--json"]
    assert main(argv) == 1  # the fixture's eastus H100 clusters reserve 480 of a 192 limit
    assert json.loads(capsys.readouterr().out)["regions"] == ["eastus"]
    assert "/locations/eastus/usages" in transport.requests[0].url
