"""The spec check accepts `identity.userAssignedIdentities` in the list form azure-native takes.

azure-native 3.29 `ManagedServiceIdentityArgs.user_assigned_identities: Sequence[str]`: the SDK sends a list
of identity ids and the provider turns it into the map id -> {} that the REST spec types
(common-types managedidentity.json `ManagedServiceIdentity.userAssignedIdentities`, an object). Before the fix
any stack with a customer-managed key or a user-assigned cluster identity failed the gate with exit 2.
"""

from __future__ import annotations

from preflight.provider.schema import check_resource

UAI = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-id/providers/"
    "Microsoft.ManagedIdentity/userAssignedIdentities/id-ws"
)


def _workspace(identity: object) -> dict:
    return {
        "workspaceName": "ws-llm",
        "resourceGroupName": "rg-train",
        "location": "eastus",
        "identity": identity,
        "sku": {"name": "Basic", "tier": "Basic"},
        "azureApiVersion": "2025-12-01",  # the version azure-native 3.29 sends for a Workspace
    }


def _identity_failures(identity: object) -> list[str]:
    result = check_resource("azure-native:machinelearningservices:Workspace", _workspace(identity))
    assert result.spec is not None, result  # the vendored spec was found: the check really ran
    return [f.path for f in result.failures if f.path.startswith("identity")]


def test_list_of_identity_ids_is_accepted() -> None:
    assert _identity_failures({"type": "SystemAssigned,UserAssigned", "userAssignedIdentities": [UAI]}) == []


def test_a_non_string_entry_is_refused_by_index() -> None:
    assert _identity_failures({"type": "UserAssigned", "userAssignedIdentities": [UAI, 7]}) == [
        "identity.userAssignedIdentities[1]"
    ]
