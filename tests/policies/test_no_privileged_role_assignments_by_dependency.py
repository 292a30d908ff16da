"""no-privileged-role-assignments-by-dependency (mandatory, stack): a privileged role assignment whose
scope was unknown at Analyze (the first preview of a new stack), judged by the resource its scope comes
from."""

from __future__ import annotations

from typing import Any

import pytest

import azroles
from policies import no_privileged_role_assignments as roles
from policies import no_privileged_role_assignments_by_dependency as roles_by_dependency
from preflight.wire import UNKNOWN

from .policies_helpers import STORAGE, SUB, resource_args, stack_resource

ASSIGNMENT = roles.ROLE_ASSIGNMENT
RG_ID = f"{SUB}/resourceGroups/rg-train"


@pytest.fixture(autouse=True)
def fresh_pack_process():
    """Each test is one preview in a new pack process: no assignment left undecided by an earlier Analyze."""
    roles._UNDECIDED.clear()


def assignment(role: str, scope: Any) -> dict[str, Any]:
    return {
        "roleAssignmentName": "8b1b5a4e-0000-4000-8000-000000000001",
        "scope": scope,
        "principalId": "00000000-0000-0000-0000-00000000a001",
        "principalType": "Group",
        "roleDefinitionId": azroles.definition_id(role, SUB.rsplit("/", 1)[-1]) if role else UNKNOWN,
    }


RG = stack_resource("azure-native:resources:ResourceGroup", "ws-llm-rg", {"resourceGroupName": "rg-train"})
ST = stack_resource(STORAGE, "ws-llm-st", {"accountName": "stllm", "location": "eastus"})


@pytest.mark.parametrize(
    ("deps", "expected"),
    [
        ({"scope": [RG]}, [roles.message("ra", "Owner", "resource group 'ws-llm-rg' of this stack")]),
        ({"scope": [ST]}, []),
        ({}, ["cannot decide during preview whether role assignment 'ra' (Owner) is scoped"]),
    ],
    ids=["from a resource group of the stack", "from a storage account", "from nothing in the stack"],
)
def test_no_privileged_role_assignments_by_dependency(deps: dict, expected: list[str]) -> None:
    """First preview of a new stack: the scope is unknown at Analyze, the companion judges its source."""
    props = assignment("Owner", UNKNOWN)
    assert roles.validate(resource_args(ASSIGNMENT, props, name="ra"), {}) == []
    found = [
        v.message for v in roles_by_dependency.validate([stack_resource(ASSIGNMENT, "ra", props, deps)], {})
    ]
    # one message per expected start (none for a scope from a storage account), in order
    assert len(found) == len(expected), found
    assert all(m.startswith(e) for m, e in zip(found, expected, strict=True)), found


def test_the_companion_ignores_assignments_decided_at_analyze() -> None:
    props = assignment("Owner", RG_ID)
    roles.validate(resource_args(ASSIGNMENT, props, name="ra"), {})
    assert roles_by_dependency.validate([stack_resource(ASSIGNMENT, "ra", props, {"scope": [RG]})], {}) == []


def test_the_messages_in_full() -> None:
    """Pinned as written, not through roles.message (which builds them)."""
    props = assignment("Owner", UNKNOWN)

    def judged(deps: dict) -> list[tuple[str, str | None]]:
        assert roles.validate(resource_args(ASSIGNMENT, props, name="ra"), {}) == []
        return [
            (v.message, v.urn)
            for v in roles_by_dependency.validate([stack_resource(ASSIGNMENT, "ra", props, deps)], {})
        ]

    at = "urn:pulumi:test::azml-gpu::azure-native:authorization:RoleAssignment::ra"
    assert judged({"scope": [RG]}) == [
        (
            "role assignment 'ra' grants Owner on resource group 'ws-llm-rg' of this stack: its principal "
            "can change or delete every resource there (the workspace, its storage and key vault, other "
            "teams' resources), far beyond what an Azure ML identity needs. Fix: grant a data or Azure ML "
            "role (Storage Blob Data Contributor, AzureML Data Scientist, ...) on the single resource "
            "instead (docs/components.md, RoleAssignments).",
            at,
        )
    ]
    assert judged({}) == [
        (
            "cannot decide during preview whether role assignment 'ra' (Owner) is scoped to a resource "
            "group or subscription: its scope is not known until deployment and comes from no resource of "
            "this stack. Fix: give the scope as a literal ARM id, or compute it from the resource it "
            "applies to.",
            at,
        )
    ]
