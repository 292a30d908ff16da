"""What a management lock applies to, from what the engine sends (shared by the lock policies).

azure-native 3.29 `authorization`: ManagementLockAtSubscriptionLevel (the subscription of the provider),
ManagementLockAtResourceGroupLevel (resourceGroupName), ManagementLockAtResourceLevel (resourceGroupName,
resourceProviderNamespace, parentResourcePath, resourceType, resourceName) and ManagementLockByScope (scope:
any ARM id). A lock applies to the scope and every child resource (platform-notes.md, "Locks").

Where the scope can be read, during a preview:
- Analyze receives the lock's checked INPUTS. A scope given as a literal (an adopted resource group, a
  network id from config) is known in every preview; a scope computed from a resource of the same stack
  (`storage.id`) is unknown until that resource exists, so in the first preview of a new stack.
- AnalyzeStack receives OUTPUTS ("Unlike Analyze, AnalyzeStack is called on the final outputs",
  pulumi/pulumi pkg/resource/deploy/step_generator.go AnalyzeResources). azure-native outputs are
  response-shaped and have no path parameters: a ManagementLockByScope has no `scope`, and its `id` is not
  an output either. What AnalyzeStack does carry is each resource's propertyDependencies: the URN, hence the
  type, of the resource the scope comes from.
So the pack keeps, per lock URN, the target Analyze saw (known, or unknown), and the stack policies read it
back (`observed`). Why the order is guaranteed, and the order of the registry does not matter:
- The engine analyzes each resource when its registration is stepped (pulumi/pulumi v3.259
  pkg/resource/deploy/step_generator.go `continueStepsFromImport` -> `analyzeAll`, which calls
  `Analyze`), and calls `AnalyzeStack` once, after every step of the deployment has completed
  (deployment_executor.go `Execute`: "If the step generator and step executor were both successful, then we
  send all the resources observed to be analyzed" -> step_generator.go `AnalyzeResources` ->
  `analyzer.AnalyzeStack`), to the same pack process. So every lock's Analyze precedes the one AnalyzeStack.
- The record is made by the pack's resource-policy adapter (policies/_policy.py `to_pulumi`) before any
  resource policy's own validate, so it does not depend on which resource policy runs first or on any one
  of them being enabled (pulumi-policy skips a disabled policy's validate: pulumi_policy/policy.py
  `Analyze`). Only with every resource policy disabled is nothing recorded; the stack policies then judge a
  lock by its property dependencies alone (`from_dependencies`).
- Each Analyze of a URN overwrites the previous record (a later preview in the same process); records are
  keyed by URN under a lock, so concurrent Analyze calls for different resources do not interfere.

Public reader API (also for preflight): `LockTarget`, `from_inputs(type, props)`,
`from_dependencies(resource)`, `of_scope(id)`, `relative(id)`, `is_lock(type)`, `record_analyzed(resource)`,
`observed(urn)`.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from policies._common import (
    LOCK_AT_RESOURCE,
    LOCK_AT_RESOURCE_GROUP,
    LOCK_AT_SUBSCRIPTION,
    LOCK_BY_SCOPE,
    LOCK_TYPES,
    RESOURCE_GROUP,
    UNKNOWN,
    read,
)

_SUBSCRIPTION = re.compile(r"^/subscriptions/[^/]+/?$", re.IGNORECASE)
_RESOURCE_GROUP = re.compile(r"^/subscriptions/[^/]+/resourcegroups/([^/]+)/?$", re.IGNORECASE)
_RG_RELATIVE = re.compile(r"(/resourcegroups/.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class LockTarget:
    """kind: "subscription" | "resource-group" | "resource" | "unknown"; `path` is the id from
    /resourcegroups/ on, lower-case (ManagementLockAtResourceLevel carries no subscription), or None."""

    kind: str
    path: str | None
    shown: str  # the scope as people read it


UNKNOWN_TARGET = LockTarget("unknown", None, "a scope not known until deployment")


def relative(resource_id: str) -> str | None:
    """'/subscriptions/s/resourceGroups/rg/providers/...' -> '/resourcegroups/rg/providers/...'
    (lower-case)."""
    m = _RG_RELATIVE.search(resource_id.rstrip("/"))
    return m.group(1).lower() if m else None


def of_scope(scope: str) -> LockTarget:
    """The target of a lock at this ARM id."""
    if _SUBSCRIPTION.match(scope):
        return LockTarget("subscription", None, scope)
    m = _RESOURCE_GROUP.match(scope)
    if m:
        return LockTarget("resource-group", f"/resourcegroups/{m.group(1).lower()}", scope)
    return LockTarget("resource", relative(scope), scope)


def from_inputs(resource_type: str, props: Any) -> LockTarget | None:
    """The target of a lock from its inputs (Analyze); UNKNOWN_TARGET when a value it is made of is unknown;
    None for a resource that is not a lock."""
    if resource_type == LOCK_AT_SUBSCRIPTION:
        return LockTarget("subscription", None, "the subscription")
    if resource_type == LOCK_AT_RESOURCE_GROUP:
        rg = read(props, "resourceGroupName", default="?")
        if rg is UNKNOWN:
            # The type alone says it locks a resource group.
            return LockTarget("resource-group", None, "a resource group (name not known until deployment)")
        return LockTarget("resource-group", f"/resourcegroups/{str(rg).lower()}", f"resource group {rg}")
    if resource_type == LOCK_AT_RESOURCE:
        keys = ("resourceProviderNamespace", "parentResourcePath", "resourceType", "resourceName")
        parts = [read(props, k, default="") for k in keys]
        rg = read(props, "resourceGroupName", default="?")
        if rg is UNKNOWN or any(p is UNKNOWN for p in parts):
            return UNKNOWN_TARGET
        rest = "/".join(str(p).strip("/") for p in parts if p)
        return LockTarget(
            "resource",
            f"/resourcegroups/{rg}/providers/{rest}".lower(),
            f"/resourceGroups/{rg}/providers/{rest}",
        )
    if resource_type == LOCK_BY_SCOPE:
        scope = read(props, "scope", default="")
        return UNKNOWN_TARGET if scope is UNKNOWN else of_scope(str(scope))
    return None


def from_dependencies(resource: Any) -> LockTarget:
    """The target of a lock whose scope is unknown, from AnalyzeStack's property dependencies: the type of
    the resource the scope is computed from (a resource group created in this stack, or another resource)."""
    sources = list((getattr(resource, "property_dependencies", None) or {}).get("scope", []))
    if any(d.resource_type == RESOURCE_GROUP for d in sources):
        names = ", ".join(sorted(d.name for d in sources if d.resource_type == RESOURCE_GROUP))
        return LockTarget("resource-group", None, f"the resource group {names} created in this stack")
    if sources:
        first = sources[0]
        return LockTarget(
            "resource", None, f"{first.resource_type.split(':')[-1]} {first.name} of this stack"
        )
    return UNKNOWN_TARGET


_lock = threading.Lock()
_observed: dict[str, LockTarget] = {}


def record(urn: str, target: LockTarget) -> None:
    """What Analyze saw of this lock's target (called for every lock, known or not)."""
    with _lock:
        _observed[urn] = target


def record_analyzed(resource: Any) -> None:
    """Record a lock's target from what Analyze received (`.resource_type`, `.props`, `.urn`); nothing for a
    resource that is not a lock."""
    target = from_inputs(resource.resource_type, resource.props)
    if target is not None:
        record(resource.urn, target)


def observed(urn: str) -> LockTarget | None:
    """The target Analyze recorded for this lock in this preview; None when none was recorded."""
    with _lock:
        return _observed.get(urn)


def is_lock(resource_type: str) -> bool:
    return resource_type in LOCK_TYPES
