"""Typed schema and validation of the `azml-gpu:` stack config namespace, and the stack outputs' shape.

The package's names load on first use (PEP 562 module `__getattr__`), so the standard-library-only modules
(`stackconfig.sshkeys`, `stackconfig.regions`) import without pydantic: the policy pack runs in its own
virtualenv, which has no pydantic, and checks SSH keys with the same code as the config schema.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Each name -> its module, relative to this package (`stackconfig` here, `azml_gpu.stackconfig` installed).
_EXPORTS = {
    "NAMESPACE": ".errors",
    "ConfigError": ".errors",
    "from_pulumi_config": ".loader",
    "load_stack_file": ".loader",
    "read_config_block": ".loader",
    "StackFileError": ".loader",
    "stack_file": ".loader",
    "ClusterConfig": ".models",
    "LocksConfig": ".models",
    "ResourceGroupConfig": ".models",
    "SshConfig": ".models",
    "StackConfig": ".models",
    "WorkspaceConfig": ".models",
    "validate": ".validation",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
