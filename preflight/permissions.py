"""The Azure permissions `pulumi up` (and `pulumi destroy`) of a stack needs, from what the stack declares.

Each custom resource needs `<ARM type>/write` to be created or updated and `<ARM type>/delete` to be
replaced or destroyed; a looked-up resource group needs `Microsoft.Resources/subscriptions/resourceGroups/
read`. Which built-in role grants them:
- Contributor: every action except `Microsoft.Authorization/*/Write` and `Microsoft.Authorization/*/Delete`
  (its NotActions; learn.microsoft.com/azure/role-based-access-control/built-in-roles/privileged
  #contributor), so it cannot create or delete locks.
- Locks: "To create management locks, you must have access to Microsoft.Authorization/* or
  Microsoft.Authorization/locks/* actions. Of the built-in roles, only Owner and User Access Administrator
  are granted those actions" (learn.microsoft.com/rest/api/resources/management-locks). With Contributor
  alone, `pulumi up` creates everything else and then fails at the first lock.
- Role assignments: `Microsoft.Authorization/roleAssignments/write` and `/delete` are outside Contributor too
  (same NotActions); Owner, User Access Administrator and Role Based Access Control Administrator have them
  (learn.microsoft.com/azure/role-based-access-control/built-in-roles/privileged; role-assignments-steps.md:
  "you must have ... Microsoft.Authorization/roleAssignments/write permissions, such as Role Based Access
  Control Administrator").
- Linked resources the stack does not own but joins: a private endpoint needs `Microsoft.Network/
  virtualNetworks/subnets/join/action` on its subnet, a private DNS zone group `Microsoft.Network/
  privateDnsZones/join/action` on each zone (learn.microsoft.com/azure/private-link/rbac-permissions), a
  cluster with a user-assigned identity `Microsoft.ManagedIdentity/userAssignedIdentities/assign/action`
  (learn.microsoft.com/azure/role-based-access-control/built-in-roles/identity#managed-identity-operator).
  They
  are granted on those resources (often in a network or identity team's resource group): Network Contributor,
  Private DNS Zone Contributor, Managed Identity Operator, or Contributor there.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from preflight.events import Step

LOCK_ARM_TYPE = "Microsoft.Authorization/locks"
CONTRIBUTOR = "Contributor"
LOCK_ROLES = "Owner or User Access Administrator"
ROLE_ASSIGNMENT_ARM_TYPE = "Microsoft.Authorization/roleAssignments"
ASSIGNMENT_ROLES = "Owner, User Access Administrator or Role Based Access Control Administrator"
# Tokens whose SDK outputs carry no `type` (azure-native 3.29): their ARM type, for the actions.
_TYPE_OF_TOKEN = {
    "azure-native:network:PrivateDnsZoneGroup": "Microsoft.Network/privateEndpoints/privateDnsZoneGroups"
}
# The RBAC actions of a resource group differ from its ARM `type` (Microsoft.Resources/resourceGroups).
_ACTION_TYPE = {"Microsoft.Resources/resourceGroups": "Microsoft.Resources/subscriptions/resourceGroups"}


def _arm_type(resource: Step) -> str | None:
    """The ARM type of a custom resource: the `type` output of a deployed resource (the update evaluation's
    state), which azure-native takes from the Azure response."""
    value = resource.state_outputs.get("type") or _TYPE_OF_TOKEN.get(resource.type)
    return value if isinstance(value, str) and "/" in value else None


def _joined(resource: Step) -> list[tuple[str, str, str]]:
    """(action, on what, granted by) for the resources outside the stack that `resource` joins."""
    inputs = resource.inputs
    if resource.type == "azure-native:network:PrivateEndpoint":
        subnet = (inputs.get("subnet") or {}).get("id")
        return [
            (
                "Microsoft.Network/virtualNetworks/subnets/join/action",
                f"subnet {subnet}",
                "Network Contributor",
            )
        ]
    if resource.type == "azure-native:network:PrivateDnsZoneGroup":
        zones = [c.get("privateDnsZoneId") for c in inputs.get("privateDnsZoneConfigs") or []]
        return [
            ("Microsoft.Network/privateDnsZones/join/action", f"zone {z}", "Private DNS Zone Contributor")
            for z in zones
            if isinstance(z, str)
        ]
    if resource.type == "azure-native:machinelearningservices:Compute":
        identities = (inputs.get("identity") or {}).get("userAssignedIdentities") or []
        ids = identities if isinstance(identities, list) else list(identities)
        return [
            (
                "Microsoft.ManagedIdentity/userAssignedIdentities/assign/action",
                f"identity {i}",
                "Managed Identity Operator",
            )
            for i in ids
        ]
    return []


def required(
    resources: Iterable[Step], invokes: Iterable[tuple[str, dict[str, Any]]] = ()
) -> list[dict[str, str]]:
    """[{action, why, granted_by}], sorted by action, for the stack's resources and the provider functions
    the program calls."""
    needed: dict[str, tuple[str, list[str], str]] = {}

    def add(action: str, verb: str, name: str, granted_by: str) -> None:
        needed.setdefault(action, (verb, [], granted_by))[1].append(name)

    for r in resources:
        arm_type = _arm_type(r) if r.custom else None
        if arm_type is None:
            continue
        arm_type = _ACTION_TYPE.get(arm_type, arm_type)
        role = {LOCK_ARM_TYPE: LOCK_ROLES, ROLE_ASSIGNMENT_ARM_TYPE: ASSIGNMENT_ROLES}.get(
            arm_type, CONTRIBUTOR
        )
        add(f"{arm_type}/write", "create or update", r.name, role)
        add(f"{arm_type}/delete", "replace or destroy", r.name, role)
        for action, target, granted_by in _joined(r):
            add(action, f"join {target} from", r.name, granted_by)
    for token, args in invokes:
        if token == "azure-native:resources:getResourceGroup":
            add(
                "Microsoft.Resources/subscriptions/resourceGroups/read",
                "look up the existing resource group",
                str(args.get("resourceGroupName")),
                CONTRIBUTOR,
            )
        if token == "azure-native:keyvault:getVault":
            # The customer-managed key's vault, outside the stack (components/workspace.py read_key_vault).
            add(
                "Microsoft.KeyVault/vaults/read",
                "read the customer-managed key's vault",
                str(args.get("vaultName")),
                "Reader",
            )
    return [
        {"action": action, "why": f"{verb} {', '.join(sorted(set(names)))}", "granted_by": role}
        for action, (verb, names, role) in sorted(needed.items())
    ]


def roles(rows: list[dict[str, str]]) -> str:
    """One line: which built-in roles cover `rows`."""
    granted = {r["granted_by"] for r in rows}
    joined = sorted(granted - {CONTRIBUTOR, LOCK_ROLES, ASSIGNMENT_ROLES})
    tail = (
        f" The joined resources outside the stack need {', '.join(joined)} (or Contributor) on them."
        if joined
        else ""
    )
    if LOCK_ROLES in granted or ASSIGNMENT_ROLES in granted:
        what = [
            w
            for w, role in (
                ("the locks (Microsoft.Authorization/locks/write, delete)", LOCK_ROLES),
                (
                    "the role assignments (Microsoft.Authorization/roleAssignments/write, delete)",
                    ASSIGNMENT_ROLES,
                ),
            )
            if role in granted
        ]
        fix = (
            "use Owner, or add User Access Administrator"
            if LOCK_ROLES in granted
            else "use Owner, or add Role Based Access Control Administrator (or User Access Administrator)"
        )
        return (
            f"Contributor covers everything except {' and '.join(what)}: {fix}; with Contributor alone "
            f"`pulumi up` fails at the first of them, after the other resources exist.{tail}"
        )
    return (
        "Contributor on the resource group (or the subscription, when the stack creates the group) covers "
        f"them.{tail}"
    )
