"""components/identity.py: the stack's role assignments, as the real program declares them for the shipped
stacks and for variants of Pulumi.prod.yaml that change one thing (Pulumi mocks, program_mocks.py). What a
user notices: which identity gets which role on which resource, under which GUID name, and that every role id
is the one Azure publishes.

Expected grants from learn.microsoft.com/azure/machine-learning/how-to-identity-based-service-authentication
(workspace identity: Key Vault Administrator on an RBAC vault; with identity-based datastores Storage Blob
Data Contributor on its storage) and how-to-disable-local-auth-storage (identity-based datastores also need
Storage File Data Privileged Contributor; with keys off people's own identity reads and uploads data, so
data scientists get both storage roles); nothing Azure makes itself (stackconfig.identity.grant_plan).

Role GUIDs: learn.microsoft.com/azure/role-based-access-control/built-in-roles (source
MicrosoftDocs/azure-docs articles/role-based-access-control/built-in-roles.md, 2026-04-09 revision, the
"ID" column of its Privileged, General, Storage, Containers, AI + machine learning and Security tables).
The GUIDs are the same in every tenant.
"""

from __future__ import annotations

import uuid

import pytest

import azroles

from .components_helpers import (
    ACCESS_COMPONENT,
    CLUSTER_COMPONENT,
    COMPUTE,
    DATA,
    GUID,
    KEY_VAULT,
    ML_WORKSPACE,
    ROLE_ASSIGNMENT,
    STORAGE,
    SUB,
    UAI,
    ns,
    one,
    variant,
)
from .program_mocks import run_program

PERSON = "00000000-0000-0000-0000-0000000000b1"
OTHER_SUB = "11111111-2222-3333-4444-555555555555"  # role definition ids are the same in every subscription

PUBLISHED_ROLE_IDS = {
    # Privileged
    "Contributor": "b24988ac-6180-42a0-ab88-20f7382dd24c",
    "Owner": "8e3af657-a8ff-443c-a75c-2fe8c4bcb635",
    "Role Based Access Control Administrator": "f58310d9-a9f6-439a-9e8d-f62e7b41a168",
    "User Access Administrator": "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9",
    # General
    "Reader": "acdd72a7-3385-48ef-bd42-f606fba81ae7",
    # Storage
    "Storage Blob Data Contributor": "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
    "Storage Blob Data Reader": "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1",
    "Storage File Data Privileged Contributor": "69566ab7-960f-475b-8e7c-b3118f30c6bd",
    # Containers
    "AcrPull": "7f951dda-4ed3-4680-a7ca-43fe172d538d",
    "AcrPush": "8311e382-0749-4cb8-b61a-304f252e45ec",
    # AI + machine learning
    "AzureML Compute Operator": "e503ece1-11d0-4e8e-8e2c-7a6c3bf38815",
    "AzureML Data Scientist": "f6c7c914-8db3-469d-8ca1-694a8f32e121",
    "AzureML Metrics Writer (preview)": "635dd51f-9968-44d3-b7fb-6d9a6bd613ae",
    "AzureML Registry User": "1823dd4f-9b8c-4ab6-ab4e-7397a3684615",
    "Azure AI Enterprise Network Connection Approver": "b556d68e-0be0-4f35-a333-ad7ee1ce17ea",
    # Security
    "Key Vault Administrator": "00482a5a-887f-4fb3-b363-3b7fe8e74483",
    "Key Vault Crypto Service Encryption User": "e147488a-f6f5-4113-8e2d-b22465e65bf6",
    "Key Vault Secrets User": "4633458b-17de-408a-b874-0445c86b69e6",
}


def role_of(r) -> str:
    return azroles.role_name(r.inputs["roleDefinitionId"])


# --- the shipped stacks -------------------------------------------------------------------------------------


def test_prod_role_assignments_sit_on_single_resources(runs):
    run = runs["prod"]
    grants_ = run.of_type(ROLE_ASSIGNMENT)
    storage, mlw = one(run, STORAGE), one(run, ML_WORKSPACE)
    seen = sorted((role_of(r), r.inputs["scope"].rsplit("/", 2)[-2]) for r in grants_)
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
    for r in grants_:
        assert GUID.match(r.inputs["roleAssignmentName"])
        assert r.inputs["roleDefinitionId"].startswith(
            f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/"
        )
        assert r.inputs["scope"].startswith(f"/subscriptions/{SUB}/resourceGroups/rg-train/providers/")
    people = [r for r in grants_ if r.inputs["scope"] == mlw.id]
    scientists = [
        r for r in grants_ if r.inputs["principalId"].endswith("a001") and r.inputs["scope"] == storage.id
    ]
    assert sorted(role_of(r) for r in scientists) == [
        "Storage Blob Data Contributor",
        "Storage File Data Privileged Contributor",
    ]
    assert {(r.inputs["principalId"], r.inputs["principalType"]) for r in people} == {
        ("00000000-0000-0000-0000-00000000a001", "Group"),
        ("00000000-0000-0000-0000-00000000a002", "Group"),
    }


def test_managed_identity_grants_name_the_principal_azure_gave_each_identity(runs):
    """The workspace's grant goes to the workspace's system-assigned identity, each cluster's to its own
    (the principal ARM returns once the resource exists), never to one another's."""
    run = runs["prod"]
    grants_ = run.of_type(ROLE_ASSIGNMENT)
    vault, storage = one(run, KEY_VAULT), one(run, STORAGE)
    (ws_grant,) = [r for r in grants_ if r.inputs["scope"] == vault.id]
    assert ws_grant.inputs["principalType"] == "ServicePrincipal"
    assert ws_grant.inputs["principalId"] == one(run, ML_WORKSPACE).state["identity"]["principalId"]
    cluster_principals = {}
    for cluster in run.of_type(CLUSTER_COMPONENT):
        (node,) = [r for r in run.of_type(COMPUTE) if r.parent == cluster.urn]
        cluster_principals[cluster.name] = node.state["identity"]["principalId"]
    on_storage = {
        r.inputs["principalId"]
        for r in grants_
        if r.inputs["scope"] == storage.id and r.inputs["principalType"] == "ServicePrincipal"
    }
    assert on_storage == set(cluster_principals.values()) and len(on_storage) == 2
    assert ws_grant.inputs["principalId"] not in on_storage


def test_assignment_names_are_stable_across_runs(runs):
    again = run_program("prod")
    assert sorted(r.inputs["roleAssignmentName"] for r in again.of_type(ROLE_ASSIGNMENT)) == sorted(
        r.inputs["roleAssignmentName"] for r in runs["prod"].of_type(ROLE_ASSIGNMENT)
    )


def test_dev_grants_only_the_key_vault_role(runs):
    (grant,) = runs["dev"].of_type(ROLE_ASSIGNMENT)
    assert role_of(grant) == "Key Vault Administrator"


def test_a_private_endpoint_rule_grants_the_approver_role_on_its_target(stack_configs):
    """Azure AI Enterprise Network Connection Approver, no longer granted by Azure itself (grant_plan), to the
    user-assigned workspace identity (a system-assigned one is refused with private-endpoint rules:
    stackconfig.combinations), before the workspace: prod provisions its managed network at creation."""
    base = stack_configs["prod"]
    network = dict(ns(base, "network"))
    rule = {
        "name": "data",
        "type": "private_endpoint",
        "service_resource_id": DATA,
        "subresource_target": "blob",
    }
    network["managed"] = dict(network["managed"], outbound_rules=[rule])
    assert network["managed"]["provision_at_creation"] is True
    ws_uai = UAI.replace("/id-train", "/id-ws")
    identity = dict(ns(base, "identity"), workspace_identity_id=ws_uai)
    result = run_program("prod", variant(base, network=network, identity=identity))
    assert result.ok, result.error
    (approver,) = [
        r
        for r in result.of_type(ROLE_ASSIGNMENT)
        if role_of(r) == "Azure AI Enterprise Network Connection Approver"
    ]
    assert approver.inputs["scope"] == DATA and approver.inputs["principalType"] == "ServicePrincipal"
    assert approver.inputs["roleDefinitionId"].endswith("/b556d68e-0be0-4f35-a333-ad7ee1ce17ea")
    mlw = one(result, ML_WORKSPACE)
    assert approver.urn in mlw.dependencies  # made before the workspace and its network
    assert GUID.match(approver.inputs["principalId"])  # the identity's, read before the workspace exists


def test_a_user_assigned_workspace_identitys_grants_are_each_declared_once(stack_configs):
    """With a user-assigned workspace identity the grants it needs before the workspace exists are the
    Workspace component's (test_workspace.py); the stack's RoleAssignments declares the rest, after the
    workspace, and none of those again: a second identical assignment is ARM's 409 RoleAssignmentExists."""
    base = stack_configs["prod"]
    ws_uai = UAI.replace("/id-train", "/id-ws")
    result = run_program(
        "prod", variant(base, identity=dict(ns(base, "identity"), workspace_identity_id=ws_uai))
    )
    assert result.ok, result.error
    declared = [
        (r.inputs["scope"], role_of(r), r.inputs["principalId"]) for r in result.of_type(ROLE_ASSIGNMENT)
    ]
    assert len(declared) == len(set(declared))
    mlw = one(result, ML_WORKSPACE)
    (access,) = [c for c in result.of_type(ACCESS_COMPONENT) if c.parent == result.resources[0].urn]
    after = sorted((role_of(r), r.inputs["scope"].rsplit("/", 2)[-2]) for r in result.children(access))
    assert after == sorted(
        [
            ("Contributor", "workspaces"),  # the identity's, on the workspace that now exists
            ("Storage Blob Data Contributor", "storageAccounts"),  # h100-x4
            ("Storage Blob Data Contributor", "storageAccounts"),  # a100-spot
            ("AzureML Data Scientist", "workspaces"),
            ("Storage Blob Data Contributor", "storageAccounts"),  # the data scientists' group, keys off
            ("Storage File Data Privileged Contributor", "storageAccounts"),
            ("AzureML Compute Operator", "workspaces"),
        ]
    )
    (contributor,) = [
        r for r in result.children(access) if r.inputs["scope"] == mlw.id and role_of(r) == "Contributor"
    ]
    assert contributor.inputs["principalType"] == "ServicePrincipal" and GUID.match(
        contributor.inputs["principalId"]
    )


# --- variants of prod ---------------------------------------------------------------------------------------


def grants(result) -> list[tuple[str, str, str, str]]:
    """(role, scope kind, principal type, principal id) of every role assignment, sorted."""
    out = []
    for r in result.of_type(ROLE_ASSIGNMENT):
        kind = r.inputs["scope"].rstrip("/").rsplit("/", 2)[-2]
        out.append(
            (
                azroles.role_name(r.inputs["roleDefinitionId"]),
                kind,
                r.inputs["principalType"],
                r.inputs["principalId"],
            )
        )
    return sorted(out)


def run_with_identity(stack_configs, **identity):
    base = stack_configs["prod"]
    cfg = variant(base, identity={**ns(base, "identity"), **identity})
    if identity.get("data_stores"):  # jobs reach other storage only with internet outbound (or a PE rule)
        net = dict(ns(base, "network"))
        net["managed"] = {**net["managed"], "isolation_mode": "AllowInternetOutbound"}
        cfg = variant(cfg, network=net)
    result = run_program("prod", cfg)
    assert result.ok, result.error
    return result


@pytest.fixture(scope="module")
def key_based(stack_configs):
    """prod with Azure's default key-based datastores (keys on), its registry and both groups kept."""
    return run_with_identity(
        stack_configs, system_datastores_auth_mode="accessKey", storage_shared_key_access=True
    )


def test_key_based_datastores_grant_no_storage_data_roles(key_based):
    roles = [g[0] for g in grants(key_based)]
    assert not {"Storage Blob Data Contributor", "Storage File Data Privileged Contributor"} & set(roles)


def test_key_based_datastores_keep_the_vault_role_and_peoples_workspace_roles(key_based):
    mlw = one(key_based, ML_WORKSPACE)
    got = grants(key_based)
    assert [g for g in got if g[0] == "Key Vault Administrator"][0][1:3] == ("vaults", "ServicePrincipal")
    people = sorted((g[0], g[2], g[3]) for g in got if g[1] == "workspaces")
    assert people == [
        ("AzureML Compute Operator", "Group", "00000000-0000-0000-0000-00000000a002"),
        ("AzureML Data Scientist", "Group", "00000000-0000-0000-0000-00000000a001"),
    ]
    scopes = {
        r.inputs["scope"] for r in key_based.of_type(ROLE_ASSIGNMENT) if r.inputs["principalType"] == "Group"
    }
    assert scopes == {mlw.id}  # with keys on, people get nothing on the storage account


def test_without_a_registry_no_cluster_gets_acrpull(stack_configs):
    base = stack_configs["prod"]
    cfg = variant(base, workspace={**ns(base, "workspace"), "container_registry": False})
    result = run_program("prod", cfg)
    assert result.ok, result.error
    assert "AcrPull" not in [g[0] for g in grants(result)]


@pytest.mark.parametrize(
    ("role", "storage_roles"),
    [
        (
            "AzureML Data Scientist",
            ["Storage Blob Data Contributor", "Storage File Data Privileged Contributor"],
        ),
        ("Reader", []),  # a reader uploads nothing
        ("AzureML Compute Operator", []),
    ],
)
def test_a_persons_storage_roles_follow_their_workspace_role_with_keys_off(
    stack_configs, role, storage_roles
):
    result = run_with_identity(
        stack_configs, role_assignments=[{"principal_id": PERSON, "principal_type": "User", "role": role}]
    )
    storage = one(result, STORAGE)
    mine = [r for r in result.of_type(ROLE_ASSIGNMENT) if r.inputs["principalId"] == PERSON]
    assert {r.inputs["principalType"] for r in mine} == {"User"}
    on_ws = [azroles.role_name(r.inputs["roleDefinitionId"]) for r in mine if r.inputs["scope"] != storage.id]
    on_storage = sorted(
        azroles.role_name(r.inputs["roleDefinitionId"]) for r in mine if r.inputs["scope"] == storage.id
    )
    assert (on_ws, on_storage) == ([role], storage_roles)


def test_two_people_with_the_same_role_get_separate_assignments(stack_configs):
    other = "00000000-0000-0000-0000-0000000000b2"
    result = run_with_identity(
        stack_configs,
        role_assignments=[
            {"principal_id": PERSON, "principal_type": "User", "role": "Reader"},
            {"principal_id": other, "principal_type": "ServicePrincipal", "role": "Reader"},
        ],
    )
    readers = [
        r
        for r in result.of_type(ROLE_ASSIGNMENT)
        if azroles.role_name(r.inputs["roleDefinitionId"]) == "Reader"
    ]
    assert sorted((r.inputs["principalId"], r.inputs["principalType"]) for r in readers) == [
        (PERSON, "User"),
        (other, "ServicePrincipal"),
    ]
    assert len({r.inputs["roleAssignmentName"] for r in readers}) == 2


def test_each_data_store_is_readable_by_every_cluster_even_with_keys_on(stack_configs):
    second = DATA.replace("stdata", "stdata2")
    result = run_with_identity(
        stack_configs,
        system_datastores_auth_mode="accessKey",
        storage_shared_key_access=True,
        data_stores=[DATA, second],
    )
    clusters = ns(stack_configs["prod"], "clusters")
    readers = [
        r
        for r in result.of_type(ROLE_ASSIGNMENT)
        if azroles.role_name(r.inputs["roleDefinitionId"]) == "Storage Blob Data Reader"
    ]
    assert sorted(r.inputs["scope"] for r in readers) == sorted([DATA, second] * len(clusters))
    assert len({r.inputs["roleAssignmentName"] for r in readers}) == 2 * len(clusters)


# --- the published role definition ids ----------------------------------------------------------------------


@pytest.mark.parametrize("role", sorted(PUBLISHED_ROLE_IDS))
def test_each_role_the_stack_names_has_its_published_definition_id(role):
    assert azroles.definition_id(role, OTHER_SUB) == (
        f"/subscriptions/{OTHER_SUB}/providers/Microsoft.Authorization/roleDefinitions/{PUBLISHED_ROLE_IDS[role]}"
    )


def test_the_catalog_holds_no_role_the_page_does_not_publish():
    assert set(azroles.BUILT_IN) == set(PUBLISHED_ROLE_IDS)


@pytest.mark.parametrize(
    "definition",
    [
        "f6c7c914-8db3-469d-8ca1-694a8f32e121",  # a bare GUID
        "F6C7C914-8DB3-469D-8CA1-694A8F32E121",  # ARM ids are case-insensitive
        f"/subscriptions/{OTHER_SUB}/providers/Microsoft.Authorization/roleDefinitions/f6c7c914-8db3-469d-8ca1-694a8f32e121",
        "/providers/Microsoft.Authorization/roleDefinitions/f6c7c914-8db3-469d-8ca1-694a8f32e121/",
    ],
)
def test_a_definition_id_in_any_published_form_reads_back_as_its_role(definition):
    assert azroles.role_name(definition) == "AzureML Data Scientist"


def test_an_unknown_definition_is_no_role_and_an_unknown_name_is_refused():
    assert (
        azroles.role_name("/providers/Microsoft.Authorization/roleDefinitions/" + str(uuid.UUID(int=1)))
        is None
    )
    assert azroles.role_name("") is None
    with pytest.raises(KeyError):
        azroles.definition_id("Storage Blob Data Owner", OTHER_SUB)  # published, but not one the stack grants


def test_people_get_only_workspace_roles_and_never_a_privileged_one():
    assert set(azroles.PEOPLE_ROLES) <= set(PUBLISHED_ROLE_IDS)
    assert not set(azroles.PEOPLE_ROLES) & {"Owner", "Contributor", "User Access Administrator"}
    assert set(azroles.PRIVILEGED) == {"Owner", "Contributor"}


def test_assignment_names_are_guids_stable_per_grant_and_distinct_across_grants():
    a = azroles.assignment_name("ws", "principal-1", "AzureML Data Scientist")
    assert str(uuid.UUID(a)) == a  # ARM requires a GUID name
    assert a == azroles.assignment_name("ws", "principal-1", "AzureML Data Scientist")
    others = [
        azroles.assignment_name("ws", "principal-2", "AzureML Data Scientist"),  # another person
        azroles.assignment_name("ws", "principal-1", "Reader"),  # another role
        azroles.assignment_name("ws2", "principal-1", "AzureML Data Scientist"),  # another scope
    ]
    assert len({a, *others}) == 4


# --- shared user-assigned identities (issue 33 item 2) ------------------------------------------------------
# ARM refuses a second assignment of the same role to the same principal on the same scope under another name
# (409 RoleAssignmentExists: Azure/bicep discussion #19690; learn.microsoft.com/rest/api/authorization,
# privileged-role common errors), so the program declares each (principal, role, scope) once.


def declared(result) -> list[tuple[str, str, str]]:
    return [(r.inputs["principalId"], role_of(r), r.inputs["scope"]) for r in result.of_type(ROLE_ASSIGNMENT)]


def test_two_clusters_with_one_user_assigned_identity_get_one_assignment_each_role(stack_configs):
    """prod (identity datastores: each cluster identity gets Storage Blob Data Contributor on the storage)
    with h100-x4 and a100-spot both on the identity id-train."""
    base = stack_configs["prod"]
    clusters = [dict(c, user_assigned_identity_id=UAI) for c in ns(base, "clusters")]
    result = run_program("prod", variant(base, clusters=clusters))
    assert result.ok, result.error
    got = declared(result)
    assert len(got) == len(set(got))
    storage = one(result, STORAGE)
    blob = [p for p, role, scope in got if role == "Storage Blob Data Contributor" and scope == storage.id]
    people = "00000000-0000-0000-0000-00000000a001"  # the data scientists' group
    identity_grants = [p for p in blob if p != people]
    assert len(blob) == 2 and people in blob
    assert len(identity_grants) == 1 and GUID.match(identity_grants[0])  # id-train's principal, once
    (grant,) = [r for r in result.of_type(ROLE_ASSIGNMENT) if r.inputs["principalId"] == identity_grants[0]]
    assert grant.inputs["description"] == "azml-gpu: h100-x4/st/blob-contributor"  # the first cluster's key


def test_a_cluster_on_the_workspace_identity_gets_no_second_storage_assignment(stack_configs):
    """prod with `workspace_identity_id` id-ws and h100-x4 on the same identity: the workspace's own grants
    (Storage Blob Data Contributor on its storage among them, how-to-identity-based-service-authentication.md
    "User-assigned managed identity > Workspace") cover the cluster; a100-spot keeps its own."""
    base = stack_configs["prod"]
    ws_uai = UAI.replace("/id-train", "/id-ws")
    clusters = [dict(c) for c in ns(base, "clusters")]
    clusters[0]["user_assigned_identity_id"] = ws_uai
    identity = dict(ns(base, "identity"), workspace_identity_id=ws_uai)
    result = run_program("prod", variant(base, clusters=clusters, identity=identity))
    assert result.ok, result.error
    got = declared(result)
    assert len(got) == len(set(got))
    storage = one(result, STORAGE)
    on_storage = [r for r in result.of_type(ROLE_ASSIGNMENT) if r.inputs["scope"] == storage.id]
    blob_keys = sorted(
        r.inputs["description"] for r in on_storage if role_of(r) == "Storage Blob Data Contributor"
    )
    assert blob_keys == [
        "azml-gpu: a100-spot/st/blob-contributor",
        "azml-gpu: people/00000000-0000-0000-0000-00000000a001/st/blob-contributor",
        "azml-gpu: ws/st/blob-contributor",
    ]


def test_the_deploy_pipelines_principal_gets_the_storage_data_roles(stack_configs):
    """issue 33 item 4: prod (identity datastores) with `deploy.ci_principal_id`: the pipeline's service
    principal, which uploads the smoke job's code, gets Storage Blob Data Contributor and Storage File Data
    Privileged Contributor on the workspace storage (how-to-disable-local-auth-storage.md)."""
    ci = "00000000-0000-0000-0000-0000000000c1"
    result = run_program("prod", variant(stack_configs["prod"], deploy={"ci_principal_id": ci}))
    assert result.ok, result.error
    storage = one(result, STORAGE)
    mine = [r for r in result.of_type(ROLE_ASSIGNMENT) if r.inputs["principalId"] == ci]
    assert sorted((role_of(r), r.inputs["scope"], r.inputs["principalType"]) for r in mine) == [
        ("Storage Blob Data Contributor", storage.id, "ServicePrincipal"),
        ("Storage File Data Privileged Contributor", storage.id, "ServicePrincipal"),
    ]
