"""Network and identity resources under mocks, with the wire-format inputs azure-native sends: private
endpoints and DNS zone groups, role assignments, diagnostic settings, the workspace's managed network,
datastore auth mode and customer-managed key, clusters with a user-assigned identity."""

from __future__ import annotations

import re

from components_helpers import (
    DIAGNOSTIC_SETTING,
    DNS_ZONE_GROUP,
    ML_WORKSPACE,
    PRIVATE_ENDPOINT,
    REGISTRY,
    ROLE_ASSIGNMENT,
    STORAGE,
    compute,
    ns,
    one,
    variant,
)

import azroles
from preflight.engine import Deployment
from preflight.program import run_program

SUB = "00000000-0000-0000-0000-000000000000"
GUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
UAI = (
    f"/subscriptions/{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/userAssignedIdentities/"
    "id-train"
)
DATA = f"/subscriptions/{SUB}/resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stdata"
ZONES = "{}/providers/Microsoft.Network/privateDnsZones"
KV_CMK = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"


def role_of(r) -> str:
    return azroles.role_name(r.inputs["roleDefinitionId"])


def test_prod_workspace_is_private_with_a_managed_network(runs):
    mlw = one(runs["prod"], ML_WORKSPACE)
    assert mlw.program_inputs["publicNetworkAccess"] == "Disabled"
    assert mlw.program_inputs["managedNetwork"] == {
        "isolationMode": "AllowOnlyApprovedOutbound",
        "enableNetworkMonitor": False,  # the SDK's default, sent by azure-native
    }
    assert mlw.program_inputs["provisionNetworkNow"] is True
    assert mlw.program_inputs["systemDatastoresAuthMode"] == "Identity"
    assert one(runs["prod"], STORAGE).program_inputs["allowSharedKeyAccess"] is False
    assert one(runs["prod"], REGISTRY).program_inputs["sku"] == {"name": "Premium"}


def test_dev_workspace_is_public_with_access_keys(runs):
    mlw = one(runs["dev"], ML_WORKSPACE)
    assert mlw.program_inputs["publicNetworkAccess"] == "Enabled"
    assert "managedNetwork" not in mlw.program_inputs and "provisionNetworkNow" not in mlw.program_inputs
    assert mlw.program_inputs["systemDatastoresAuthMode"] == "AccessKey"
    assert runs["dev"].of_type(PRIVATE_ENDPOINT) == [] and runs["dev"].of_type(DIAGNOSTIC_SETTING) == []


def test_private_endpoints_wire_body_and_dns_zone_groups(runs, stack_configs):
    run = runs["prod"]
    pe_cfg = ns(stack_configs["prod"], "network")["private_endpoints"]
    endpoints = {
        r.inputs["privateLinkServiceConnections"][0]["groupIds"][0]: r for r in run.of_type(PRIVATE_ENDPOINT)
    }
    assert set(endpoints) == {"amlworkspace", "blob", "file", "vault", "registry"}
    ws = endpoints["amlworkspace"]
    assert ws.program_inputs == {
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
    assert (
        ws.id == f"/subscriptions/{SUB}/resourceGroups/rg-train/providers/Microsoft.Network/privateEndpoints/"
        "pe-ws-llm-amlworkspace"
    )
    assert (
        endpoints["blob"].inputs["privateLinkServiceConnections"][0]["privateLinkServiceId"]
        == one(run, STORAGE).id
    )
    zones = {r.inputs["privateEndpointName"]: r for r in run.of_type(DNS_ZONE_GROUP)}
    assert set(zones) == {r.inputs["privateEndpointName"] for r in endpoints.values()}
    group = zones["pe-ws-llm-amlworkspace"]
    dns_rg = pe_cfg["private_dns_zones_resource_group_id"]
    assert group.program_inputs == {
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
    assert group.id.endswith("/privateEndpoints/pe-ws-llm-amlworkspace/privateDnsZoneGroups/default")


def test_endpoint_targets_follow_config_and_zones_are_optional(stack_configs):
    base = stack_configs["prod"]
    network = dict(
        ns(base, "network"),
        private_endpoints={
            "subnet_id": ns(base, "network")["private_endpoints"]["subnet_id"],
            "targets": ["workspace"],
        },
    )
    result = run_program("prod", config=variant(base, network=network))
    assert result.ok, result.problems
    (pe,) = result.of_type(PRIVATE_ENDPOINT)
    assert pe.inputs["privateLinkServiceConnections"][0]["groupIds"] == ["amlworkspace"]
    assert result.of_type(DNS_ZONE_GROUP) == []


def test_prod_role_assignments_sit_on_single_resources(runs):
    run = runs["prod"]
    grants = run.of_type(ROLE_ASSIGNMENT)
    storage, mlw = one(run, STORAGE), one(run, ML_WORKSPACE)
    seen = sorted((role_of(r), r.inputs["scope"].rsplit("/", 2)[-2]) for r in grants)
    # Nothing Azure makes itself (stackconfig.identity.grant_plan): no AcrPull for the clusters ("A managed
    # identity automatically gets the ACRPull role on the workspace ACR") and no storage role for the
    # workspace's system-assigned identity ("Role assignment creation: Managed by Microsoft").
    assert seen == sorted(
        [
            ("Key Vault Administrator", "vaults"),  # workspace identity: the RBAC vault's data plane
            ("Storage Blob Data Contributor", "storageAccounts"),  # h100-x4
            ("Storage Blob Data Contributor", "storageAccounts"),  # a100-spot
            ("AzureML Data Scientist", "workspaces"),
            ("Storage Blob Data Contributor", "storageAccounts"),  # the data scientists' group, keys off
            ("Storage File Data Privileged Contributor", "storageAccounts"),
            ("AzureML Compute Operator", "workspaces"),
        ]
    )
    for r in grants:
        assert GUID.match(r.inputs["roleAssignmentName"])
        assert r.inputs["roleDefinitionId"].startswith(
            f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/"
        )
        assert r.inputs["scope"].startswith(f"/subscriptions/{SUB}/resourceGroups/rg-train/providers/")
        assert (
            r.id == f"{r.inputs['scope']}/providers/Microsoft.Authorization/roleAssignments/"
            f"{r.inputs['roleAssignmentName']}"
        )
    people = [r for r in grants if r.inputs["scope"] == mlw.id]
    scientists = [
        r for r in grants if r.inputs["principalId"].endswith("a001") and r.inputs["scope"] == storage.id
    ]
    assert sorted(role_of(r) for r in scientists) == [
        "Storage Blob Data Contributor",
        "Storage File Data Privileged Contributor",
    ]
    assert {(r.inputs["principalId"], r.inputs["principalType"]) for r in people} == {
        ("00000000-0000-0000-0000-00000000a001", "Group"),
        ("00000000-0000-0000-0000-00000000a002", "Group"),
    }
    # Managed identities: the workspace's system-assigned identity holds only its vault grant.
    vault = one(run, "azure-native:keyvault:Vault")
    (ws_grant,) = [r for r in grants if r.inputs["scope"] == vault.id]
    assert ws_grant.inputs["principalType"] == "ServicePrincipal" and GUID.match(
        ws_grant.inputs["principalId"]
    )
    on_storage = {r.inputs["principalId"] for r in grants if r.inputs["scope"] == storage.id}
    assert ws_grant.inputs["principalId"] not in on_storage


def test_managed_identity_principals_are_unknown_in_a_first_preview():
    result = run_program("prod", deployment=Deployment("first-deploy", provider_location="eastus"))
    assert result.ok, result.problems
    unknown = [
        r for r in result.of_type(ROLE_ASSIGNMENT) if r.inputs.get("principalType") == "ServicePrincipal"
    ]
    assert unknown and all(
        r.inputs.get("principalId") in (None, "04da6b54-80e4-46f7-96ec-b56ff0331ba9") for r in unknown
    )


def test_assignment_names_are_stable_across_runs(runs):
    again = run_program("prod")
    assert sorted(r.inputs["roleAssignmentName"] for r in again.of_type(ROLE_ASSIGNMENT)) == sorted(
        r.inputs["roleAssignmentName"] for r in runs["prod"].of_type(ROLE_ASSIGNMENT)
    )


def test_dev_grants_only_the_key_vault_role(runs):
    (grant,) = runs["dev"].of_type(ROLE_ASSIGNMENT)
    assert role_of(grant) == "Key Vault Administrator"


def test_diagnostic_setting_sends_all_logs_to_log_analytics(runs):
    run = runs["prod"]
    diag = one(run, DIAGNOSTIC_SETTING)
    mlw = one(run, ML_WORKSPACE)
    log = one(run, "azure-native:operationalinsights:Workspace")
    assert diag.program_inputs == {
        "name": "to-log-analytics",
        "resourceUri": mlw.id,
        "workspaceId": log.id,
        "logs": [{"categoryGroup": "allLogs", "enabled": True}],
        "metrics": [{"category": "AllMetrics", "enabled": True}],
    }
    assert diag.id == f"{mlw.id}/providers/Microsoft.Insights/diagnosticSettings/to-log-analytics"


def test_user_assigned_identity_data_stores_and_customer_key(stack_configs):
    base = stack_configs["prod"]
    clusters = [dict(c, user_assigned_identity_id=UAI) for c in ns(base, "clusters")]
    # Under AllowOnlyApprovedOutbound a data store is reached only through a private-endpoint rule.
    network = dict(ns(base, "network"))
    network["managed"] = dict(
        network["managed"],
        outbound_rules=[
            {
                "name": "data",
                "type": "private_endpoint",
                "service_resource_id": DATA,
                "subresource_target": "blob",
            }
        ],
    )
    identity = dict(
        ns(base, "identity"),
        data_stores=[DATA],
        customer_managed_key={
            "key_vault_id": KV_CMK,
            "key_uri": "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef",
            "user_assigned_identity_id": UAI,
            "acknowledged": ["cosmos_db_key_access", "providers_registered"],
        },
    )
    # The key's vault exists outside the stack, with purge protection on (what Azure ML needs).
    vault = {KV_CMK: {"id": KV_CMK, "outputs": {"properties": {"enablePurgeProtection": True}}}}
    result = run_program(
        "prod",
        config=variant(base, clusters=clusters, identity=identity, network=network),
        existing=vault,
    )
    assert result.ok, result.problems
    r = compute(result, "h100-x4")
    assert r.program_inputs["identity"] == {"type": "UserAssigned", "userAssignedIdentities": [UAI]}
    assert (
        "azure-native:managedidentity:getUserAssignedIdentity",
        {"resourceGroupName": "rg-id", "resourceName": "id-train"},
    ) in [
        (t, {k: v for k, v in a.items() if k in ("resourceGroupName", "resourceName")})
        for t, a in result.invokes
    ]
    readers = [g for g in result.of_type(ROLE_ASSIGNMENT) if role_of(g) == "Storage Blob Data Reader"]
    assert {g.inputs["scope"] for g in readers} == {DATA} and len(readers) == 2  # one per cluster
    principals = {g.inputs["principalId"] for g in readers}
    assert len(principals) == 1 and GUID.match(principals.pop())  # the identity the getter returned
    mlw = one(result, ML_WORKSPACE)
    assert mlw.program_inputs["identity"] == {
        "type": "SystemAssigned,UserAssigned",
        "userAssignedIdentities": [UAI],
    }
    assert mlw.program_inputs["encryption"] == {
        "status": "Enabled",
        "keyVaultProperties": {
            "keyVaultArmId": KV_CMK,
            "keyIdentifier": "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef",
        },
        "identity": {"userAssignedIdentity": UAI},
    }


def test_outbound_rules_wire_format(stack_configs):
    base = stack_configs["prod"]
    network = dict(ns(base, "network"))
    network["managed"] = dict(
        network["managed"],
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
    )
    result = run_program("prod", config=variant(base, network=network))
    assert result.ok, result.problems
    managed = one(result, ML_WORKSPACE).program_inputs["managedNetwork"]
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


WS_UAI = (
    f"/subscriptions/{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/userAssignedIdentities/"
    "id-ws"
)


def test_a_user_assigned_workspace_identity_is_granted_before_the_workspace(stack_configs):
    """how-to-identity-based-service-authentication.md, "User-assigned managed identity": the identity needs
    its roles on storage, key vault, registry and App Insights to create the workspace; PSRule's
    Azure.ML.UserManagedIdentity shape: type UserAssigned, primaryUserAssignedIdentity set."""
    base = stack_configs["prod"]
    identity = dict(ns(base, "identity"), workspace_identity_id=WS_UAI)
    result = run_program("prod", config=variant(base, identity=identity))
    assert result.ok, result.problems
    mlw = one(result, ML_WORKSPACE)
    assert mlw.program_inputs["identity"] == {"type": "UserAssigned", "userAssignedIdentities": [WS_UAI]}
    assert mlw.program_inputs["primaryUserAssignedIdentity"] == WS_UAI
    before = [r for r in result.of_type(ROLE_ASSIGNMENT) if r.urn in mlw.dependencies]
    assert sorted((role_of(r), r.inputs["scope"].rsplit("/", 2)[-2]) for r in before) == sorted(
        [
            ("Contributor", "storageAccounts"),
            ("Storage Blob Data Contributor", "storageAccounts"),
            ("Storage File Data Privileged Contributor", "storageAccounts"),
            ("Contributor", "vaults"),
            ("Key Vault Administrator", "vaults"),
            ("Contributor", "registries"),
            ("Contributor", "components"),
        ]
    )
    uai_principal = {r.inputs["principalId"] for r in before}
    assert len(uai_principal) == 1 and GUID.match(uai_principal.pop())
    after = [
        r
        for r in result.of_type(ROLE_ASSIGNMENT)
        if r.inputs["scope"] == mlw.id and role_of(r) == "Contributor"
    ]
    assert len(after) == 1 and after[0].urn not in mlw.dependencies


def test_a_customer_key_in_another_subscription_is_refused(stack_configs):
    """how-to-setup-customer-managed-keys.md: "The key vault that contains your customer-managed key must be
    in the same Azure subscription as the Azure Machine Learning workspace"."""
    base = stack_configs["prod"]
    other = "11111111-1111-1111-1111-111111111111"
    identity = dict(
        ns(base, "identity"),
        customer_managed_key={
            "key_vault_id": KV_CMK.replace(SUB, other),
            "key_uri": "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef",
            "user_assigned_identity_id": UAI,
            "acknowledged": ["cosmos_db_key_access", "providers_registered"],
        },
    )
    try:
        result = run_program("prod", config=variant(base, identity=identity))
    except ValueError as exc:
        message = str(exc)
    else:
        assert not result.ok
        message = str(result.error)
    assert f"is in subscription {other}, not the workspace's ({SUB})" in message


def test_a_private_endpoint_rule_grants_the_approver_role_on_its_target(stack_configs):
    """Azure AI Enterprise Network Connection Approver, no longer granted by Azure itself (grant_plan)."""
    base = stack_configs["prod"]
    network = dict(ns(base, "network"))
    rule = {
        "name": "data",
        "type": "private_endpoint",
        "service_resource_id": DATA,
        "subresource_target": "blob",
    }
    network["managed"] = dict(network["managed"], outbound_rules=[rule])
    result = run_program("prod", config=variant(base, network=network))
    assert result.ok, result.problems
    (approver,) = [
        r
        for r in result.of_type(ROLE_ASSIGNMENT)
        if role_of(r) == "Azure AI Enterprise Network Connection Approver"
    ]
    assert approver.inputs["scope"] == DATA and approver.inputs["principalType"] == "ServicePrincipal"
    assert approver.inputs["roleDefinitionId"].endswith("/b556d68e-0be0-4f35-a333-ad7ee1ce17ea")
