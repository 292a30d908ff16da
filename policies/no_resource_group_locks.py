"""no-resource-group-locks (mandatory) and its stack-level companion no-resource-group-locks-by-dependency.

No lock at resource-group or subscription scope next to Azure ML. Sources: azure-notes.md 3.6 ("Resource
locks on the workspace resource group block scaling ('stuck at resizing 0 -> 0')"); platform-notes.md ("a
delete or read-only lock on the resource group blocks cluster scaling"); the seed, "Failure modes": "Lock
individual resources instead". A subscription lock covers every resource group.

Two policies, because during a preview the scope is not always where one policy can read it
(policies/_locks.py):
- no-resource-group-locks (resource, Analyze): the lock's inputs. It decides every lock whose scope is
  known there (a literal such as an adopted resource group, and every lock in an update preview), and
  records what it saw for the companion.
- no-resource-group-locks-by-dependency (stack, AnalyzeStack): the locks whose scope was unknown at Analyze
  (computed from a resource of the same stack, in the first preview of a new stack), judged by the
  resource the scope comes from (propertyDependencies["scope"]): a resource group created in this stack is a
  violation. A scope that depends on no resource of the stack and is unknown cannot be judged: the message
  says so (mandatory, so it never passes unseen).
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from policies._common import WORKSPACE, ReportViolation, read
from policies._locks import LockTarget, from_dependencies, from_inputs, is_lock, observed, record

NAME = "no-resource-group-locks"
COMPANION = "no-resource-group-locks-by-dependency"
DESCRIPTION = "A stack with an Azure ML workspace must not lock a resource group or the subscription."


def message(level: Any, name: str, target: LockTarget) -> str:
    shown = level if isinstance(level, str) else "a"
    return (
        f"{shown} lock '{name}' on {target.shown} applies to the Azure ML workspace's clusters: Azure ML "
        "cannot resize them, so clusters stick at 'resizing 0 -> 0' and jobs queue forever. Fix: lock "
        "individual resources (storage, key vault, registry) with the locks config instead."
    )


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    target = from_inputs(args.resource_type, args.props)
    if target is None:
        return
    record(args.urn, target)
    if target.kind in ("resource-group", "subscription"):
        report_violation(message(read(args.props, "level"), args.name, target), None)


def validate_stack(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    if not any(r.resource_type == WORKSPACE for r in args.resources):
        return
    for r in args.resources:
        if not is_lock(r.resource_type):
            continue
        seen = observed(r.urn)
        if seen is not None and seen.kind != "unknown":
            continue  # decided by no-resource-group-locks on the lock's inputs
        target = from_dependencies(r)
        level = read(r.props, "level")
        if target.kind in ("resource-group", "subscription"):
            report_violation(message(level, r.name, target), r.urn)
        elif target.kind == "unknown":
            report_violation(
                f"cannot decide during preview whether lock '{r.name}' covers a resource group: its scope "
                "is not known until deployment and comes from no resource of this stack (AnalyzeStack "
                "carries a lock's outputs, which have no scope). Fix: give the scope as a literal ARM id, or "
                "compute it from the resource it locks.",
                r.urn,
            )


POLICY = ResourceValidationPolicy(
    name=NAME,
    description=DESCRIPTION,
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
)

COMPANION_POLICY = StackValidationPolicy(
    name=COMPANION,
    description=(
        "A lock whose scope is unknown during preview must not come from a resource group of the stack "
        "(judged by the engine's property dependencies)."
    ),
    validate=validate_stack,
    enforcement_level=EnforcementLevel.MANDATORY,
)
