"""What a management lock applies to, from its wire-format inputs (shared by the two lock policies).

azure-native 3.29 `authorization`: ManagementLockAtSubscriptionLevel (the subscription of the provider),
ManagementLockAtResourceGroupLevel (resourceGroupName), ManagementLockAtResourceLevel (resourceGroupName,
resourceProviderNamespace, parentResourcePath, resourceType, resourceName) and ManagementLockByScope (scope:
any ARM id). A lock applies to the scope and every child resource (platform-notes.md, "Locks").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from policies._common import (
    LOCK_AT_RESOURCE,
    LOCK_AT_RESOURCE_GROUP,
    LOCK_AT_SUBSCRIPTION,
    LOCK_BY_SCOPE,
    get,
)

_SUBSCRIPTION = re.compile(r"^/subscriptions/[^/]+/?$", re.IGNORECASE)
_RESOURCE_GROUP = re.compile(r"^/subscriptions/[^/]+/resourcegroups/([^/]+)/?$", re.IGNORECASE)
_RG_RELATIVE = re.compile(r"(/resourcegroups/.*)$", re.IGNORECASE)
RESOURCE_GROUP_TYPE = "azure-native:resources:ResourceGroup"


@dataclass(frozen=True)
class LockTarget:
    """kind: "subscription" | "resource-group" | "resource" | "unknown"; `path` is the id from
    /resourcegroups/ on, lower-case (ManagementLockAtResourceLevel carries no subscription), or None."""

    kind: str
    path: str | None
    shown: str  # the scope as people read it


def relative(resource_id: str) -> str | None:
    """'/subscriptions/s/resourceGroups/rg/providers/...' -> '/resourcegroups/rg/providers/...'
    (lower-case)."""
    m = _RG_RELATIVE.search(resource_id.rstrip("/"))
    return m.group(1).lower() if m else None


def target(resource: Any) -> LockTarget | None:
    """The scope of a lock PolicyResource, None for a resource that is not a lock."""
    props = resource.props
    t = resource.resource_type
    if t == LOCK_AT_SUBSCRIPTION:
        return LockTarget("subscription", None, "the subscription")
    if t == LOCK_AT_RESOURCE_GROUP:
        rg = get(props, "resourceGroupName", default="?")
        return LockTarget("resource-group", f"/resourcegroups/{str(rg).lower()}", f"resource group {rg}")
    if t == LOCK_AT_RESOURCE:
        parts = [
            get(props, "resourceProviderNamespace", default=""),
            get(props, "parentResourcePath", default=""),
            get(props, "resourceType", default=""),
            get(props, "resourceName", default=""),
        ]
        rg = get(props, "resourceGroupName", default="?")
        rest = "/".join(str(p).strip("/") for p in parts if p)
        path = f"/resourcegroups/{rg}/providers/{rest}".lower()
        return LockTarget("resource", path, f"/resourceGroups/{rg}/providers/{rest}")
    if t == LOCK_BY_SCOPE:
        try:
            scope = get(props, "scope", default="")
        except UnknownValueError:
            # Preview with a scope computed from another resource: judge by what the scope depends on.
            deps = getattr(resource, "property_dependencies", {}).get("scope", [])
            if any(d.resource_type == RESOURCE_GROUP_TYPE for d in deps):
                return LockTarget("resource-group", None, "a resource group created in this stack")
            return LockTarget("unknown", None, "a scope not known until deployment")
        if _SUBSCRIPTION.match(scope):
            return LockTarget("subscription", None, scope)
        m = _RESOURCE_GROUP.match(scope)
        if m:
            return LockTarget("resource-group", f"/resourcegroups/{m.group(1).lower()}", scope)
        return LockTarget("resource", relative(scope), scope)
    return None
