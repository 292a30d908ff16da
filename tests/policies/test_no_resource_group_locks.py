"""no-resource-group-locks (mandatory, on a lock's inputs at Analyze) and its stack-level side,
no-resource-group-locks-by-dependency (mandatory: a lock whose scope was unknown at Analyze, judged by the
resource its scope comes from). SHOULD PASS / SHOULD FAIL from the happy path: a CanNotDelete lock by scope
on a storage account."""

from __future__ import annotations

from typing import Any

import pytest

from policies import no_resource_group_locks as policy
from preflight.wire import UNKNOWN

from .policies_helpers import (
    LOCK_AT_RESOURCE,
    LOCK_AT_RG,
    LOCK_AT_SUB,
    LOCK_BY_SCOPE,
    SUB,
    WORKSPACE,
    facts,
    verdict,
    workspace,
)

ST_ID = f"{SUB}/resourceGroups/rg-train/providers/Microsoft.Storage/storageAccounts/st"
HAPPY = {"level": "CanNotDelete", "scope": ST_ID}
RG_COST = "Azure ML cannot resize them"

SHOULD_PASS: dict[str, tuple[str, dict[str, Any]]] = {
    "happy path: a storage account by scope": (LOCK_BY_SCOPE, HAPPY),
    "at resource level": (
        LOCK_AT_RESOURCE,
        {
            "level": "ReadOnly",
            "resourceGroupName": "rg-train",
            "resourceProviderNamespace": "Microsoft.KeyVault",
            "resourceType": "vaults",
            "resourceName": "kv",
        },
    ),
    "scope unknown in preview: the stack companion's": (LOCK_BY_SCOPE, {**HAPPY, "scope": UNKNOWN}),
    "not a lock": (WORKSPACE, workspace()),
}

SHOULD_FAIL: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
    "at resource-group level": (
        LOCK_AT_RG,
        {"level": "CanNotDelete", "resourceGroupName": "rg-train"},
        ("CanNotDelete lock 'l' on resource group rg-train", RG_COST),
    ),
    "at resource-group level, its name unknown in preview": (
        LOCK_AT_RG,
        {"level": "CanNotDelete", "resourceGroupName": UNKNOWN},
        ("on a resource group (name not known until deployment)",),
    ),
    "at subscription level": (
        LOCK_AT_SUB,
        {"level": "ReadOnly"},
        ("ReadOnly lock 'l' on the subscription", RG_COST),
    ),
    "by scope on a resource-group id (an adopted group)": (
        LOCK_BY_SCOPE,
        {**HAPPY, "scope": f"{SUB}/resourceGroups/rg-train"},
        (f"lock 'l' on {SUB}/resourceGroups/rg-train",),
    ),
    "by scope on the subscription id": (LOCK_BY_SCOPE, {**HAPPY, "scope": SUB + "/"}, (f"on {SUB}/",)),
    "level left out": (
        LOCK_AT_RG,
        {"resourceGroupName": "rg-train"},
        ("a lock 'l' on resource group rg-train",),
    ),
}


@pytest.mark.parametrize(("type_", "props"), SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(type_: str, props: dict[str, Any]) -> None:
    assert verdict(policy, props, type_=type_, name="l") == []


@pytest.mark.parametrize(("type_", "props", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(type_: str, props: dict[str, Any], expected: tuple[str, ...]) -> None:
    facts(verdict(policy, props, type_=type_, name="l"), [expected])


def test_the_message_in_full() -> None:
    assert verdict(
        policy, {"level": "CanNotDelete", "resourceGroupName": "rg-train"}, type_=LOCK_AT_RG, name="l"
    ) == [
        "CanNotDelete lock 'l' on resource group rg-train applies to the Azure ML workspace's clusters: "
        "Azure ML cannot resize them, so clusters stick at 'resizing 0 -> 0' and jobs queue forever. Fix: "
        "lock individual resources (storage, key vault, registry) with the locks config instead."
    ]
