"""`python -m jobs teardown` end to end against localml: the dev stack deployed with the real `pulumi up` (the
offline azure-native provider PUTs its workspace, key vault and everything else as azure-native does), then
teardown runs through azure-ai-ml and azure-mgmt-core, and the names are created again by `pulumi up`. The
contrast: deleted the way `pulumi destroy` deletes (a plain DELETE of each), the same names are refused with
Azure's errors, and the next `pulumi up` fails on them.

Each test deploys its own copy of dev (its own workspace and resource group, hence its own vault name), so
the module's one control plane keeps them apart.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from doubles.localml import LocalAzureML

from .conftest import ROOT, deployment, stack_config, stack_text, up_and_outputs

HERE = Path(__file__).parent
SUB = "00000000-0000-0000-0000-000000000000"

pytestmark = pytest.mark.slow


def dev(tag: str, **workspace: Any) -> dict[str, Any]:
    """The dev stack's config with its own workspace (`ws-e2e-<tag>`) and resource group, and `workspace`
    keys changed."""
    config = copy.deepcopy(stack_config("dev"))
    ws = dict(config["azml-gpu:workspace"], name=f"ws-e2e-{tag}", **workspace)
    ws["resource_group"] = dict(ws["resource_group"], name=f"rg-e2e-{tag}")
    config["azml-gpu:workspace"] = ws
    return config


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


def _teardown(local: LocalAzureML, outputs: Path, *extra: str) -> tuple[int, str, str]:
    argv = [sys.executable, "-m", "jobs", "teardown", "--outputs", str(outputs), *extra]
    env = local.subprocess_env()
    r = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def _log(local: LocalAzureML) -> list[Any]:
    assert local.control_plane is not None
    return list(local.control_plane.server.log)


def _vault(outputs: Path) -> str:
    return json.loads(outputs.read_text())["key_vault"]["name"]


def test_teardown_frees_both_names_and_they_can_be_created_again(local: LocalAzureML, tmp_path: Path):
    outputs = tmp_path / "outputs.json"
    with deployment(local, "dev", tmp_path / "deploy", dev("free")) as d:
        up_and_outputs(d, outputs)
        vault = _vault(outputs)
        before = len(_log(local))
        code, out, err = _teardown(local, outputs, "--yes", "--json")
        assert code == 0, out + err[-4000:]
        report = json.loads(out)
        assert report["workspace"]["state"] == "deleted_permanently"
        assert (report["key_vault"]["state"], report["key_vault"]["location"]) == (
            "deleted_and_purged",
            "eastus",
        )
        calls = _log(local)[before:]
        rg = f"/subscriptions/{SUB}/resourceGroups/rg-e2e-free/providers"
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
        assert f"teardown: purging key vault {vault} in eastus; waiting for Azure" in err
        assert "Delete request initiated" not in err  # azure-ai-ml's own INFO line is filtered

        # Gone for good: no workspace, no vault, no soft-deleted vault.
        assert _arm(local, outputs, "get-workspace")["status"] == 404
        assert _arm(local, outputs, "get-vault")["status"] == 404
        assert _arm(local, outputs, "get-deleted-vault")["status"] == 404
        # What teardown says to do next, then `pulumi up` again, the same day: both names are accepted.
        destroyed = d.destroy(refresh=True)
        assert destroyed.ok, destroyed.tail(40)
        up_and_outputs(d, outputs)
        assert _arm(local, outputs, "get-workspace")["body"]["properties"]["provisioningState"] == "Succeeded"
        assert _arm(local, outputs, "get-vault")["status"] == 200
    # A second teardown frees them again; plain text this time.
    code, out, err = _teardown(local, outputs, "--yes")
    assert code == 0, err[-4000:]
    assert f"teardown: key vault {vault} deleted and purged; its name is free now" in out
    assert "  1. pulumi destroy --stack <stack> --run-program --refresh --yes" in out


def test_without_teardown_the_names_stay_taken(local: LocalAzureML, tmp_path: Path):
    """What `pulumi destroy` alone does: a plain DELETE of each. Both names are then refused with Azure's
    errors, the next `pulumi up` fails on them. teardown afterwards can still purge the vault (it is
    readable as a deleted vault), not the workspace (a soft-deleted workspace cannot be read:
    Azure/azure-cli#33756)."""
    outputs = tmp_path / "outputs.json"
    assert local.control_plane is not None
    store = local.control_plane.store
    with deployment(local, "dev", tmp_path / "deploy", dev("held")) as d:
        up_and_outputs(d, outputs)
        ws_id = (
            f"/subscriptions/{SUB}/resourceGroups/rg-e2e-held/providers/Microsoft.MachineLearningServices/"
        )
        ws_id += "workspaces/ws-e2e-held"
        workspace_body = tmp_path / "workspace-body.json"
        workspace_body.write_text(json.dumps(store.arm(ws_id).sent))  # what azure-native sent
        destroyed = d.destroy()
        assert destroyed.ok, destroyed.tail(40)
        assert not [r for r in store.resources if "rg-e2e-held" in r]  # pulumi destroy left nothing
        assert _arm(local, outputs, "get-workspace")["status"] == 404
        assert _arm(local, outputs, "get-computes")["status"] == 404  # nothing under a deleted workspace
        deleted = _arm(local, outputs, "get-deleted-vault")
        assert deleted["status"] == 200
        assert deleted["body"]["properties"]["purgeProtectionEnabled"] is False
        props = deleted["body"]["properties"]
        assert props["scheduledPurgeDate"] > props["deletionDate"]

        # `pulumi up` again: the vault's name is held by the deleted vault (409 ConflictError)...
        again = d.up(skip_preview=True)
        assert not again.ok
        assert 'Status=409 Code="ConflictError"' in again.tail()
        assert "A vault with the same name already exists in deleted state" in again.tail()
        # ... and the workspace's by the soft-deleted workspace, as its PUT shows.
        ws = _arm(local, outputs, "put-workspace", str(workspace_body))
        assert ws["status"] == 400 and ws["body"]["error"] == {
            "code": "BadRequest",
            "message": "Soft-deleted workspace exists. Please purge or recover it. https://aka.ms/wsoftdelete",
        }

        code, out, err = _teardown(local, outputs, "--yes", "--json")
        assert code == 0, out + err[-4000:]
        report = json.loads(out)
        assert report["key_vault"]["state"] == "purged"
        assert (
            report["workspace"]["state"] == "not_found"
            and "Recently deleted" in report["workspace"]["detail"]
        )
        # The vault's name is free now; the workspace's is not.
        third = d.up(skip_preview=True)
        assert not third.ok
        assert "Soft-deleted workspace exists. Please purge or recover it." in third.tail()
        assert _arm(local, outputs, "get-vault")["status"] == 200


def test_refusals_delete_nothing(local: LocalAzureML, tmp_path: Path):
    outputs = tmp_path / "outputs.json"
    with deployment(local, "dev", tmp_path / "deploy", dev("keep")) as d:
        deployed = up_and_outputs(d, outputs)
    protected = tmp_path / "prod-like.json"
    key_vault = dict(deployed["key_vault"], purge_protection=True, soft_delete_days=90)
    protected.write_text(json.dumps(deployed | {"key_vault": key_vault}))
    old = tmp_path / "old.json"
    old.write_text(json.dumps({k: v for k, v in deployed.items() if k != "key_vault"}))
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
    local: LocalAzureML, tmp_path: Path
):
    """The config turned purge protection off, but the vault had it on: Azure keeps it on (it cannot be turned
    off), so the vault cannot be purged. teardown reads the live vault first and deletes nothing."""
    outputs = tmp_path / "outputs.json"
    with deployment(
        local, "dev", tmp_path / "deploy", dev("was-protected", key_vault_purge_protection=True)
    ) as d:
        up_and_outputs(d, outputs)
        # The next `pulumi up` omits the property (key_vault_purge_protection: false): it stays on.
        d.set_stack_text(stack_text(dev("was-protected", key_vault_purge_protection=False)))
        up_and_outputs(d, outputs)
    assert json.loads(outputs.read_text())["key_vault"]["purge_protection"] is False
    assert _arm(local, outputs, "get-vault")["body"]["properties"]["enablePurgeProtection"] is True
    before = len(_log(local))
    code, out, err = _teardown(local, outputs, "--yes", "--json")
    assert code == 2 and "has purge protection on in Azure" in err and "nothing was deleted" in err
    assert [c for c in _log(local)[before:] if c.method in ("DELETE", "POST")] == []
    assert _arm(local, outputs, "get-workspace")["status"] == 200
