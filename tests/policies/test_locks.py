"""policies/locks.py, the public reader of what a management lock covers: from a lock's inputs (Analyze),
from its property dependencies (AnalyzeStack), and what Analyze saw of it."""

from __future__ import annotations

from typing import Any

import pytest

from policies import locks
from preflight.wire import UNKNOWN

from .policies_helpers import (
    COMPUTE,
    LOCK_AT_RESOURCE,
    LOCK_AT_RG,
    LOCK_AT_SUB,
    LOCK_BY_SCOPE,
    SUB,
    SUBNET,
    cluster,
    resource_args,
    stack_resource,
)

RG_ID = f"{SUB}/resourceGroups/RG-Train"


@pytest.mark.parametrize(
    ("type_", "props", "kind", "path"),
    [
        (LOCK_AT_SUB, {}, "subscription", None),
        (LOCK_AT_RG, {"resourceGroupName": "RG-Train"}, "resource-group", "/resourcegroups/rg-train"),
        (LOCK_AT_RG, {"resourceGroupName": UNKNOWN}, "resource-group", None),
        (LOCK_AT_RG, {}, "resource-group", "/resourcegroups/?"),  # required by azure-native; shown as "?"
        (LOCK_BY_SCOPE, {"scope": SUB}, "subscription", None),
        (LOCK_BY_SCOPE, {"scope": RG_ID + "/"}, "resource-group", "/resourcegroups/rg-train"),
        (LOCK_BY_SCOPE, {"scope": SUBNET}, "resource", SUBNET.lower().split(SUB.lower())[1]),
        (LOCK_BY_SCOPE, {"scope": UNKNOWN}, "unknown", None),
        (
            LOCK_AT_RESOURCE,
            {
                "resourceGroupName": "rg",
                "resourceProviderNamespace": "Microsoft.KeyVault",
                "resourceType": "vaults",
                "resourceName": "kv",
            },
            "resource",
            "/resourcegroups/rg/providers/microsoft.keyvault/vaults/kv",
        ),
        (LOCK_AT_RESOURCE, {"resourceGroupName": "rg", "resourceName": UNKNOWN}, "unknown", None),
    ],
)
def test_lock_targets_from_inputs(type_: str, props: dict[str, Any], kind: str, path: str | None) -> None:
    target = locks.from_inputs(type_, resource_args(type_, props, None).props)
    assert target is not None and (target.kind, target.path) == (kind, path)


def test_lock_required_fields_left_out() -> None:
    """azure-native requires them; a hand-made resource without them reads as "?" / an empty scope."""
    at_resource = {
        "resourceProviderNamespace": "Microsoft.KeyVault",
        "resourceType": "vaults",
        "resourceName": "kv",
    }
    assert locks.from_inputs(LOCK_AT_RESOURCE, at_resource) == locks.LockTarget(
        "resource",
        "/resourcegroups/?/providers/microsoft.keyvault/vaults/kv",
        "/resourceGroups/?/providers/Microsoft.KeyVault/vaults/kv",
    )
    assert locks.from_inputs(LOCK_BY_SCOPE, {}) == locks.LockTarget("resource", None, "")


def test_not_a_lock() -> None:
    assert locks.from_inputs(COMPUTE, {}) is None and not locks.is_lock(COMPUTE)
    assert locks.relative("/subscriptions/s") is None
    locks.record_analyzed(resource_args(COMPUTE, cluster(), None))
    assert locks.observed(resource_args(COMPUTE, cluster(), None).urn) is None


def test_lock_targets_from_dependencies() -> None:
    rg = stack_resource("azure-native:resources:ResourceGroup", "rg", {"resourceGroupName": "rg"})
    st = stack_resource("azure-native:storage:StorageAccount", "st", {"accountName": "st"})
    of = lambda deps: locks.from_dependencies(stack_resource(LOCK_BY_SCOPE, "l", {"scope": UNKNOWN}, deps))  # noqa: E731
    assert (of({"scope": [st, rg]}).kind, of({"scope": [st]}).kind, of({}).kind) == (
        "resource-group",
        "resource",
        "unknown",
    )
    assert of({"scope": [st]}).shown == "StorageAccount st of this stack"
