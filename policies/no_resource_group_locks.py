"""no-resource-group-locks (mandatory): no lock at resource-group or subscription scope, read from its inputs.

No lock at resource-group or subscription scope next to Azure ML. Sources: azure-notes.md 3.6 ("Resource
locks on the workspace resource group block scaling ('stuck at resizing 0 -> 0')"); platform-notes.md ("a
delete or read-only lock on the resource group blocks cluster scaling"); the seed, "Failure modes": "Lock
individual resources instead". A subscription lock covers every resource group.

Analyze receives the lock's inputs: this policy decides every lock whose scope is known there (a literal such
as an adopted resource group, and every lock in an update preview). A scope computed from a resource of the
same stack is unknown in the first preview of a new stack: no-resource-group-locks-by-dependency judges those
at AnalyzeStack (policies/locks.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import read
from policies._policy import RESOURCE, AnalyzedResource
from policies.locks import LockTarget, from_inputs

NAME = "no-resource-group-locks"
DESCRIPTION = "A stack with an Azure ML workspace must not lock a resource group or the subscription."
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = RESOURCE
CONFIG: dict[str, Any] = {}
COVERS_CLUSTERS = ("resource-group", "subscription")  # LockTarget kinds that cover every cluster


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    target = from_inputs(resource.resource_type, resource.props)
    if target is None or target.kind not in COVERS_CLUSTERS:
        return []
    return [message(read(resource.props, "level"), resource.name, target)]


def message(level: Any, name: str, target: LockTarget) -> str:
    """The violation for lock `name` (its `level`, e.g. CanNotDelete) on a resource group or subscription."""
    shown = level if isinstance(level, str) else "a"
    return (
        f"{shown} lock '{name}' on {target.shown} applies to the Azure ML workspace's clusters: "
        "Azure ML cannot resize them, so clusters stick at 'resizing 0 -> 0' and jobs queue forever. "
        "Fix: lock individual resources (storage, key vault, registry) with the locks config instead."
    )
