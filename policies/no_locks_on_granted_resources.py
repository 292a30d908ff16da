"""no-locks-on-granted-resources (mandatory, stack): no lock on a resource the stack grants a role on.

Source: learn.microsoft.com/azure/azure-resource-manager/management/lock-resources, "Considerations before
applying your locks": "A cannot-delete lock on a resource or resource group prevents the deletion of Azure
RBAC assignments." A role assignment is an extension resource of its scope, so a CanNotDelete lock on the
storage account blocks deleting every assignment on it: replacing a cluster (its identity's grants are
replaced), removing a grant or `pulumi destroy` then fails half-way, after other resources changed. The
project's decision (docs/azure-behaviour.md section 17, with the unlock-change-relock procedure for the
changes that remain): a lock never sits on a granted resource. `stackconfig` refuses the pair in the stack
config; this policy catches it in any program.

A stack policy: it needs the locks and the role assignments together. Both scopes are path parameters, absent
from AnalyzeStack's outputs, so the resource each scope is computed from is read from the property
dependencies the engine sends in every preview (policies/_common.depends_on): a lock and an assignment whose
`scope` comes from the same resource are on the same resource. A scope given as a literal ARM id (a resource
outside the stack) has no dependency; such a pair is not judged here (docs/policies.md says so).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import LOCK_TYPES, depends_on, read
from policies._policy import STACK, Violation

NAME = "no-locks-on-granted-resources"
DESCRIPTION = "No lock on a resource the stack grants a role on: the lock blocks deleting the grant."
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = STACK
CONFIG: dict[str, Any] = {}
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    granted: dict[str, list[Any]] = {}  # URN of a scope resource -> the assignments on it
    for r in resources:
        if r.resource_type == ROLE_ASSIGNMENT:
            for source in depends_on(r, "scope"):
                granted.setdefault(source.urn, []).append(r)
    found: list[Violation] = []
    for lock in resources:
        if lock.resource_type not in LOCK_TYPES:
            continue
        for target in depends_on(lock, "scope"):
            grants = granted.get(target.urn)
            if not grants:
                continue
            level = read(lock.props, "level")
            names = sorted(g.name for g in grants)
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            kind = target.resource_type.split(":")[-1]
            found.append(
                Violation(
                    f"{level if isinstance(level, str) else 'a'} lock '{lock.name}' on {kind} {target.name}, "
                    f"which carries {len(grants)} role assignment(s) of this stack ({shown}): a lock blocks "
                    "deleting the role assignments on the resource it locks (lock-resources.md), so "
                    "replacing a cluster, removing a grant or `pulumi destroy` fails half-way. "
                    "Fix: don't lock that resource (azml-gpu:locks; unset flags skip granted resources), or "
                    "unlock, change and relock by hand (docs/azure-behaviour.md section 17).",
                    lock.urn,
                )
            )
    return found
