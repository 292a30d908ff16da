"""compute-in-virtual-network (advisory, stack), the counterpart of PSRule for Azure's Azure.ML.ComputeVnet
(Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.ML.Rule.yaml: `properties.properties.subnet.id`
hasValue); a managed network's clusters count as in a virtual network (how-to-managed-network.md)."""

from __future__ import annotations

from typing import Any

import pytest

from policies import compute_in_virtual_network, private_network, private_network_inputs

from .policies_helpers import (
    COMPUTE,
    SUBNET,
    WORKSPACE,
    P,
    cluster,
    resource_args,
    stack_resource,
    workspace,
)

MANAGED = {"managedNetwork": {"isolationMode": "AllowOnlyApprovedOutbound"}}


def analyzed_workspace(**overrides: Any):
    """A workspace as AnalyzeStack sees it, after private-network-inputs recorded its inputs at Analyze."""
    props = workspace(**overrides)
    assert private_network_inputs.validate(resource_args(WORKSPACE, props, name="ws-llm-mlw"), {}) == []
    return stack_resource(WORKSPACE, "ws-llm-mlw", props)


@pytest.fixture(autouse=True)
def fresh_pack_process():
    private_network._MODES.clear()
    private_network._AZURE_NAMES.clear()


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


def test_the_message_in_full() -> None:
    home = analyzed_workspace(publicNetworkAccess="Enabled")
    cluster_ = node(home)
    assert [(v.message, v.urn) for v in compute_in_virtual_network.validate([home, cluster_], {})] == [
        (
            "cluster h100-x4 is in no virtual network (no subnet, and its workspace has no managed "
            "network): its nodes take public IPs and their traffic crosses the internet (PSRule "
            "Azure.ML.ComputeVnet). Fix: add network.managed or a subnet_id, or add 'h100-x4' to "
            "compute-in-virtual-network.acknowledged if the cluster is public on purpose (a cross-region "
            "cluster can't be in either).",
            cluster_.urn,
        )
    ]
