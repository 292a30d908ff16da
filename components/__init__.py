"""Pulumi ComponentResources of the azml-gpu stack: Workspace, GpuCluster, ResourceLocks, PrivateEndpoints,
RoleAssignments, WorkspaceDiagnostics.

Type tokens `azml-gpu:components:<Name>` (docs/architecture.md).
Arguments are documented on each Args type and in docs/components.md.
"""

from components.diagnostics import WorkspaceDiagnostics, WorkspaceDiagnosticsArgs
from components.gpu_cluster import (
    IMMUTABLE_PROPERTY_PATHS,
    GpuCluster,
    GpuClusterArgs,
    SshAccess,
    idle_duration,
    workspace_isolation,
)
from components.identity import Grant, RoleAssignments, RoleAssignmentsArgs, stack_grants
from components.locks import LockTarget, ResourceLocks, ResourceLocksArgs, workspace_lock_targets
from components.network import (
    EndpointTarget,
    ManagedNetwork,
    OutboundRule,
    PrivateEndpoints,
    PrivateEndpointsArgs,
)
from components.workspace import CustomerKey, Workspace, WorkspaceArgs

__all__ = [
    "IMMUTABLE_PROPERTY_PATHS",
    "CustomerKey",
    "EndpointTarget",
    "Grant",
    "ManagedNetwork",
    "OutboundRule",
    "PrivateEndpoints",
    "PrivateEndpointsArgs",
    "RoleAssignments",
    "RoleAssignmentsArgs",
    "WorkspaceDiagnostics",
    "WorkspaceDiagnosticsArgs",
    "stack_grants",
    "GpuCluster",
    "GpuClusterArgs",
    "LockTarget",
    "ResourceLocks",
    "ResourceLocksArgs",
    "SshAccess",
    "Workspace",
    "WorkspaceArgs",
    "idle_duration",
    "workspace_lock_targets",
    "workspace_isolation",
]
