"""RoleAssignments: the Azure RBAC grants that identity-based access needs, at resource scope only.

Resource: `azure-native:authorization:RoleAssignment` (azure-native 3.29: Azure REST API 2022-04-01). Role
names map to built-in role definition ids in one place, `azroles` (sources there).

Which identity gets which role is decided once, in `stackconfig.identity.grant_plan` (with its sources): never
a grant Azure makes itself (a second identical assignment is a 409 RoleAssignmentExists), nothing at
resource-group or subscription scope (policy `no-privileged-role-assignments`). `stack_grants` turns the plan
into Grants of this stack's resources; `RoleAssignments` declares them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import pulumi
import pulumi_azure_native.authorization as authorization

import azroles

TYPE_TOKEN = "azml-gpu:components:RoleAssignments"

PrincipalType = Literal["User", "Group", "ServicePrincipal"]


@dataclass(frozen=True)
class Grant:
    """One role assignment.

    Required: `key` (a short stable label, unique in the stack, e.g. "ws/storage/blob-contributor": it names
    the Pulumi resource and seeds the assignment's GUID name), `scope` (ARM id of the one resource the role
    applies to; pass the resource's `id` output), `principal_id` (Entra object id; pass an identity's
    `principal_id` output), `principal_type`, `role` (a name in `azroles.BUILT_IN`).
    """

    key: str
    scope: pulumi.Input[str]
    principal_id: pulumi.Input[str]
    principal_type: PrincipalType
    role: str


@dataclass(frozen=True)
class RoleAssignmentsArgs:
    """Arguments of the RoleAssignments component.

    Required:
    - `subscription_id`: the subscription of the role definitions (`/subscriptions/<id>/providers/
      Microsoft.Authorization/roleDefinitions/<guid>`).
    - `name_seed`: makes the GUID names unique per stack (the workspace's resource group id); the same grant
      keeps its name across runs, so a re-run is a no-op rather than a RoleAssignmentExists error.
    - `grants`: the role assignments (may be empty: nothing is declared).
    """

    subscription_id: str
    name_seed: str
    grants: Sequence[Grant]


class RoleAssignments(pulumi.ComponentResource):
    """One RoleAssignment per grant. Output: `assignments` (key -> RoleAssignment)."""

    def __init__(
        self, name: str, args: RoleAssignmentsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.assignments: dict[str, authorization.RoleAssignment] = {}
        for grant in args.grants:
            if grant.role not in azroles.BUILT_IN:
                raise ValueError(f"grant {grant.key}: {grant.role!r} is not a role in azroles.BUILT_IN")
            self.assignments[grant.key] = authorization.RoleAssignment(
                f"{name}-{grant.key.replace('/', '-')}",
                role_assignment_name=azroles.assignment_name(args.name_seed, grant.key, grant.role),
                scope=grant.scope,
                principal_id=grant.principal_id,
                # The principal type lets ARM skip the directory lookup that fails for a just-created
                # managed identity ("PrincipalNotFound" during replication; azure-native
                # RoleAssignmentArgs.principal_type).
                principal_type=grant.principal_type,
                role_definition_id=azroles.definition_id(grant.role, args.subscription_id),
                description=f"azml-gpu: {grant.key}",
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.register_outputs({"assignmentIds": {k: v.id for k, v in self.assignments.items()}})


class PlannedGrantLike(Protocol):
    """One entry of the stack's grant plan (`stackconfig.identity.PlannedGrant` satisfies it)."""

    key: str
    scope: str
    principal: str
    principal_type: PrincipalType
    role: str
    before_workspace: bool


class _WorkspaceLike(Protocol):
    workspace_id: pulumi.Output[str]
    principal_id: pulumi.Output[str]
    storage_account: Any
    key_vault: Any
    container_registry: Any
    app_insights: Any


class _ClusterLike(Protocol):
    principal_id: pulumi.Output[str]


def scope_ids(workspace: _WorkspaceLike) -> dict[str, pulumi.Input[str]]:
    """The plan's stack scopes (`stackconfig.identity.STACK_SCOPES`) -> the resource id each names."""
    out: dict[str, pulumi.Input[str]] = {
        "storage": workspace.storage_account.id,
        "key_vault": workspace.key_vault.id,
        "application_insights": workspace.app_insights.id,
    }
    if workspace.container_registry is not None:
        out["container_registry"] = workspace.container_registry.id
    return out


def stack_grants(
    workspace: _WorkspaceLike, clusters: Mapping[str, _ClusterLike], plan: Sequence[PlannedGrantLike]
) -> list[Grant]:
    """The plan's grants that follow the workspace, as Grants of the stack's resources (the ones the plan
    marks `before_workspace` are declared by `components.Workspace` itself). A scope that is not a stack
    resource is an ARM id outside the stack, used as given."""
    scopes = {**scope_ids(workspace), "workspace": workspace.workspace_id}
    grants: list[Grant] = []
    for planned in plan:
        if planned.before_workspace:
            continue
        if planned.principal == "workspace":
            principal: pulumi.Input[str] = workspace.principal_id
        elif planned.principal.startswith("cluster:"):
            principal = clusters[planned.principal.removeprefix("cluster:")].principal_id
        else:
            principal = planned.principal
        scope = scopes.get(planned.scope, planned.scope)
        grants.append(Grant(planned.key, scope, principal, planned.principal_type, planned.role))
    return grants
