"""components/network.py: the private endpoints and their DNS zone groups, the workspace's managed network and
its outbound rules, as the real program declares them (Pulumi mocks, program_mocks.py); the private-link
groups and zones Azure publishes; which isolation-mode changes Azure refuses on a deployed workspace.

DNS zones: learn.microsoft.com/azure/private-link/private-endpoint-dns, "Azure services DNS zone
configuration" (MicrosoftDocs/azure-docs articles/private-link/private-endpoint-dns.md): the "Private link
resource type / Subresource" and "Private DNS zone name" columns. Managed network: how-to-managed-network.md
("creation of the managed virtual network is deferred until a compute resource is created or provisioning is
manually started"; "once a managed VNet workspace is configured to allow only approved outbound, the workspace
cannot be reconfigured to allow internet outbound"; internet outbound "cannot be reconfigured to disabled").
"""

from __future__ import annotations

import pytest

from components import network
from components.network import refused_isolation_change

from .components_helpers import (
    DATA,
    DNS_ZONE_GROUP,
    ML_WORKSPACE,
    PRIVATE_ENDPOINT,
    STORAGE,
    UAI,
    ns,
    one,
    variant,
)
from .program_mocks import run_program

ZONES = "{}/providers/Microsoft.Network/privateDnsZones"
# private-link subresource (group id) -> the zones the page lists for it
PUBLISHED_ZONES = {
    "amlworkspace": ("privatelink.api.azureml.ms", "privatelink.notebooks.azure.net"),
    "blob": ("privatelink.blob.core.windows.net",),
    "file": ("privatelink.file.core.windows.net",),
    "vault": ("privatelink.vaultcore.azure.net",),
    "registry": ("privatelink.azurecr.io",),
}
MODES = ("Disabled", "AllowInternetOutbound", "AllowOnlyApprovedOutbound")


# --- private endpoints --------------------------------------------------------------------------------------


def test_private_endpoints_wire_body_and_dns_zone_groups(runs, stack_configs):
    run = runs["prod"]
    pe_cfg = ns(stack_configs["prod"], "network")["private_endpoints"]
    endpoints = {
        r.inputs["privateLinkServiceConnections"][0]["groupIds"][0]: r for r in run.of_type(PRIVATE_ENDPOINT)
    }
    # No targets configured: one endpoint to each resource the stack declares.
    assert set(endpoints) == {"amlworkspace", "blob", "file", "vault", "registry"}
    assert endpoints["amlworkspace"].inputs == {
        "privateEndpointName": "pe-ws-llm-amlworkspace",
        "resourceGroupName": "rg-train",
        "location": "eastus",
        "subnet": {"id": pe_cfg["subnet_id"]},
        "privateLinkServiceConnections": [
            {
                "name": "pe-ws-llm-amlworkspace",
                "privateLinkServiceId": one(run, ML_WORKSPACE).id,
                "groupIds": ["amlworkspace"],
            }
        ],
        "tags": {"project": "azml-gpu", "env": "prod"},
    }
    storage = one(run, STORAGE)
    for group in ("blob", "file"):
        connection = endpoints[group].inputs["privateLinkServiceConnections"][0]
        assert connection["privateLinkServiceId"] == storage.id
        assert endpoints[group].inputs["privateEndpointName"] == f"pe-{storage.state['name']}-{group}"
    zones = {r.inputs["privateEndpointName"]: r for r in run.of_type(DNS_ZONE_GROUP)}
    assert set(zones) == {r.inputs["privateEndpointName"] for r in endpoints.values()}
    dns_rg = pe_cfg["private_dns_zones_resource_group_id"]
    assert zones["pe-ws-llm-amlworkspace"].inputs == {
        "privateEndpointName": "pe-ws-llm-amlworkspace",
        "privateDnsZoneGroupName": "default",
        "resourceGroupName": "rg-train",
        "privateDnsZoneConfigs": [
            {
                "name": "privatelink-api-azureml-ms",
                "privateDnsZoneId": f"{ZONES.format(dns_rg)}/privatelink.api.azureml.ms",
            },
            {
                "name": "privatelink-notebooks-azure-net",
                "privateDnsZoneId": f"{ZONES.format(dns_rg)}/privatelink.notebooks.azure.net",
            },
        ],
    }


def test_endpoint_targets_follow_config_and_zones_are_optional(stack_configs):
    base = stack_configs["prod"]
    network_config = dict(
        ns(base, "network"),
        private_endpoints={
            "subnet_id": ns(base, "network")["private_endpoints"]["subnet_id"],
            "targets": ["workspace"],
        },
    )
    result = run_program("prod", variant(base, network=network_config))
    assert result.ok, result.error
    (pe,) = result.of_type(PRIVATE_ENDPOINT)
    assert pe.inputs["privateLinkServiceConnections"][0]["groupIds"] == ["amlworkspace"]
    assert result.of_type(DNS_ZONE_GROUP) == []


def test_no_registry_means_no_registry_endpoint(stack_configs):
    base = stack_configs["prod"]
    result = run_program(
        "prod", variant(base, workspace={**ns(base, "workspace"), "container_registry": False})
    )
    assert result.ok, result.error
    groups = {
        r.inputs["privateLinkServiceConnections"][0]["groupIds"][0] for r in result.of_type(PRIVATE_ENDPOINT)
    }
    assert groups == {"amlworkspace", "blob", "file", "vault"}


@pytest.mark.parametrize(
    ("target", "group"),
    [
        ("workspace", "amlworkspace"),
        ("storage_blob", "blob"),
        ("storage_file", "file"),
        ("key_vault", "vault"),
        ("container_registry", "registry"),
    ],
)
def test_each_private_endpoint_uses_the_published_group_and_zones(target, group):
    assert network.TARGETS[target] == (group, PUBLISHED_ZONES[group])


def test_zone_ids_are_private_dns_zones_in_the_given_group():
    rg = "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/rg-hub-dns"
    assert network.zone_id(rg, "privatelink.azurecr.io") == (
        f"{rg}/providers/Microsoft.Network/privateDnsZones/privatelink.azurecr.io"
    )


# --- the managed network ------------------------------------------------------------------------------------


def workspace_inputs(stack_configs, **managed):
    """The workspace's inputs in a variant of prod whose `network.managed` has these keys changed."""
    base = stack_configs["prod"]
    net = dict(ns(base, "network"))
    net["managed"] = {**net["managed"], **managed}
    changes = {"network": net}
    if any(r.get("type") == "private_endpoint" for r in managed.get("outbound_rules", [])):
        # A private-endpoint rule needs a user-assigned workspace identity (stackconfig.combinations).
        changes["identity"] = dict(ns(base, "identity"), workspace_identity_id=UAI)
    if managed.get("isolation_mode") == "Disabled":  # nodes without a public IP need a managed network
        # ... and a private workspace's clusters a subnet of its endpoint's network (private-link page).
        subnet = net["private_endpoints"]["subnet_id"].rsplit("/", 1)[0] + "/snet-train"
        changes["clusters"] = [dict(c, node_public_ip=True, subnet_id=subnet) for c in ns(base, "clusters")]
    result = run_program("prod", variant(base, **changes))
    assert result.ok, result.error
    return one(result, ML_WORKSPACE).inputs


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


def test_outbound_rules_wire_format(stack_configs):
    managed = workspace_inputs(
        stack_configs,
        firewall_sku="Basic",
        outbound_rules=[
            {"name": "pypi", "type": "fqdn", "destination": "pypi.org"},
            {
                "name": "data",
                "type": "private_endpoint",
                "service_resource_id": DATA,
                "subresource_target": "blob",
            },
            {
                "name": "mon",
                "type": "service_tag",
                "service_tag": "AzureMonitor",
                "protocol": "TCP",
                "port_ranges": "443",
            },
        ],
    )["managedNetwork"]
    assert managed["firewallSku"] == "Basic"
    assert managed["outboundRules"] == {
        "pypi": {"type": "FQDN", "category": "UserDefined", "destination": "pypi.org"},
        "data": {
            "type": "PrivateEndpoint",
            "category": "UserDefined",
            "destination": {"serviceResourceId": DATA, "subresourceTarget": "blob", "sparkEnabled": False},
        },
        "mon": {
            "type": "ServiceTag",
            "category": "UserDefined",
            "destination": {
                "serviceTag": "AzureMonitor",
                "protocol": "TCP",
                "portRanges": "443",
                "action": "Allow",
            },
        },
    }


# --- isolation changes on a deployed workspace --------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (None, "AllowInternetOutbound"),
        ("Disabled", "AllowOnlyApprovedOutbound"),
        ("AllowInternetOutbound", "AllowOnlyApprovedOutbound"),
        ("AllowOnlyApprovedOutbound", "AllowOnlyApprovedOutbound"),
        (None, None),
    ],
)
def test_tightening_or_keeping_is_accepted(old, new) -> None:
    assert refused_isolation_change(old, new) is None


def test_approved_outbound_back_to_internet_outbound_is_refused() -> None:
    assert refused_isolation_change("AllowOnlyApprovedOutbound", "AllowInternetOutbound") == (
        "managedNetwork.isolationMode AllowOnlyApprovedOutbound -> AllowInternetOutbound: Azure can't "
        "loosen a workspace's managed network once set (how-to-managed-network.md); keep isolation_mode: "
        "AllowOnlyApprovedOutbound, or create a new workspace (stack) for the looser network"
    )


@pytest.mark.parametrize("old", MODES[1:])
def test_turning_a_managed_network_off_is_refused(old) -> None:
    assert refused_isolation_change(old, None) is not None
    assert refused_isolation_change(old, "Disabled") is not None
