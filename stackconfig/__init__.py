"""Typed schema and validation of the `azml-gpu:` stack config namespace, and the stack outputs' shape.

The package's names load on first use (PEP 562 module `__getattr__`), so the standard-library-only modules
(`stackconfig.sshkeys`, `stackconfig.regions`) import without pydantic: the policy pack runs in its own
virtualenv, which has no pydantic, and checks SSH keys with the same code as the config schema.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "NAMESPACE": "stackconfig.errors",
    "ConfigError": "stackconfig.errors",
    "from_pulumi_config": "stackconfig.loader",
    "load_stack_file": "stackconfig.loader",
    "read_config_block": "stackconfig.loader",
    "StackFileError": "stackconfig.loader",
    "stack_file": "stackconfig.loader",
    "ClusterConfig": "stackconfig.models",
    "LocksConfig": "stackconfig.models",
    "ResourceGroupConfig": "stackconfig.models",
    "SshConfig": "stackconfig.models",
    "StackConfig": "stackconfig.models",
    "WorkspaceConfig": "stackconfig.models",
    "validate": "stackconfig.validation",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'stackconfig' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
