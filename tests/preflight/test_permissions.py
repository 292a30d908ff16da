"""preflight/permissions.py: the Azure permissions `pulumi up` of a stack needs, from the engine's steps of
the
update (the deployed state carries each resource's ARM `type`) and the functions the program called (the
offline provider's journal). Role facts from learn.microsoft.com (the module docstring)."""

from __future__ import annotations

from preflight import permissions

from .recorded import run

OWNERS = "Owner, User Access Administrator or Role Based Access Control Administrator"


def required(scenario: str = "prod", invokes=()) -> dict[str, dict[str, str]]:
    return {p["action"]: p for p in permissions.required(run(scenario, "update").steps, invokes)}


def test_each_deployed_type_needs_write_and_delete_from_contributor() -> None:
    found = required()
    assert found["Microsoft.MachineLearningServices/workspaces/computes/write"] == {
        "action": "Microsoft.MachineLearningServices/workspaces/computes/write",
        "why": "create or update a100-spot, h100-x4",
        "granted_by": "Contributor",
    }
    assert found["Microsoft.Storage/storageAccounts/delete"]["why"] == "replace or destroy ws-llm-st"
    # a resource group's RBAC actions are under subscriptions/, not its ARM type
    assert "Microsoft.Resources/subscriptions/resourceGroups/write" in found
    assert "Microsoft.Resources/resourceGroups/write" not in found


def test_role_assignments_need_more_than_contributor_and_prod_has_no_lock() -> None:
    found = required()
    assert found["Microsoft.Authorization/roleAssignments/write"]["granted_by"] == OWNERS
    assert not [a for a in found if a.startswith("Microsoft.Authorization/locks/")]
    line = permissions.roles(list(found.values()))
    assert line.startswith("Contributor covers everything except the role assignments")
    assert "Network Contributor, Private DNS Zone Contributor (or Contributor) on them" in line


def test_joined_resources_outside_the_stack_need_their_own_roles() -> None:
    joined = {a: p["granted_by"] for a, p in required().items() if a.endswith("/join/action")}
    assert joined == {
        "Microsoft.Network/virtualNetworks/subnets/join/action": "Network Contributor",
        "Microsoft.Network/privateDnsZones/join/action": "Private DNS Zone Contributor",
    }


def test_the_programs_look_ups_need_read() -> None:
    found = required(
        invokes=[
            ("azure-native:resources:getResourceGroup", {"resourceGroupName": "rg-shared"}),
            ("azure-native:keyvault:getVault", {"resourceGroupName": "rg-keys", "vaultName": "kv-cmk"}),
            ("azure-native:authorization:getClientConfig", {}),
        ]
    )
    assert found["Microsoft.Resources/subscriptions/resourceGroups/read"]["why"] == (
        "look up the existing resource group rg-shared"
    )
    assert found["Microsoft.KeyVault/vaults/read"] == {
        "action": "Microsoft.KeyVault/vaults/read",
        "why": "read the customer-managed key's vault kv-cmk",
        "granted_by": "Reader",
    }


def test_a_stack_with_locks_needs_owner_or_user_access_administrator() -> None:
    found = required("capacity")  # the public stack that carries the locks
    locks = [p for a, p in found.items() if a.startswith("Microsoft.Authorization/locks/")]
    assert locks and {p["granted_by"] for p in locks} == {"Owner or User Access Administrator"}
    assert permissions.roles(list(found.values())).startswith(
        "Contributor covers everything except the locks (Microsoft.Authorization/locks/write, delete)"
    )


def test_contributor_alone_when_nothing_needs_more() -> None:
    rows = [{"action": "a", "why": "w", "granted_by": "Contributor"}]
    assert permissions.roles(rows).startswith("Contributor on the resource group")
