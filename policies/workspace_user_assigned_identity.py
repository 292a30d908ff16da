"""workspace-user-assigned-identity (advisory, resource): a workspace with its own user-assigned identity.

The counterpart of PSRule for Azure's Azure.ML.UserManagedIdentity (AZR-000407): `identity.type` UserAssigned,
`identity.userAssignedIdentities` present and `properties.primaryUserAssignedIdentity` set (Azure/
PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.ML.Rule.yaml; also Azure Policy "Azure Machine Learning
workspaces should use user-assigned managed identity", Audit by default). The stack config offers it as
`identity.workspace_identity_id`.

Advisory: the shipped stacks keep the system-assigned identity on purpose. Azure makes its role assignments
itself ("System-assigned (SAI): Role assignment creation: Managed by Microsoft",
how-to-identity-based-service-authentication.md), while a user-assigned identity needs Contributor on the
workspace, storage, key vault, registry and Application Insights granted by the deployer before the workspace
exists (same page, "User-assigned managed identity"), which `stackconfig.identity.grant_plan` does when the
option is set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import WORKSPACE, read, undecided
from policies._policy import RESOURCE, AnalyzedResource

NAME = "workspace-user-assigned-identity"
DESCRIPTION = "An Azure ML workspace should run as a user-assigned identity (its primary identity)."
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = RESOURCE
CONFIG: dict[str, Any] = {}


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    if resource.resource_type != WORKSPACE:
        return []
    kind = read(resource.props, "identity", "type")
    ids = read(resource.props, "identity", "userAssignedIdentities")
    primary = read(resource.props, "primaryUserAssignedIdentity")
    if why := undecided(**{"identity.type": kind, "primaryUserAssignedIdentity": primary}):
        return [why]
    if kind == "UserAssigned" and ids and primary:
        return []
    shown = kind if isinstance(kind, str) else "not set (Azure's default: SystemAssigned)"
    return [
        f"the workspace identity is {shown}"
        + ("" if primary else ", with no primaryUserAssignedIdentity")
        + ": its lifecycle is tied to the workspace and Azure manages its grants "
        "(PSRule Azure.ML.UserManagedIdentity). Fix: set identity.workspace_identity_id to a user-assigned "
        "identity (the stack then grants it the roles Azure documents), or keep the system-assigned one "
        "on purpose, as the shipped stacks do (docs/policies.md)."
    ]
