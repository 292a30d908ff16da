"""no-privileged-role-assignments-by-dependency (mandatory, stack): a privileged role assignment whose scope
was unknown at Analyze.

The stack-level side of no-privileged-role-assignments (same sources). In the first preview of a new stack a
scope computed from a resource group of the stack is unknown at Analyze; no-privileged-role-assignments
records the privileged ones there, and this policy judges them by the resource their scope comes from
(AnalyzeStack's propertyDependencies["scope"]): a resource group of the stack is a violation, a scope from no
resource of the stack is reported as undecidable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import RESOURCE_GROUP, depends_on
from policies._policy import STACK, Violation
from policies.no_privileged_role_assignments import ROLE_ASSIGNMENT, message, take_undecided

NAME = "no-privileged-role-assignments-by-dependency"
DESCRIPTION = (
    "An Owner or Contributor role assignment whose scope is unknown during preview must not come from a "
    "resource group of the stack (judged by the engine's property dependencies)."
)
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = STACK
CONFIG: dict[str, Any] = {}


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    found = []
    for r in resources:
        if r.resource_type != ROLE_ASSIGNMENT:
            continue
        role = take_undecided(r.urn)
        if role is None:
            continue
        sources = depends_on(r, "scope")
        groups = [d for d in sources if d.resource_type == RESOURCE_GROUP]
        if groups:
            found.append(
                Violation(message(r.name, role, f"resource group '{groups[0].name}' of this stack"), r.urn)
            )
        elif not sources:
            found.append(
                Violation(
                    f"cannot decide during preview whether role assignment '{r.name}' ({role}) "
                    "is scoped to a resource group or subscription: "
                    "its scope is not known until deployment and comes from no resource of this stack. "
                    "Fix: give the scope as a literal ARM id, or compute it from the resource it applies to.",
                    r.urn,
                )
            )
    return found
