"""The stack's role assignments (components/identity.py `stack_grants`) in stacks other than the shipped ones,
each a variant of Pulumi.prod.yaml that changes one thing, run through the real program under Pulumi mocks
(preflight.program.run_program). What a user notices: which identity gets which role on which resource.

Expected grants from learn.microsoft.com/azure/machine-learning/how-to-identity-based-service-authentication
(workspace identity: Key Vault Administrator on an RBAC vault; with identity-based datastores Storage Blob
Data Contributor on its storage) and how-to-disable-local-auth-storage (identity-based datastores also need
Storage File Data Privileged Contributor; with keys off people's own identity reads and uploads data, so
data scientists get both storage roles); AcrPull for nodes pulling from a registry with its admin user off
(learn.microsoft.com/azure/container-registry/container-registry-roles).
"""

from __future__ import annotations

import pytest
from components_helpers import ML_WORKSPACE, ROLE_ASSIGNMENT, STORAGE, ns, one, variant

import azroles
from preflight.program import run_program

SUB = "00000000-0000-0000-0000-000000000000"
DATA = f"/subscriptions/{SUB}/resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stdata"
PERSON = "00000000-0000-0000-0000-0000000000b1"


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
    result = run_program("prod", config=cfg)
    assert result.ok, result.problems
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
    result = run_program("prod", config=cfg)
    assert result.ok, result.problems
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
