"""`python -m jobs check-deploy` against azure-ai-ml's real HTTP pipeline, answered at the transport with the
REST spec's own example of an AmlCompute GET (tests/jobs/drift_util.py): each field that differs named with
its recovery, a delete still running, clusters the stack lacks, outputs of an older program, a refused query.
The end-to-end runs against localml are in tests/integration/e2e/test_check_deploy.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from jobs.check_deploy import drift
from jobs.cli import main

from .drift_util import EXAMPLE, EXAMPLE_CLUSTER
from .jobs_azure_fakes import RoutedTransport, ml_client


def _outputs(path: Path, **changes: Any) -> Path:
    cluster = EXAMPLE_CLUSTER | changes
    path.write_text(json.dumps({
        "subscription_id": "00000000-0000-0000-0000-000000000000", "resource_group": "rg-train",
        "workspace_name": "ws-llm", "workspace_region": "eastus2", "clusters": {cluster["name"]: cluster},
    }))  # fmt: skip
    return path


# The REST spec's VirtualMachineSizes_List answer shape (machineLearningServices.json
# `VirtualMachineSizeListResult`): `value`, each with `name` and `supportedComputeTypes`.
SIZES = {
    "value": [{"name": "STANDARD_NC6", "supportedComputeTypes": ["AmlCompute", "ComputeInstance"]}],
}


def _route(body: dict[str, Any], extra: list[dict[str, Any]] | None = None, sizes: Any = SIZES):
    def route(method: str, url: str):
        path = url.split("?", 1)[0]
        if method == "GET" and path.endswith("/locations/eastus2/vmSizes") and sizes is not None:
            return 200, sizes
        if method == "GET" and path.endswith("/computes/compute123"):
            return 200, body
        if method == "GET" and path.endswith("/computes"):
            return 200, {"value": [body, *(extra or [])]}
        return 404, {"error": {"code": "ResourceNotFound", "message": path}}

    return route


def _run(monkeypatch, capsys, route, argv: list[str]) -> tuple[int, str, str, RoutedTransport]:
    import jobs.azure_client

    transport = RoutedTransport(route)
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    code = main(["check-deploy", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, transport


def test_the_spec_example_matches_the_stack_it_describes(monkeypatch, capsys, tmp_path):
    outputs = _outputs(tmp_path / "o.json")
    argv = ["--outputs", str(outputs), "--json"]
    code, out, err, transport = _run(monkeypatch, capsys, _route(EXAMPLE), argv)
    assert code == 0, out + err
    report = json.loads(out)
    live = {f["field"]: f["live"] for f in report["clusters"][0]["fields"]}
    # vmSize STANDARD_NC6 vs the catalog's Standard_NC6: VM size names compare case-insensitively.
    assert live["size"] == "STANDARD_NC6" and all(f["ok"] for f in report["clusters"][0]["fields"])
    assert (live["region"], live["idle_seconds"], live["ssh"]) == ("eastus2", 300, "enabled")
    assert [r.method for r in transport.requests] == ["GET", "GET", "GET"]
    assert report["sizes_offered"] == [
        {
            "cluster": "compute123",
            "size": "Standard_NC6",
            "region": "eastus2",
            "offered": True,
            "documented": True,
        }
    ]
    assert report["notes"] == []
    assert (
        "/providers/Microsoft.MachineLearningServices/locations/eastus2/vmSizes" in transport.requests[2].url
    )
    # azure-ai-ml's compute operations run on its 2023-08-01-preview client (_ml_client.py).
    url = transport.requests[0].url
    assert "/workspaces/ws-llm/computes/compute123?api-version=2023-08-01-preview" in url
    assert "check-deploy: reading compute compute123 (1/1) in workspace ws-llm" in err


@pytest.mark.parametrize(
    ("change", "field", "stack", "live"),
    [
        ({"vmSize": "Standard_NC24ads_A100_v4"}, "size", "Standard_NC6", "Standard_NC24ads_A100_v4"),
        ({"vmPriority": "LowPriority"}, "tier", "dedicated", "low_priority"),
        ({"remoteLoginPortPublicAccess": "Disabled"}, "ssh", "enabled", "disabled"),
        ({"subnet": None}, "subnet_id", "test-subnet-resource-id", None),
        ({"enableNodePublicIp": False}, "node_public_ip", True, False),
        (
            {"scaleSettings": {"maxNodeCount": 1, "minNodeCount": 1, "nodeIdleTimeBeforeScaleDown": "PT5M"}},
            "min_instances",
            0,
            1,
        ),
        (
            {"scaleSettings": {"maxNodeCount": 1, "minNodeCount": 0, "nodeIdleTimeBeforeScaleDown": "PT30M"}},
            "idle_seconds",
            300,
            1800,
        ),
    ],
)
def test_each_field_that_differs_is_named_with_its_recovery(
    monkeypatch, capsys, tmp_path, change, field, stack, live
):
    body = copy.deepcopy(EXAMPLE)
    body["properties"]["properties"].update(change)
    argv = ["--outputs", str(_outputs(tmp_path / "o.json")), "--json"]
    code, out, _, _ = _run(monkeypatch, capsys, _route(body), argv)
    assert code == 1
    report = json.loads(out)
    assert report["mismatches"] == [{"cluster": "compute123", "field": field, "stack": stack, "live": live}]
    steps = "\n".join(report["clusters"][0]["recovery"])
    if field in drift.CREATE_TIME:
        assert "az ml compute delete --name compute123 --resource-group rg-train --workspace-name ws-llm" in (
            steps
        )
    else:
        assert "pulumi refresh --stack <stack> --yes" in steps and "az ml compute delete" not in steps


def test_region_is_read_from_compute_location_first(monkeypatch, capsys, tmp_path):
    body = copy.deepcopy(EXAMPLE)
    body["properties"]["computeLocation"] = "westus3"  # the cluster's region; `location` the workspace's
    outputs = _outputs(tmp_path / "o.json", region="westus3")
    code, out, _, _ = _run(monkeypatch, capsys, _route(body), ["--outputs", str(outputs), "--json"])
    assert code == 0, out
    outputs = _outputs(tmp_path / "o.json", region="eastus2")
    code, out, _, _ = _run(monkeypatch, capsys, _route(body), ["--outputs", str(outputs), "--json"])
    assert code == 1 and json.loads(out)["mismatches"][0]["field"] == "region"


def test_a_delete_still_running_is_not_ready(monkeypatch, capsys, tmp_path):
    body = copy.deepcopy(EXAMPLE)
    body["properties"]["provisioningState"] = "Deleting"
    argv = ["--outputs", str(_outputs(tmp_path / "o.json"))]
    code, out, _, _ = _run(monkeypatch, capsys, _route(body), argv)
    assert code == 1
    assert "compute123: NOT-READY" in out and "provisioningState Deleting: a delete is still running" in out
    assert "answers ResourceNotFound, then pulumi refresh" in out


def test_undeclared_clusters_are_a_note_and_other_compute_types_are_ignored(monkeypatch, capsys, tmp_path):
    old = copy.deepcopy(EXAMPLE) | {"name": "old-exp"}
    instance = {
        "name": "ci-alice",
        "type": EXAMPLE["type"],
        "location": "eastus2",
        "properties": {
            "computeType": "ComputeInstance",
            "provisioningState": "Succeeded",
            "properties": {"vmSize": "STANDARD_DS3_V2"},
        },
    }
    code, out, _, _ = _run(
        monkeypatch,
        capsys,
        _route(EXAMPLE, [old, instance]),
        ["--outputs", str(_outputs(tmp_path / "o.json"))],
    )
    assert code == 0
    assert "note: old-exp (STANDARD_NC6, 1 max nodes) is live in workspace ws-llm but not in the stack" in out
    assert "ci-alice" not in out


def test_outputs_from_an_older_program_are_refused_before_any_query(monkeypatch, capsys, tmp_path):
    path = tmp_path / "old.json"
    cluster = {k: v for k, v in EXAMPLE_CLUSTER.items() if k not in ("subnet_id", "node_public_ip")}
    path.write_text(
        json.dumps(
            json.loads(_outputs(tmp_path / "o.json").read_text()) | {"clusters": {"compute123": cluster}}
        )
    )
    code, out, err, transport = _run(monkeypatch, capsys, _route(EXAMPLE), ["--outputs", str(path), "--json"])
    assert code == 2 and transport.requests == []
    body = json.loads(out)
    assert body["ok"] is False and body["exit_code"] == 2
    assert "cluster(s) compute123 carry no subnet_id/node_public_ip" in body["error"]
    assert "run `pulumi up` once" in body["error"] and err.startswith("error: --outputs")


def test_a_refused_query_exits_4_with_json(monkeypatch, capsys, tmp_path):
    def refused(method: str, url: str):
        return 403, {"error": {"code": "AuthorizationFailed", "message": "no access to the workspace"}}

    argv = ["--outputs", str(_outputs(tmp_path / "o.json")), "--json"]
    code, out, err, _ = _run(monkeypatch, capsys, refused, argv)
    assert code == 4
    body = json.loads(out)
    assert body["error"].startswith("compute query failed: HttpResponseError")
    assert "AuthorizationFailed" in body["error"]
    assert body["clusters"] == [] and body["extra_clusters"] == []
    assert err.splitlines()[-1].startswith("error: compute query failed")  # after the progress line


# --- the sizes Azure ML offers, live (issue 33 item 5) ------------------------------------------------------


def test_a_size_azure_ml_no_longer_lists_in_the_region_is_a_note(monkeypatch, capsys, tmp_path):
    """Only ComputeInstance: azure-ai-ml's list_sizes(compute_type="amlcompute") drops it."""
    sizes = {"value": [{"name": "Standard_NC6", "supportedComputeTypes": ["ComputeInstance"]}]}
    argv = ["--outputs", str(_outputs(tmp_path / "o.json"))]
    code, out, _, _ = _run(monkeypatch, capsys, _route(EXAMPLE, sizes=sizes), argv)
    assert code == 0  # the live cluster matches: advisory
    assert (
        "note: compute123: Azure ML does not list Standard_NC6 in eastus2 today (az ml compute list-sizes "
        "--location eastus2 --type amlcompute): the live cluster keeps running, but re-creating it (a "
        "replace, `pulumi destroy` then `up`) would be refused; request the size or pick one listed"
    ) in out


def test_a_list_that_cannot_be_read_is_a_note_not_a_failure(monkeypatch, capsys, tmp_path):
    argv = ["--outputs", str(_outputs(tmp_path / "o.json")), "--json"]
    code, out, _, _ = _run(monkeypatch, capsys, _route(EXAMPLE, sizes=None), argv)
    report = json.loads(out)
    assert code == 0 and report["sizes_offered"][0]["offered"] is None
    (note,) = report["notes"]
    assert note.startswith("the sizes Azure ML offers in eastus2 could not be read (")
    assert note.endswith("check with `az ml compute list-sizes --location eastus2 --type amlcompute`")
