"""`python -m jobs check-deploy` end to end: a stack deployed into localml with the real `pulumi up` (the
offline azure-native provider PUTs every resource as azure-native does), then changed the ways clusters drift
(the portal or the Azure CLI through azure-ai-ml: tests/integration/e2e/sdk_calls.py; a later `pulumi up`),
then check-deploy reads them back through azure-ai-ml, and the recovery it prints is run (`pulumi refresh`,
`pulumi up`).

Each test deploys its own stack (its own workspace and resource group names), so the module's one control
plane keeps them apart.
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
from stackconfig.loader import read_config_block

from .conftest import ROOT, deployment, stack_config, stack_text, up_and_outputs

HERE = Path(__file__).parent
OLD_SIZE = "Standard_ND96amsr_A100_v4"  # the size a replaced h100-wus3 "comes back" with (#18889)
SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"

pytestmark = pytest.mark.slow


def named(config: dict[str, Any], tag: str) -> dict[str, Any]:
    """`config` with its own workspace and resource group (`ws-e2e-<tag>`, `rg-e2e-<tag>`)."""
    config = copy.deepcopy(config)
    workspace = dict(config["azml-gpu:workspace"], name=f"ws-e2e-{tag}")
    workspace["resource_group"] = dict(workspace["resource_group"], name=f"rg-e2e-{tag}")
    config["azml-gpu:workspace"] = workspace
    return config


def _ws_path(tag: str) -> str:
    rg = f"{SUB}/resourceGroups/rg-e2e-{tag}"
    return f"{rg}/providers/Microsoft.MachineLearningServices/workspaces/ws-e2e-{tag}"


def _sdk(local: LocalAzureML, outputs: Path, *args: str) -> dict[str, Any]:
    env = local.subprocess_env() | {"PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, str(HERE / "sdk_calls.py"), str(outputs), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    return json.loads(r.stdout)


def _check(local: LocalAzureML, outputs: Path, *extra: str) -> tuple[int, str, str]:
    r = subprocess.run(
        [sys.executable, "-m", "jobs", "check-deploy", "--outputs", str(outputs), *extra],
        cwd=ROOT,
        env=local.subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return r.returncode, r.stdout, r.stderr


def _check_json(local: LocalAzureML, outputs: Path) -> tuple[int, dict[str, Any]]:
    code, out, err = _check(local, outputs, "--json")
    try:
        return code, json.loads(out)
    except ValueError:
        pytest.fail(f"check-deploy printed no JSON (exit {code}):\n{out}\n{err[-4000:]}")


def seed_plan() -> dict[str, Any]:
    """The seed's three clusters (h100-x4, h100-wus3, a100-spot) in one workspace: prod's clusters and
    prod-westus3's h100-wus3, in a public workspace (a private one refuses a cluster in another region, so the
    shipped prod splits them: docs/azure-behaviour.md section 15)."""
    config = copy.deepcopy(stack_config("prod"))
    h100_x4, a100_spot = config["azml-gpu:clusters"]
    (h100_wus3,) = stack_config("prod-westus3")["azml-gpu:clusters"]
    # The seed's h100-x4 has SSH by key; the shipped private prod has none (SSH to no-public-IP nodes in a
    # managed network is not documented: docs/azure-behaviour.md), so the public plan takes the capacity
    # stack's key.
    (capacity,) = stack_config("capacity")["azml-gpu:clusters"]
    h100_x4 = dict(h100_x4, ssh=capacity["ssh"])
    clusters = [h100_x4, dict(h100_wus3, region="westus3"), a100_spot]  # its own stack's region
    config["azml-gpu:clusters"] = [dict(c, node_public_ip=True) for c in clusters]
    config["azml-gpu:workspace"] = dict(config["azml-gpu:workspace"], public_network_access="Enabled")
    del config["azml-gpu:network"]
    # Deployed by these tests, not by the deploy pipeline: no smoke job, so no pipeline principal to grant
    # the identity datastores' data roles (azml-gpu:deploy, docs/config.md).
    config["azml-gpu:deploy"] = {"smoke": False}
    return config


def test_a_stack_deployed_as_declared_matches(local: LocalAzureML, tmp_path: Path) -> None:
    path = tmp_path / "outputs.json"
    with deployment(local, "prod", tmp_path / "deploy", named(seed_plan(), "match")) as d:
        up_and_outputs(d, path)
    code, report = _check_json(local, path)
    assert code == 0 and report["ok"] and report["exit_code"] == 0, report
    assert [c["cluster"] for c in report["clusters"]] == ["a100-spot", "h100-wus3", "h100-x4"]
    for c in report["clusters"]:
        assert c["state"] == "ok" and c["problems"] == [] and c["recovery"] == [], c
        assert {f["field"] for f in c["fields"] if f["ok"]} == {
            "size",
            "tier",
            "ssh",
            "subnet_id",
            "node_public_ip",
            "region",
            "min_instances",
            "max_instances",
            "idle_seconds",
        }
    fields = {c["cluster"]: {f["field"]: f["live"] for f in c["fields"]} for c in report["clusters"]}
    # The cross-region cluster's region is its computeLocation; the envelope location is the workspace's.
    assert fields["h100-wus3"]["region"] == "westus3"
    assert fields["a100-spot"]["tier"] == "low_priority"
    assert fields["a100-spot"]["ssh"] == "disabled" and fields["h100-x4"]["ssh"] == "enabled"
    assert fields["h100-x4"]["idle_seconds"] == 300 and fields["h100-x4"]["max_instances"] == 4
    assert report["mismatches"] == [] and report["extra_clusters"] == []
    # Plain text for people, progress on stderr, and the calls went through the SDK to the compute API.
    code, out, err = _check(local, path)
    assert code == 0 and "h100-x4: ok (Standard_ND96isr_H100_v5, dedicated, eastus, SSH enabled" in out
    assert "check-deploy: 3 of 3 clusters match the stack" in out
    assert "check-deploy: reading compute h100-wus3 (2/3) in workspace ws-e2e-match" in err
    assert "check-deploy: listing the computes of workspace ws-e2e-match" in err
    assert local.control_plane is not None
    paths = {(c.method, c.path) for c in local.control_plane.server.log}
    for name in ("h100-x4", "h100-wus3", "a100-spot"):
        assert ("GET", f"{_ws_path('match')}/computes/{name}") in paths
    assert ("GET", f"{_ws_path('match')}/computes") in paths


def test_old_size_after_replacement_and_portal_edit_exit_1_then_recover(
    local: LocalAzureML, tmp_path: Path
) -> None:
    plan = named(seed_plan(), "drift")
    old = copy.deepcopy(plan)
    wus3 = next(c for c in old["azml-gpu:clusters"] if c["name"] == "h100-wus3")
    wus3["size"] = OLD_SIZE
    path = tmp_path / "outputs.json"
    with deployment(local, "prod", tmp_path / "deploy", old) as d:
        up_and_outputs(d, tmp_path / "old-outputs.json")
        # h100-wus3 existed on the old size and was deleted with Detach (what azurerm's replacement did,
        # hashicorp/terraform-provider-azurerm#15825); `pulumi up` with the stack's size then PUTs it again:
        # the answer acknowledges the new size, the cluster has the old one (#18889).
        _sdk(local, tmp_path / "old-outputs.json", "compute-delete", "h100-wus3", "Detach")
        # Someone raised h100-x4's max nodes in the portal (`az ml compute update` sends the same PUT).
        assert _sdk(local, tmp_path / "old-outputs.json", "compute-update", "h100-x4", "max_instances=8") == {
            "name": "h100-x4",
            "max_instances": 8,
        }
        d.set_stack_text(stack_text(plan))
        up_and_outputs(d, path)
        # azure-native's readAfterWrite GET put the size the cluster really has in the state.
        state = d.export()["deployment"]["resources"]
        (wus3_state,) = [
            r
            for r in state
            if r["type"] == "azure-native:machinelearningservices:Compute" and r["id"].endswith("/h100-wus3")
        ]
        assert wus3_state["outputs"]["properties"]["properties"]["vmSize"] == OLD_SIZE
        assert wus3_state["inputs"]["properties"]["properties"]["vmSize"] == "Standard_ND96isr_H100_v5"

        code, report = _check_json(local, path)
        assert code == 1 and not report["ok"] and report["exit_code"] == 1
        assert report["mismatches"] == [
            {"cluster": "h100-wus3", "field": "size", "stack": "Standard_ND96isr_H100_v5", "live": OLD_SIZE},
            {"cluster": "h100-x4", "field": "max_instances", "stack": 4, "live": 8},
        ]
        by_name = {c["cluster"]: c for c in report["clusters"]}
        assert by_name["a100-spot"]["state"] == "ok"
        wus3_report = by_name["h100-wus3"]
        assert wus3_report["state"] == "mismatch"
        assert wus3_report["problems"] == [
            f"h100-wus3: size: stack Standard_ND96isr_H100_v5, live {OLD_SIZE}"
        ]
        steps = "\n".join(wus3_report["recovery"])
        delete = "az ml compute delete --name h100-wus3 --resource-group rg-e2e-drift"
        delete += " --workspace-name ws-e2e-drift"
        assert delete in steps
        assert "answers ResourceNotFound" in steps and "Azure/azure-rest-api-specs#18889" in steps
        assert steps.index("pulumi refresh") < steps.index("pulumi up")
        x4 = by_name["h100-x4"]
        assert x4["state"] == "mismatch" and x4["problems"] == ["h100-x4: max_instances: stack 4, live 8"]
        assert "pulumi refresh --stack <stack> --yes" in x4["recovery"][1]
        assert "az ml compute delete" not in "\n".join(x4["recovery"])  # scale settings update in place

        code, out, _ = _check(local, path)
        assert code == 1
        assert (
            "h100-wus3: MISMATCH" in out and f"size: stack Standard_ND96isr_H100_v5, live {OLD_SIZE}" in out
        )
        assert "check-deploy: 1 of 3 clusters match the stack; not matching: h100-wus3, h100-x4" in out

        # The recovery steps it printed, against the same control plane: delete with Delete, then `pulumi
        # refresh` (h100-wus3 is gone; h100-x4's live max nodes come into the state's inputs) and `pulumi up`
        # (h100-wus3 created again, h100-x4's declared scale settings PUT back).
        _sdk(local, path, "compute-delete", "h100-wus3", "Delete")
        refreshed = d.refresh()
        assert refreshed.ok, refreshed.tail(40)
        up = d.up(skip_preview=True)
        assert up.ok, up.tail(40)
        assert up.run is not None and up.run.ops.get("create") == 1 and up.run.ops.get("update") == 1, (
            up.run.ops
        )
    code, report = _check_json(local, path)
    assert code == 0 and report["mismatches"] == [], report


def test_missing_cluster_exit_1_and_an_undeclared_one_is_a_note(local: LocalAzureML, tmp_path: Path) -> None:
    path = tmp_path / "outputs.json"
    with deployment(local, "prod", tmp_path / "deploy", named(seed_plan(), "missing")) as d:
        up_and_outputs(d, path)
        # Deleted outside Pulumi, and an experiment's cluster made by hand.
        _sdk(local, path, "compute-delete", "h100-wus3", "Delete")
        _sdk(local, path, "compute-create", "old-exp", "Standard_NC6s_v3")
        code, report = _check_json(local, path)
        assert code == 1
        missing = {c["cluster"]: c for c in report["clusters"]}["h100-wus3"]
        assert missing["state"] == "missing" and missing["fields"] == []
        assert "not deployed" in missing["problems"][0]
        assert missing["recovery"][0].startswith("1. pulumi refresh")
        assert [c["name"] for c in report["extra_clusters"]] == ["old-exp"]
        assert report["extra_clusters"][0]["size"] == "Standard_NC6s_v3"
        code, out, _ = _check(local, path)
        assert code == 1 and "h100-wus3: MISSING" in out
        assert "note: old-exp (Standard_NC6s_v3, 1 max nodes) is live in workspace ws-e2e-missing" in out
        # The undeclared cluster alone is advisory: after the recovery (`pulumi refresh`, `pulumi up`) brings
        # h100-wus3 back, everything passes.
        assert d.refresh().ok
        assert d.up(skip_preview=True).ok
    code, report = _check_json(local, path)
    assert code == 0 and [c["name"] for c in report["extra_clusters"]] == ["old-exp"]


def test_subnet_and_node_public_ip_are_compared(local: LocalAzureML, tmp_path: Path) -> None:
    config = read_config_block(ROOT / "tests/fixtures/stacks/clean-vnet/Pulumi.clean-vnet.yaml")
    path = tmp_path / "outputs.json"
    with deployment(local, "clean-vnet", tmp_path / "deploy", config) as d:
        up_and_outputs(d, path)
        code, report = _check_json(local, path)
        assert code == 0, report
        live = {f["field"]: f["live"] for f in report["clusters"][0]["fields"]}
        assert live["node_public_ip"] is False and live["subnet_id"].endswith("/subnets/snet-train")
        assert live["ssh"] == "enabled"
        # The cluster redeployed from another config (another subnet, public IPs: both create-time settings)
        # than the outputs the jobs read.
        other = copy.deepcopy(config)
        (cluster,) = other["azml-gpu:clusters"]
        cluster["subnet_id"] = cluster["subnet_id"].replace("snet-train", "snet-other")
        cluster["node_public_ip"] = True
        d.set_stack_text(stack_text(other))
        assert d.up(skip_preview=True).ok
    code, report = _check_json(local, path)
    assert code == 1
    assert [(m["field"], m["live"]) for m in report["mismatches"]] == [
        ("subnet_id", cluster["subnet_id"]),
        ("node_public_ip", True),
    ]
    assert "az ml compute delete --name h100-x2" in report["clusters"][0]["recovery"][1]
