"""The update evaluation through the real gate: `pulumi preview` against a stack as `pulumi up` deployed it
(the shipped stack's own run exported its state, which is the `--state` here). What the change replaces
(old -> new values, delete before replace, the replacements it cascades to) and deletes, gated by the gate's
own checks (cluster-replacement, managed-network-isolation); duplicate URNs traced to the config entries."""

from __future__ import annotations

import json
import re

import pytest

from preflight.wire import UNKNOWN
from tests.integration.gate.runner import Gates, Outcome, Spec
from tests.integration.gate.specs import (
    IMMUTABLE,
    LOCKED_RESIZE,
    MOVED_REGION,
    PROD,
    RENAMED_GROUP,
    RENAMED_WORKSPACE,
    SIZE_ACKNOWLEDGED,
    recorded,
)

SIZE_CHANGE = recorded("prod-size-change")
CLUSTER_REMOVED = recorded("prod-cluster-removed")
LOOSER_NETWORK = recorded("westus3-looser-network")
COMPUTE = "azure-native:machinelearningservices:Compute"
RULE = (
    ": the cluster is deleted with every job running on it, and Azure fixes these settings at creation. Fix: "
    "revert the change, or schedule it and add '{cluster}' to cluster-replacement.acknowledged in the policy "
    "config; after `pulumi up`, run `python -m jobs check-deploy` (a cluster recreated under the same name "
    "has "
    "come back with its old size: docs/azure-behaviour.md)."
)
RUNS = [
    SIZE_CHANGE,
    SIZE_ACKNOWLEDGED,
    CLUSTER_REMOVED,
    LOOSER_NETWORK,
    RENAMED_WORKSPACE,
    RENAMED_GROUP,
    MOVED_REGION,
    IMMUTABLE,
    LOCKED_RESIZE,
]


@pytest.fixture(scope="module")
def runs(gates: Gates) -> dict[str, Outcome]:
    done = {o.name: o for o in gates.run(*RUNS)}
    # A state with h100-x4 tainted (`pulumi state taint`): the engine replaces it whatever the change.
    state = json.loads(gates.one(PROD).state_file.read_text())
    for r in state["deployment"]["resources"]:
        if r["type"] == COMPUTE and r["urn"].endswith("::h100-x4"):
            r["taint"] = True
    tainted = Spec("prod-tainted-cluster", "prod", state_text=json.dumps(state))
    done[tainted.name] = gates.one(tainted)
    return done


def update(outcome: Outcome) -> dict:
    assert outcome.errors == [], outcome.errors
    return outcome.evaluation("update")


def blocking(evaluation: dict) -> list[tuple[str, str]]:
    return [
        (v["policy"], v["urn"].split("::")[-1])
        for v in evaluation["violations"]
        if v["enforcement"] == "mandatory"
    ]


def test_a_new_vm_size_replaces_the_cluster_and_its_role_assignment(runs: dict[str, Outcome]) -> None:
    """vmSize is in the component's replaceOnChanges: the engine deletes h100-x4 first (a fixed name), and the
    role assignment of its new identity is replaced with it (principalId is force-new); prod's policy config
    makes the cluster's replacement mandatory."""
    outcome = runs[SIZE_CHANGE.name]
    assert outcome.exit_code == 1
    evaluation = update(outcome)
    assert evaluation["state"].endswith("/prod/exported-state.json")
    rows = [(r["name"], r["fields"], r["delete_before_replace"]) for r in evaluation["replacements"]]
    assert rows == [
        ("h100-x4", ["properties.properties.vmSize"], True),
        ("ws-llm-access-h100-x4-st-blob-contributor", ["principalId"], True),
    ]
    cluster, grant = evaluation["replacements"]
    assert cluster["changes"] == [
        {
            "field": "properties.properties.vmSize",
            "old": "Standard_ND96isr_H100_v5",
            "new": "Standard_ND96isr_H200_v5",
        }
    ]
    # the deployed identity's principal, and the new one: known only once the new cluster exists
    (change,) = grant["changes"]
    assert re.fullmatch(r"[0-9a-f-]{36}", change["old"]) and change["new"] == UNKNOWN
    assert evaluation["replacements"][0]["summary"] == (
        "h100-x4 will be deleted and recreated (vmSize: Standard_ND96isr_H100_v5 -> Standard_ND96isr_H200_v5)"
    )
    assert blocking(evaluation) == [("cluster-replacement", "h100-x4")]
    (gated,) = [v for v in evaluation["violations"] if v["policy"] == "cluster-replacement"]
    assert gated["message"] == evaluation["replacements"][0]["summary"] + RULE.format(cluster="h100-x4")
    assert outcome.document["evaluations"][0]["exit_code"] == 0  # a new stack with H200s replaces nothing
    assert (
        "  replace: h100-x4 will be deleted and recreated (vmSize: Standard_ND96isr_H100_v5 -> "
        "Standard_ND96isr_H200_v5)\n"
    ) in outcome.text


def test_an_acknowledged_replacement_passes(runs: dict[str, Outcome]) -> None:
    """cluster-replacement.acknowledged lists h100-x4: the same change passes (the H200 pool has no quota in
    prod's config: an advisory only)."""
    outcome = runs[SIZE_ACKNOWLEDGED.name]
    evaluation = update(outcome)
    assert outcome.exit_code == 0
    assert [r["name"] for r in evaluation["replacements"]][0] == "h100-x4"
    assert "cluster-replacement" not in {v["policy"] for v in evaluation["violations"]}
    assert ("quota-reservation-unknown", "advisory") in {
        (v["policy"], v["enforcement"]) for v in evaluation["violations"]
    }


def test_a_cluster_removed_from_the_config_is_gated_like_a_replaced_one(runs: dict[str, Outcome]) -> None:
    outcome = runs[CLUSTER_REMOVED.name]
    assert outcome.exit_code == 1
    evaluation = update(outcome)
    # custom resources only: the compute and its identity's role assignment (not the component)
    assert [u.split("::")[-1] for u in evaluation["deletes"]] == [
        "a100-spot",
        "ws-llm-access-a100-spot-st-blob-contributor",
    ]
    assert evaluation["replacements"] == []
    (gated,) = [v for v in evaluation["violations"] if v["policy"] == "cluster-replacement"]
    assert gated["enforcement"] == "mandatory"
    assert gated["urn"].endswith(f"${COMPUTE}::a100-spot")
    assert gated["message"] == "a100-spot will be deleted" + RULE.format(cluster="a100-spot")
    assert "  delete: a100-spot (azure-native:machinelearningservices:Compute)\n" in outcome.text


def test_renaming_the_workspace_replaces_the_clusters(runs: dict[str, Outcome]) -> None:
    """The clusters' workspaceName comes from the workspace, which the new name replaces: unknown in the
    preview, and a path parameter, so the provider replaces each cluster (an unknown value is a change)."""
    outcome = runs[RENAMED_WORKSPACE.name]
    assert outcome.exit_code == 1
    evaluation = update(outcome)
    clusters = [r for r in evaluation["replacements"] if r["type"] == COMPUTE]
    assert [(r["name"], r["fields"], r["delete_before_replace"]) for r in clusters] == [
        ("a100-spot", ["resourceGroupName", "workspaceName"], True),
        ("h100-x4", ["resourceGroupName", "workspaceName"], True),
    ]
    assert clusters[1]["summary"] == (
        "h100-x4 will be deleted and recreated (resourceGroupName: rg-train -> (known after the update); "
        "workspaceName: ws-llm -> (known after the update))"
    )
    assert blocking(evaluation) == [("cluster-replacement", "a100-spot"), ("cluster-replacement", "h100-x4")]
    # the old workspace's resources (named after it) are deleted
    assert any(u.endswith("::ws-llm-mlw") for u in evaluation["deletes"])


def test_renaming_the_workspace_deletes_the_role_assignments_of_the_old_name(
    runs: dict[str, Outcome],
) -> None:
    """The clusters' role assignments are named after the workspace: the renamed ones are new resources, and
    the engine deletes the old ones first (`delete-replaced`, then `remove-pending-replace`: its plain display
    says `delete original`), before replacing the clusters they depend on. Nothing recreates them."""
    evaluation = update(runs[RENAMED_WORKSPACE.name])
    old = {"ws-llm-access-a100-spot-st-blob-contributor", "ws-llm-access-h100-x4-st-blob-contributor"}
    assert old <= {u.split("::")[-1] for u in evaluation["deletes"]}
    assert not old & {r["name"] for r in evaluation["replacements"]}


def test_renaming_the_resource_group_replaces_everything_in_it(runs: dict[str, Outcome]) -> None:
    outcome = runs[RENAMED_GROUP.name]
    assert outcome.exit_code == 1
    evaluation = update(outcome)
    rows = {r["name"]: r for r in evaluation["replacements"]}
    assert rows["ws-llm-rg"]["fields"] == ["resourceGroupName"]
    assert rows["ws-llm-rg"]["changes"] == [
        {"field": "resourceGroupName", "old": "rg-train", "new": "rg-train2"}
    ]
    # a cascade: each resource in the group has the group's name (unknown until it is recreated) in its id
    for name in (
        "ws-llm-mlw",
        "ws-llm-st",
        "ws-llm-kv",
        "ws-llm-cr",
        "ws-llm-pe-workspace",
        "h100-x4",
        "a100-spot",
    ):
        assert "resourceGroupName" in rows[name]["fields"], name
    assert rows["ws-llm-access-h100-x4-st-blob-contributor"]["fields"] == ["principalId", "scope"]
    assert evaluation["deletes"] == []
    assert blocking(evaluation) == [("cluster-replacement", "a100-spot"), ("cluster-replacement", "h100-x4")]


def test_a_region_change_is_a_replacement_not_a_cross_region_cluster(runs: dict[str, Outcome]) -> None:
    """The resource group's location is force-new: everything under it is replaced in the new region, so no
    cluster is ever outside its workspace's region."""
    evaluation = update(runs[MOVED_REGION.name])
    rows = {r["name"]: r for r in evaluation["replacements"]}
    assert rows["ws-llm-rg"]["changes"] == [{"field": "location", "old": "eastus", "new": "westus3"}]
    assert {"ws-llm-mlw", "h100-x4", "a100-spot"} <= set(rows)
    assert [v for v in evaluation["violations"] if v["policy"] == "cross-region-compute"] == []


def test_immutable_settings_replace_and_scale_settings_update_in_place(runs: dict[str, Outcome]) -> None:
    """a100-spot's size and tier are fixed at creation (replaceOnChanges): replaced, only those fields named;
    h100-x4's node counts and idle timer update in place: no replacement, no finding."""
    outcome = runs[IMMUTABLE.name]
    evaluation = update(outcome)
    clusters = [r for r in evaluation["replacements"] if r["type"] == COMPUTE]
    assert [(r["name"], r["fields"]) for r in clusters] == [
        ("a100-spot", ["properties.properties.vmPriority", "properties.properties.vmSize"])
    ]
    assert clusters[0]["summary"] == (
        "a100-spot will be deleted and recreated (vmPriority: LowPriority -> Dedicated; vmSize: "
        "Standard_NC24ads_A100_v4 -> Standard_NC48ads_A100_v4)"
    )
    ops = {r["name"]: r["op"] for r in outcome.document["resources"] if r["type"] == COMPUTE}
    assert ops == {"a100-spot": "replace", "h100-x4": "update"}
    assert blocking(evaluation) == [("cluster-replacement", "a100-spot")]


def test_a_tainted_cluster_is_replaced_and_gated(runs: dict[str, Outcome]) -> None:
    """A cluster tainted in the state (`pulumi state taint`) is replaced with no change of input: the engine
    names `id` as the replace key."""
    outcome = runs["prod-tainted-cluster"]
    evaluation = update(outcome)
    assert [(r["name"], r["fields"]) for r in evaluation["replacements"] if r["type"] == COMPUTE] == [
        ("h100-x4", ["id"])
    ]
    assert blocking(evaluation) == [("cluster-replacement", "h100-x4")]
    assert outcome.exit_code == 1


def test_an_acknowledged_replacement_blocked_by_a_lock_fails(runs: dict[str, Outcome]) -> None:
    """A lock applies to every resource below its scope, so the deployed workspace lock blocks deleting the
    acknowledged cluster: `pulumi up` would fail at the delete (the capacity stack; prod has no locks)."""
    outcome = runs[LOCKED_RESIZE.name]
    assert outcome.exit_code == 1
    evaluation = update(outcome)
    (gated,) = [v for v in evaluation["violations"] if v["policy"] == "cluster-replacement"]
    workspace = (
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-train-cap/providers/"
        "Microsoft.MachineLearningServices/workspaces/ws-llm-cap"
    )
    assert gated["enforcement"] == "mandatory"
    assert gated["message"].startswith(
        "cluster-replacement.acknowledged: 'a100-wus3' is acknowledged, but the CanNotDelete lock "
    )
    assert (
        f"' on {workspace} blocks deleting it (a lock applies to every resource below its scope)"
        in gated["message"]
    )


def test_loosening_the_managed_network_of_the_deployed_workspace_fails_the_update(
    runs: dict[str, Outcome],
) -> None:
    """Azure only tightens a workspace's managed network: prod-westus3 deployed with
    AllowOnlyApprovedOutbound, AllowInternetOutbound is mandatory in the update; the first deploy of that
    config loosens nothing."""
    outcome = runs[LOOSER_NETWORK.name]
    assert outcome.exit_code == 1
    first, evaluation = outcome.document["evaluations"]
    assert [v for v in first["violations"] if v["policy"] == "managed-network-isolation"] == [] and first[
        "exit_code"
    ] == 0
    found = [v for v in evaluation["violations"] if v["policy"] == "managed-network-isolation"]
    assert [(v["enforcement"], v["urn"].split("::")[-1]) for v in found] == [("mandatory", "ws-llm-wus3-mlw")]
    assert found[0]["message"].startswith(
        "workspace 'ws-llm-wus3-mlw': managedNetwork.isolationMode AllowOnlyApprovedOutbound -> "
        "AllowInternetOutbound"
    )
