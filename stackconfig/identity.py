"""`azml-gpu:identity`: identity-based data access, role assignments, customer-managed key, diagnostics.

Role names are checked against `azroles` (the one map of role name -> built-in role definition id).
Combinations with other keys are checked in `stackconfig.combinations`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

import azroles
from stackconfig import names
from stackconfig.schema_base import Strict


class RoleGrant(Strict):
    """An Azure ML role for a person, group or service principal, at workspace scope."""

    principal_id: str = Field(
        description="Required. Entra object id of the user, group or service principal.",
        examples=["00000000-0000-0000-0000-000000000000"],
    )
    principal_type: Literal["User", "Group", "ServicePrincipal"] = Field(
        description="Required. User, Group or ServicePrincipal (ARM uses it to avoid replication delays).",
        examples=["Group"],
    )
    role: str = Field(
        description=f"Required. One of: {', '.join(azroles.PEOPLE_ROLES)}.",
        examples=["AzureML Data Scientist"],
    )

    @field_validator("principal_id")
    @classmethod
    def _principal(cls, value: str) -> str:
        if problem := names.guid_problem(value, "object id of the user, group or service principal"):
            raise ValueError(problem)
        return value.lower()

    @field_validator("role")
    @classmethod
    def _role(cls, value: str) -> str:
        if value in azroles.PEOPLE_ROLES:
            return value
        if value in azroles.PRIVILEGED:
            raise ValueError(
                f"'{value}' is not granted by this stack (it could change or delete every resource of the "
                f"workspace); use one of {', '.join(azroles.PEOPLE_ROLES)}"
            )
        raise ValueError(
            f"'{value}' is not a role this stack grants; use one of {', '.join(azroles.PEOPLE_ROLES)}"
        )


# The ARM resource type each id field of CustomerManagedKey must name.
_ID_TYPES = {
    "key_vault_id": "Microsoft.KeyVault/vaults",
    "user_assigned_identity_id": "Microsoft.ManagedIdentity/userAssignedIdentities",
}


class CustomerManagedKey(Strict):
    """Encrypt the workspace's data with your key (create-only: Azure can't add or remove it later)."""

    key_vault_id: str = Field(
        description="Required. ARM id of the key vault holding the key.", examples=[None]
    )
    key_uri: str = Field(
        description="Required. The key's identifier, https://<vault>.vault.azure.net/keys/<key>/<version>.",
        examples=["https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef"],
    )
    user_assigned_identity_id: str = Field(
        description="Required. ARM id of the user-assigned identity that reads the key (it needs Key Vault "
        "Crypto Service Encryption User on the vault before the workspace is created: grant it beforehand).",
        examples=[None],
    )

    @field_validator("key_vault_id", "user_assigned_identity_id")
    @classmethod
    def _resource_id(cls, value: str, info: ValidationInfo) -> str:
        if problem := names.resource_id_problem(value, _ID_TYPES[info.field_name]):
            raise ValueError(problem)
        return value

    @field_validator("key_uri")
    @classmethod
    def _uri(cls, value: str) -> str:
        if not value.startswith("https://") or "/keys/" not in value:
            raise ValueError(
                f"'{value}' is not a key vault key identifier; use https://<vault>.vault.azure.net/keys/<key>/<version>"
            )
        return value


class IdentityConfig(Strict):
    """`azml-gpu:identity`. Every key is optional; the defaults are Azure's."""

    system_datastores_auth_mode: Literal["accessKey", "identity"] = Field(
        default="accessKey",
        description="Optional, default accessKey (Azure's default): how the workspace's own datastores reach "
        "storage. identity uses Entra ID: the stack then grants the data roles.",
    )
    storage_shared_key_access: bool = Field(
        default=True,
        description="Optional, default true: false turns off account keys on the workspace storage (needs "
        "system_datastores_auth_mode: identity).",
    )
    data_stores: list[str] = Field(
        default_factory=list,
        description="Optional storage account ids the clusters' jobs read: each cluster identity gets "
        "Storage "
        "Blob Data Reader on each.",
    )
    role_assignments: list[RoleGrant] = Field(
        default_factory=list, description="Optional Azure ML roles for people and groups, at workspace scope."
    )
    customer_managed_key: CustomerManagedKey | None = Field(
        default=None, description="Optional customer-managed key encryption (create-only)."
    )
    diagnostic_settings: bool = Field(
        default=False,
        description="Optional, default false: send the workspace's logs and metrics to its Log Analytics "
        "workspace (ingestion is billed).",
    )

    @field_validator("data_stores")
    @classmethod
    def _stores(cls, value: list[str]) -> list[str]:
        for item in value:
            if problem := names.resource_id_problem(item, "Microsoft.Storage/storageAccounts"):
                raise ValueError(problem)
        return value

    @property
    def identity_datastores(self) -> bool:
        return self.system_datastores_auth_mode == "identity"
