"""no-privileged-role-assignments (mandatory) and its stack-level companion
no-privileged-role-assignments-by-dependency.

A role assignment that grants Owner or Contributor at resource-group or subscription scope is rejected: it
lets its principal change or delete every resource there (Owner also grant access), far more than any identity
of an Azure ML workspace needs (learn.microsoft.com/azure/role-based-access-control/best-practices: "Only
grant the access users need", "Limit privileged administrator role assignments"; built-in-roles/privileged:
Owner "Grants full access to manage all resources, including the ability to assign roles", Contributor
"Grants full access to manage all resources"). The stack's own grants (components/identity.py) sit on single
resources. Role ids come from `azroles` (the one map of role names to built-in role definition ids).

As with locks (policies/no_resource_group_locks.py), the scope is not always known at Analyze: in the first
preview of a new stack, a scope computed from a resource group of the stack is unknown. The resource policy
decides every assignment whose scope and role are known; the stack companion judges the rest by the resource
the scope comes from (AnalyzeStack's propertyDependencies["scope"]), and reports an unknown scope that comes
from no resource of the stack as undecidable (mandatory, so it never passes unseen).
"""

from __future__ import annotations

import re
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

import azroles
from policies._common import UNKNOWN, ReportViolation, depends_on, read

NAME = "no-privileged-role-assignments"
COMPANION = "no-privileged-role-assignments-by-dependency"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
RESOURCE_GROUP = "azure-native:resources:ResourceGroup"
_BROAD_SCOPE = re.compile(r"^/subscriptions/[^/]+(/resourceGroups/[^/]+)?/?$", re.IGNORECASE)

# Role assignments whose scope was unknown at Analyze, by URN -> role name (the companion judges them).
_UNDECIDED: dict[str, str] = {}


def message(name: str, role: str, scope: str) -> str:
    return (
        f"role assignment '{name}' grants {role} on {scope}: its principal can change or delete every "
        "resource "
        "there (the workspace, its storage and key vault, other teams' resources), far beyond what an "
        "Azure ML "
        "identity needs. Fix: grant a data or Azure ML role (Storage Blob Data Contributor, AzureML Data "
        "Scientist, ...) on the single resource instead (docs/components.md, RoleAssignments)."
    )


def _privileged(role_definition: Any) -> str | None:
    if not isinstance(role_definition, str) or role_definition is UNKNOWN:
        return None
    role = azroles.role_name(role_definition)
    return role if role in azroles.PRIVILEGED else None


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != ROLE_ASSIGNMENT:
        return
    definition, scope = read(args.props, "roleDefinitionId"), read(args.props, "scope")
    if definition is UNKNOWN:
        report_violation(
            f"cannot decide during preview whether role assignment '{args.name}' grants Owner or "
            "Contributor: "
            "roleDefinitionId is not known until deployment. Fix: give the role definition id as a literal "
            "(azroles.definition_id).",
            None,
        )
        return
    role = _privileged(definition)
    if role is None:
        return
    if scope is UNKNOWN:
        _UNDECIDED[args.urn] = role
        return
    if isinstance(scope, str) and _BROAD_SCOPE.match(scope):
        report_violation(message(args.name, role, scope), None)


def validate_stack(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    for r in args.resources:
        role = _UNDECIDED.pop(r.urn, None)
        if r.resource_type != ROLE_ASSIGNMENT or role is None:
            continue
        sources = depends_on(r, "scope")
        groups = [d for d in sources if d.resource_type == RESOURCE_GROUP]
        if groups:
            report_violation(message(r.name, role, f"resource group '{groups[0].name}' of this stack"), r.urn)
        elif not sources:
            report_violation(
                f"cannot decide during preview whether role assignment '{r.name}' ({role}) is scoped to a "
                "resource group or subscription: its scope is not known until deployment and comes from no "
                "resource of this stack. Fix: give the scope as a literal ARM id, or compute it from the "
                "resource it applies to.",
                r.urn,
            )


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="No role assignment grants Owner or Contributor at resource-group or subscription scope.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
)

COMPANION_POLICY = StackValidationPolicy(
    name=COMPANION,
    description=(
        "An Owner or Contributor role assignment whose scope is unknown during preview must not come from a "
        "resource group of the stack (judged by the engine's property dependencies)."
    ),
    validate=validate_stack,
    enforcement_level=EnforcementLevel.MANDATORY,
)
