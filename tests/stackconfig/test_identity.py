"""stackconfig/identity.py: the `azml-gpu:identity` keys, each branch from the happy-path config with one
value changed (people's role grants: object ids, which roles; the customer-managed key's URI, ids and
acknowledgements; the data stores; the defaults, Azure's: key-based datastores, keys on, no diagnostics), and
the grant plan: which role assignments the stack declares, nothing Azure makes itself (sources in
stackconfig/identity.py `grant_plan`).

`identity.customer_managed_key.acknowledged`: what a customer-managed key needs that no Azure read can check
(docs/azure-behaviour.md section 18), refused until acknowledged, each refusal with the commands. Facts from
the sources, not from the code: the Azure Cosmos DB principal and its key permissions
(how-to-setup-customer-managed-keys.md, "Allow Azure Cosmos DB to access the key": "Get, Unwrap Key, and Wrap
key"; "a232010e-820c-4083-83bb-3ace5fc29d0b for all regions other than Azure Government. For Azure Government,
the principal ID is 57506a73-e302-42a9-b869-6f12d9ec29e9"), the RBAC role for it (cosmos-db
how-to-setup-customer-managed-keys.md: "Key Vault Crypto Service Encryption User"), and the providers
(how-to-setup-customer-managed-keys.md, Prerequisites: Microsoft.MachineLearningServices, Microsoft.Storage,
Microsoft.KeyVault, Microsoft.DocumentDB, Microsoft.Search)."""

from __future__ import annotations

from typing import Any

import pytest

import azroles
from stackconfig import ConfigError, validate
from stackconfig.combinations import plan

from .stackconfig_factory import good_raw, problems

SUB = "00000000-0000-0000-0000-000000000000"
OID = "00000000-0000-0000-0000-00000000A001"
DATA = f"/subscriptions/{SUB}/resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stdata"
KV = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
UAI = (
    f"/subscriptions/{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/userAssignedIdentities/u"
)
KEY_URI = "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef"
AT = "azml-gpu:identity"
ROLES = ", ".join(azroles.PEOPLE_ROLES)
ACK_AT = f"{AT}.customer_managed_key.acknowledged"
WS_UAI = UAI.removesuffix("/u") + "/id-ws"
PE_SUBNET = (
    f"/subscriptions/{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet/"
    "subnets/snet-pe"
)
MANAGED = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
GROUP = {"principal_id": "00000000-0000-0000-0000-00000000a001", "principal_type": "Group"}


def with_identity(**identity) -> dict:
    raw = good_raw()
    raw["identity"] = identity
    return raw


def grant(**changes) -> dict:
    return {"principal_id": OID, "principal_type": "Group", "role": "AzureML Data Scientist"} | changes


def test_defaults_are_azures():
    ident = validate(good_raw()).identity
    assert (ident.system_datastores_auth_mode, ident.storage_shared_key_access) == ("accessKey", True)
    assert (ident.data_stores, ident.role_assignments, ident.customer_managed_key) == ([], [], None)
    assert ident.diagnostic_settings is False and ident.identity_datastores is False
    raw = with_identity(system_datastores_auth_mode="identity")
    raw["deploy"] = {"smoke": False}
    assert validate(raw).identity.identity_datastores is True


# --- people's role grants -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "role",
    [
        "AzureML Data Scientist",
        "AzureML Compute Operator",
        "AzureML Metrics Writer (preview)",
        "AzureML Registry User",
        "Reader",
    ],
)
def test_each_workspace_role_can_be_granted(role):
    (g,) = validate(with_identity(role_assignments=[grant(role=role)])).identity.role_assignments
    assert g.role == role
    assert g.principal_id == OID.lower()  # object ids are compared lower-case


@pytest.mark.parametrize("role", ["Owner", "Contributor"])
def test_a_privileged_role_is_refused_with_why(role):
    (p,) = problems(with_identity(role_assignments=[grant(role=role)]))
    assert p == (
        f"{AT}.role_assignments[0].role: '{role}' is not granted by this stack (it could change or delete "
        f"every resource of the workspace); use one of {ROLES}"
    )


@pytest.mark.parametrize(
    "role", ["Storage Blob Data Contributor", "azureml data scientist", "User Access Administrator"]
)
def test_another_role_is_refused(role):
    (p,) = problems(with_identity(role_assignments=[grant(role=role)]))
    assert p == f"{AT}.role_assignments[0].role: '{role}' is not a role this stack grants; use one of {ROLES}"


@pytest.mark.parametrize("oid", ["not-a-guid", "00000000-0000-0000-0000-00000000a00", ""])
def test_a_principal_must_be_an_object_id(oid):
    (p,) = problems(with_identity(role_assignments=[grant(principal_id=oid)]))
    assert p.startswith(f"{AT}.role_assignments[0].principal_id: ")
    assert "object id of the user, group or service principal" in p


def _raw(**network) -> dict:
    return {
        "workspace": {"name": "ws-a", "resource_group": {"name": "rg-a"}, "region": "eastus"},
        "clusters": [
            {
                "name": "h100-x2",
                "size": "Standard_ND96isr_H100_v5",
                "max_instances": 2,
                "idle_time_before_scale_down": 300,
                "tier": "dedicated",
                "ssh": "disabled",
                "region": "westus3",
            }
        ],
        **({"network": network} if network else {}),
    }


def test_people_roles_need_an_object_id_and_a_known_role() -> None:
    raw = _raw()
    raw["clusters"][0]["region"] = "eastus"
    raw["identity"] = {
        "role_assignments": [
            {"principal_id": "alice@contoso.com", "principal_type": "User", "role": "AzureML Data Scientst"}
        ]
    }
    with pytest.raises(ConfigError) as info:
        validate(raw)
    text = "\n".join(info.value.problems)
    assert "role_assignments[0].principal_id: 'alice@contoso.com' is not a GUID" in text
    assert "role_assignments[0].role: 'AzureML Data Scientst' is not a role this stack grants" in text


# --- the customer-managed key -------------------------------------------------------------------------------


ACKNOWLEDGED = ["cosmos_db_key_access", "providers_registered"]


def cmk(**changes) -> dict:
    return {
        "key_vault_id": KV,
        "key_uri": KEY_URI,
        "user_assigned_identity_id": UAI,
        "acknowledged": ACKNOWLEDGED,
    } | changes


def test_a_customer_managed_key_is_accepted():
    key = validate(with_identity(customer_managed_key=cmk())).identity.customer_managed_key
    assert (key.key_vault_id, key.key_uri, key.user_assigned_identity_id) == (KV, KEY_URI, UAI)


@pytest.mark.parametrize(
    "uri",
    [
        "http://kv-cmk.vault.azure.net/keys/ws-key/1",
        "https://kv-cmk.vault.azure.net/secrets/ws-key/1",
        "kv-cmk/keys/k",
    ],
)
def test_the_key_uri_is_an_https_key_identifier(uri):
    (p,) = problems(with_identity(customer_managed_key=cmk(key_uri=uri)))
    assert p == (
        f"{AT}.customer_managed_key.key_uri: '{uri}' is not a key vault key identifier; use "
        "https://<vault>.vault.azure.net/keys/<key>/<version>"
    )


@pytest.mark.parametrize(("key", "wrong"), [("key_vault_id", UAI), ("user_assigned_identity_id", KV)])
def test_each_key_id_names_its_resource_type(key, wrong):
    (p,) = problems(with_identity(customer_managed_key=cmk(**{key: wrong})))
    assert p.startswith(f"{AT}.customer_managed_key.{key}: ")


def test_customer_managed_key_ids_must_name_a_vault_and_a_user_assigned_identity() -> None:
    sub = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-a/providers"
    vault = f"{sub}/Microsoft.KeyVault/vaults/kv-cmk"
    identity = f"{sub}/Microsoft.ManagedIdentity/userAssignedIdentities/uai-cmk"
    key = "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef"
    good = {
        "key_vault_id": vault,
        "key_uri": key,
        "user_assigned_identity_id": identity,
        "acknowledged": ["cosmos_db_key_access", "providers_registered"],
    }
    validate({**_raw(), "identity": {"customer_managed_key": good}})
    swapped = dict(good, key_vault_id=identity, user_assigned_identity_id=vault)
    with pytest.raises(ConfigError) as info:
        validate({**_raw(), "identity": {"customer_managed_key": swapped}})
    problems = info.value.problems
    assert len(problems) == 2
    keys = sorted(p.split(": ", 1)[0] for p in problems)
    assert keys == [
        "azml-gpu:identity.customer_managed_key.key_vault_id",
        "azml-gpu:identity.customer_managed_key.user_assigned_identity_id",
    ]
    assert any("Microsoft.KeyVault/vaults" in p for p in problems)
    assert any("Microsoft.ManagedIdentity/userAssignedIdentities" in p for p in problems)


COSMOS_PUBLIC = "a232010e-820c-4083-83bb-3ace5fc29d0b"
COSMOS_GOVERNMENT = "57506a73-e302-42a9-b869-6f12d9ec29e9"


PROVIDERS = (
    "Microsoft.MachineLearningServices",
    "Microsoft.Storage",
    "Microsoft.KeyVault",
    "Microsoft.DocumentDB",
    "Microsoft.Search",
)


def key(**changes) -> dict:
    raw = good_raw()
    raw["identity"] = {
        "customer_managed_key": {
            "key_vault_id": KV,
            "key_uri": KEY_URI,
            "user_assigned_identity_id": UAI,
            **changes,
        }
    }
    return raw


def test_a_key_without_acknowledgements_is_refused_with_every_command() -> None:
    (p,) = problems(key())
    assert p.startswith(f"{ACK_AT}: not acknowledged: cosmos_db_key_access: ")
    # The Cosmos DB principal, in both clouds, and the three key permissions.
    assert COSMOS_PUBLIC in p and COSMOS_GOVERNMENT in p
    assert "Get, Wrap Key and Unwrap Key" in p
    # Both permission models of the vault: an access policy, or the RBAC role on the vault itself.
    assert (
        f"az keyvault set-policy --name kv-cmk --spn {COSMOS_PUBLIC} --key-permissions get wrapKey unwrapKey"
        in p
    )
    assert (
        f"az role assignment create --assignee {COSMOS_PUBLIC} "
        f'--role "Key Vault Crypto Service Encryption User" --scope {KV}'
    ) in p
    # Every provider of the prerequisites table, each with its register command.
    for provider in PROVIDERS:
        assert f"az provider register --namespace {provider}" in p
    assert "add cosmos_db_key_access, providers_registered to acknowledged" in p


@pytest.mark.parametrize(
    ("given", "missing", "absent"),
    [
        (["providers_registered"], "cosmos_db_key_access", "az provider register"),
        (["cosmos_db_key_access"], "providers_registered", COSMOS_PUBLIC),
    ],
)
def test_only_the_missing_acknowledgement_is_named(given: list[str], missing: str, absent: str) -> None:
    (p,) = problems(key(acknowledged=given))
    assert p.startswith(f"{ACK_AT}: not acknowledged: {missing}: ")
    assert absent not in p  # the one acknowledged is not asked again
    assert f"then add {missing} to acknowledged" in p


@pytest.mark.parametrize(
    "given",
    [
        ["cosmos_db_key_access", "providers_registered"],
        ["providers_registered", "cosmos_db_key_access"],
        ["providers_registered", "cosmos_db_key_access", "providers_registered"],
    ],
)
def test_both_acknowledgements_in_any_order_are_accepted(given: list[str]) -> None:
    cmk = validate(key(acknowledged=given)).identity.customer_managed_key
    assert cmk is not None and set(cmk.acknowledged) == {"cosmos_db_key_access", "providers_registered"}


@pytest.mark.parametrize("bad", ["cosmos", "Providers_Registered", ""])
def test_an_unknown_acknowledgement_is_refused_by_name(bad: str) -> None:
    (p,) = problems(key(acknowledged=["cosmos_db_key_access", "providers_registered", bad]))
    assert p == (
        f"{ACK_AT}: {bad!r} is not an acknowledgement; use cosmos_db_key_access and providers_registered"
    )


def test_acknowledgements_are_a_list() -> None:
    (p,) = problems(key(acknowledged="cosmos_db_key_access"))
    assert p.startswith(f"{ACK_AT}: expected a list, got 'cosmos_db_key_access'")


def test_no_customer_managed_key_needs_no_acknowledgement() -> None:
    raw = good_raw()
    raw["identity"] = {}
    assert validate(raw).identity.customer_managed_key is None


# --- data stores --------------------------------------------------------------------------------------------


def test_data_stores_are_storage_account_ids():
    assert validate(with_identity(data_stores=[DATA])).identity.data_stores == [DATA]
    (p,) = problems(with_identity(data_stores=[DATA, KV]))
    assert p.startswith(f"{AT}.data_stores: ") and "Microsoft.Storage/storageAccounts" in p


# --- the grant plan: nothing Azure makes itself -------------------------------------------------------------


def public() -> dict[str, Any]:
    """good_raw with one eastus cluster without SSH (the cross-region one would trip the network rules), and
    no smoke job in the deploy pipeline (its principal's grants: test_deploy.py)."""
    raw = good_raw()
    raw["clusters"] = [dict(raw["clusters"][0], ssh="disabled")]
    raw["deploy"] = {"smoke": False}
    return raw


def grants(raw: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return sorted((g.key, g.scope, g.principal, g.role) for g in plan(validate(raw)))


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
    raw["identity"] = {"workspace_identity_id": WS_UAI}
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


def private(**network: Any) -> dict[str, Any]:
    """A private workspace: managed network, no node public IPs, a workspace private endpoint."""
    raw = public()
    raw["workspace"]["public_network_access"] = "Disabled"
    raw["clusters"][0]["node_public_ip"] = False
    raw["network"] = {**MANAGED, "private_endpoints": {"subnet_id": PE_SUBNET}, **network}
    return raw


def test_a_private_endpoint_rule_grants_the_network_connection_approver_on_its_target_before_the_workspace():
    """A user-assigned workspace identity's approver grant is made before the workspace, so it exists when the
    managed network is provisioned at creation (how-to-managed-network.md: "add the Azure AI Enterprise
    Network Connection Approver role to your identity")."""
    rule = {
        "name": "data",
        "type": "private_endpoint",
        "service_resource_id": DATA,
        "subresource_target": "blob",
    }
    raw = private(managed={"isolation_mode": "AllowOnlyApprovedOutbound", "outbound_rules": [rule]})
    raw["identity"] = {"workspace_identity_id": WS_UAI}
    (approver,) = [g for g in plan(validate(raw)) if g.key == "ws/stdata/network-approver"]
    assert (approver.scope, approver.principal, approver.role, approver.before_workspace) == (
        DATA,
        "workspace",
        "Azure AI Enterprise Network Connection Approver",
        True,
    )


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


def test_the_workspace_identity_id_must_name_a_user_assigned_identity() -> None:
    raw = public()
    raw["identity"] = {"workspace_identity_id": DATA}
    (problem,) = problems(raw)
    assert problem.startswith("azml-gpu:identity.workspace_identity_id: ")
    assert "Microsoft.ManagedIdentity/userAssignedIdentities" in problem


# --- one grant per (principal, role, scope): shared user-assigned identities (issue 33 item 2) ------------
# ARM refuses a second assignment of the same role to the same principal on the same scope under another
# name with 409 RoleAssignmentExists (Azure/bicep discussion #19690; learn.microsoft.com/rest/api/
# authorization, privileged-role common errors: "RoleAssignmentExists ... The Role assignment already
# exists").


def two_clusters(first_identity: str | None, second_identity: str | None) -> dict[str, Any]:
    """Identity datastores (each cluster identity gets Storage Blob Data Contributor on the storage,
    how-to-disable-local-auth-storage.md) with two eastus clusters and the given identities."""
    raw = public()
    second = dict(raw["clusters"][0], name="h100-b")
    raw["clusters"] = [
        dict(raw["clusters"][0], user_assigned_identity_id=first_identity),
        dict(second, user_assigned_identity_id=second_identity),
    ]
    raw["identity"] = {"system_datastores_auth_mode": "identity"}
    return raw


def assignments(raw: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(g.principal, g.role, g.scope) for g in plan(validate(raw))]


def test_two_clusters_sharing_one_identity_get_one_storage_grant() -> None:
    blob = "Storage Blob Data Contributor"
    shared = grants(two_clusters(UAI, UAI))
    assert [g for g in shared if g[3] == blob] == [
        ("h100-x4/st/blob-contributor", "storage", "cluster:h100-x4", blob)
    ]


def test_the_same_identity_in_another_casing_is_the_same_principal() -> None:
    """ARM ids compare case-insensitively (resource-name-rules.md)."""
    blob = "Storage Blob Data Contributor"
    assert (
        len(
            [
                g
                for g in grants(two_clusters(UAI, UAI.upper().replace("/SUBSCRIPTIONS/", "/subscriptions/")))
                if g[3] == blob
            ]
        )
        == 1
    )


@pytest.mark.parametrize(
    "identities, principals",
    [
        ((None, None), ["cluster:h100-x4", "cluster:h100-b"]),  # each its own system-assigned identity
        ((UAI, None), ["cluster:h100-x4", "cluster:h100-b"]),
        ((UAI, UAI.removesuffix("/u") + "/other"), ["cluster:h100-x4", "cluster:h100-b"]),
    ],
)
def test_clusters_with_their_own_identities_each_get_their_grant(identities, principals) -> None:
    blob = "Storage Blob Data Contributor"
    got = [p for p, role, scope in assignments(two_clusters(*identities)) if role == blob]
    assert got == principals


def test_a_data_store_reader_grant_is_declared_once_for_a_shared_identity() -> None:
    raw = two_clusters(UAI, UAI)
    raw["identity"] = {"data_stores": [DATA]}
    readers = [g for g in grants(raw) if g[3] == "Storage Blob Data Reader"]
    assert readers == [("h100-x4/stdata/blob-reader", DATA, "cluster:h100-x4", "Storage Blob Data Reader")]


def test_a_cluster_using_the_workspace_identity_adds_no_grant_the_workspace_has() -> None:
    """The workspace's user-assigned identity already gets Storage Blob Data Contributor on the storage
    (how-to-identity-based-service-authentication.md, "User-assigned managed identity > Workspace"): the
    cluster that runs as the same identity needs it too, and it is the same assignment."""
    raw = two_clusters(WS_UAI, None)
    raw["identity"]["workspace_identity_id"] = WS_UAI
    got = assignments(raw)
    assert len(got) == len(set(got))
    blob = [(p, scope) for p, role, scope in got if role == "Storage Blob Data Contributor"]
    assert blob == [("workspace", "storage"), ("cluster:h100-b", "storage")]
    (ws_blob,) = [
        g
        for g in plan(validate(raw))
        if g.role == "Storage Blob Data Contributor" and g.principal == "workspace"
    ]
    assert ws_blob.before_workspace is True and ws_blob.key == "ws/st/blob-contributor"
    assert not [g for g in plan(validate(raw)) if g.principal == "cluster:h100-x4"]


def test_the_same_entry_written_twice_is_left_for_the_gate_to_name() -> None:
    """The same person and role twice is one config entry repeated, not a shared identity: both stay, and
    the gate names both entries (preflight.duplicates, tests/integration/gate/test_stack_file_forms.py)."""
    raw = public()
    raw["identity"] = {"role_assignments": [dict(GROUP, role="Reader"), dict(GROUP, role="Reader")]}
    who = GROUP["principal_id"]
    assert [g for g in grants(raw) if g[2] == who] == [
        (f"people/{who}/reader", "workspace", who, "Reader")
    ] * 2
