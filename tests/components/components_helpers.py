"""Shared lookups for the component tests."""

from __future__ import annotations

import copy
import re
from typing import Any

from preflight.program import ProgramResult
from preflight.resource import Resource

ML = "azure-native:machinelearningservices"
COMPUTE = f"{ML}:Compute"
ML_WORKSPACE = f"{ML}:Workspace"
STORAGE = "azure-native:storage:StorageAccount"
KEY_VAULT = "azure-native:keyvault:Vault"
LOG_ANALYTICS = "azure-native:operationalinsights:Workspace"
APP_INSIGHTS = "azure-native:applicationinsights:Component"
REGISTRY = "azure-native:containerregistry:Registry"
RESOURCE_GROUP = "azure-native:resources:ResourceGroup"
LOCK = "azure-native:authorization:ManagementLockByScope"
PRIVATE_ENDPOINT = "azure-native:network:PrivateEndpoint"
DNS_ZONE_GROUP = "azure-native:network:PrivateDnsZoneGroup"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
DIAGNOSTIC_SETTING = "azure-native:monitor:DiagnosticSetting"

WORKSPACE_COMPONENT = "azml-gpu:components:Workspace"
CLUSTER_COMPONENT = "azml-gpu:components:GpuCluster"
LOCKS_COMPONENT = "azml-gpu:components:ResourceLocks"
ENDPOINTS_COMPONENT = "azml-gpu:components:PrivateEndpoints"
ACCESS_COMPONENT = "azml-gpu:components:RoleAssignments"
DIAGNOSTICS_COMPONENT = "azml-gpu:components:WorkspaceDiagnostics"

# An ARM id of an individual resource (not a resource group, not a subscription).
RESOURCE_ID = re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/[^/]+/[^/]+/[^/]+")
GROUP_OR_SUBSCRIPTION = re.compile(r"^/subscriptions/[^/]+(/resourceGroups/[^/]+)?/?$", re.I)


def one(result: ProgramResult, typ: str) -> Resource:
    found = result.of_type(typ)
    assert len(found) == 1, f"expected one {typ}, found {[r.name for r in found]}"
    return found[0]


def compute(result: ProgramResult, name: str) -> Resource:
    for r in result.of_type(COMPUTE):
        if r.inputs["computeName"] == name:
            return r
    have = [r.inputs["computeName"] for r in result.of_type(COMPUTE)]
    raise AssertionError(f"no compute {name!r}; have {have}")


def ns(config: dict[str, Any], key: str) -> Any:
    return config[f"azml-gpu:{key}"]


def variant(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of a stack config with `azml-gpu:` keys replaced (key without the namespace)."""
    out = copy.deepcopy(base)
    for key, value in changes.items():
        out[f"azml-gpu:{key}"] = value
    return out
