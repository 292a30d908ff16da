"""The workspace's managed network in stacks other than prod's (each a variant of Pulumi.prod.yaml changing
one key, run through the real program under Pulumi mocks): when the stack asks Azure to provision the
network with the workspace (`provisionNetworkNow`, how-to-managed-network.md: "creation of the managed
virtual network is deferred until a compute resource is created or provisioning is manually started"), and
what a Disabled isolation mode sends."""

from __future__ import annotations

import pytest
from components_helpers import ML_WORKSPACE, ns, one, variant

from preflight.program import run_program


def workspace_inputs(stack_configs, **managed):
    base = stack_configs["prod"]
    net = dict(ns(base, "network"))
    net["managed"] = {**net["managed"], **managed}
    changes = {"network": net}
    if managed.get("isolation_mode") == "Disabled":  # nodes without a public IP need a managed network
        changes["clusters"] = [dict(c, node_public_ip=True) for c in ns(base, "clusters")]
    result = run_program("prod", config=variant(base, **changes))
    assert result.ok, result.problems
    return one(result, ML_WORKSPACE).program_inputs


@pytest.mark.parametrize("mode", ["AllowOnlyApprovedOutbound", "AllowInternetOutbound"])
def test_an_enabled_network_is_provisioned_with_the_workspace(stack_configs, mode):
    inputs = workspace_inputs(stack_configs, isolation_mode=mode)
    assert inputs["managedNetwork"]["isolationMode"] == mode
    assert inputs["provisionNetworkNow"] is True
    assert "outboundRules" not in inputs["managedNetwork"]  # no rules: nothing sent, Azure adds its own


def test_provisioning_can_wait_for_the_first_compute(stack_configs):
    inputs = workspace_inputs(stack_configs, provision_at_creation=False)
    assert inputs["managedNetwork"]["isolationMode"] == "AllowOnlyApprovedOutbound"
    assert "provisionNetworkNow" not in inputs


def test_a_disabled_network_is_sent_as_disabled_and_not_provisioned(stack_configs):
    inputs = workspace_inputs(stack_configs, isolation_mode="Disabled")
    assert inputs["managedNetwork"]["isolationMode"] == "Disabled"
    assert "provisionNetworkNow" not in inputs
