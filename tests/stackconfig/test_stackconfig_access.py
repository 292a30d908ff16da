"""The grant plan, the lock decision and the network/SSH combinations of issue 23, each from its source.

Each case changes one thing of a happy-path config and asserts the exact problem (key path and the sentence
that names the source and the fix). Sources are cited in stackconfig/identity.py (grant_plan) and
stackconfig/combinations.py ([LOCK], [MNO], [CCR], [SSH]).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from stackconfig_factory import good_raw

from stackconfig import ConfigError, validate
from stackconfig.combinations import plan

SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"
UAI = f"{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-ws"
DATA = f"{SUB}/resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stdata"
PE_SUBNET = f"{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/snet-pe"
VNET_SUBNET = (
    f"{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/snet-train"
)
MANAGED = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
GROUP = {"principal_id": "00000000-0000-0000-0000-00000000a001", "principal_type": "Group"}


def public() -> dict[str, Any]:
    """good_raw with one eastus cluster without SSH (the cross-region one would trip the network rules)."""
    raw = good_raw()
    raw["clusters"] = [dict(raw["clusters"][0], ssh="disabled")]
    return raw


def private(**network: Any) -> dict[str, Any]:
    """A private workspace: managed network, no node public IPs, a workspace private endpoint."""
    raw = public()
    raw["workspace"]["public_network_access"] = "Disabled"
    raw["clusters"][0]["node_public_ip"] = False
    raw["network"] = {**MANAGED, "private_endpoints": {"subnet_id": PE_SUBNET}, **network}
    return raw


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        validate(raw)
    return info.value.problems


def grants(raw: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return sorted((g.key, g.scope, g.principal, g.role) for g in plan(validate(raw)))


# --- the grant plan: nothing Azure makes itself ----------------------------------------------------------


def test_system_assigned_workspace_gets_only_the_key_vault_grant() -> None:
    """SAI: "Role assignment creation: Managed by Microsoft"; the RBAC vault's data plane is the stack's."""
    assert grants(public()) == [("ws/kv/administrator", "key_vault", "workspace", "Key Vault Administrator")]


def test_identity_datastores_grant_the_clusters_and_data_scientists_but_not_the_workspace() -> None:
    raw = public()
    raw["identity"] = {
        "system_datastores_auth_mode": "identity",
        "role_assignments": [dict(GROUP, role="AzureML Data Scientist")],
    }
    who = "00000000-0000-0000-0000-00000000a001"
    assert grants(raw) == [
        ("h100-x4/st/blob-contributor", "storage", "cluster:h100-x4", "Storage Blob Data Contributor"),
        (f"people/{who}/azureml-data-scientist", "workspace", who, "AzureML Data Scientist"),
        (f"people/{who}/st/blob-contributor", "storage", who, "Storage Blob Data Contributor"),
        (f"people/{who}/st/file-privileged", "storage", who, "Storage File Data Privileged Contributor"),
        ("ws/kv/administrator", "key_vault", "workspace", "Key Vault Administrator"),
    ]


def test_no_acrpull_for_cluster_identities_even_with_a_registry() -> None:
    """ "A managed identity automatically gets the ACRPull role on the workspace ACR"."""
    raw = public()
    raw["workspace"]["container_registry"] = True
    assert not [g for g in grants(raw) if g[3] == "AcrPull"]


def test_a_user_assigned_workspace_identity_gets_the_documented_table_before_the_workspace() -> None:
    raw = public()
    raw["workspace"]["container_registry"] = True
    raw["identity"] = {"workspace_identity_id": UAI}
    config = validate(raw)
    before = sorted((g.scope, g.role) for g in plan(config) if g.before_workspace)
    assert before == [
        ("application_insights", "Contributor"),
        ("container_registry", "Contributor"),
        ("key_vault", "Contributor"),
        ("key_vault", "Key Vault Administrator"),
        ("storage", "Contributor"),
        ("storage", "Storage Blob Data Contributor"),
        ("storage", "Storage File Data Privileged Contributor"),
    ]
    after = [(g.scope, g.role) for g in plan(config) if not g.before_workspace]
    assert after == [("workspace", "Contributor")]


def test_a_private_endpoint_rule_grants_the_network_connection_approver_on_its_target() -> None:
    rule = {
        "name": "data",
        "type": "private_endpoint",
        "service_resource_id": DATA,
        "subresource_target": "blob",
    }
    raw = private(managed={"isolation_mode": "AllowOnlyApprovedOutbound", "outbound_rules": [rule]})
    assert (
        "ws/stdata/network-approver",
        DATA,
        "workspace",
        "Azure AI Enterprise Network Connection Approver",
    ) in (grants(raw))


def test_the_workspace_identity_id_must_name_a_user_assigned_identity() -> None:
    raw = public()
    raw["identity"] = {"workspace_identity_id": DATA}
    (problem,) = problems(raw)
    assert problem.startswith("azml-gpu:identity.workspace_identity_id: ")
    assert "Microsoft.ManagedIdentity/userAssignedIdentities" in problem


# --- the lock decision -------------------------------------------------------------------------------------


def test_unset_locks_lock_what_carries_no_grant() -> None:
    raw = public()
    raw["workspace"]["container_registry"] = True
    assert validate(raw).locks.model_dump() == {
        "storage": True,
        "key_vault": False,  # the workspace identity's Key Vault Administrator
        "container_registry": True,
        "application_insights": True,
        "workspace": False,
    }


def test_identity_datastores_unlock_the_storage_account_by_default() -> None:
    raw = public()
    raw["identity"] = {"system_datastores_auth_mode": "identity"}
    assert validate(raw).locks.storage is False


def test_unset_locks_are_off_with_a_managed_network() -> None:
    raw = private()
    raw["locks"] = {}
    assert not any(validate(raw).locks.model_dump().values())


def test_a_lock_on_a_granted_resource_is_refused_with_the_grants_named() -> None:
    raw = public()
    raw["locks"] = {"key_vault": True}
    assert problems(raw) == [
        "azml-gpu:locks.key_vault: true, but the stack grants roles on the key vault (Key Vault "
        "Administrator for the workspace identity), and a CanNotDelete lock blocks deleting a role "
        "assignment on the resource it locks (lock-resources.md): replacing a cluster, removing a grant "
        "or `pulumi destroy` would fail half-way; set it to false or leave it unset (unset, a resource is "
        "locked only when it carries no grant)"
    ]


def test_a_workspace_lock_is_refused_when_people_have_roles_on_it() -> None:
    raw = public()
    raw["locks"] = {"workspace": True}
    assert validate(copy.deepcopy(raw)).locks.workspace is True  # no grant on the workspace: allowed
    raw["identity"] = {"role_assignments": [dict(GROUP, role="AzureML Compute Operator")]}
    (problem,) = problems(raw)
    assert problem.startswith(
        "azml-gpu:locks.workspace: true, but the stack grants roles on the workspace (AzureML Compute "
        "Operator for 00000000-0000-0000-0000-00000000a001)"
    )


def test_a_lock_next_to_a_managed_network_is_refused() -> None:
    raw = private()
    raw["locks"] = {"application_insights": True}
    assert problems(raw) == [
        "azml-gpu:locks.application_insights: true, and the workspace has a managed network: Azure ML asks "
        "for no scope locks on its resources, since internal operations of the managed network might be "
        "blocked (how-to-managed-network.md, Limitations); set it to false or leave it unset (unset locks "
        "are off with a managed network)"
    ]


def test_a_registry_lock_without_a_registry_is_ignored() -> None:
    raw = private()
    raw["locks"] = {"container_registry": False}
    raw["workspace"]["container_registry"] = False
    assert validate(raw).locks.container_registry is False
    raw = public()
    raw["locks"] = {"container_registry": True}
    assert validate(raw).locks.container_registry is True  # nothing locked: components skip it


# --- network and SSH combinations ------------------------------------------------------------------------


def test_ssh_on_no_public_ip_nodes_in_a_managed_network_is_refused() -> None:
    raw = private()
    raw["clusters"][0]["ssh"] = good_raw()["clusters"][0]["ssh"]
    assert problems(raw) == [
        "azml-gpu:clusters[0].ssh: SSH on a cluster without node public IPs in a managed network may be "
        "unreachable: Azure documents SSH to such nodes for compute instances only (how-to-managed-"
        "network.md, Limitations), and SSH (with local auth) can't be changed after creation; set ssh: "
        "disabled (debug through the job's logs and `jobs submit health`)"
    ]
    raw["clusters"][0]["node_public_ip"] = True  # public nodes in the managed network: SSH reaches them
    validate(raw)


def test_a_cross_region_cluster_next_to_a_workspace_private_endpoint_is_refused() -> None:
    raw = public()
    raw["workspace"]["public_network_access"] = "Disabled"
    raw["network"] = {"private_endpoints": {"subnet_id": PE_SUBNET}}
    raw["clusters"][0]["region"] = "westus3"
    assert problems(raw) == [
        "azml-gpu:clusters[0].region: 'westus3' differs from the workspace region (eastus), and a cluster in "
        "another region is not available for a workspace with a private endpoint (how-to-create-attach-"
        "compute-cluster.md, Limitations); put the cluster in eastus, or give that region its own workspace "
        "(stack) and quota"
    ]
    raw["network"]["private_endpoints"]["targets"] = ["storage_blob"]  # no endpoint to the workspace itself
    validate(raw)


@pytest.mark.parametrize(
    ("rule", "kind"),
    [
        ({"name": "pypi", "type": "fqdn", "destination": "pypi.org"}, "fqdn"),
        (
            {
                "name": "mon",
                "type": "service_tag",
                "service_tag": "AzureMonitor",
                "protocol": "TCP",
                "port_ranges": "443",
            },
            "service_tag",
        ),
    ],
)
def test_fqdn_and_service_tag_rules_need_allow_only_approved_outbound(rule: dict, kind: str) -> None:
    raw = private(managed={"isolation_mode": "AllowInternetOutbound", "outbound_rules": [rule]})
    assert problems(raw) == [
        f"azml-gpu:network.managed.outbound_rules[0].type: {kind} rules are only valid with "
        "AllowOnlyApprovedOutbound (how-to-managed-network.md); with AllowInternetOutbound every destination "
        "is already allowed: remove the rule, or set isolation_mode: AllowOnlyApprovedOutbound"
    ]
    raw["network"]["managed"]["isolation_mode"] = "AllowOnlyApprovedOutbound"
    validate(raw)


def test_a_private_endpoint_rule_is_valid_under_internet_outbound() -> None:
    rule = {
        "name": "data",
        "type": "private_endpoint",
        "service_resource_id": DATA,
        "subresource_target": "blob",
    }
    validate(private(managed={"isolation_mode": "AllowInternetOutbound", "outbound_rules": [rule]}))


def test_a_data_store_under_approved_outbound_needs_a_private_endpoint_rule() -> None:
    raw = private()
    raw["identity"] = {"data_stores": [DATA]}
    assert problems(raw) == [
        "azml-gpu:identity.data_stores[0]: the jobs read this storage account, and with "
        "AllowOnlyApprovedOutbound the managed network reaches a storage account only through a "
        "private-endpoint rule (how-to-managed-network.md); add to network.managed.outbound_rules "
        f"{{name: ..., type: private_endpoint, service_resource_id: {DATA}, subresource_target: blob}}"
    ]
    rule = {
        "name": "data",
        "type": "private_endpoint",
        "service_resource_id": DATA.upper().replace(
            "/SUBSCRIPTIONS/", "/subscriptions/"
        ),  # ARM ids: any case
        "subresource_target": "blob",
    }
    raw["network"]["managed"]["outbound_rules"] = [rule]
    validate(raw)
    raw["network"]["managed"] = {"isolation_mode": "AllowInternetOutbound"}  # internet outbound reaches it
    validate(raw)


@pytest.mark.parametrize("auth_mode, storage_roles", [("identity", True), ("accessKey", False)])
@pytest.mark.parametrize("role", ["AzureML Data Scientist", "AzureML Compute Operator"])
def test_only_data_scientists_get_storage_roles_and_only_with_identity_datastores(
    auth_mode: str, storage_roles: bool, role: str
) -> None:
    """how-to-disable-local-auth-storage.md: with identity datastores the data scientists need the storage
    data roles; a compute operator manages clusters and reads no data, and with account keys nobody needs
    them."""
    raw = public()
    raw["identity"] = {"system_datastores_auth_mode": auth_mode, "role_assignments": [dict(GROUP, role=role)]}
    who = GROUP["principal_id"]
    people = [g for g in grants(raw) if g[0].startswith(f"people/{who}/")]
    expected = [(f"people/{who}/{role.lower().replace(' ', '-')}", "workspace", who, role)]
    if storage_roles and role == "AzureML Data Scientist":
        expected += [
            (f"people/{who}/st/blob-contributor", "storage", who, "Storage Blob Data Contributor"),
            (f"people/{who}/st/file-privileged", "storage", who, "Storage File Data Privileged Contributor"),
        ]
    assert people == sorted(expected)
