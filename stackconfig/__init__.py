"""Typed schema and validation of the `azml-gpu:` stack config namespace, and the stack outputs' shape."""

from stackconfig.errors import NAMESPACE, ConfigError
from stackconfig.loader import from_pulumi_config, load_stack_file, stack_file
from stackconfig.models import (
    ClusterConfig,
    LocksConfig,
    ResourceGroupConfig,
    SshConfig,
    StackConfig,
    WorkspaceConfig,
)
from stackconfig.validate import validate

__all__ = [
    "NAMESPACE",
    "ClusterConfig",
    "ConfigError",
    "LocksConfig",
    "ResourceGroupConfig",
    "SshConfig",
    "StackConfig",
    "WorkspaceConfig",
    "from_pulumi_config",
    "load_stack_file",
    "stack_file",
    "validate",
]
