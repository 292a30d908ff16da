"""no-resource-group-locks (mandatory, on a lock's inputs at Analyze) and its stack-level side,
no-resource-group-locks-by-dependency (mandatory: a lock whose scope was unknown at Analyze, judged by the
resource its scope comes from). SHOULD PASS / SHOULD FAIL from the happy path: a CanNotDelete lock by scope
on a storage account."""

from __future__ import annotations

from typing import Any

import pytest

from policies import no_resource_group_locks as policy
from policies import no_resource_group_locks_by_dependency as by_dependency
from preflight.wire import UNKNOWN

from .policies_helpers import (
    LOCK_AT_RESOURCE,
    LOCK_AT_RG,
    LOCK_AT_SUB,
    LOCK_BY_SCOPE,
    STORAGE,
    SUB,
    WORKSPACE,
    facts,
    resource_args,
    stack_resource,
    stack_verdict,
    urn,
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


WS = stack_resource(WORKSPACE, "ws-llm-mlw", workspace())
RG = stack_resource(
    "azure-native:resources:ResourceGroup",
    "ws-llm-rg",
    {"resourceGroupName": "rg-train", "location": "eastus"},
)
ST = stack_resource(STORAGE, "ws-llm-st", {"accountName": "st", "location": "eastus"})
LOCK_URN = urn(LOCK_BY_SCOPE, "l")


def preview(scope: Any, deps: dict[str, Any], with_workspace: bool = True) -> list[tuple[str, str | None]]:
    """One preview: the engine Analyzes the lock's inputs, then AnalyzeStack gets its outputs (no scope)."""
    inputs = {**HAPPY, "scope": scope}
    resources = [WS, RG, ST] if with_workspace else [RG, ST]
    resources.append(stack_resource(LOCK_BY_SCOPE, "l", inputs, deps))
    return stack_verdict(by_dependency, resources, analyzed=[resource_args(LOCK_BY_SCOPE, inputs, name="l")])


def test_by_dependency_should_pass() -> None:
    assert preview(UNKNOWN, {"scope": [ST]}) == []  # computed from a storage account
    assert preview(f"{SUB}/resourceGroups/rg-train", {"scope": [RG]}) == []  # known at Analyze: decided there
    assert preview(UNKNOWN, {"scope": [RG]}, with_workspace=False) == []  # no Azure ML workspace in the stack


def test_by_dependency_should_fail() -> None:
    ((message, at),) = preview(UNKNOWN, {"scope": [RG]})
    facts(
        [message], [("CanNotDelete lock 'l' on the resource group ws-llm-rg created in this stack", RG_COST)]
    )
    assert at == LOCK_URN
    ((message, at),) = preview(UNKNOWN, {})
    facts([message], [("cannot decide during preview whether lock 'l' covers a resource group",)])
    assert at == LOCK_URN


def test_by_dependency_without_a_record_judges_by_dependencies() -> None:
    """No Analyze record (every resource policy disabled): the property dependencies alone decide."""
    lock = stack_resource(LOCK_BY_SCOPE, "l", {**HAPPY, "scope": UNKNOWN}, {"scope": [RG]})
    ((message, _),) = stack_verdict(by_dependency, [WS, RG, lock])
    assert "created in this stack" in message
