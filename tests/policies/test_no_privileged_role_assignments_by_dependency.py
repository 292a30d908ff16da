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
    assert [m[: len(e)] for m in found for e in expected][: len(expected)] == expected


def test_the_companion_ignores_assignments_decided_at_analyze() -> None:
    props = assignment("Owner", RG_ID)
    roles.validate(resource_args(ASSIGNMENT, props, name="ra"), {})
    assert roles_by_dependency.validate([stack_resource(ASSIGNMENT, "ra", props, {"scope": [RG]})], {}) == []
