"""`python -m jobs teardown` end to end against localml: the dev stack's workspace and key vault are
"deployed" by PUTting exactly the ARM bodies the stack program declares (the
`azure-native:machinelearningservices:Workspace` and `azure-native:keyvault:Vault` inputs
`preflight.program.run_program` records), then teardown runs through azure-ai-ml and azure-mgmt-core, and the
names are created again. The contrast: deleted the way `pulumi destroy` deletes (a plain DELETE of each), the
same names are refused with Azure's errors.

Each test uses its own workspace and vault names, so the module's one control plane keeps them apart.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from preflight.program import plain_numbers, run_program

from doubles.localml import LocalAzureML

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).parent
SUB = "00000000-0000-0000-0000-000000000000"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dev() -> dict[str, Any]:
    """The dev stack's outputs and the ARM bodies azure-native sends for its workspace and key vault."""
    result = run_program("dev")
    assert result.ok, result.problems
    vault = plain_numbers(dict(result.of_type("azure-native:keyvault:Vault")[0].inputs))
    ws = plain_numbers(dict(result.of_type("azure-native:machinelearningservices:Workspace")[0].inputs))
    envelope = ("location", "identity", "sku", "tags", "kind")
    internal = ("workspaceName", "resourceGroupName", "azureApiVersion")
    # The REST Workspace puts everything but the envelope under `properties`; azure-native flattens them into
    # its inputs and nests them again in the body it sends.
    ws_body = {k: ws[k] for k in envelope if k in ws}
    ws_body["properties"] = {k: v for k, v in ws.items() if k not in envelope + internal}
    vault_body = {k: vault[k] for k in ("location", "properties", "tags")}
    return {"outputs": dict(result.outputs), "vault": vault_body, "workspace": ws_body}


def _stack(dev: dict[str, Any], tmp: Path, tag: str, file: str = "", **key_vault: Any) -> Path:
    outputs = json.loads(json.dumps(dev["outputs"]))
    outputs["workspace_name"] = f"ws-e2e-{tag}"
    outputs["key_vault"] |= {"name": f"kv-e2e-{tag}"} | key_vault
    path = tmp / (file or f"outputs-{tag}.json")
    path.write_text(json.dumps(outputs))
    return path


def _arm(local: LocalAzureML, outputs: Path, *args: str) -> dict[str, Any]:
    env = local.subprocess_env() | {"PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, str(HERE / "arm_calls.py"), str(outputs), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    return json.loads(r.stdout)


def _put(local: LocalAzureML, outputs: Path, what: str, body: dict[str, Any], tmp: Path) -> dict[str, Any]:
    path = tmp / f"{what}-body.json"
    path.write_text(json.dumps(body))
    return _arm(local, outputs, f"put-{what}", str(path))


def _deploy(local: LocalAzureML, dev: dict[str, Any], outputs: Path, tmp: Path) -> None:
    assert _put(local, outputs, "vault", dev["vault"], tmp)["status"] == 201
    assert _put(local, outputs, "workspace", dev["workspace"], tmp)["status"] == 200


def _teardown(local: LocalAzureML, outputs: Path, *extra: str) -> tuple[int, str, str]:
    argv = [sys.executable, "-m", "jobs", "teardown", "--outputs", str(outputs), *extra]
    env = local.subprocess_env()
    r = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def _log(local: LocalAzureML) -> list[Any]:
    assert local.control_plane is not None
    return list(local.control_plane.server.log)


def test_teardown_frees_both_names_and_they_can_be_created_again(local: LocalAzureML, dev, tmp_path: Path):
    outputs = _stack(dev, tmp_path, "free")
    _deploy(local, dev, outputs, tmp_path)
    before = len(_log(local))
    code, out, err = _teardown(local, outputs, "--yes", "--json")
    assert code == 0, out + err[-4000:]
    report = json.loads(out)
    assert report["workspace"]["state"] == "deleted_permanently"
    assert (report["key_vault"]["state"], report["key_vault"]["location"]) == ("deleted_and_purged", "eastus")
    calls = _log(local)[before:]
    rg = f"/subscriptions/{SUB}/resourceGroups/rg-train-dev/providers"
    ws_path = f"{rg}/Microsoft.MachineLearningServices/workspaces/ws-e2e-free"
    deletes = [c for c in calls if c.method == "DELETE" and c.path == ws_path]
    assert [(c.status, c.query.get("forceToPurge")) for c in deletes] == [(202, "true")]
    assert [c.status for c in calls if "/operationResults/" in c.path] == [202, 200, 202, 200]
    kv = [
        (c.method, c.status, c.query["api-version"])
        for c in calls
        if "Microsoft.KeyVault" in c.path and "/operationResults/" not in c.path
    ]
    assert kv == [("GET", 200, "2024-11-01"), ("DELETE", 200, "2024-11-01"), ("POST", 202, "2024-11-01")]
    assert "teardown: deleting workspace ws-e2e-free permanently (forceToPurge=true)" in err
    assert "teardown: purging key vault kv-e2e-free in eastus; waiting for Azure" in err
    assert "Delete request initiated" not in err  # azure-ai-ml's own INFO line is filtered

    # Gone for good: no workspace, no vault, no soft-deleted vault.
    assert _arm(local, outputs, "get-workspace")["status"] == 404
    assert _arm(local, outputs, "get-vault")["status"] == 404
    assert _arm(local, outputs, "get-deleted-vault")["status"] == 404
    # `pulumi up` again, the same day: both names are accepted.
    _deploy(local, dev, outputs, tmp_path)
    assert _arm(local, outputs, "get-workspace")["body"]["properties"]["provisioningState"] == "Succeeded"
    # A second teardown frees them again; plain text this time.
    code, out, err = _teardown(local, outputs, "--yes")
    assert code == 0, err[-4000:]
    assert "teardown: key vault kv-e2e-free deleted and purged; its name is free now" in out
    assert "  1. pulumi destroy --stack <stack> --refresh --yes" in out


def test_without_teardown_the_names_stay_taken(local: LocalAzureML, dev, tmp_path: Path):
    """What `pulumi destroy` alone does: a plain DELETE of each. Both names are then refused with Azure's
    errors. teardown afterwards can still purge the vault (it is readable as a deleted vault), not the
    workspace (a soft-deleted workspace cannot be read: Azure/azure-cli#33756)."""
    outputs = _stack(dev, tmp_path, "held")
    _deploy(local, dev, outputs, tmp_path)
    assert _arm(local, outputs, "delete-workspace")["status"] == 202
    assert _arm(local, outputs, "delete-vault")["status"] == 200
    assert _arm(local, outputs, "get-workspace")["status"] == 404
    assert _arm(local, outputs, "get-computes")["status"] == 404  # nothing under a deleted workspace
    deleted = _arm(local, outputs, "get-deleted-vault")
    assert deleted["status"] == 200
    assert deleted["body"]["properties"]["purgeProtectionEnabled"] is False
    assert deleted["body"]["properties"]["scheduledPurgeDate"] > deleted["body"]["properties"]["deletionDate"]

    ws = _put(local, outputs, "workspace", dev["workspace"], tmp_path)
    assert ws["status"] == 400 and ws["body"]["error"] == {
        "code": "BadRequest",
        "message": "Soft-deleted workspace exists. Please purge or recover it. https://aka.ms/wsoftdelete",
    }
    kv = _put(local, outputs, "vault", dev["vault"], tmp_path)
    assert kv["status"] == 409 and kv["body"]["error"]["code"] == "ConflictError"
    assert kv["body"]["error"]["message"].startswith(
        "A vault with the same name already exists in deleted state. You need to either recover or purge"
    )

    code, out, err = _teardown(local, outputs, "--yes", "--json")
    assert code == 0, out + err[-4000:]
    report = json.loads(out)
    assert report["key_vault"]["state"] == "purged"
    assert report["workspace"]["state"] == "not_found" and "Recently deleted" in report["workspace"]["detail"]
    assert _put(local, outputs, "vault", dev["vault"], tmp_path)["status"] == 201
    assert _put(local, outputs, "workspace", dev["workspace"], tmp_path)["status"] == 400


def test_refusals_delete_nothing(local: LocalAzureML, dev, tmp_path: Path):
    outputs = _stack(dev, tmp_path, "keep")
    _deploy(local, dev, outputs, tmp_path)
    protected = _stack(dev, tmp_path, "keep", "prod-like.json", purge_protection=True, soft_delete_days=90)
    old = tmp_path / "old.json"
    old.write_text(json.dumps({k: v for k, v in json.loads(outputs.read_text()).items() if k != "key_vault"}))
    cases = [
        ((outputs,), "pass --yes to do it"),
        ((protected, "--yes"), "has purge protection, so its name stays taken for 90 days"),
        ((old, "--yes"), "run `pulumi up` once to export it"),
    ]
    for (path, *extra), message in cases:
        before = len(_log(local))
        code, out, err = _teardown(local, path, *extra, "--json")
        assert code == 2 and message in err and "Traceback" not in err, err[-4000:]
        assert json.loads(out)["exit_code"] == 2
        assert [c for c in _log(local)[before:] if c.method in ("DELETE", "POST")] == []
    assert _arm(local, outputs, "get-workspace")["status"] == 200
    assert _arm(local, outputs, "get-vault")["status"] == 200


def test_a_vault_whose_purge_protection_is_on_in_azure_is_refused_before_any_delete(
    local: LocalAzureML, dev, tmp_path: Path
):
    """The config turned purge protection off, but the vault had it on: Azure keeps it on (it cannot be turned
    off), so the vault cannot be purged. teardown reads the live vault first and deletes nothing."""
    outputs = _stack(dev, tmp_path, "was-protected")
    vault = json.loads(json.dumps(dev["vault"]))
    vault["properties"]["enablePurgeProtection"] = True
    assert _put(local, outputs, "vault", vault, tmp_path)["status"] == 201
    assert _put(local, outputs, "workspace", dev["workspace"], tmp_path)["status"] == 200
    # The next `pulumi up` omits the property (key_vault_purge_protection: false): it stays on.
    again = _put(local, outputs, "vault", dev["vault"], tmp_path)
    assert again["body"]["properties"]["enablePurgeProtection"] is True
    before = len(_log(local))
    code, out, err = _teardown(local, outputs, "--yes", "--json")
    assert code == 2 and "has purge protection on in Azure" in err and "nothing was deleted" in err
    assert [c for c in _log(local)[before:] if c.method in ("DELETE", "POST")] == []
    assert _arm(local, outputs, "get-workspace")["status"] == 200
