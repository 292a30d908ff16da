"""Pulumi ComponentResources of the azml-gpu stack: Workspace, GpuCluster, ResourceLocks.

Type tokens `azml-gpu:components:Workspace|GpuCluster|ResourceLocks` (docs/architecture.md).
Arguments are documented on each Args type and in docs/components.md.
"""

from components.gpu_cluster import (
    IMMUTABLE_PROPERTY_PATHS,
    GpuCluster,
    GpuClusterArgs,
    SshAccess,
    idle_duration,
)
from components.locks import LockTarget, ResourceLocks, ResourceLocksArgs, workspace_lock_targets
from components.workspace import Workspace, WorkspaceArgs

__all__ = [
    "IMMUTABLE_PROPERTY_PATHS",
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
]
