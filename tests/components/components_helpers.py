"""Shared lookups for the component and program tests."""

from __future__ import annotations

import copy
import re
from typing import Any

from .program_mocks import Resource, Run

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

SUB = "00000000-0000-0000-0000-000000000000"  # the shipped stacks' azure-native:subscriptionId
GUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# An ARM id of an individual resource (not a resource group, not a subscription).
RESOURCE_ID = re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/[^/]+/[^/]+/[^/]+")
GROUP_OR_SUBSCRIPTION = re.compile(r"^/subscriptions/[^/]+(/resourceGroups/[^/]+)?/?$", re.I)
UAI = (
    f"/subscriptions/{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/userAssignedIdentities/"
    "id-train"
)
DATA = f"/subscriptions/{SUB}/resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stdata"
KV_CMK = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
KEY_URI = "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef"


def one(result: Run, typ: str) -> Resource:
    found = result.of_type(typ)
    assert len(found) == 1, f"expected one {typ}, found {[r.name for r in found]}"
    return found[0]


def compute(result: Run, name: str) -> Resource:
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


def customer_key(**changes: Any) -> dict[str, Any]:
    """An acknowledged `identity.customer_managed_key` in KV_CMK, read by the user-assigned identity UAI."""
    return {
        "key_vault_id": KV_CMK,
        "key_uri": KEY_URI,
        "user_assigned_identity_id": UAI,
        "acknowledged": ["cosmos_db_key_access", "providers_registered"],
        **changes,
    }


def vault(properties: dict[str, Any], arm_id: str = KV_CMK) -> dict[str, dict[str, Any]]:
    """An existing key vault outside the stack, as `az keyvault show` prints it (id, name, type,
    properties)."""
    body = {"id": arm_id, "name": arm_id.rsplit("/", 1)[-1], "type": "Microsoft.KeyVault/vaults"}
    return {arm_id: {"id": arm_id, "type": "", "outputs": {**body, "properties": properties}}}
