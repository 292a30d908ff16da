"""components/workspace.py: the resource group, storage account, key vault, Log Analytics, Application
Insights, container registry and the Azure ML workspace, as the real program declares them for each stack
(Pulumi mocks, program_mocks.py), and the customer-managed key's vault read at preview and up.

Expected values come from the stack files through stackconfig (the config contract) and from the Azure facts
the component cites.

Customer-managed key, from the sources, not from the code:
- how-to-setup-customer-managed-keys.md ("Create Azure Key Vault"): "When creating Azure Key Vault, you must
  enable soft delete and purge protection"; Limitations: "The key vault that contains your customer-managed
  key must be in the same Azure subscription as the Azure Machine Learning workspace".
- azure-rest-api-specs keyvault.json 2024-11-01 `VaultProperties`: `enablePurgeProtection` has no default
  ("does not accept false"), `enableSoftDelete` defaults to true. `az keyvault show` prints an
  `enablePurgeProtection` of null for a vault that never had it.
- learn.microsoft.com/azure/key-vault/general/key-vault-recovery: the fix, `az keyvault update --subscription
  {SUBSCRIPTION ID} -g {RESOURCE GROUP} -n {VAULT NAME} --enable-purge-protection true`.
- learn.microsoft.com/azure/azure-resource-manager/troubleshooting/error-not-found: a missing resource is
  `ResourceNotFound`, "The Resource '<type>/<name>' under resource group '<group>' was not found."
- Azure Cosmos DB (which Azure ML encrypts with the key) "must be accessible through public network access or
  allow trusted Microsoft services to bypass its firewall. An instance that is exclusively accessible through
  private endpoints can't be used" (cosmos-db how-to-setup-customer-managed-keys.md); `networkAcls.bypass`
  defaults to AzureServices and `publicNetworkAccess` to enabled (keyvault.json 2024-11-01, VaultProperties).
"""

from __future__ import annotations

import re

import pytest

import azroles
from preflight.provider import model
from preflight.provider.schema import check_resource

from .components_helpers import (
    APP_INSIGHTS,
    DATA,
    GUID,
    KEY_URI,
    KEY_VAULT,
    KV_CMK,
    LOG_ANALYTICS,
    ML_WORKSPACE,
    REGISTRY,
    RESOURCE_GROUP,
    ROLE_ASSIGNMENT,
    STORAGE,
    SUB,
    UAI,
    compute,
    customer_key,
    ns,
    one,
    variant,
    vault,
)
from .program_mocks import run_program

GET_VAULT = "azure-native:keyvault:getVault"
PURGE_FIX = f"az keyvault update --subscription {SUB} -g rg-keys -n kv-cmk --enable-purge-protection true"
SOFT_FIX = f"az keyvault update --subscription {SUB} -g rg-keys -n kv-cmk --enable-soft-delete true"
BYPASS_FIX = f"az keyvault update --subscription {SUB} -g rg-keys -n kv-cmk --bypass AzureServices"
PROTECTED = {"enablePurgeProtection": True}
WS_UAI = UAI.replace("/id-train", "/id-ws")


def role_of(r) -> str:
    return azroles.role_name(r.inputs["roleDefinitionId"])


# --- what every stack declares ------------------------------------------------------------------------------


def test_resource_group_created_with_region_and_tags(run, typed):
    ws = typed.workspace
    assert one(run, RESOURCE_GROUP).inputs == {
        "resourceGroupName": ws.resource_group.name,
        "location": ws.region,
        "tags": ws.tags,
    }


def test_storage_account_https_only_tls12_no_public_blobs(run, typed):
    st = one(run, STORAGE)
    ws = typed.workspace
    assert re.fullmatch(r"[a-z0-9]{3,24}", st.inputs["accountName"])
    assert st.inputs == {
        "accountName": st.inputs["accountName"],
        "resourceGroupName": ws.resource_group.name,
        "location": ws.region,
        "kind": "StorageV2",
        "sku": {"name": "Standard_LRS"},
        "enableHttpsTrafficOnly": True,
        "minimumTlsVersion": "TLS1_2",
        "allowBlobPublicAccess": False,
        # Sent explicitly either way; prod turns account keys off (identity-based datastores).
        "allowSharedKeyAccess": typed.identity.storage_shared_key_access,
        "tags": ws.tags,
    }


def test_key_vault_rbac_soft_delete_purge_protection(run, typed):
    kv = one(run, KEY_VAULT)
    ws = typed.workspace
    name = kv.inputs["vaultName"]
    # 3-24, letter first, letter/digit last, no "--" (resource-name-rules, Microsoft.KeyVault/vaults).
    assert re.fullmatch(r"[a-z][a-z0-9-]{1,22}[a-z0-9]", name) and "--" not in name
    props = kv.inputs["properties"]
    assert props["tenantId"] == model.FAKE_TENANT_ID  # the tenant authorization.get_client_config() answers
    assert props["sku"] == {"family": "A", "name": "standard"}
    assert props["enableRbacAuthorization"] is True
    assert props["enableSoftDelete"] is True
    assert props["softDeleteRetentionInDays"] == ws.key_vault_soft_delete_days
    # `enablePurgeProtection` "does not accept false": left out, never sent as false.
    assert props.get("enablePurgeProtection") is (True if ws.key_vault_purge_protection else None)
    assert kv.inputs["location"] == ws.region


def test_log_analytics_and_workspace_based_app_insights(run, typed):
    log = one(run, LOG_ANALYTICS)
    appi = one(run, APP_INSIGHTS)
    assert log.inputs["sku"] == {"name": "PerGB2018"}
    assert log.inputs["retentionInDays"] == 30
    assert appi.inputs["workspaceResourceId"] == log.id
    assert appi.inputs["ingestionMode"] == "LogAnalytics"
    assert appi.inputs["applicationType"] == "web" and appi.inputs["kind"] == "web"
    assert appi.inputs["location"] == typed.workspace.region


def test_container_registry_only_when_configured(run, typed):
    registries = run.of_type(REGISTRY)
    if not typed.workspace.container_registry:
        assert registries == []
        assert "containerRegistry" not in one(run, ML_WORKSPACE).inputs
        return
    (acr,) = registries
    assert re.fullmatch(r"[a-z0-9]{5,50}", acr.inputs["registryName"])
    assert acr.inputs["adminUserEnabled"] is False
    # Premium when the workspace is private: private endpoints need it (container-registry-private-link).
    private = typed.network.managed_enabled or typed.network.private_endpoints is not None
    assert acr.inputs["sku"] == {"name": "Premium" if private else "Standard"}
    assert one(run, ML_WORKSPACE).inputs["containerRegistry"] == acr.id


def test_ml_workspace_identity_network_and_dependencies(run, typed):
    mlw = one(run, ML_WORKSPACE)
    ws = typed.workspace
    assert mlw.inputs["workspaceName"] == ws.name
    assert mlw.inputs["resourceGroupName"] == ws.resource_group.name
    assert mlw.inputs["identity"] == {"type": "SystemAssigned"}
    assert mlw.inputs["publicNetworkAccess"] == ws.public_network_access
    assert mlw.inputs["storageAccount"] == one(run, STORAGE).id
    assert mlw.inputs["keyVault"] == one(run, KEY_VAULT).id
    assert mlw.inputs["applicationInsights"] == one(run, APP_INSIGHTS).id
    assert mlw.inputs["location"] == ws.region
    assert mlw.inputs["sku"] == {"name": "Basic", "tier": "Basic"}
    for key, value in (("friendlyName", ws.friendly_name), ("description", ws.description)):
        assert mlw.inputs.get(key) == value


def test_prod_workspace_is_private_with_a_managed_network(runs):
    mlw = one(runs["prod"], ML_WORKSPACE)
    assert mlw.inputs["publicNetworkAccess"] == "Disabled"
    assert mlw.inputs["managedNetwork"] == {
        "isolationMode": "AllowOnlyApprovedOutbound",
        "enableNetworkMonitor": False,  # the SDK's default, sent by azure-native
    }
    assert mlw.inputs["provisionNetworkNow"] is True
    assert mlw.inputs["systemDatastoresAuthMode"] == "Identity"
    assert one(runs["prod"], STORAGE).inputs["allowSharedKeyAccess"] is False
    assert one(runs["prod"], REGISTRY).inputs["sku"] == {"name": "Premium"}


@pytest.mark.parametrize("reached_by", ["private_endpoints", "managed"])
def test_a_registry_reached_privately_either_way_is_premium(stack_configs, reached_by):
    """Your own private endpoint, or the managed network's, to the registry: both need the Premium tier
    (container-registry-private-link: "available in the Premium container registry service tier")."""
    base = stack_configs["prod"]
    network = {reached_by: ns(base, "network")[reached_by]}
    # Without a managed network the nodes need a public IP (or a subnet of yours), and a private workspace's
    # clusters a subnet of the private endpoint's network (how-to-configure-private-link.md).
    clusters = [dict(c, node_public_ip=reached_by != "managed") for c in ns(base, "clusters")]
    if reached_by != "managed":
        subnet = ns(base, "network")["private_endpoints"]["subnet_id"].rsplit("/", 1)[0] + "/snet-train"
        clusters = [dict(c, subnet_id=subnet) for c in clusters]
    result = run_program("prod", variant(base, network=network, clusters=clusters))
    assert result.ok, result.error
    assert one(result, REGISTRY).inputs["sku"] == {"name": "Premium"}


def test_dev_workspace_is_public_with_access_keys(runs):
    mlw = one(runs["dev"], ML_WORKSPACE)
    assert mlw.inputs["publicNetworkAccess"] == "Enabled"
    assert "managedNetwork" not in mlw.inputs and "provisionNetworkNow" not in mlw.inputs
    assert mlw.inputs["systemDatastoresAuthMode"] == "AccessKey"


def test_an_existing_resource_group_is_looked_up_not_created(stack_configs):
    base = stack_configs["prod"]
    ws = dict(ns(base, "workspace"), resource_group={"name": "rg-shared", "create": False})
    result = run_program("prod", variant(base, workspace=ws))
    assert result.ok, result.error
    assert result.of_type(RESOURCE_GROUP) == []
    assert ("azure-native:resources:getResourceGroup", {"resourceGroupName": "rg-shared"}) in result.invokes
    placed = [r for r in result.declared if r.custom and "resourceGroupName" in r.inputs]
    assert placed and {r.inputs["resourceGroupName"] for r in placed} == {"rg-shared"}
    assert result.outputs["resource_group"] == "rg-shared"


# --- user-assigned identities -------------------------------------------------------------------------------


def test_user_assigned_identity_data_stores_and_customer_key(stack_configs):
    base = stack_configs["prod"]
    clusters = [dict(c, user_assigned_identity_id=UAI) for c in ns(base, "clusters")]
    # Under AllowOnlyApprovedOutbound a data store is reached only through a private-endpoint rule.
    network = dict(ns(base, "network"))
    rule = {
        "name": "data",
        "type": "private_endpoint",
        "service_resource_id": DATA,
        "subresource_target": "blob",
    }
    network["managed"] = dict(network["managed"], outbound_rules=[rule])
    # A private-endpoint rule needs a user-assigned workspace identity (stackconfig.combinations): the key's.
    identity = dict(
        ns(base, "identity"),
        data_stores=[DATA],
        customer_managed_key=customer_key(),
        workspace_identity_id=UAI,
    )
    result = run_program(
        "prod",
        variant(base, clusters=clusters, identity=identity, network=network),
        existing=vault(PROTECTED),  # the key's vault, outside the stack, with purge protection on
    )
    assert result.ok, result.error
    assert compute(result, "h100-x4").inputs["identity"] == {
        "type": "UserAssigned",
        "userAssignedIdentities": [UAI],
    }
    looked_up = [a for t, a in result.invokes if t == "azure-native:managedidentity:getUserAssignedIdentity"]
    assert looked_up and {(a["resourceGroupName"], a["resourceName"]) for a in looked_up} == {
        ("rg-id", "id-train")
    }
    readers = [g for g in result.of_type(ROLE_ASSIGNMENT) if role_of(g) == "Storage Blob Data Reader"]
    # Both clusters run as the one identity: one assignment (a second, identical under another name, is
    # ARM's 409 RoleAssignmentExists; stackconfig.identity.grant_plan).
    assert {g.inputs["scope"] for g in readers} == {DATA} and len(readers) == 1
    principals = {g.inputs["principalId"] for g in readers}
    assert len(principals) == 1 and GUID.match(next(iter(principals)))  # the identity the getter returned
    mlw = one(result, ML_WORKSPACE)
    assert mlw.inputs["identity"] == {"type": "UserAssigned", "userAssignedIdentities": [UAI]}
    # The rule's approver grant is the Workspace component's, made before the workspace (so before the
    # network provisioned with it): how-to-managed-network.md, "add the Azure AI Enterprise Network
    # Connection Approver role to your identity".
    (approver,) = [
        g
        for g in result.of_type(ROLE_ASSIGNMENT)
        if role_of(g) == "Azure AI Enterprise Network Connection Approver"
    ]
    assert approver.inputs["scope"] == DATA and approver.urn in mlw.dependencies
    assert {approver.inputs["principalId"]} == principals  # UAI's principal, known before the workspace
    assert mlw.inputs["encryption"] == {
        "status": "Enabled",
        "keyVaultProperties": {"keyVaultArmId": KV_CMK, "keyIdentifier": KEY_URI},
        "identity": {"userAssignedIdentity": UAI},
    }


def test_the_workspace_body_with_a_user_assigned_identity_passes_the_rest_spec_check(stack_configs):
    """azure-native 3.29 `ManagedServiceIdentityArgs.user_assigned_identities: Sequence[str]`: the program
    sends a list of identity ids, the provider turns it into the map id -> {} the REST spec types
    (common-types managedidentity.json `ManagedServiceIdentity.userAssignedIdentities`). The body the gate
    checks is the program's, after the provider's Check (which adds `azureApiVersion`)."""
    base = stack_configs["prod"]
    identity = dict(ns(base, "identity"), workspace_identity_id=WS_UAI)
    result = run_program("prod", variant(base, identity=identity))
    assert result.ok, result.error
    body = model.check(ML_WORKSPACE, one(result, ML_WORKSPACE).inputs, None, None, None)
    checked = check_resource(ML_WORKSPACE, body)
    assert checked.spec is not None, checked  # the vendored spec was found: the check really ran
    assert [f.path for f in checked.failures if f.path.startswith("identity")] == []
    # ... and the check does read that list: a non-string entry is refused by its index.
    bad = {**body, "identity": {**body["identity"], "userAssignedIdentities": [WS_UAI, 7]}}
    refused = [f.path for f in check_resource(ML_WORKSPACE, bad).failures if f.path.startswith("identity")]
    assert refused == ["identity.userAssignedIdentities[1]"]


def test_a_user_assigned_workspace_identity_is_granted_before_the_workspace(stack_configs):
    """how-to-identity-based-service-authentication.md, "User-assigned managed identity": the identity needs
    its roles on storage, key vault, registry and App Insights to create the workspace; PSRule's
    Azure.ML.UserManagedIdentity shape: type UserAssigned, primaryUserAssignedIdentity set."""
    base = stack_configs["prod"]
    identity = dict(ns(base, "identity"), workspace_identity_id=WS_UAI)
    result = run_program("prod", variant(base, identity=identity))
    assert result.ok, result.error
    mlw = one(result, ML_WORKSPACE)
    assert mlw.inputs["identity"] == {"type": "UserAssigned", "userAssignedIdentities": [WS_UAI]}
    assert mlw.inputs["primaryUserAssignedIdentity"] == WS_UAI
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


# --- the customer-managed key's vault -----------------------------------------------------------------------


@pytest.fixture
def cmk_config(stack_configs) -> dict:
    base = stack_configs["prod"]
    return variant(base, identity=dict(ns(base, "identity"), customer_managed_key=customer_key()))


def error_of(config: dict, existing: dict, preview: bool = True) -> str:
    result = run_program("prod", config, existing=existing, preview=preview)
    assert not result.ok and result.error, "expected the program to fail"
    # Nothing encrypted is declared: the workspace never reaches the engine.
    assert result.of_type(ML_WORKSPACE) == []
    return result.error


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize(
    "properties",
    [
        {"enableSoftDelete": True, "enablePurgeProtection": True},
        {"enablePurgeProtection": True},  # soft delete absent: the spec's default, true
    ],
)
def test_a_purge_protected_vault_gets_the_encrypted_workspace(cmk_config, properties, preview) -> None:
    result = run_program("prod", cmk_config, existing=vault(properties), preview=preview)
    assert result.ok, result.error
    reads = [a for t, a in result.invokes if t == GET_VAULT]
    assert [(a["resourceGroupName"], a["vaultName"]) for a in reads] == [("rg-keys", "kv-cmk")]
    encryption = one(result, ML_WORKSPACE).inputs["encryption"]
    assert encryption["keyVaultProperties"] == {"keyVaultArmId": KV_CMK, "keyIdentifier": KEY_URI}
    # The stack's own vault is a different one, untouched by the key's.
    assert one(result, KEY_VAULT).inputs["vaultName"] != "kv-cmk"


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize(
    "properties",
    [
        {"enableSoftDelete": True},  # never turned on: absent
        {"enableSoftDelete": True, "enablePurgeProtection": None},  # as `az keyvault show` prints it
        {"enableSoftDelete": True, "enablePurgeProtection": False},
    ],
)
def test_purge_protection_off_fails_with_the_vault_and_the_fix(cmk_config, properties, preview) -> None:
    message = error_of(cmk_config, vault(properties), preview)
    assert f"the key vault {KV_CMK} has purge protection off" in message
    assert "soft delete and purge protection" in message
    assert message.endswith(PURGE_FIX)
    assert "soft delete off" not in message


def test_soft_delete_off_names_both_fixes_soft_delete_first(cmk_config) -> None:
    message = error_of(cmk_config, vault({"enableSoftDelete": False}))
    assert f"the key vault {KV_CMK} has soft delete off" in message
    assert f"the key vault {KV_CMK} has purge protection off" in message
    # purge protection "is effective only if soft delete is also enabled" (VaultProperties): that fix first
    assert message.index(SOFT_FIX) < message.index(PURGE_FIX)


@pytest.mark.parametrize(
    "existing",
    [
        {},  # no vault at all
        # the same name in another resource group: a vault GET is by group and name
        vault(PROTECTED, KV_CMK.replace("rg-keys", "rg-other")),
    ],
)
def test_a_missing_vault_fails_with_arms_not_found(cmk_config, existing) -> None:
    message = error_of(cmk_config, existing)
    assert message.startswith(f"customer-managed key: cannot read the key vault {KV_CMK} (")
    assert "ResourceNotFound" in message
    assert (
        "The Resource 'Microsoft.KeyVault/vaults/kv-cmk' under resource group 'rg-keys' was not found."
        in (message)
    )
    assert "az keyvault show --ids" in message


def test_arm_ids_compare_without_case(cmk_config) -> None:
    upper = KV_CMK.replace("rg-keys", "RG-KEYS").replace("kv-cmk", "KV-CMK")
    result = run_program("prod", cmk_config, existing=vault(PROTECTED, upper))
    assert result.ok, result.error


def test_the_vault_is_not_read_before_the_key_is_acknowledged(cmk_config) -> None:
    ident = ns(cmk_config, "identity")
    key = {k: v for k, v in ident["customer_managed_key"].items() if k != "acknowledged"}
    result = run_program(
        "prod",
        variant(cmk_config, identity={**ident, "customer_managed_key": key}),
        existing=vault(PROTECTED),
    )
    assert [p.split(": ", 1)[0] for p in result.problems] == [
        "azml-gpu:identity.customer_managed_key.acknowledged"
    ]
    assert result.declared == []
    assert GET_VAULT not in [t for t, _ in result.invokes]


def test_no_key_reads_no_vault(runs) -> None:
    assert GET_VAULT not in [t for t, _ in runs["prod"].invokes]


@pytest.mark.parametrize(
    ("network", "closed"),
    [
        (
            {"publicNetworkAccess": "disabled", "networkAcls": {"bypass": "None"}},
            "public network access disabled",
        ),
        (
            {"publicNetworkAccess": "Disabled", "networkAcls": {"bypass": "None"}},
            "public network access disabled",
        ),
        ({"networkAcls": {"bypass": "None", "defaultAction": "Deny"}}, "its firewall denying by default"),
    ],
)
def test_a_vault_closed_to_trusted_services_is_refused(cmk_config, network, closed) -> None:
    message = error_of(cmk_config, vault({**PROTECTED, **network}))
    assert f"the key vault {KV_CMK} lets no trusted Microsoft service in ({closed}" in message
    assert message.endswith(BYPASS_FIX)
    assert "purge protection off" not in message


@pytest.mark.parametrize(
    "network",
    [
        {},  # no firewall: public
        {"publicNetworkAccess": "disabled", "networkAcls": {"bypass": "AzureServices"}},
        {"publicNetworkAccess": "disabled", "networkAcls": {"defaultAction": "Deny"}},  # bypass defaults
        {"networkAcls": {"bypass": "None", "defaultAction": "Allow"}},  # public, no rule denies
    ],
)
def test_a_vault_reachable_by_trusted_services_or_publicly_passes(cmk_config, network) -> None:
    result = run_program("prod", cmk_config, existing=vault({**PROTECTED, **network}))
    assert result.ok, result.error


def test_a_customer_key_in_another_subscription_is_refused(stack_configs):
    base = stack_configs["prod"]
    other = "11111111-1111-1111-1111-111111111111"
    key = customer_key(key_vault_id=KV_CMK.replace(SUB, other))
    result = run_program("prod", variant(base, identity=dict(ns(base, "identity"), customer_managed_key=key)))
    assert not result.ok and result.of_type(ML_WORKSPACE) == []
    assert f"is in subscription {other}, not the workspace's ({SUB})" in result.error


@pytest.mark.parametrize(
    "bad",
    [
        f"/subscriptions/{SUB}/resourceGroups/rg-keys",
        f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.Storage/storageAccounts/kv-cmk",
        KV_CMK + "/keys/ws-key",
    ],
)
def test_the_component_refuses_an_id_that_names_no_vault(bad) -> None:
    """Below the config's check (stackconfig refuses these first): the component's own guard, by message."""
    from components.workspace import CustomerKeyError, read_key_vault

    with pytest.raises(CustomerKeyError) as info:
        read_key_vault(bad)
    assert str(info.value) == (
        f"customer-managed key: {bad!r} is not the ARM id of a key vault; use "
        "/subscriptions/<subscription-id>/resourceGroups/<rg>/providers/Microsoft.KeyVault/vaults/<name>"
    )
