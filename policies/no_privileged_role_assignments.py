"""no-privileged-role-assignments (mandatory): no Owner or Contributor on a resource group or subscription.

A role assignment that grants Owner or Contributor at resource-group or subscription scope is rejected: it
lets its principal change or delete every resource there (Owner also grant access), far more than any identity
of an Azure ML workspace needs (learn.microsoft.com/azure/role-based-access-control/best-practices: "Only
grant the access users need", "Limit privileged administrator role assignments"; built-in-roles/privileged:
Owner "Grants full access to manage all resources, including the ability to assign roles", Contributor
"Grants full access to manage all resources"). The stack's own grants (components/identity.py) sit on single
resources. Role ids come from `azroles` (the one map of role names to built-in role definition ids).

As with locks (policies/no_resource_group_locks.py), the scope is not always known at Analyze: in the first
preview of a new stack, a scope computed from a resource group of the stack is unknown. The resource policy
decides every assignment whose scope and role are known, and records (`_UNDECIDED`) the privileged ones whose
scope is unknown; the stack policy no-privileged-role-assignments-by-dependency judges those by the resource
the scope comes from. The record needs no registry order: the engine runs every Analyze of a preview before
its one AnalyzeStack, in the same pack process (policies/locks.py cites pulumi/pulumi); with this policy
disabled nothing is recorded and the companion reports nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel

import azroles
from policies._common import UNKNOWN, read
from policies._policy import RESOURCE, AnalyzedResource

NAME = "no-privileged-role-assignments"
DESCRIPTION = "No role assignment grants Owner or Contributor at resource-group or subscription scope."
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = RESOURCE
CONFIG: dict[str, Any] = {}
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
_BROAD_SCOPE = re.compile(r"^/subscriptions/[^/]+(/resourceGroups/[^/]+)?/?$", re.IGNORECASE)

# Role assignments whose scope was unknown at Analyze, by URN -> role name (the companion judges them).
_UNDECIDED: dict[str, str] = {}


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    if resource.resource_type != ROLE_ASSIGNMENT:
        return []
    definition, scope = read(resource.props, "roleDefinitionId"), read(resource.props, "scope")
    if definition is UNKNOWN:
        return [
            f"cannot decide during preview whether role assignment '{resource.name}' "
            "grants Owner or Contributor: "
            "roleDefinitionId is not known until deployment. "
            "Fix: give the role definition id as a literal (azroles.definition_id)."
        ]
    role = _privileged(definition)
    if role is None:
        return []
    if scope is UNKNOWN:
        _UNDECIDED[resource.urn] = role
        return []
    if isinstance(scope, str) and _BROAD_SCOPE.match(scope):
        return [message(resource.name, role, scope)]
    return []


def message(name: str, role: str, scope: str) -> str:
    """The violation for role assignment `name` granting `role` on a broad `scope`."""
    return (
        f"role assignment '{name}' grants {role} on {scope}: "
        "its principal can change or delete every resource there "
        "(the workspace, its storage and key vault, other teams' resources), "
        "far beyond what an Azure ML identity needs. "
        "Fix: grant a data or Azure ML role (Storage Blob Data Contributor, AzureML Data Scientist, ...) "
        "on the single resource instead (docs/components.md, RoleAssignments)."
    )


def _privileged(role_definition: Any) -> str | None:
    if not isinstance(role_definition, str):
        return None
    role = azroles.role_name(role_definition)
    return role if role in azroles.PRIVILEGED else None


def take_undecided(urn: str) -> str | None:
    """The privileged role of an assignment whose scope was unknown at Analyze (once), else None."""
    return _UNDECIDED.pop(urn, None)
