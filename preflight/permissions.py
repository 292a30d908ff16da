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
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from preflight.resource import Resource

LOCK_ARM_TYPE = "Microsoft.Authorization/locks"
CONTRIBUTOR = "Contributor"
LOCK_ROLES = "Owner or User Access Administrator"
# The RBAC actions of a resource group differ from its ARM `type` (Microsoft.Resources/resourceGroups).
_ACTION_TYPE = {"Microsoft.Resources/resourceGroups": "Microsoft.Resources/subscriptions/resourceGroups"}


def _arm_type(resource: Resource) -> str | None:
    """The ARM type of a custom resource: the `type` output of a deployed resource (synthetic or exported
    state), which azure-native takes from the Azure response."""
    value = resource.outputs.get("type") or resource.state.get("type")
    return value if isinstance(value, str) and "/" in value else None


def required(
    resources: Iterable[Resource], invokes: Iterable[tuple[str, dict[str, Any]]] = ()
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
        role = LOCK_ROLES if arm_type == LOCK_ARM_TYPE else CONTRIBUTOR
        add(f"{arm_type}/write", "create or update", r.name, role)
        add(f"{arm_type}/delete", "replace or destroy", r.name, role)
    for token, args in invokes:
        if token == "azure-native:resources:getResourceGroup":
            add(
                "Microsoft.Resources/subscriptions/resourceGroups/read",
                "look up the existing resource group",
                str(args.get("resourceGroupName")),
                CONTRIBUTOR,
            )
    return [
        {"action": action, "why": f"{verb} {', '.join(sorted(set(names)))}", "granted_by": role}
        for action, (verb, names, role) in sorted(needed.items())
    ]


def roles(rows: list[dict[str, str]]) -> str:
    """One line: which built-in roles cover `rows`."""
    if any(r["granted_by"] == LOCK_ROLES for r in rows):
        return (
            "Contributor covers everything except the locks (Microsoft.Authorization/locks/write, delete): "
            "use Owner, or add User Access Administrator (or a custom role with Microsoft.Authorization/"
            "locks/*); with Contributor alone `pulumi up` fails at the first lock, after the other resources "
            "exist."
        )
    return (
        "Contributor on the resource group (or the subscription, when the stack creates the group) covers "
        "them."
    )
