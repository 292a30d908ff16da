"""RoleAssignments: the Azure RBAC grants that identity-based access needs, at resource scope only.

Resource: `azure-native:authorization:RoleAssignment` (azure-native 3.29: Azure REST API 2022-04-01). Role
names map to built-in role definition ids in one place, `azroles` (sources there).

Which identity needs which role (learn.microsoft.com/azure/machine-learning/
how-to-identity-based-service-authentication, "User-assigned managed identity > Workspace", the roles a
workspace identity needs on its resources: Azure Storage "Storage Blob Data Contributor (data plane)",
Azure Key Vault with the RBAC permission model "Key Vault Administrator (data plane)", plus control-plane
Contributor grants that Azure ML makes itself for a system-assigned identity, so they are not repeated here;
learn.microsoft.com/azure/machine-learning/how-to-disable-local-auth-storage: identity-based datastores need
"Storage File Data Privileged Contributor" too, for the file share):
- the workspace's identity: Key Vault Administrator on its vault (always: the vault uses RBAC, see
  components/workspace.py); with identity-based system datastores, Storage Blob Data Contributor and Storage
  File Data Privileged Contributor on its storage;
- each cluster's identity, with identity-based datastores: Storage Blob Data Contributor on the workspace
  storage (code, outputs and the checkpoint path of jobs/ live in its blob datastore); always: Storage Blob
  Data Reader on each configured data store and AcrPull on the declared registry (its admin user is off, so
  nodes pull environment images with an identity);
- people and groups: their configured Azure ML role at workspace scope; with identity-based datastores,
  those with AzureML Data Scientist also Storage Blob Data Contributor and Storage File Data Privileged
  Contributor on the workspace storage (how-to-disable-local-auth-storage.md: with keys off the user's own
  identity uploads code and reads data in studio).
Nothing is ever granted at resource-group or subscription scope (policy `no-privileged-role-assignments`).
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


@dataclass(frozen=True)
class PersonGrant:
    """A configured role for a person, group or service principal at workspace scope."""

    principal_id: str
    principal_type: PrincipalType
    role: str


class _WorkspaceLike(Protocol):
    workspace_id: pulumi.Output[str]
    principal_id: pulumi.Output[str]
    storage_account: Any
    key_vault: Any
    container_registry: Any


class _ClusterLike(Protocol):
    principal_id: pulumi.Output[str]


def stack_grants(
    workspace: _WorkspaceLike,
    clusters: Mapping[str, _ClusterLike],
    *,
    identity_datastores: bool,
    data_stores: Sequence[str] = (),
    people: Sequence[PersonGrant] = (),
) -> list[Grant]:
    """The grants of the module docstring, for the stack's workspace and clusters (name -> component)."""
    sp: PrincipalType = "ServicePrincipal"  # managed identities are service principals in Entra ID
    storage, vault, registry = (
        workspace.storage_account.id,
        workspace.key_vault.id,
        workspace.container_registry,
    )
    ws = workspace.principal_id
    grants = [Grant("ws/kv/administrator", vault, ws, sp, "Key Vault Administrator")]
    if identity_datastores:
        grants.append(Grant("ws/st/blob-contributor", storage, ws, sp, "Storage Blob Data Contributor"))
        grants.append(
            Grant("ws/st/file-privileged", storage, ws, sp, "Storage File Data Privileged Contributor")
        )
    for name, cluster in clusters.items():
        node = cluster.principal_id
        if identity_datastores:
            grants.append(
                Grant(f"{name}/st/blob-contributor", storage, node, sp, "Storage Blob Data Contributor")
            )
        for store in data_stores:
            label = store.rstrip("/").rsplit("/", 1)[-1]
            grants.append(Grant(f"{name}/{label}/blob-reader", store, node, sp, "Storage Blob Data Reader"))
        if registry is not None:
            grants.append(Grant(f"{name}/cr/pull", registry.id, node, sp, "AcrPull"))
    for person in people:
        who, kind = person.principal_id, person.principal_type
        grants.append(
            Grant(
                f"people/{who}/{person.role.lower().replace(' ', '-')}",
                workspace.workspace_id,
                who,
                kind,
                person.role,
            )
        )
        if identity_datastores and person.role == "AzureML Data Scientist":
            grants.append(
                Grant(
                    f"people/{who}/st/blob-contributor", storage, who, kind, "Storage Blob Data Contributor"
                )
            )
            grants.append(
                Grant(
                    f"people/{who}/st/file-privileged",
                    storage,
                    who,
                    kind,
                    "Storage File Data Privileged Contributor",
                )
            )
    return grants
