"""no-privileged-role-assignments (mandatory, resource): no Owner or Contributor at resource-group or
subscription scope, judged on a role assignment's inputs at Analyze; an unknown scope is left to its
stack-level companion (test_no_privileged_role_assignments_by_dependency.py)."""

from __future__ import annotations

from typing import Any

import pytest

import azroles
from policies import no_privileged_role_assignments as roles
from preflight.wire import UNKNOWN

from .policies_helpers import SUB, resource_args

ASSIGNMENT = roles.ROLE_ASSIGNMENT
RG_ID = f"{SUB}/resourceGroups/rg-train"
ST_ID = f"{RG_ID}/providers/Microsoft.Storage/storageAccounts/stllm"


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


def broad(role: str, scope: str) -> str:
    return roles.message("ra", role, scope)


ROLE_CASES = [
    ("pass: data role on a storage account", assignment("Storage Blob Data Contributor", ST_ID), []),
    ("pass: Contributor on one resource", assignment("Contributor", ST_ID), []),
    ("pass: Reader on the resource group", assignment("Reader", RG_ID), []),
    ("fail: Owner on the resource group", assignment("Owner", RG_ID), [broad("Owner", RG_ID)]),
    ("fail: Contributor on the subscription", assignment("Contributor", SUB), [broad("Contributor", SUB)]),
    (
        "fail: Owner by bare GUID, trailing slash",
        dict(assignment("Owner", SUB + "/"), roleDefinitionId=azroles.BUILT_IN["Owner"]),
        [broad("Owner", SUB + "/")],
    ),
    ("pass: scope unknown (the companion decides)", assignment("Owner", UNKNOWN), []),
]


@pytest.mark.parametrize(("props", "expected"), [c[1:] for c in ROLE_CASES], ids=[c[0] for c in ROLE_CASES])
def test_no_privileged_role_assignments_on_inputs(props: dict, expected: list[str]) -> None:
    assert roles.validate(resource_args(ASSIGNMENT, props, name="ra"), {}) == expected
    roles._UNDECIDED.clear()


def test_an_unknown_role_definition_is_reported_not_skipped() -> None:
    (message,) = roles.validate(resource_args(ASSIGNMENT, assignment("", ST_ID), name="ra"), {})
    assert message.startswith("cannot decide during preview whether role assignment 'ra' grants Owner")


def test_the_message_in_full() -> None:
    """Pinned as written, not through roles.message (which builds it)."""
    assert roles.validate(resource_args(ASSIGNMENT, assignment("Owner", RG_ID), name="ra"), {}) == [
        f"role assignment 'ra' grants Owner on {RG_ID}: its principal can change or delete every resource "
        "there (the workspace, its storage and key vault, other teams' resources), far beyond what an Azure "
        "ML identity needs. Fix: grant a data or Azure ML role (Storage Blob Data Contributor, AzureML Data "
        "Scientist, ...) on the single resource instead (docs/components.md, RoleAssignments)."
    ]
    assert roles.validate(resource_args(ASSIGNMENT, assignment("", ST_ID), name="ra"), {}) == [
        "cannot decide during preview whether role assignment 'ra' grants Owner or Contributor: "
        "roleDefinitionId is not known until deployment. Fix: give the role definition id as a literal "
        "(azroles.definition_id)."
    ]
