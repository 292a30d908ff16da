"""no-resource-group-locks-by-dependency (mandatory, stack): a lock whose scope was unknown at Analyze,
judged by the resource its scope comes from (a resource group created in this stack is a violation). Happy
path: a CanNotDelete lock by scope on a storage account."""

from __future__ import annotations

from typing import Any

from policies import no_resource_group_locks_by_dependency as by_dependency
from preflight.wire import UNKNOWN

from .policies_helpers import (
    LOCK_BY_SCOPE,
    STORAGE,
    SUB,
    WORKSPACE,
    facts,
    resource_args,
    stack_resource,
    stack_verdict,
    urn,
    workspace,
)

ST_ID = f"{SUB}/resourceGroups/rg-train/providers/Microsoft.Storage/storageAccounts/st"
HAPPY = {"level": "CanNotDelete", "scope": ST_ID}
RG_COST = "Azure ML cannot resize them"
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


def test_the_messages_in_full() -> None:
    assert preview(UNKNOWN, {"scope": [RG]}) == [
        (
            "CanNotDelete lock 'l' on the resource group ws-llm-rg created in this stack applies to the "
            "Azure ML workspace's clusters: Azure ML cannot resize them, so clusters stick at 'resizing 0 "
            "-> 0' and jobs queue forever. Fix: lock individual resources (storage, key vault, registry) "
            "with the locks config instead.",
            LOCK_URN,
        )
    ]
    assert preview(UNKNOWN, {}) == [
        (
            "cannot decide during preview whether lock 'l' covers a resource group: its scope is not known "
            "until deployment and comes from no resource of this stack (AnalyzeStack carries a lock's "
            "outputs, which have no scope). Fix: give the scope as a literal ARM id, or compute it from the "
            "resource it locks.",
            LOCK_URN,
        )
    ]
