"""`teardown` through azure-ai-ml's and azure-mgmt-core's real HTTP pipelines, answered at the transport.

The bodies are the REST specs' own examples (Azure/azure-rest-api-specs): `Workspaces_Get`
(machinelearningservices stable/2025-12-01 examples/Workspace/get.json -> fixtures/workspace-get.json),
`Vaults_Get` (keyvault KeyVault/examples/2026-03-01-preview/getVault.json -> fixtures/keyvault-get.json; the
Vault definition is the same as 2024-11-01's) and `Vaults_GetDeleted` (stable/2022-11-01
examples/getDeletedVault.json -> fixtures/keyvault-get-deleted.json). Long-running answers follow the specs:
`Workspaces_Delete` and `Vaults_PurgeDeleted` answer 202 with `Location` and `Retry-After`, and the Location
answers 202 until done. The end-to-end runs against localml are in tests/integration/e2e/test_teardown.py.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import jobs.azure_client
from jobs.cli import main

from .jobs_azure_fakes import RoutedTransport, ml_client
from .jobs_util import FIXTURES

WORKSPACE = json.loads((FIXTURES / "workspace-get.json").read_text())
VAULT = json.loads((FIXTURES / "keyvault-get.json").read_text())
DELETED = json.loads((FIXTURES / "keyvault-get-deleted.json").read_text())
SUB = "00000000-0000-0000-0000-000000000000"
RG = f"/subscriptions/{SUB}/resourceGroups/rg-train/providers"
VAULT_PATH = f"{RG}/Microsoft.KeyVault/vaults/sample-vault"
WS_PATH = f"{RG}/Microsoft.MachineLearningServices/workspaces/ws-llm"
DELETED_IN = f"/subscriptions/{SUB}/providers/Microsoft.KeyVault/locations/{{}}/deletedVaults/sample-vault"
POLL = "https://management.azure.com/operationResults/"


#: The specs' `Retry-After` is whole seconds (the generated code deserializes it as int; localml sends "1"
#: in the e2e tests); azure-core's pollers also honour `retry-after-ms` (`get_retry_after`): fast tests.
LRO = {"retry-after-ms": "10"}
REAL_ARM_CLIENT = jobs.azure_client.arm_client


def _outputs(path: Path, key_vault: dict[str, Any] | None = None, drop: bool = False) -> Path:
    outputs = json.loads((FIXTURES / "outputs-prod.json").read_text())
    dev_like = {"name": "sample-vault", "purge_protection": False, "soft_delete_days": 7}
    outputs["key_vault"] = key_vault or dev_like
    if drop:
        del outputs["key_vault"]
    path.write_text(json.dumps(outputs))
    return path


class Azure:
    """The answers of one scenario, by (method, path); LROs answer 202 once on their Location, then 200."""

    def __init__(
        self,
        vault: dict | None = VAULT,
        deleted: dict | None = None,
        workspace: bool = True,
        purge: tuple[int, Any] | None = None,
    ) -> None:
        self.vault, self.deleted, self.workspace, self.purge = vault, deleted, workspace, purge
        self.polled: dict[str, int] = {}

    def route(self, method: str, url: str) -> tuple[Any, ...]:
        path = urlsplit(url).path
        if path.startswith("/operationResults/"):
            self.polled[path] = self.polled.get(path, 0) + 1
            return (202, None, LRO | {"Location": url}) if self.polled[path] == 1 else (200, None)
        if path == VAULT_PATH and method == "GET":
            return (200, self.vault) if self.vault else (404, {"error": {"code": "ResourceNotFound"}})
        if path == VAULT_PATH and method == "DELETE":
            return 200, None
        if "/deletedVaults/sample-vault" in path and method == "GET":
            return (200, self.deleted) if self.deleted else (404, {"error": {"code": "ResourceNotFound"}})
        if path.endswith("/deletedVaults/sample-vault/purge") and method == "POST":
            return self.purge or (202, None, LRO | {"Location": POLL + "purge"})
        if path == WS_PATH and method == "GET":
            if not self.workspace:
                return 404, {"error": {"code": "ResourceNotFound", "message": "workspace not found"}}
            return 200, WORKSPACE
        if path == WS_PATH and method == "DELETE":
            return 202, None, LRO | {"Location": POLL + "workspace"}
        return 404, {"error": {"code": "ResourceNotFound", "message": f"{method} {path}"}}


def _run(monkeypatch, capsys, azure: Azure | None, argv: list[str]) -> tuple[int, str, str, RoutedTransport]:
    def nothing(method: str, url: str) -> tuple[Any, ...]:
        pytest.fail(f"no call expected: {method} {url}")

    transport = RoutedTransport(azure.route if azure else nothing)
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    monkeypatch.setattr(
        jobs.azure_client, "arm_client", lambda ml: REAL_ARM_CLIENT(ml, transport=transport, retry_total=0)
    )
    code = main(["teardown", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, transport


def _calls(transport: RoutedTransport) -> list[tuple[str, str, dict[str, list[str]]]]:
    return [(r.method, urlsplit(r.url).path, parse_qs(urlsplit(r.url).query)) for r in transport.requests]


def test_deletes_the_workspace_permanently_then_deletes_and_purges_the_vault(monkeypatch, capsys, tmp_path):
    argv = ["--outputs", str(_outputs(tmp_path / "o.json")), "--yes", "--json"]
    code, out, err, transport = _run(monkeypatch, capsys, Azure(), argv)
    assert code == 0, out + err
    report = json.loads(out)
    assert report["ok"] and report["exit_code"] == 0 and report["stack"] == "<stack>"
    assert report["workspace"]["state"] == "deleted_permanently" and report["workspace"]["name"] == "ws-llm"
    # The live vault's location (westus in the spec example) is where it is purged, not the workspace region.
    assert (report["key_vault"]["state"], report["key_vault"]["location"]) == ("deleted_and_purged", "westus")
    calls = _calls(transport)
    assert [(m, p.rsplit("/", 2)[-2:]) for m, p, _ in calls] == [
        ("GET", ["vaults", "sample-vault"]),
        ("GET", ["workspaces", "ws-llm"]),  # azure-ai-ml's begin_delete reads the workspace first
        ("DELETE", ["workspaces", "ws-llm"]),
        ("GET", ["operationResults", "workspace"]),
        ("GET", ["operationResults", "workspace"]),
        ("DELETE", ["vaults", "sample-vault"]),
        ("POST", ["sample-vault", "purge"]),
        ("GET", ["operationResults", "purge"]),
        ("GET", ["operationResults", "purge"]),
    ]
    delete_ws = calls[2][2]
    assert delete_ws["forceToPurge"] == ["true"]
    for method, path, query in calls:
        if "KeyVault" in path:
            assert query["api-version"] == ["2024-11-01"], (method, path)
    assert calls[6][1] == DELETED_IN.format("westus") + "/purge"
    assert all(r.headers["Authorization"] == "Bearer test-token" for r in transport.requests)
    assert "teardown: deleting workspace ws-llm permanently (forceToPurge=true)" in err
    assert "teardown: purging key vault sample-vault in westus" in err
    assert [s.split(":")[0] for s in report["next_steps"]] == [
        "pulumi destroy --stack <stack> --run-program --refresh --yes",
        "pulumi up --stack <stack>",
    ]


def test_plain_text_names_what_was_freed_and_the_next_commands(monkeypatch, capsys, tmp_path):
    argv = ["--outputs", str(_outputs(tmp_path / "o.json")), "--yes"]
    code, out, _, _ = _run(monkeypatch, capsys, Azure(), argv)
    assert code == 0
    assert "teardown: workspace ws-llm permanently deleted; its name is free now" in out
    assert "teardown: key vault sample-vault deleted and purged; its name is free now" in out
    assert "  1. pulumi destroy --stack <stack> --run-program --refresh --yes" in out
    assert "  2. pulumi up --stack <stack>" in out


@pytest.mark.parametrize("json_flag", [False, True])
def test_refusals_touch_nothing(monkeypatch, capsys, tmp_path, json_flag):
    extra = ["--json"] if json_flag else []
    cases = [
        (["--outputs", str(_outputs(tmp_path / "a.json"))], "pass --yes to do it"),
        (
            [
                "--outputs",
                str(
                    _outputs(
                        tmp_path / "b.json",
                        {"name": "kv-prod", "purge_protection": True, "soft_delete_days": 90},
                    )
                ),
                "--yes",
            ],
            "key vault kv-prod has purge protection, so its name stays taken for 90 days",
        ),
        (
            ["--outputs", str(_outputs(tmp_path / "c.json", drop=True)), "--yes"],
            "the outputs carry no key_vault (exported by an older version of the stack program); run `pulumi",
        ),
        (["--yes"], "no stack outputs: pass --stack NAME"),
    ]
    for argv, message in cases:
        code, out, err, transport = _run(monkeypatch, capsys, None, argv + extra)
        assert code == 2 and message in err and "Traceback" not in err, err
        assert transport.requests == []
        if json_flag:
            expected = {"ok": False, "error": err.strip().removeprefix("error: "), "exit_code": 2}
            assert json.loads(out) == expected


def test_a_live_vault_with_purge_protection_is_refused_before_any_delete(monkeypatch, capsys, tmp_path):
    """The outputs say off, Azure says on (it cannot be turned off once on): exit 2 after one GET."""
    protected = copy.deepcopy(VAULT)
    protected["properties"]["enablePurgeProtection"] = True
    argv = ["--outputs", str(_outputs(tmp_path / "o.json")), "--yes", "--json"]
    code, out, err, transport = _run(monkeypatch, capsys, Azure(vault=protected), argv)
    assert code == 2 and "has purge protection on in Azure" in err and "nothing was deleted" in err
    assert [m for m, _, _ in _calls(transport)] == ["GET"]
    assert json.loads(out)["exit_code"] == 2


def test_a_vault_deleted_earlier_is_only_purged(monkeypatch, capsys, tmp_path):
    """A plain `pulumi destroy` already soft-deleted the vault: teardown finds it with Vaults_GetDeleted in
    the workspace's region and purges it; a soft-deleted one with purge protection is refused."""
    deleted = copy.deepcopy(DELETED)
    deleted["properties"]["purgeProtectionEnabled"] = False
    argv = ["--outputs", str(_outputs(tmp_path / "o.json")), "--yes", "--json"]
    code, out, err, transport = _run(monkeypatch, capsys, Azure(vault=None, deleted=deleted), argv)
    assert code == 0, err
    assert json.loads(out)["key_vault"]["state"] == "purged"
    paths = [p for _, p, _ in _calls(transport)]
    assert DELETED_IN.format("eastus") in paths
    assert not any(m == "DELETE" and "KeyVault" in p for m, p, _ in _calls(transport))

    code, out, err, transport = _run(monkeypatch, capsys, Azure(vault=None, deleted=DELETED), argv)
    assert code == 2 and "(soft-deleted) has purge protection on in Azure" in err
    assert [m for m, _, _ in _calls(transport)] == ["GET", "GET"]


def test_nothing_left_to_delete_is_reported_not_failed(monkeypatch, capsys, tmp_path):
    argv = ["--outputs", str(_outputs(tmp_path / "o.json")), "--yes", "--json"]
    code, out, err, transport = _run(monkeypatch, capsys, Azure(vault=None, workspace=False), argv)
    assert code == 0, err
    report = json.loads(out)
    assert report["workspace"]["state"] == "not_found" and "Recently deleted" in report["workspace"]["detail"]
    assert report["key_vault"]["state"] == "not_found"
    assert not any(m in ("DELETE", "POST") for m, _, _ in _calls(transport))


def test_an_azure_error_midway_is_exit_4_with_the_steps_done(monkeypatch, capsys, tmp_path):
    action = "Microsoft.KeyVault/locations/deletedVaults/purge/action"
    message = f"The client does not have authorization to perform action '{action}'"
    forbidden = (403, {"error": {"code": "AuthorizationFailed", "message": message}})
    argv = ["--outputs", str(_outputs(tmp_path / "o.json")), "--yes", "--json"]
    code, out, err, _ = _run(monkeypatch, capsys, Azure(purge=forbidden), argv)
    assert code == 4
    report = json.loads(out)
    assert report["ok"] is False and report["exit_code"] == 4
    assert "AuthorizationFailed" in report["error"] and "run the same command again" in report["error"]
    assert report["workspace"]["state"] == "deleted_permanently" and report["key_vault"]["state"] == "pending"


def test_no_credentials_is_exit_4_before_any_call(monkeypatch, capsys, tmp_path):
    def none(outs):
        raise jobs.azure_client.NoCredentials()

    monkeypatch.setattr(jobs.azure_client, "ml_client", none)
    code = main(["teardown", "--outputs", str(_outputs(tmp_path / "o.json")), "--yes", "--json"])
    out = capsys.readouterr().out
    assert code == 4 and json.loads(out)["error"].startswith("no Azure credentials")
