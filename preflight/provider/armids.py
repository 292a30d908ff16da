"""ARM ids, as Azure gives them, of the resource types the stacks declare: what the offline provider answers
as a created resource's id (and what `pulumi stack export` then holds).

- `/subscriptions/<sub>/resourceGroups/<rg>/providers/<namespace>/<type>/<name>` for a resource in a group
  (the resource type ids of learn.microsoft.com/azure/templates, e.g. Microsoft.Storage/storageAccounts, and
  azure-native's REST paths for the same tokens);
- nested for a workspace's computes (`.../workspaces/<ws>/computes/<name>`) and a private endpoint's DNS zone
  group;
- `<scope>/providers/<type>/<name>` for extension resources (role assignments, diagnostic settings, locks:
  learn.microsoft.com/azure/azure-resource-manager/management/extension-resource-types).

A type without a template is an error (add it here), so a new resource cannot get a made-up id.
"""

from __future__ import annotations

from typing import Any

from preflight.wire import UNKNOWN

# Used when the stack config has no `azure-native:subscriptionId` (all-zero GUIDs are what Azure's own
# documentation examples use).
DEFAULT_SUBSCRIPTION_ID = "00000000-0000-0000-0000-000000000000"

# type token -> (ARM provider path after the resource group, input that holds the Azure name).
ID_TEMPLATES: dict[str, tuple[str, str]] = {
    "azure-native:storage:StorageAccount": ("Microsoft.Storage/storageAccounts/{}", "accountName"),
    "azure-native:keyvault:Vault": ("Microsoft.KeyVault/vaults/{}", "vaultName"),
    "azure-native:operationalinsights:Workspace": (
        "Microsoft.OperationalInsights/workspaces/{}",
        "workspaceName",
    ),
    "azure-native:applicationinsights:Component": ("Microsoft.Insights/components/{}", "resourceName"),
    "azure-native:containerregistry:Registry": ("Microsoft.ContainerRegistry/registries/{}", "registryName"),
    "azure-native:machinelearningservices:Workspace": (
        "Microsoft.MachineLearningServices/workspaces/{}",
        "workspaceName",
    ),
    "azure-native:network:PrivateEndpoint": ("Microsoft.Network/privateEndpoints/{}", "privateEndpointName"),
}

# Extension resources: id = <scope input>/providers/<type>/<name input>.
EXTENSION_TEMPLATES: dict[str, tuple[str, str, str]] = {
    "azure-native:authorization:RoleAssignment": (
        "scope",
        "Microsoft.Authorization/roleAssignments",
        "roleAssignmentName",
    ),
    "azure-native:monitor:DiagnosticSetting": (
        "resourceUri",
        "Microsoft.Insights/diagnosticSettings",
        "name",
    ),
}
LOCK_TYPE = "Microsoft.Authorization/locks"


class UnknownResourceType(Exception):
    """A type with no ARM id template here."""


def group_id(subscription_id: str, resource_group: str) -> str:
    return f"/subscriptions/{subscription_id}/resourceGroups/{resource_group}"


def _known(*values: Any) -> bool:
    return all(isinstance(v, str) and v and v != UNKNOWN for v in values)


def arm_identity(
    subscription_id: str, typ: str, name: str, inputs: dict[str, Any]
) -> tuple[str, str, str] | None:
    """(ARM id, Azure name, ARM type) of a resource of type `typ` (Pulumi name `name`) with these checked
    inputs; None while an input the id is made of is unknown."""
    sub = subscription_id
    if typ == "azure-native:resources:ResourceGroup":
        azure_name = inputs.get("resourceGroupName") or name
        if not _known(azure_name):
            return None
        return group_id(sub, azure_name), azure_name, "Microsoft.Resources/resourceGroups"
    if typ == "azure-native:machinelearningservices:Compute":
        azure_name = inputs.get("computeName") or name
        rg, ws = inputs.get("resourceGroupName"), inputs.get("workspaceName")
        if not _known(azure_name, rg, ws):
            return None
        ws_id = group_id(sub, rg) + f"/providers/Microsoft.MachineLearningServices/workspaces/{ws}"
        return (
            f"{ws_id}/computes/{azure_name}",
            azure_name,
            "Microsoft.MachineLearningServices/workspaces/computes",
        )
    if typ in EXTENSION_TEMPLATES:
        scope_key, arm_type, name_key = EXTENSION_TEMPLATES[typ]
        azure_name, scope = inputs.get(name_key) or name, inputs.get(scope_key)
        if not _known(azure_name, scope):
            return None
        return f"{scope}/providers/{arm_type}/{azure_name}", azure_name, arm_type
    if typ == "azure-native:network:PrivateDnsZoneGroup":
        azure_name = inputs.get("privateDnsZoneGroupName") or name
        rg, endpoint = inputs.get("resourceGroupName"), inputs.get("privateEndpointName")
        if not _known(azure_name, rg, endpoint):
            return None
        arm_type = "Microsoft.Network/privateEndpoints/privateDnsZoneGroups"
        parent = f"{group_id(sub, rg)}/providers/Microsoft.Network/privateEndpoints/{endpoint}"
        return f"{parent}/privateDnsZoneGroups/{azure_name}", azure_name, arm_type
    if typ == "azure-native:authorization:ManagementLockByScope":
        azure_name, scope = inputs.get("lockName") or name, inputs.get("scope")
        if not _known(azure_name, scope):
            return None
        return f"{scope}/providers/{LOCK_TYPE}/{azure_name}", azure_name, LOCK_TYPE
    if typ == "azure-native:authorization:ManagementLockAtResourceGroupLevel":
        # ManagementLocks_CreateOrUpdateAtResourceGroupLevel (azure-rest-api-specs
        # specification/resources/resource-manager/Microsoft.Authorization/stable/2020-05-01/locks.json)
        azure_name, rg = inputs.get("lockName") or name, inputs.get("resourceGroupName")
        if not _known(azure_name, rg):
            return None
        return f"{group_id(sub, rg)}/providers/{LOCK_TYPE}/{azure_name}", azure_name, LOCK_TYPE
    if typ == "azure-native:authorization:ManagementLockAtSubscriptionLevel":
        # ManagementLocks_CreateOrUpdateAtSubscriptionLevel (the same locks.json)
        azure_name = inputs.get("lockName") or name
        if not _known(azure_name):
            return None
        return f"/subscriptions/{sub}/providers/{LOCK_TYPE}/{azure_name}", azure_name, LOCK_TYPE
    if typ == "azure-native:authorization:ManagementLockAtResourceLevel":
        azure_name = inputs.get("lockName") or name
        parts = [
            inputs.get(k)
            for k in ("resourceProviderNamespace", "parentResourcePath", "resourceType", "resourceName")
        ]
        if not _known(azure_name, inputs.get("resourceGroupName"), *[p for p in parts if p]):
            return None
        scope = f"{group_id(sub, inputs['resourceGroupName'])}/providers/{'/'.join(p for p in parts if p)}"
        return f"{scope}/providers/{LOCK_TYPE}/{azure_name}", azure_name, LOCK_TYPE
    if typ in ID_TEMPLATES:
        template, name_key = ID_TEMPLATES[typ]
        azure_name, rg = inputs.get(name_key) or name, inputs.get("resourceGroupName")
        if not _known(azure_name, rg):
            return None
        arm_type = template.rsplit("/", 1)[0]
        return f"{group_id(sub, rg)}/providers/{template.format(azure_name)}", azure_name, arm_type
    raise UnknownResourceType(
        f"the offline azure-native provider has no ARM id template for {typ} (resource {name!r}); add one to "
        "preflight/provider/armids.py ID_TEMPLATES"
    )
