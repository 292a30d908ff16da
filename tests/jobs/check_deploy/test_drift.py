"""The comparison of a live cluster with the stack outputs on its own (jobs/check_deploy/drift.py): what does
not count as a difference, a compute of another type under the name, a missing cluster's recovery, and the
report's JSON shape."""

from __future__ import annotations

from typing import Any

from jobs.check_deploy import drift
from stackconfig.outputs import ClusterOutput, StackOutputs

from ..drift_util import EXAMPLE_CLUSTER

WHERE = drift.Where("prod", "rg-train", "ws-llm")


def _cluster(**changes: Any) -> ClusterOutput:
    return ClusterOutput.model_validate(EXAMPLE_CLUSTER | changes)


def _live(**changes: Any) -> drift.LiveCluster:
    base = dict(
        name="compute123",
        type="amlcompute",
        provisioning_state="Succeeded",
        size="Standard_NC6",
        tier="dedicated",
        ssh="enabled",
        admin_user=None,
        subnet_id="TEST-SUBNET-RESOURCE-ID",
        node_public_ip=True,
        region="East US 2",
        min_instances=0,
        max_instances=1,
        idle_seconds=300,
    )
    return drift.LiveCluster(**(base | changes))


def test_region_display_names_and_arm_id_case_do_not_count_as_differences():
    result = drift.compare(_cluster(), _live(), WHERE)
    assert result.ok and result.recovery == []


def test_a_compute_of_another_type_under_the_name_is_reported():
    result = drift.compare(_cluster(), _live(type="computeinstance"), WHERE)
    assert result.state == "wrong-type"
    assert "is a computeinstance, not an AmlCompute cluster" in result.problems[0]


def test_missing_cluster_recovery_refreshes_before_up():
    result = drift.compare(_cluster(), None, WHERE)
    assert result.state == "missing"
    assert result.recovery == [
        "1. pulumi refresh --stack prod --yes   (the state forgets it)",
        "2. pulumi up --stack prod   (creates it)",
        "3. python -m jobs check-deploy --stack prod",
    ]


def test_report_json_shape():
    outputs = StackOutputs.model_validate(
        {
            "subscription_id": "00000000-0000-0000-0000-000000000000",
            "resource_group": "rg-train",
            "workspace_name": "ws-llm",
            "workspace_region": "eastus2",
            "clusters": {"compute123": EXAMPLE_CLUSTER},
        }
    )
    report = drift.check(outputs, lambda name: None, lambda: [], WHERE)
    body = drift.to_json(report)
    assert set(body) == {
        "ok",
        "exit_code",
        "clusters",
        "mismatches",
        "extra_clusters",
        "sizes_offered",
        "notes",
    }
    assert body["ok"] is False and body["exit_code"] == 1 and body["clusters"][0]["state"] == "missing"
