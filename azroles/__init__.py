"""Azure built-in roles the stack grants or refuses: the one place role names map to definition ids.

Standard library only: the policy pack imports it from its own small virtualenv, as it does `vmsizes`.

Sources (role name -> built-in role definition GUID; the GUIDs are the same in every tenant):
- learn.microsoft.com/azure/role-based-access-control/built-in-roles (the index), with the pages
  built-in-roles/privileged (Owner, Contributor, User Access Administrator, Role Based Access Control
  Administrator), built-in-roles/general (Reader), built-in-roles/storage (Storage Blob Data Contributor/
  Reader, Storage File Data Privileged Contributor), built-in-roles/security (Key Vault Administrator,
  Key Vault Secrets User, Key Vault Crypto Service Encryption User), built-in-roles/containers (AcrPull,
  AcrPush), built-in-roles/ai-machine-learning (AzureML Data Scientist, AzureML Compute Operator, AzureML
  Metrics Writer (preview), AzureML Registry User).
- The AzureML and privileged ids are also the `builtInRoleNames` map of Azure Verified Modules
  (Azure/bicep-registry-modules avm/res/machine-learning-services/workspace/main.bicep), which this
  mirrors for the workspace roles.
"""

from __future__ import annotations

import uuid

# Built-in role name -> role definition GUID.
BUILT_IN: dict[str, str] = {
    # privileged / general
    "Owner": "8e3af657-a8ff-443c-a75c-2fe8c4bcb635",
    "Contributor": "b24988ac-6180-42a0-ab88-20f7382dd24c",
    "User Access Administrator": "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9",
    "Role Based Access Control Administrator": "f58310d9-a9f6-439a-9e8d-f62e7b41a168",
    "Reader": "acdd72a7-3385-48ef-bd42-f606fba81ae7",
    # Azure Machine Learning
    "AzureML Data Scientist": "f6c7c914-8db3-469d-8ca1-694a8f32e121",
    "AzureML Compute Operator": "e503ece1-11d0-4e8e-8e2c-7a6c3bf38815",
    "AzureML Metrics Writer (preview)": "635dd51f-9968-44d3-b7fb-6d9a6bd613ae",
    "AzureML Registry User": "1823dd4f-9b8c-4ab6-ab4e-7397a3684615",
    # Approves the private endpoints of a managed network's user-defined outbound rules
    # (built-in-roles/ai-machine-learning#azure-ai-enterprise-network-connection-approver).
    "Azure AI Enterprise Network Connection Approver": "b556d68e-0be0-4f35-a333-ad7ee1ce17ea",
    # Storage data plane
    "Storage Blob Data Contributor": "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
    "Storage Blob Data Reader": "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1",
    "Storage File Data Privileged Contributor": "69566ab7-960f-475b-8e7c-b3118f30c6bd",
    # Key Vault data plane (RBAC vaults)
    "Key Vault Administrator": "00482a5a-887f-4fb3-b363-3b7fe8e74483",
    "Key Vault Secrets User": "4633458b-17de-408a-b874-0445c86b69e6",
    "Key Vault Crypto Service Encryption User": "e147488a-f6f5-4113-8e2d-b22465e65bf6",
    # Container Registry
    "AcrPull": "7f951dda-4ed3-4680-a7ca-43fe172d538d",
    "AcrPush": "8311e382-0749-4cb8-b61a-304f252e45ec",
}

# Roles people and groups may get from the stack config, at workspace scope (the Azure ML roles and Reader).
PEOPLE_ROLES: tuple[str, ...] = (
    "AzureML Data Scientist",
    "AzureML Compute Operator",
    "AzureML Metrics Writer (preview)",
    "AzureML Registry User",
    "Reader",
)

# Roles that may manage the resources (and, for Owner, grant access) of everything under their scope: never
# granted by the stack at resource-group or subscription scope (policy `no-privileged-role-assignments`).
PRIVILEGED: tuple[str, ...] = ("Owner", "Contributor")

_BY_ID = {guid: name for name, guid in BUILT_IN.items()}
# A fixed namespace for the role assignment names (uuid5 of the assignment's logical key).
_ASSIGNMENT_NAMESPACE = uuid.UUID("5d1f6a52-3b0e-4b8e-9d0c-6a1f8a2f0b11")


def definition_id(role: str, subscription_id: str) -> str:
    """The role definition's ARM id at subscription scope, the form `roleAssignments` takes
    (`/subscriptions/<sub>/providers/Microsoft.Authorization/roleDefinitions/<guid>`). KeyError for a role
    this catalog does not know."""
    return (
        f"/subscriptions/{subscription_id}/providers/Microsoft.Authorization/roleDefinitions/{BUILT_IN[role]}"
    )


def role_name(definition: str) -> str | None:
    """The built-in role name of a role definition id (a bare GUID or any ARM id ending in it); None when
    it is not in this catalog."""
    guid = definition.rstrip("/").rsplit("/", 1)[-1].lower()
    return _BY_ID.get(guid)


def assignment_name(*key: str) -> str:
    """A role assignment's name, which ARM requires to be a GUID: uuid5 of the assignment's logical key (what,
    to whom, which role), so the same grant keeps its name across runs and a changed grant gets a new one
    (Bicep's `guid(scope, principal, role)` idea)."""
    return str(uuid.uuid5(_ASSIGNMENT_NAMESPACE, "/".join(key)))
