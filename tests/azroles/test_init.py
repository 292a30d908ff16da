"""azroles (azroles/__init__.py), the one map of Azure built-in role names to role definition ids, pinned to
the values Azure publishes (written from the pages, not from the code).

Role GUIDs: learn.microsoft.com/azure/role-based-access-control/built-in-roles (source
MicrosoftDocs/azure-docs articles/role-based-access-control/built-in-roles.md, 2026-04-09 revision, the
"ID" column of its Privileged, General, Storage, Containers, AI + machine learning and Security tables).
The GUIDs are the same in every tenant.
"""

from __future__ import annotations

import uuid

import pytest

import azroles

SUB = "11111111-2222-3333-4444-555555555555"


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


@pytest.mark.parametrize("role", sorted(PUBLISHED_ROLE_IDS))
def test_each_role_the_stack_names_has_its_published_definition_id(role):
    assert azroles.definition_id(role, SUB) == (
        f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/{PUBLISHED_ROLE_IDS[role]}"
    )


def test_the_catalog_holds_no_role_the_page_does_not_publish():
    assert set(azroles.BUILT_IN) == set(PUBLISHED_ROLE_IDS)


@pytest.mark.parametrize(
    "definition",
    [
        "f6c7c914-8db3-469d-8ca1-694a8f32e121",  # a bare GUID
        "F6C7C914-8DB3-469D-8CA1-694A8F32E121",  # ARM ids are case-insensitive
        f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/f6c7c914-8db3-469d-8ca1-694a8f32e121",
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
        azroles.definition_id("Storage Blob Data Owner", SUB)  # published, but not one the stack grants


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
