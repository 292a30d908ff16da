"""workspace-user-assigned-identity (advisory, resource), the counterpart of PSRule for Azure's
Azure.ML.UserManagedIdentity (Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.ML.Rule.yaml:
identity.type UserAssigned, identity.userAssignedIdentities, properties.primaryUserAssignedIdentity)."""

from __future__ import annotations

from typing import Any

import pytest

from policies import workspace_user_assigned_identity

from .policies_helpers import WORKSPACE, cluster, verdict, workspace

UAI = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-id/providers/"
    "Microsoft.ManagedIdentity/userAssignedIdentities/id-ws"
)


def test_a_user_assigned_primary_identity_passes() -> None:
    props = workspace(
        identity={"type": "UserAssigned", "userAssignedIdentities": {UAI: {}}},
        primaryUserAssignedIdentity=UAI,
    )
    assert verdict(workspace_user_assigned_identity, props, type_=WORKSPACE, name="ws") == []


@pytest.mark.parametrize(
    ("identity", "primary", "shown"),
    [
        ({"type": "SystemAssigned"}, None, "SystemAssigned, with no primaryUserAssignedIdentity"),
        (None, None, "not set (Azure's default: SystemAssigned), with no primaryUserAssignedIdentity"),
        (
            {"type": "SystemAssigned,UserAssigned", "userAssignedIdentities": {UAI: {}}},
            UAI,
            "SystemAssigned,UserAssigned:",
        ),
        (
            {"type": "UserAssigned", "userAssignedIdentities": {UAI: {}}},
            None,
            "with no primaryUserAssignedIdentity",
        ),
    ],
)
def test_anything_else_is_an_advisory_naming_the_option(identity: Any, primary: Any, shown: str) -> None:
    props = workspace(identity=identity, primaryUserAssignedIdentity=primary)
    (message,) = verdict(workspace_user_assigned_identity, props, type_=WORKSPACE, name="ws")
    assert shown in message
    assert "Azure.ML.UserManagedIdentity" in message and "identity.workspace_identity_id" in message


def test_other_resources_are_not_judged() -> None:
    assert verdict(workspace_user_assigned_identity, cluster()) == []


def test_the_message_in_full() -> None:
    props = workspace(identity={"type": "SystemAssigned"})
    assert verdict(workspace_user_assigned_identity, props, type_=WORKSPACE, name="ws") == [
        "the workspace identity is SystemAssigned, with no primaryUserAssignedIdentity: its lifecycle is "
        "tied to the workspace and Azure manages its grants (PSRule Azure.ML.UserManagedIdentity). Fix: set "
        "identity.workspace_identity_id to a user-assigned identity (the stack then grants it the roles "
        "Azure documents), or keep the system-assigned one on purpose, as the shipped stacks do "
        "(docs/policies.md)."
    ]
