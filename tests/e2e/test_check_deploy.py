"""`python -m jobs check-deploy` end to end: the stack's clusters are "deployed" to localml by PUTting exactly
the ARM bodies the stack program declares (the `azure-native:machinelearningservices:Compute` inputs that
`preflight.program.run_program` records), then check-deploy reads them back through azure-ai-ml.

Each test uses its own workspace name, so the module's one control plane keeps them apart.
"""

from __future__ import annotations

import copy
import json
import re
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from doubles.localml import LocalAzureML
from doubles.localml.deploy import declared_bodies
from preflight.program import read_stack_config, run_program
from stackconfig.loader import read_config_block

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
OLD_SIZE = "Standard_ND96amsr_A100_v4"  # the size a replaced h100-wus3 "comes back" with (#18889)

pytestmark = pytest.mark.slow


def declared(stack: str, config: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(stack outputs, {compute name: ARM PUT body}) of the program for `stack`."""
    result = run_program(stack, config=config)
    assert result.ok, result.problems
    return dict(result.outputs), declared_bodies(result)


def _outputs_file(outputs: dict[str, Any], workspace: str, tmp: Path) -> Path:
    path = tmp / f"outputs-{workspace}.json"
    path.write_text(json.dumps(outputs | {"workspace_name": workspace}))
    return path


def _sdk(local: LocalAzureML, outputs: Path, *args: str) -> dict[str, Any]:
    env = local.subprocess_env() | {"PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-m", "doubles.localml.deploy", str(outputs), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    return json.loads(r.stdout)


def _put(local: LocalAzureML, outputs: Path, bodies: dict[str, Any], tmp: Path) -> dict[str, Any]:
    path = tmp / "bodies.json"
    path.write_text(json.dumps(bodies))
    return _sdk(local, outputs, "put", str(path))


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
    config = copy.deepcopy(read_stack_config("prod"))
    h100_x4, a100_spot = config["azml-gpu:clusters"]
    (h100_wus3,) = read_stack_config("prod-westus3")["azml-gpu:clusters"]
    # The seed's h100-x4 has SSH by key; the shipped private prod has none (SSH to no-public-IP nodes in a
    # managed network is not documented: docs/azure-behaviour.md), so the public plan takes the capacity
    # stack's key.
    (capacity,) = read_stack_config("capacity")["azml-gpu:clusters"]
    h100_x4 = dict(h100_x4, ssh=capacity["ssh"])
    clusters = [h100_x4, dict(h100_wus3, region="westus3"), a100_spot]  # its own stack's region
    config["azml-gpu:clusters"] = [dict(c, node_public_ip=True) for c in clusters]
    config["azml-gpu:workspace"] = dict(config["azml-gpu:workspace"], public_network_access="Enabled")
    del config["azml-gpu:network"]
    return config


@pytest.fixture(scope="module")
def prod() -> tuple[dict[str, Any], dict[str, Any]]:
    return declared("prod", seed_plan())


def test_a_stack_deployed_as_declared_matches(local: LocalAzureML, prod, tmp_path: Path) -> None:
    outputs, bodies = prod
    path = _outputs_file(outputs, "ws-e2e-match", tmp_path)
    _put(local, path, bodies, tmp_path)
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
        assert ("GET", f"{_ws_path('ws-e2e-match')}/computes/{name}") in paths
    assert ("GET", f"{_ws_path('ws-e2e-match')}/computes") in paths


def _ws_path(workspace: str) -> str:
    return (
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-train/providers/"
        f"Microsoft.MachineLearningServices/workspaces/{workspace}"
    )


def test_old_size_after_replacement_and_portal_edit_exit_1_then_recover(
    local: LocalAzureML, prod, tmp_path: Path
) -> None:
    outputs, bodies = prod
    path = _outputs_file(outputs, "ws-e2e-drift", tmp_path)
    # h100-wus3 existed on the old size; the replacement deleted it with Detach and created it again with
    # the stack's size: the PUT answer acknowledges the new size, the cluster has the old one (#18889).
    old = copy.deepcopy(bodies)
    old["h100-wus3"]["properties"]["properties"]["vmSize"] = OLD_SIZE
    _put(local, path, old, tmp_path)
    _sdk(local, path, "delete", "h100-wus3", "Detach")
    answer = _put(local, path, {"h100-wus3": bodies["h100-wus3"]}, tmp_path)
    assert answer["h100-wus3"]["properties"]["properties"]["vmSize"] == "Standard_ND96isr_H100_v5"
    # Someone raised h100-x4's max nodes in the portal (`az ml compute update` sends the same PUT).
    assert _sdk(local, path, "update", "h100-x4", "max_instances=8")["max_instances"] == 8

    code, report = _check_json(local, path)
    assert code == 1 and not report["ok"] and report["exit_code"] == 1
    assert report["mismatches"] == [
        {"cluster": "h100-wus3", "field": "size", "stack": "Standard_ND96isr_H100_v5", "live": OLD_SIZE},
        {"cluster": "h100-x4", "field": "max_instances", "stack": 4, "live": 8},
    ]
    by_name = {c["cluster"]: c for c in report["clusters"]}
    assert by_name["a100-spot"]["state"] == "ok"
    wus3 = by_name["h100-wus3"]
    assert wus3["state"] == "mismatch"
    assert wus3["problems"] == [f"h100-wus3: size: stack Standard_ND96isr_H100_v5, live {OLD_SIZE}"]
    steps = "\n".join(wus3["recovery"])
    delete = "az ml compute delete --name h100-wus3 --resource-group rg-train --workspace-name ws-e2e-drift"
    assert delete in steps
    assert "answers ResourceNotFound" in steps and "Azure/azure-rest-api-specs#18889" in steps
    assert steps.index("pulumi refresh") < steps.index("pulumi up")
    x4 = by_name["h100-x4"]
    assert x4["state"] == "mismatch" and x4["problems"] == ["h100-x4: max_instances: stack 4, live 8"]
    assert "pulumi refresh --stack <stack> --yes" in x4["recovery"][1]
    assert "az ml compute delete" not in "\n".join(x4["recovery"])  # scale settings update in place

    code, out, _ = _check(local, path)
    assert code == 1
    assert "h100-wus3: MISMATCH" in out and f"size: stack Standard_ND96isr_H100_v5, live {OLD_SIZE}" in out
    assert "check-deploy: 1 of 3 clusters match the stack; not matching: h100-wus3, h100-x4" in out

    # The recovery steps, against the same control plane: delete with Delete, create again, and what
    # `pulumi up` sends after a refresh (the declared scale settings).
    _sdk(local, path, "delete", "h100-wus3", "Delete")
    _put(local, path, {n: bodies[n] for n in ("h100-wus3", "h100-x4")}, tmp_path)
    code, report = _check_json(local, path)
    assert code == 0 and report["mismatches"] == [], report


def test_missing_cluster_exit_1_and_an_undeclared_one_is_a_note(
    local: LocalAzureML, prod, tmp_path: Path
) -> None:
    outputs, bodies = prod
    path = _outputs_file(outputs, "ws-e2e-missing", tmp_path)
    _put(local, path, {n: bodies[n] for n in ("h100-x4", "a100-spot")}, tmp_path)
    _sdk(local, path, "create", "old-exp", "Standard_NC6s_v3")
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
    # The undeclared cluster alone is advisory: with h100-wus3 deployed, everything passes.
    _put(local, path, {"h100-wus3": bodies["h100-wus3"]}, tmp_path)
    code, report = _check_json(local, path)
    assert code == 0 and [c["name"] for c in report["extra_clusters"]] == ["old-exp"]


def test_subnet_and_node_public_ip_are_compared(local: LocalAzureML, tmp_path: Path) -> None:
    config = read_config_block(ROOT / "tests/fixtures/stacks/clean-vnet/Pulumi.clean-vnet.yaml")
    outputs, bodies = declared("clean-vnet", config)
    path = _outputs_file(outputs, "ws-e2e-vnet", tmp_path)
    _put(local, path, bodies, tmp_path)
    code, report = _check_json(local, path)
    assert code == 0, report
    live = {f["field"]: f["live"] for f in report["clusters"][0]["fields"]}
    assert live["node_public_ip"] is False and live["subnet_id"].endswith("/subnets/snet-train")
    assert live["ssh"] == "enabled"
    # The same cluster created in another subnet, with public IPs: both are create-time settings.
    other = copy.deepcopy(bodies)
    aml = other["h100-x2"]["properties"]["properties"]
    aml["subnet"] = {"id": aml["subnet"]["id"].replace("snet-train", "snet-other")}
    aml["enableNodePublicIp"] = True
    _sdk(local, path, "delete", "h100-x2", "Delete")
    _put(local, path, other, tmp_path)
    code, report = _check_json(local, path)
    assert code == 1
    assert [(m["field"], m["live"]) for m in report["mismatches"]] == [
        ("subnet_id", aml["subnet"]["id"]),
        ("node_public_ip", True),
    ]
    assert "az ml compute delete --name h100-x2" in report["clusters"][0]["recovery"][1]


def test_compute_delete_needs_underlying_resource_action(local: LocalAzureML) -> None:
    """Compute_Delete's `underlyingResourceAction` is required (REST spec); a missing compute is a 204."""
    import http.client

    assert local.control_plane is not None and local.host is not None
    conn = http.client.HTTPConnection("127.0.0.1", local.host.server.port, timeout=10)
    secret = local.host.identity_header
    conn.request("GET", "/msi/token?resource=https://x", headers={"X-IDENTITY-HEADER": secret})
    token = json.loads(conn.getresponse().read())["access_token"]
    conn.close()
    context = ssl.create_default_context(cafile=local.environ["REQUESTS_CA_BUNDLE"])
    url = f"{_ws_path('ws-e2e-delete')}/computes/nothing?api-version=2025-12-01"
    for query, status in (("", 400), ("&underlyingResourceAction=Delete", 204)):
        conn = http.client.HTTPSConnection(
            "127.0.0.1", local.control_plane.server.port, timeout=10, context=context
        )
        conn.request("DELETE", url + query, headers={"Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        body = resp.read()
        assert resp.status == status
        if status == 400:
            assert re.search(rb"underlyingResourceAction must be one of Delete, Detach", body)
        conn.close()
