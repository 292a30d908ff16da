"""Counterparts of PSRule for Azure's Machine Learning rules, the lock decision's policy, and
private-network's escape for endpoints managed outside the stack. Each case one change from a happy path.

Sources: Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.ML.Rule.yaml (Azure.ML.ComputeVnet:
`properties.properties.subnet.id` hasValue; Azure.ML.UserManagedIdentity: identity.type UserAssigned,
identity.userAssignedIdentities, properties.primaryUserAssignedIdentity); lock-resources.md ("A cannot-delete
lock on a resource or resource group prevents the deletion of Azure RBAC assignments");
how-to-create-attach-compute-cluster.md (no cross-region cluster for a private-endpoint workspace).
"""

from __future__ import annotations

from typing import Any

import pytest

from policies import (
    compute_in_virtual_network,
    no_locks_on_granted_resources,
    private_network,
    private_network_inputs,
    registry,
    workspace_user_assigned_identity,
)

from .policies_helpers import (
    COMPUTE,
    LOCK_BY_SCOPE,
    STORAGE,
    SUBNET,
    VAULT,
    WORKSPACE,
    P,
    cluster,
    resource_args,
    stack_resource,
    verdict,
    workspace,
)

ASSIGNMENT = "azure-native:authorization:RoleAssignment"
MANAGED = {"managedNetwork": {"isolationMode": "AllowOnlyApprovedOutbound"}}
UAI = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-id/providers/"
    "Microsoft.ManagedIdentity/userAssignedIdentities/id-ws"
)


def analyzed_workspace(**overrides: Any):
    """A workspace as AnalyzeStack sees it, after private-network-inputs recorded its inputs at Analyze."""
    props = workspace(**overrides)
    assert private_network_inputs.validate(resource_args(WORKSPACE, props, name="ws-llm-mlw"), {}) == []
    return stack_resource(WORKSPACE, "ws-llm-mlw", props)


@pytest.fixture(autouse=True)
def fresh_pack_process():
    private_network._MODES.clear()
    private_network._AZURE_NAMES.clear()


# --- workspace-user-assigned-identity (Azure.ML.UserManagedIdentity) ------------------------------------


def test_a_user_assigned_primary_identity_passes() -> None:
    props = workspace(
        identity={"type": "UserAssigned", "userAssignedIdentities": {UAI: {}}},
        primaryUserAssignedIdentity=UAI,
    )
    assert verdict(workspace_user_assigned_identity, props, type_=WORKSPACE, name="ws") == []


@pytest.mark.parametrize(
    ("identity", "primary", "shown"),
    [
        ({"type": "SystemAssigned"}, None, "SystemAssigned, with no primaryUserAssignedIdentity"),
        (None, None, "not set (Azure's default: SystemAssigned), with no primaryUserAssignedIdentity"),
        (
            {"type": "SystemAssigned,UserAssigned", "userAssignedIdentities": {UAI: {}}},
            UAI,
            "SystemAssigned,UserAssigned:",
        ),
        (
            {"type": "UserAssigned", "userAssignedIdentities": {UAI: {}}},
            None,
            "with no primaryUserAssignedIdentity",
        ),
    ],
)
def test_anything_else_is_an_advisory_naming_the_option(identity: Any, primary: Any, shown: str) -> None:
    props = workspace(identity=identity, primaryUserAssignedIdentity=primary)
    (message,) = verdict(workspace_user_assigned_identity, props, type_=WORKSPACE, name="ws")
    assert shown in message
    assert "Azure.ML.UserManagedIdentity" in message and "identity.workspace_identity_id" in message


def test_other_resources_are_not_judged() -> None:
    assert verdict(workspace_user_assigned_identity, cluster()) == []


# --- compute-in-virtual-network (Azure.ML.ComputeVnet) ---------------------------------------------------


def node(home, **overrides: Any):
    return stack_resource(COMPUTE, "h100-x4", cluster(**overrides), {"workspaceName": [home]})


def test_a_public_cluster_is_an_advisory_unless_acknowledged() -> None:
    home = analyzed_workspace(publicNetworkAccess="Enabled")
    ((message, urn),) = [
        (v.message, v.urn) for v in compute_in_virtual_network.validate([home, node(home)], {})
    ]
    assert message.startswith(
        "cluster h100-x4 is in no virtual network (no subnet, and its workspace has no managed network)"
    )
    assert "Azure.ML.ComputeVnet" in message and urn.endswith("::h100-x4")
    ack = {"acknowledged": ["h100-x4"]}
    assert compute_in_virtual_network.validate([home, node(home)], ack) == []


def test_a_subnet_or_the_managed_network_counts_as_a_virtual_network() -> None:
    """PSRule reads the subnet only; a managed network's clusters are in its VNet (how-to-managed-network)."""
    public = analyzed_workspace(publicNetworkAccess="Enabled")
    assert (
        compute_in_virtual_network.validate([public, node(public, **{P + "subnet": {"id": SUBNET}})], {})
        == []
    )
    managed = analyzed_workspace(**MANAGED)
    assert compute_in_virtual_network.validate([managed, node(managed)], {}) == []


def test_a_cluster_without_a_workspace_dependency_belongs_to_the_only_workspace() -> None:
    """A Compute whose workspaceName is a literal (no property dependency) is judged with the stack's only
    workspace, as cross-region-compute does; with two workspaces the dependency decides."""
    managed = analyzed_workspace(**MANAGED)
    orphan = stack_resource(COMPUTE, "h100-x4", cluster())
    assert compute_in_virtual_network.validate([managed, orphan], {}) == []
    public = stack_resource(
        WORKSPACE, "ws-other-mlw", workspace(workspaceName="ws-other", publicNetworkAccess="Enabled")
    )
    (v,) = compute_in_virtual_network.validate([managed, public, orphan], {})  # two workspaces: no guess
    assert v.message.startswith("cluster h100-x4 is in no virtual network")
    assert compute_in_virtual_network.validate([managed, public, node(managed)], {}) == []


def test_the_policy_is_advisory_with_its_config() -> None:
    assert registry.BY_NAME["compute-in-virtual-network"].ENFORCEMENT.value == "advisory"
    assert registry.BY_NAME["workspace-user-assigned-identity"].ENFORCEMENT.value == "advisory"
    assert registry.BY_NAME["no-locks-on-granted-resources"].ENFORCEMENT.value == "mandatory"


# --- no-locks-on-granted-resources ------------------------------------------------------------------------


def _storage():
    return stack_resource(STORAGE, "ws-llm-st", {"accountName": "stllm"})


def _lock(target):
    return stack_resource(LOCK_BY_SCOPE, "lock-st", {"level": "CanNotDelete"}, {"scope": [target]})


def _grant(target, name: str = "ws-llm-access-h100-x4-st-blob-contributor"):
    return stack_resource(ASSIGNMENT, name, {"principalType": "ServicePrincipal"}, {"scope": [target]})


def test_a_lock_on_a_granted_resource_is_mandatory() -> None:
    storage = _storage()
    lock = _lock(storage)
    (found,) = no_locks_on_granted_resources.validate([storage, lock, _grant(storage)], {})
    assert found.urn == lock.urn
    assert found.message == (
        "CanNotDelete lock 'lock-st' on StorageAccount ws-llm-st, which carries 1 role assignment(s) of "
        "this stack (ws-llm-access-h100-x4-st-blob-contributor): a lock blocks deleting the role "
        "assignments on the resource it locks (lock-resources.md), so replacing a cluster, removing a "
        "grant or `pulumi destroy` fails half-way. Fix: don't lock that resource (azml-gpu:locks; unset "
        "flags skip granted resources), or unlock, change and relock by hand (docs/azure-behaviour.md "
        "section 17)."
    )


def test_locks_and_grants_on_different_resources_pass() -> None:
    storage, vault = _storage(), stack_resource(VAULT, "ws-llm-kv", {"vaultName": "kv"})
    assert no_locks_on_granted_resources.validate([storage, vault, _lock(storage), _grant(vault)], {}) == []
    assert no_locks_on_granted_resources.validate([storage, _lock(storage)], {}) == []


@pytest.mark.parametrize(
    ("count", "shown"),
    [(3, "(g0, g1, g2)"), (4, "(g0, g1, g2 and 1 more)")],
)
def test_up_to_three_grants_are_named_and_the_rest_counted(count: int, shown: str) -> None:
    storage = _storage()
    grants = [_grant(storage, f"g{i}") for i in range(count)]
    (found,) = no_locks_on_granted_resources.validate([storage, _lock(storage), *grants], {})
    assert f"carries {count} role assignment(s) of this stack {shown}:" in found.message


def test_many_grants_are_counted_and_the_first_three_named() -> None:
    storage = _storage()
    grants = [_grant(storage, f"g{i}") for i in range(5)]
    (found,) = no_locks_on_granted_resources.validate([storage, _lock(storage), *grants], {})
    assert "carries 5 role assignment(s) of this stack (g0, g1, g2 and 2 more)" in found.message


# --- private-network: external endpoints, cross-region next to a private endpoint ----------------------


def test_an_external_endpoint_needs_the_workspace_named_with_a_reason() -> None:
    home = analyzed_workspace()
    config = {"external_endpoints": [{"workspace": "ws-llm", "reason": "hub network team (landing zone)"}]}
    assert private_network.validate([home], config) == []
    (v,) = private_network.validate(
        [home], {"external_endpoints": [{"workspace": "ws-other", "reason": "x"}]}
    )
    assert v.message.startswith(
        "workspace 'ws-llm-mlw' has publicNetworkAccess Disabled but no private endpoint"
    )
    (blank,) = private_network.validate(
        [home], {"external_endpoints": [{"workspace": "ws-llm", "reason": " "}]}
    )
    assert blank.urn == home.urn


def test_external_endpoint_config_problems() -> None:
    assert (
        private_network.config_problems({"external_endpoints": [{"workspace": "ws-llm", "reason": "hub"}]})
        == []
    )
    assert private_network.config_problems(
        {
            "external_endpoints": [
                {"workspace": "ws-llm", "reason": " "},
                {"workspace": "WS-LLM", "reason": "x"},
            ]
        }
    ) == [
        "private-network.external_endpoints[0].reason: blank; say who creates the workspace's private "
        "endpoint (e.g. 'hub network team, landing-zone policy')",
        "private-network.external_endpoints[1].workspace: 'WS-LLM' is listed twice; keep one entry per "
        "workspace",
    ]
    assert registry.config_problems("private-network", {"external_endpoints": []}) == []
    schema = private_network.CONFIG["external_endpoints"]["items"]
    assert schema["required"] == ["workspace", "reason"] and schema["additionalProperties"] is False


def test_a_cross_region_cluster_of_a_private_endpoint_workspace_is_mandatory() -> None:
    home = analyzed_workspace(publicNetworkAccess="Enabled")
    config = {"external_endpoints": [{"workspace": "ws-llm", "reason": "hub"}]}
    away = node(home, properties__computeLocation="westus3")
    (v,) = private_network.validate([home, away], config)
    assert v.message.startswith(
        "cluster h100-x4 runs in westus3 but its workspace 'ws-llm-mlw' is in eastus and has a private "
        "endpoint"
    )
    assert private_network.validate([home, away], {}) == []  # no endpoint: cross-region-compute's advisory
    assert private_network.validate([home, node(home)], config) == []


def test_a_cross_region_cluster_without_a_workspace_dependency_uses_the_only_workspace() -> None:
    """Like cross-region-compute: no property dependency, one workspace in the stack -> that workspace; with
    two, only the dependency names the cluster's workspace."""
    home = analyzed_workspace(publicNetworkAccess="Enabled")
    config = {"external_endpoints": [{"workspace": "ws-llm", "reason": "hub"}]}
    orphan = stack_resource(COMPUTE, "h100-x4", cluster(properties__computeLocation="westus3"))
    (v,) = private_network.validate([home, orphan], config)
    assert "runs in westus3 but its workspace 'ws-llm-mlw' is in eastus" in v.message
    other = stack_resource(
        WORKSPACE, "ws-other-mlw", workspace(workspaceName="ws-other", publicNetworkAccess="Enabled")
    )
    assert private_network.validate([home, other, orphan], config) == []  # two workspaces: no guess
    away = node(home, properties__computeLocation="westus3")
    (v,) = private_network.validate([home, other, away], config)
    assert v.urn == away.urn
