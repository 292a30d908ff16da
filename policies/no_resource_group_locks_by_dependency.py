"""no-resource-group-locks-by-dependency (mandatory, stack): a lock whose scope was unknown at Analyze.

The stack-level side of no-resource-group-locks (same sources). In the first preview of a new stack a lock's
scope computed from a resource of the same stack is unknown at Analyze, and AnalyzeStack carries outputs,
which have no scope (policies/locks.py). Such a lock is judged by the resource its scope comes from
(propertyDependencies["scope"]): a resource group created in this stack is a violation. A scope that depends
on no resource of the stack and is unknown cannot be judged: the message says so (mandatory, so it never
passes unseen). Only in a stack with an Azure ML workspace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import WORKSPACE, read
from policies._policy import STACK, Violation
from policies.locks import from_dependencies, is_lock, observed
from policies.no_resource_group_locks import COVERS_CLUSTERS, message

NAME = "no-resource-group-locks-by-dependency"
DESCRIPTION = (
    "A lock whose scope is unknown during preview must not come from a resource group of the stack "
    "(judged by the engine's property dependencies)."
)
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = STACK
CONFIG: dict[str, Any] = {}


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    if not any(r.resource_type == WORKSPACE for r in resources):
        return []
    found = []
    for r in resources:
        if not is_lock(r.resource_type):
            continue
        seen = observed(r.urn)
        if seen is not None and seen.kind != "unknown":
            continue  # its scope was known at Analyze: no-resource-group-locks decided it
        target = from_dependencies(r)
        if target.kind in COVERS_CLUSTERS:
            found.append(Violation(message(read(r.props, "level"), r.name, target), r.urn))
        elif target.kind == "unknown":
            found.append(
                Violation(
                    f"cannot decide during preview whether lock '{r.name}' covers a resource group: "
                    "its scope is not known until deployment and comes from no resource of this stack "
                    "(AnalyzeStack carries a lock's outputs, which have no scope). "
                    "Fix: give the scope as a literal ARM id, or compute it from the resource it locks.",
                    r.urn,
                )
            )
    return found
