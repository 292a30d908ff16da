"""ResourceLocks: CanNotDelete locks on individual resources, never on a resource group or subscription."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import pulumi
import pulumi_azure_native.authorization as authorization

from components import naming

TYPE_TOKEN = "azml-gpu:components:ResourceLocks"

# Resource types a lock may sit on. Anything else is refused at construction:
# - a resource group or subscription lock blocks Azure ML's own scaling operations on the
#   workspace's clusters ("stuck resizing 0 -> 0"; azure-notes §3.6, seed article "Failure modes"),
# - networking resources (Microsoft.Network/*) that clusters use are touched by Azure ML when it
#   scales, and a lock there fails the scaling the same way (seed article: "never the networking
#   resources the cluster creates for itself").
LOCKABLE_TYPES: frozenset[str] = frozenset(
    {
        "azure-native:storage:StorageAccount",
        "azure-native:keyvault:Vault",
        "azure-native:containerregistry:Registry",
        "azure-native:applicationinsights:Component",
        "azure-native:machinelearningservices:Workspace",
    }
)

# An ARM id of an individual resource: /subscriptions/<s>/resourceGroups/<g>/providers/<ns>/<type>/<name>...
_RESOURCE_ID = re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/[^/]+/[^/]+/[^/]+", re.I)

_WORKSPACE_NOTE = (
    "A lock on the workspace also covers its computes: deleting or replacing a GPU cluster "
    "(any change to an immutable setting such as the VM size) fails until this lock is removed."
)


def check_resource_scope(scope: str) -> str:
    """Return `scope` if it is the ARM id of an individual resource; raise otherwise."""
    if not _RESOURCE_ID.match(scope):
        raise ValueError(
            f"lock scope {scope!r} is not the id of an individual resource; locks at resource-group or "
            "subscription scope block Azure ML cluster scaling (docs/azure-behaviour.md)"
        )
    return scope


@dataclass(frozen=True)
class LockTarget:
    """One resource to lock.

    Required: `azure_name` (the resource's Azure name; the lock is named `lock-<azure_name>`),
    `resource` (the resource, of a type in LOCKABLE_TYPES), `reason` (why it is locked; goes into
    the lock's notes, max 512 characters with the fixed prefix).
    """

    azure_name: str
    resource: pulumi.CustomResource
    reason: str


@dataclass(frozen=True)
class ResourceLocksArgs:
    """Arguments of the ResourceLocks component.

    Required:
    - `targets`: the resources to lock, as `LockTarget(azure_name, resource, reason)` (may be empty: then
      nothing is declared).

    Optional:
    - `stack_label` (default "azml-gpu"): named in each lock's notes so whoever meets the lock in the portal
      knows which stack owns it (`__main__.py` passes `<project>/<stack>`).
    - `blocks` (default empty): the stack's resources a lock would keep from being deleted, besides its
      target: the clusters (a workspace lock covers its computes) and the role assignments scoped at or under
      a locked resource ("a lock blocks deleting the role assignments on it", docs/config.md). Each lock
      depends on them, so `pulumi destroy`, which deletes dependents before what they depend on, removes
      every lock before any of them (and before its target, which it depends on through its scope); `pulumi
      up` creates the locks after them (docs/azure-behaviour.md section 17, "Destroy order").

    The level is always CanNotDelete: ReadOnly would also block writes Azure ML needs (for example
    listing storage keys is a POST, which a ReadOnly lock refuses:
    learn.microsoft.com/azure/azure-resource-manager/management/lock-resources, "Considerations").
    """

    targets: Sequence[LockTarget]
    stack_label: str = "azml-gpu"
    blocks: Sequence[pulumi.Resource] = ()


class LockFlags(Protocol):
    """Which resources to lock (`stackconfig.LocksConfig` satisfies it)."""

    storage: bool
    key_vault: bool
    container_registry: bool
    application_insights: bool
    workspace: bool


def workspace_lock_targets(workspace, flags: LockFlags) -> list[LockTarget]:
    """The lock targets for a `components.Workspace`, as `flags` selects them.

    The workspace itself only when `flags.workspace` is set: a lock on the workspace covers its
    computes too and blocks deleting or replacing a cluster.
    """
    names = workspace.names
    targets: list[LockTarget] = []
    if flags.storage:
        targets.append(
            LockTarget(
                names.storage_account,
                workspace.storage_account,
                "holds the workspace's datastores, job outputs and checkpoints",
            )
        )
    if flags.key_vault:
        targets.append(
            LockTarget(
                names.key_vault,
                workspace.key_vault,
                "holds the workspace's secrets; purge protection keeps its name taken",
            )
        )
    if flags.container_registry and workspace.container_registry is not None:
        targets.append(
            LockTarget(
                names.container_registry,
                workspace.container_registry,
                "holds the workspace's environment images",
            )
        )
    if flags.application_insights:
        targets.append(
            LockTarget(names.app_insights, workspace.app_insights, "the workspace's monitoring component")
        )
    if flags.workspace:
        targets.append(LockTarget(workspace.azure_name, workspace.ml_workspace, _WORKSPACE_NOTE))
    return targets


class ResourceLocks(pulumi.ComponentResource):
    """A CanNotDelete `ManagementLockByScope` per target, scoped to the target's resource id.

    Outputs (attributes): `locks` (dict lock name -> lock resource).
    """

    def __init__(
        self, name: str, args: ResourceLocksArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.locks: dict[str, authorization.ManagementLockByScope] = {}
        for target in args.targets:
            token = target.resource.pulumi_resource_type  # e.g. azure-native:keyvault:Vault
            if token not in LOCKABLE_TYPES:
                raise ValueError(
                    f"ResourceLocks: refusing to lock {target.azure_name!r} of type {token}; only individual "
                    f"resources of types {sorted(LOCKABLE_TYPES)} are locked (never resource groups, "
                    "subscriptions or networking resources)"
                )
            lock_name = naming.lock_name(target.azure_name)
            if lock_name in self.locks:
                raise ValueError(f"ResourceLocks: two targets share the lock name {lock_name!r}")
            notes = f"Managed by Pulumi ({args.stack_label}); {target.azure_name}: {target.reason}."
            self.locks[lock_name] = authorization.ManagementLockByScope(
                f"{name}-{lock_name}",
                lock_name=lock_name,
                level=authorization.LockLevel.CAN_NOT_DELETE,
                scope=target.resource.id.apply(check_resource_scope),
                notes=notes[:512],
                opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.blocks)),
            )
        self.register_outputs({"lockNames": sorted(self.locks)})
