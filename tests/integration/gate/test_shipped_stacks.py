"""The stacks this repository ships (every Pulumi.<stack>.yaml) pass the real gate with their own policy
config (policies/config/<stack>.json), in both evaluations; prod's report in detail."""

from __future__ import annotations

import pytest

from tests.integration.gate.runner import ROOT, Gates, Outcome
from tests.integration.gate.specs import SHIPPED, STACKS

COMPUTE = "azure-native:machinelearningservices:Compute"


@pytest.fixture(scope="module")
def runs(gates: Gates) -> dict[str, Outcome]:
    return {o.name: o for o in gates.run(*SHIPPED.values())}


def test_the_shipped_stacks_are_the_repositorys_stack_files() -> None:
    assert {"dev", "prod", "prod-westus3", "capacity"} <= set(STACKS)


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_stack_passes_with_its_own_policy_config(runs: dict[str, Outcome], stack: str) -> None:
    """A stack file added without its policy config, or a config left behind by a policy change, fails
    here."""
    outcome = runs[stack]
    assert (ROOT / "policies" / "config" / f"{stack}.json").is_file()
    assert outcome.errors == [] and outcome.exit_code == 0, [
        v for v in outcome.document["violations"] if v["enforcement"] != "advisory"
    ]
    document = outcome.document
    assert document["policy_config"] == {
        "file": str(ROOT / "policies" / "config" / f"{stack}.json"),
        "notes": [],
    }
    first, update = document["evaluations"]
    assert (first["kind"], first["state"], list(first["steps"])) == (
        "first-deploy",
        "none (a new stack)",
        ["create"],
    )
    assert update["state"].startswith("the stack deployed as declared (pulumi up, ")
    assert update["steps"] == {"same": first["steps"]["create"]}
    assert (update["replacements"], update["deletes"]) == ([], [])
    assert document["summary"]["evaluations"] == {"first-deploy": 0, "update": 0}
    assert document["engine"]["version"] and document["engine"]["path"].endswith("pulumi")


def test_prod_report(runs: dict[str, Outcome]) -> None:
    document = runs["prod"].document
    assert document["environment"] == "production"  # Pulumi.prod.yaml's azml-gpu:environment
    assert set(document) == {
        "stack",
        "environment",
        "engine",
        "policy_config",
        "resources",
        "evaluations",
        "violations",
        "permissions",
        "resource_check",
        "summary",
    }
    assert document["stack"] == "prod"
    # Every azure-native type is in the spec check's coverage, checked with its body, nothing left unchecked.
    coverage = {row["type"]: row for row in document["resource_check"]["coverage"]}
    assert document["resource_check"]["problems"] == []
    assert [(t, r["not_checked"]) for t, r in coverage.items() if not r["checked"] or r["not_checked"]] == []
    assert coverage["azure-native:network:PrivateEndpoint"]["spec_note"].startswith("spec read at 2024-07-01")
    # One advisory by design: the system-assigned workspace identity.
    assert [(v["policy"], v["enforcement"], v["urn"].split("::")[-1]) for v in document["violations"]] == [
        ("workspace-user-assigned-identity", "advisory", "ws-llm-mlw")
    ]
    first, update = document["evaluations"]
    assert (first["steps"], update["steps"]) == ({"create": 35}, {"same": 35})
    # the engine's unknowns: the first deploy's values from resources not created yet; none in an update
    assert first["unknown_inputs"] > 0 and update["unknown_inputs"] == 0
    # prod declares no locks (a managed network asks for none); its role assignments need more than
    # Contributor
    permissions = document["permissions"]
    assert [p for p in permissions if p["action"].startswith("Microsoft.Authorization/locks/")] == []
    assert {
        "action": "Microsoft.MachineLearningServices/workspaces/computes/write",
        "granted_by": "Contributor",
        "why": "create or update a100-spot, h100-x4",
    } in permissions
    assert {p["granted_by"] for p in permissions if "/roleAssignments/" in p["action"]} == {
        "Owner, User Access Administrator or Role Based Access Control Administrator"
    }
    assert {p["action"]: p["granted_by"] for p in permissions if p["action"].endswith("/join/action")} == {
        "Microsoft.Network/virtualNetworks/subnets/join/action": "Network Contributor",
        "Microsoft.Network/privateDnsZones/join/action": "Private DNS Zone Contributor",
    }
    summary = document["summary"]
    assert summary["exit_code"] == 0
    assert summary["resources_by_type"][COMPUTE] == 2
    assert [(q["region"], q["label"], q["reserved_vcpus"], q["quota"]) for q in summary["quota"]] == [
        ("eastus", "standardNDSH100v5Family", 384, 384),
        ("eastus", "total regional dedicated vCPUs", 384, 500),
        ("eastus", "low-priority vCPUs (all families)", 24, 100),
    ]
    cluster = next(r for r in document["resources"] if r["name"] == "h100-x4" and r["type"] == COMPUTE)
    assert set(cluster) == {"urn", "type", "name", "parent", "op", "inputs", "options"}
    assert cluster["op"] == "same" and cluster["inputs"]["azureApiVersion"] == "2025-12-01"
    assert cluster["parent"].endswith("azml-gpu:components:GpuCluster::h100-x4")
    assert cluster["inputs"]["properties"]["properties"]["vmSize"] == "Standard_ND96isr_H100_v5"
    # Retained: the before-delete hook deletes it with underlyingResourceAction=Delete (components/
    # compute_delete.py); no protect or taint.
    assert cluster["options"] == {"retainOnDelete": True}


def test_prod_state_as_pulumi_up_deployed_it(runs: dict[str, Outcome]) -> None:
    """The exported state is the engine's own (`pulumi stack export --show-secrets`): ARM ids from the
    offline provider, the component's replaceOnChanges, the property dependencies."""
    state = runs["prod"].exported_state
    # Version 4 with the "hooks" feature: the clusters carry a before-delete hook (pulumi
    # pkg/resource/stack/deployment.go `hooksFeature`; components/compute_delete.py).
    assert state is not None and (state["version"], state["features"]) == (4, ["hooks"])
    resources = state["deployment"]["resources"]
    compute = next(r for r in resources if r["urn"].endswith("::h100-x4") and r["type"] == COMPUTE)
    assert compute["id"] == (
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-train/providers/"
        "Microsoft.MachineLearningServices/workspaces/ws-llm/computes/h100-x4"
    )
    assert "properties.properties.vmSize" in compute["replaceOnChanges"]
    assert compute["propertyDependencies"]["workspaceName"] == [
        "urn:pulumi:prod::azml-gpu::azml-gpu:components:Workspace$azure-native:machinelearningservices:"
        "Workspace::ws-llm-mlw"
    ]
    assert runs["prod"].outputs["workspace_name"] == "ws-llm"
