"""private-network (mandatory, stack), with its advisory side private-network-cost and its Analyze-time
recorder private-network-inputs (both thin: the findings are private_network.findings). Each case one change
from a compliant stack, judged on what the engine sends (Analyze: inputs; AnalyzeStack: preview outputs and
property dependencies), in a first preview (unknowns) and once deployed.

Sources: how-to-managed-network.md, how-to-secure-training-vnet.md, how-to-create-attach-compute-cluster.md
(no cross-region cluster for a private-endpoint workspace)."""

from __future__ import annotations

from typing import Any

import pytest

from policies import private_network, private_network_cost, private_network_inputs, registry
from preflight.wire import UNKNOWN

from .policies_helpers import (
    COMPUTE,
    STORAGE,
    SUB,
    SUBNET,
    WORKSPACE,
    cluster,
    resource_args,
    stack_resource,
    workspace,
)

RG_ID = f"{SUB}/resourceGroups/rg-train"
P = "properties__properties__"


@pytest.fixture(autouse=True)
def fresh_pack_process():
    """Each test is one preview in a new pack process: nothing recorded by an earlier Analyze."""
    private_network._MODES.clear()
    private_network._AZURE_NAMES.clear()


# private-network: a workspace, its endpoints and clusters, as AnalyzeStack receives them.
MANAGED = {"managedNetwork": {"isolationMode": "AllowOnlyApprovedOutbound"}}


def ws(deployed: bool = False, **overrides: Any):
    """The workspace as AnalyzeStack gets it; `verdicts` first Analyzes its inputs, as the engine does."""
    props = workspace(**overrides)
    resource = stack_resource(WORKSPACE, "ws-llm-mlw", props, deployed=deployed)
    resource.inputs = props  # type: ignore[attr-defined]
    return resource


def endpoint(target, deployed: bool = False):
    service = (
        f"{RG_ID}/providers/Microsoft.MachineLearningServices/workspaces/ws-llm" if deployed else UNKNOWN
    )
    props = {
        "privateEndpointName": "pe-ws-llm-amlworkspace",
        "resourceGroupName": "rg-train",
        "subnet": {"id": SUBNET},
        "privateLinkServiceConnections": [
            {"name": "pe", "privateLinkServiceId": service, "groupIds": ["amlworkspace"]}
        ],
    }
    deps = {"privateLinkServiceConnections": [target]}  # the engine sends them in every preview
    return stack_resource(
        "azure-native:network:PrivateEndpoint", "ws-llm-pe-workspace", props, deps, deployed=deployed
    )


def node(home, **overrides: Any):
    props = cluster(**{P + "enableNodePublicIp": False, **overrides})
    return stack_resource(COMPUTE, "h100-x4", props, {"workspaceName": [home]})


def verdicts(resources: list, analyze: bool = True) -> tuple[list[str], list[str]]:
    """One preview: Analyze each workspace's inputs (private-network-inputs), then the stack policies."""
    private_network._MODES.clear()
    for r in resources:
        if analyze and hasattr(r, "inputs"):
            assert private_network_inputs.validate(resource_args(WORKSPACE, r.inputs, name=r.name), {}) == []
    mandatory, advisory = private_network.findings(resources, {})
    return [m for m, _ in mandatory], [m for m, _ in advisory]


def test_private_workspace_with_an_endpoint_passes_in_both_previews() -> None:
    first = ws()
    assert verdicts([first, endpoint(first)]) == ([], [])
    deployed = ws(deployed=True)
    assert verdicts([deployed, endpoint(deployed, deployed=True)]) == ([], [])


def test_a_managed_network_does_not_replace_the_workspace_private_endpoint() -> None:
    """how-to-managed-network.md: the managed network isolates outbound; inbound is your VNet's private
    endpoint. Disabled with a managed network and no endpoint: nobody reaches the data plane."""
    (message,), _ = verdicts([ws(**MANAGED)])
    assert message.startswith(
        "workspace 'ws-llm-mlw' has publicNetworkAccess Disabled but no private endpoint reaches it (its "
        "managed network isolates outbound traffic only): nobody can reach the workspace API"
    )
    home = ws(**MANAGED)
    assert verdicts([home, endpoint(home)]) == ([], [])


def test_private_workspace_without_endpoint_or_managed_network_fails() -> None:
    (message,), _ = verdicts([ws()])
    assert message.startswith(
        "workspace 'ws-llm-mlw' has publicNetworkAccess Disabled but no private endpoint"
    )


def test_an_endpoint_to_another_resource_does_not_count() -> None:
    other = stack_resource(STORAGE, "ws-llm-st", {"accountName": "stllm"})
    (message,), _ = verdicts([ws(), endpoint(other)])
    assert message.startswith(
        "workspace 'ws-llm-mlw' has publicNetworkAccess Disabled but no private endpoint"
    )


def test_public_workspace_needs_nothing() -> None:
    assert verdicts([ws(publicNetworkAccess="Enabled")]) == ([], [])


def test_nodes_without_public_ip_need_a_subnet_or_a_managed_network() -> None:
    public = ws(publicNetworkAccess="Enabled")
    (message,), _ = verdicts([public, node(public)])
    assert message.startswith("cluster h100-x4: node public IP is off but the cluster has no subnet")
    managed = ws(**MANAGED)
    assert verdicts([managed, endpoint(managed), node(managed)]) == ([], [])


def test_no_public_ip_nodes_in_your_vnet_need_a_workspace_private_endpoint() -> None:
    """how-to-secure-training-vnet.md: "You must use a workspace private endpoint for the compute resource to
    communicate with Azure Machine Learning services from the VNet"."""
    public = ws(publicNetworkAccess="Enabled")
    in_vnet = {P + "subnet": {"id": SUBNET}}
    (message,), _ = verdicts([public, node(public, **in_vnet)])
    assert message.startswith(
        "cluster h100-x4: node public IP is off in your virtual network, but no private endpoint reaches its "
        "workspace"
    )
    assert verdicts([public, endpoint(public), node(public, **in_vnet)]) == ([], [])
    assert verdicts([public, node(public, **{**in_vnet, P + "enableNodePublicIp": True})]) == ([], [])


def test_keyless_storage_needs_identity_datastores() -> None:
    storage = stack_resource(STORAGE, "ws-llm-st", {"accountName": "stllm", "allowSharedKeyAccess": False})
    home = stack_resource(
        WORKSPACE,
        "ws-llm-mlw",
        workspace(publicNetworkAccess="Enabled", systemDatastoresAuthMode="AccessKey"),
        {"storageAccount": [storage]},
    )
    (message,), _ = verdicts([storage, home])
    assert message.startswith("storage account 'ws-llm-st' has shared key access off")
    fixed = stack_resource(
        WORKSPACE,
        "ws-llm-mlw",
        workspace(publicNetworkAccess="Enabled", systemDatastoresAuthMode="Identity"),
        {"storageAccount": [storage]},
    )
    assert verdicts([storage, fixed]) == ([], [])


def test_fqdn_rules_are_advisory_and_locks_next_to_a_managed_network_mandatory() -> None:
    """how-to-managed-network.md: "Pricing" (the firewall) and "Limitations" ("Make sure there are no scope
    locks on the Azure Machine Learning resources and resource group")."""
    rules = {"pypi": {"type": "FQDN", "category": "UserDefined", "destination": "pypi.org"}}
    home = ws(managedNetwork={"isolationMode": "AllowOnlyApprovedOutbound", "outboundRules": rules})
    lock = stack_resource(
        "azure-native:authorization:ManagementLockByScope", "lock-st", {"level": "CanNotDelete"}
    )
    mandatory, advisory = verdicts([home, endpoint(home), lock])
    assert mandatory == [
        "lock 'lock-st' in a stack whose workspace 'ws-llm-mlw' has a managed network: Azure ML asks for no "
        "scope locks on its resources and resource group, since internal operations of the managed network "
        "might be blocked (how-to-managed-network.md, Limitations). Fix: remove the lock (azml-gpu:locks: "
        "false; unset flags are off with a managed network)."
    ]
    (fqdn,) = advisory
    assert fqdn.startswith(
        "workspace 'ws-llm-mlw': FQDN outbound rules (pypi) make Azure deploy an Azure Firewall"
    )
    plain = ws(publicNetworkAccess="Enabled")
    assert verdicts([plain, lock]) == ([], [])  # no managed network: the lock is not this policy's


def test_unknown_managed_network_is_reported_not_passed() -> None:
    home = ws(managedNetwork=UNKNOWN)
    (message,), _ = verdicts([home, endpoint(home), node(home)], analyze=False)
    assert (
        message == "cluster h100-x4: cannot decide during preview: its workspace's managedNetwork is unknown"
    )


def test_an_absent_managed_network_is_known_from_the_inputs() -> None:
    """In a first preview an output the inputs do not set is unknown: without the Analyze record the policy
    could not tell "no managed network" from "not known yet", and says so."""
    public = ws(publicNetworkAccess="Enabled")
    (message,), _ = verdicts([public, node(public)])
    assert message.startswith("cluster h100-x4: node public IP is off but the cluster has no subnet")
    (message,), _ = verdicts([public, node(public)], analyze=False)
    assert (
        message == "cluster h100-x4: cannot decide during preview: its workspace's managedNetwork is unknown"
    )


def test_an_endpoint_with_a_literal_workspace_id_counts() -> None:
    home = ws(deployed=True)
    props = {
        "privateEndpointName": "pe",
        "resourceGroupName": "rg-train",
        "privateLinkServiceConnections": [
            {
                "privateLinkServiceId": f"{RG_ID}/providers/Microsoft.MachineLearningServices/workspaces/"
                "WS-LLM-MLW"
            }
        ],
    }
    literal = stack_resource("azure-native:network:PrivateEndpoint", "pe", props, deployed=True)
    assert verdicts([home, literal]) == ([], [])


# --- external endpoints, cross-region next to a private endpoint --------------------------------------


def analyzed_workspace(**overrides: Any):
    """A workspace as AnalyzeStack sees it, after private-network-inputs recorded its inputs at Analyze."""
    props = workspace(**overrides)
    assert private_network_inputs.validate(resource_args(WORKSPACE, props, name="ws-llm-mlw"), {}) == []
    return stack_resource(WORKSPACE, "ws-llm-mlw", props)


def public_node(home, **overrides: Any):
    """The happy-path cluster (node public IP on) of workspace `home`."""
    return stack_resource(COMPUTE, "h100-x4", cluster(**overrides), {"workspaceName": [home]})


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
    away = public_node(home, properties__computeLocation="westus3")
    (v,) = private_network.validate([home, away], config)
    assert v.message.startswith(
        "cluster h100-x4 runs in westus3 but its workspace 'ws-llm-mlw' is in eastus and has a private "
        "endpoint"
    )
    assert private_network.validate([home, away], {}) == []  # no endpoint: cross-region-compute's advisory
    assert private_network.validate([home, public_node(home)], config) == []


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
    away = public_node(home, properties__computeLocation="westus3")
    (v,) = private_network.validate([home, other, away], config)
    assert v.urn == away.urn


def test_the_mandatory_messages_in_full() -> None:
    assert verdicts([ws()]) == (
        [
            "workspace 'ws-llm-mlw' has publicNetworkAccess Disabled but no private endpoint reaches it: "
            "nobody can reach the workspace API or its data plane, and jobs can't be submitted. Fix: add "
            "network.private_endpoints (targets including workspace), name the workspace in "
            "private-network.external_endpoints with the reason if its endpoint is created outside the "
            "stack, or set public_network_access: Enabled."
        ],
        [],
    )
    public = ws(publicNetworkAccess="Enabled")
    assert verdicts([public, node(public)]) == (
        [
            "cluster h100-x4: node public IP is off but the cluster has no subnet and its workspace has no "
            "managed network: the nodes have no route to the workspace and jobs never start. Fix: set "
            "subnet_id (subnet.id), add network.managed (the workspace's managedNetwork), or set "
            "node_public_ip "
            "(enableNodePublicIp): true."
        ],
        [],
    )
    assert verdicts([public, node(public, **{P + "subnet": {"id": SUBNET}})]) == (
        [
            "cluster h100-x4: node public IP is off in your virtual network, but no private endpoint "
            "reaches its workspace: no-public-IP nodes reach Azure ML through the workspace's private "
            "endpoint (how-to-secure-training-vnet.md), so they never join. Fix: add "
            "network.private_endpoints (or name the workspace in private-network.external_endpoints), or "
            "set node_public_ip: true."
        ],
        [],
    )


def test_private_network_cost_reports_the_advisories_on_the_workspace() -> None:
    """private-network-cost is the advisory side of the same findings; private-network keeps the mandatory
    ones (none here)."""
    rules = {"pypi": {"type": "FQDN", "category": "UserDefined", "destination": "pypi.org"}}
    home = ws(managedNetwork={"isolationMode": "AllowOnlyApprovedOutbound", "outboundRules": rules})
    assert private_network_inputs.validate(resource_args(WORKSPACE, home.inputs, name=home.name), {}) == []
    stack = [home, endpoint(home)]
    assert [(v.message, v.urn) for v in private_network_cost.validate(stack, {})] == [
        (
            "workspace 'ws-llm-mlw': FQDN outbound rules (pypi) make Azure deploy an Azure Firewall in the "
            "managed network, billed per hour and per GB (Standard unless firewall_sku: Basic). Fix: prefer "
            "private-endpoint or service-tag rules, or accept the cost.",
            home.urn,
        )
    ]
    assert private_network.validate(stack, {}) == []
