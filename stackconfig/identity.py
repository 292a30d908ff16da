"""`azml-gpu:identity`: identity-based data access, role assignments, customer-managed key, diagnostics, the
workspace's identity; and the stack's grant plan (`grant_plan`: which role assignments the stack declares, on
which resource, for whom), the one home of that decision (components/identity.py declares it, the lock
decision in `stackconfig.combinations` reads it).

Role names are checked against `azroles` (the one map of role name -> built-in role definition id).
Combinations with other keys are checked in `stackconfig.combinations`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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


# What a customer-managed key needs that neither the program nor the gate can read (docs/azure-behaviour.md
# section 18): each must be acknowledged in `customer_managed_key.acknowledged`, refused by default.
# Sources: learn.microsoft.com/azure/machine-learning/how-to-setup-customer-managed-keys (MicrosoftDocs/
# azure-ai-docs articles/machine-learning/how-to-setup-customer-managed-keys.md): "Prerequisites" (the
# resource providers table) and "Allow Azure Cosmos DB to access the key" (Get, Unwrap Key, Wrap Key; "The
# principal ID for this entry is a232010e-820c-4083-83bb-3ace5fc29d0b for all regions other than Azure
# Government. For Azure Government, the principal ID is 57506a73-e302-42a9-b869-6f12d9ec29e9"); for a vault
# on the RBAC permission model, learn.microsoft.com/azure/cosmos-db/how-to-setup-customer-managed-keys
# (MicrosoftDocs/azure-databases-docs), "Add role-based access control roles": Key Vault Crypto Service
# Encryption User for the Azure Cosmos DB principal.
COSMOS_DB_APP_ID = "a232010e-820c-4083-83bb-3ace5fc29d0b"
COSMOS_DB_APP_ID_GOVERNMENT = "57506a73-e302-42a9-b869-6f12d9ec29e9"
CMK_PROVIDERS = (
    "Microsoft.MachineLearningServices",
    "Microsoft.Storage",
    "Microsoft.KeyVault",
    "Microsoft.DocumentDB",
    "Microsoft.Search",
)


def cmk_prerequisites(vault_id: str) -> dict[str, str]:
    """Each acknowledgement of `customer_managed_key.acknowledged` -> what it states, with the commands that
    make it true for the vault `vault_id`."""
    parts = vault_id.split("/")
    vault = parts[8] if len(parts) > 8 else "<vault>"
    register = "; ".join(f"az provider register --namespace {p}" for p in CMK_PROVIDERS)
    return {
        "cosmos_db_key_access": (
            f"the Azure Cosmos DB principal (application id {COSMOS_DB_APP_ID}; Azure Government "
            f"{COSMOS_DB_APP_ID_GOVERNMENT}) has Get, Wrap Key and Unwrap Key on the key in {vault}: on an "
            f"access-policy vault `az keyvault set-policy --name {vault} --spn {COSMOS_DB_APP_ID} "
            "--key-permissions get wrapKey unwrapKey`, on an RBAC vault `az role assignment create "
            f'--assignee {COSMOS_DB_APP_ID} --role "Key Vault Crypto Service Encryption User" '
            f"--scope {vault_id}`"
        ),
        "providers_registered": (
            f"the workspace's subscription has {', '.join(CMK_PROVIDERS)} registered: `{register}` (check "
            "with `az provider show --namespace Microsoft.DocumentDB --query registrationState`)"
        ),
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

    acknowledged: list[str] = Field(
        default_factory=list,
        validate_default=True,
        description="Required, both: cosmos_db_key_access (the Azure Cosmos DB principal has Get, Wrap Key "
        "and Unwrap Key on the key) and providers_registered (Microsoft.DocumentDB, Microsoft.Search and the "
        "other providers Azure ML's key setup needs are registered). Neither can be read by the program or "
        "the gate: the error of a missing one gives the commands that make it true.",
        examples=[["cosmos_db_key_access", "providers_registered"]],
    )

    @field_validator("acknowledged")
    @classmethod
    def _acknowledged(cls, value: list[str], info: ValidationInfo) -> list[str]:
        vault_id = info.data.get("key_vault_id") or "<key_vault_id>"
        needed = cmk_prerequisites(vault_id)
        if unknown := [v for v in value if v not in needed]:
            raise ValueError(
                f"{', '.join(repr(v) for v in unknown)} is not an acknowledgement; use {' and '.join(needed)}"
            )
        if missing := [k for k in needed if k not in value]:
            raise ValueError(
                "not acknowledged: "
                + "; ".join(f"{k}: {needed[k]}" for k in missing)
                + f". Make each true, then add {', '.join(missing)} to acknowledged (Azure ML creates the "
                "workspace's Cosmos DB and Search with your key and fails if they are not: "
                "how-to-setup-customer-managed-keys.md)"
            )
        return value

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
    workspace_identity_id: str | None = Field(
        default=None,
        description="Optional ARM id of a user-assigned identity for the workspace (type UserAssigned, also "
        "its primaryUserAssignedIdentity); default a system-assigned one, whose role assignments Azure "
        "makes itself. With it the stack grants the identity the roles Azure documents, before the "
        "workspace is created; the deployer needs Managed Identity Operator on it.",
        examples=[None],
    )

    @field_validator("workspace_identity_id")
    @classmethod
    def _workspace_identity(cls, value: str | None) -> str | None:
        if value is not None and (
            problem := names.resource_id_problem(value, "Microsoft.ManagedIdentity/userAssignedIdentities")
        ):
            raise ValueError(problem)
        return value

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


# The resources of the stack a grant can sit on; the lock flags (`azml-gpu:locks`) use the same names.
STACK_SCOPES: tuple[str, ...] = (
    "storage",
    "key_vault",
    "container_registry",
    "application_insights",
    "workspace",
)
WORKSPACE_PRINCIPAL = "workspace"  # the workspace's identity (system- or user-assigned)
NETWORK_APPROVER = "Azure AI Enterprise Network Connection Approver"


@dataclass(frozen=True)
class PlannedGrant:
    """One role assignment the stack declares.

    `key`: a short stable label, unique in the stack (names the Pulumi resource, seeds the GUID name).
    `scope`: one of STACK_SCOPES, or the ARM id of a resource outside the stack.
    `principal`: WORKSPACE_PRINCIPAL, `cluster:<name>` (that cluster's identity), or an Entra object id.
    `before_workspace`: the grant must exist before the workspace is created (a user-assigned workspace
    identity reaches its resources at creation)."""

    key: str
    scope: str
    principal: str
    principal_type: Literal["User", "Group", "ServicePrincipal"]
    role: str
    before_workspace: bool = False

    @property
    def why(self) -> str:
        """`<role> for <whom>`, as messages show the grant."""
        who = self.principal.removeprefix("cluster:")
        if self.principal == WORKSPACE_PRINCIPAL:
            who = "the workspace identity"
        elif self.principal.startswith("cluster:"):
            who = f"cluster {who}'s identity"
        return f"{self.role} for {who}"


def cluster_principals(identity: IdentityConfig, clusters: Mapping[str, str | None]) -> dict[str, str]:
    """Cluster name -> the principal its grants go to: `cluster:<name>` for its own identity; with a
    user-assigned identity (`clusters[name]`, an ARM id) that is the workspace's `workspace_identity_id`,
    WORKSPACE_PRINCIPAL; one an earlier cluster already uses, `cluster:<that cluster>`. ARM ids compare
    case-insensitively (resource-name-rules.md: "Always perform a case-insensitive comparison of names")."""
    owner: dict[str, str] = {}
    if identity.workspace_identity_id is not None:
        owner[identity.workspace_identity_id.lower()] = WORKSPACE_PRINCIPAL
    out: dict[str, str] = {}
    for name, uai in clusters.items():
        if uai is None:
            out[name] = f"cluster:{name}"
        else:
            out[name] = owner.setdefault(uai.lower(), f"cluster:{name}")
    return out


def grant_plan(
    identity: IdentityConfig,
    clusters: Mapping[str, str | None],
    *,
    has_registry: bool,
    private_endpoint_rule_targets: Sequence[str] = (),
    ci_principal: str | None = None,
) -> list[PlannedGrant]:
    """The role assignments the stack declares, never one Azure makes itself (ARM answers a second identical
    assignment with 409 RoleAssignmentExists, so the first `pulumi up` would fail), and one per (principal,
    role, scope): `clusters` maps each cluster's name to its `user_assigned_identity_id` (None: system-
    assigned), and clusters sharing one identity, or using the workspace's, are one principal
    (`cluster_principals`) whose grant is declared once, under the first key that asks for it (the
    workspace's, else the first such cluster's). ARM refuses a second assignment of the same role to the
    same principal on the same scope under another name ("The resource provider does not allow having a role
    assignment with the same properties - service principal, role definition and scope deployed more than
    once when it is with different name", Azure/bicep discussion #19690; the error is "code:
    RoleAssignmentExists message: The Role assignment already exists", learn.microsoft.com/rest/api/
    authorization, privileged-role common errors).

    Sources (learn.microsoft.com/azure/machine-learning/how-to-identity-based-service-authentication,
    MicrosoftDocs/azure-ai-docs articles/machine-learning/how-to-identity-based-service-authentication.md):
    - "Workspace identity types": System-assigned (SAI) "Role assignment creation: Managed by Microsoft";
      system- plus user-assigned "Managed by you". So a system-assigned workspace identity gets no storage
      grant from the stack (with identity datastores Azure grants its data roles itself; MicrosoftDocs/
      azure-docs#80040, #80686). The one grant kept is Key Vault Administrator on the stack's vault: the
      vault uses the RBAC permission model (components/workspace.py), whose data plane the service's
      access-policy setup does not cover ("Azure Key Vault (when using RBAC permission model): Contributor
      (control plane) + Key Vault Administrator (data plane)"); conservative reading in
      docs/azure-behaviour.md section 16.
    - "User-assigned managed identity > Workspace": the table of roles a user-assigned workspace identity
      needs, all granted here before the workspace is created (Contributor on the workspace after it), as
      the page has them (2025-06-10 revision): Azure Storage "Contributor (control plane) + Storage Blob Data
      Contributor (data plane, optional, to enable data preview in the Azure Machine Learning studio)", Key
      Vault (RBAC) "Contributor (control plane) + Key Vault Administrator (data plane)", Container Registry
      "Contributor", Application Insights "Contributor", workspace "Contributor". An earlier revision also
      named Storage File Data Privileged Contributor on storage; the grant is kept, on
      how-to-disable-local-auth-storage.md's pair of data roles (docs/azure-behaviour.md section 16).
    - "Compute cluster": "A managed identity automatically gets the ACRPull role on the workspace ACR": no
      AcrPull from the stack. (Also: "If you create compute first, before the workspace ACR exists, you need
      to assign the ACRPull role manually": a stack without `workspace.container_registry` gets its registry
      lazily, docs/azure-behaviour.md section 16.)
    - how-to-disable-local-auth-storage.md: with identity datastores each cluster identity and the data
      scientists need the storage data roles (nothing says Azure grants those): kept. So does the deploy
      pipeline's service principal (`ci_principal`, `azml-gpu:deploy.ci_principal_id`), which uploads the
      smoke job's code (stackconfig/deploy.py).
    - how-to-managed-network.md: user-defined private-endpoint outbound rules are approved with the Azure AI
      Enterprise Network Connection Approver role, which Azure no longer grants the workspace identity by
      itself since 2025-04-30 ("If you are using UAI workspace please make sure to add the Azure AI
      Enterprise Network Connection Approver role to your identity"; role id in built-in-roles/
      ai-machine-learning): granted on each rule's target.
    """
    sp: Literal["ServicePrincipal"] = "ServicePrincipal"  # managed identities are service principals
    blob, blob_reader = "Storage Blob Data Contributor", "Storage Blob Data Reader"
    file_privileged = "Storage File Data Privileged Contributor"
    ws = WORKSPACE_PRINCIPAL
    datastores = identity.identity_datastores
    grants: list[PlannedGrant] = []
    if identity.workspace_identity_id is None:
        grants.append(PlannedGrant("ws/kv/administrator", "key_vault", ws, sp, "Key Vault Administrator"))
    else:
        before = [
            ("ws/st/contributor", "storage", "Contributor"),
            ("ws/st/blob-contributor", "storage", "Storage Blob Data Contributor"),
            ("ws/st/file-privileged", "storage", "Storage File Data Privileged Contributor"),
            ("ws/kv/contributor", "key_vault", "Contributor"),
            ("ws/kv/administrator", "key_vault", "Key Vault Administrator"),
            ("ws/appi/contributor", "application_insights", "Contributor"),
        ]
        if has_registry:
            before.append(("ws/cr/contributor", "container_registry", "Contributor"))
        grants += [PlannedGrant(k, scope, ws, sp, role, before_workspace=True) for k, scope, role in before]
        grants.append(PlannedGrant("ws/mlw/contributor", "workspace", ws, sp, "Contributor"))
    for target in dict.fromkeys(private_endpoint_rule_targets):
        label = target.rstrip("/").rsplit("/", 1)[-1]
        # Before the workspace when its identity is user-assigned: the rules are approved when the network is
        # provisioned, which can be at the workspace's creation (stackconfig.combinations refuses the rest).
        grants.append(
            PlannedGrant(
                f"ws/{label}/network-approver",
                target,
                ws,
                sp,
                NETWORK_APPROVER,
                before_workspace=identity.workspace_identity_id is not None,
            )
        )
    principals = cluster_principals(identity, clusters)
    for name in clusters:
        node = principals[name]
        if datastores:
            grants.append(
                PlannedGrant(
                    f"{name}/st/blob-contributor", "storage", node, sp, "Storage Blob Data Contributor"
                )
            )
        for store in identity.data_stores:
            label = store.rstrip("/").rsplit("/", 1)[-1]
            grants.append(PlannedGrant(f"{name}/{label}/blob-reader", store, node, sp, blob_reader))
    if datastores and ci_principal is not None:
        for slug, role in (("blob-contributor", blob), ("file-privileged", file_privileged)):
            grants.append(PlannedGrant(f"ci/st/{slug}", "storage", ci_principal, sp, role))
    for person in identity.role_assignments:
        who, kind = person.principal_id, person.principal_type
        slug = person.role.lower().replace(" ", "-")
        grants.append(PlannedGrant(f"people/{who}/{slug}", "workspace", who, kind, person.role))
        if datastores and person.role == "AzureML Data Scientist":
            grants.append(PlannedGrant(f"people/{who}/st/blob-contributor", "storage", who, kind, blob))
            grants.append(
                PlannedGrant(
                    f"people/{who}/st/file-privileged",
                    "storage",
                    who,
                    kind,
                    file_privileged,
                )
            )
    return _one_per_assignment(grants)


def _one_per_assignment(grants: Sequence[PlannedGrant]) -> list[PlannedGrant]:
    """The first grant of each (principal, role, scope) where later ones come from other config entries (a
    shared identity: a second assignment would be ARM's 409). A grant repeated under its own key is the same
    config entry written twice: kept, so the gate names both entries (preflight.duplicates)."""
    first: dict[tuple[str, str, str], str] = {}
    out: list[PlannedGrant] = []
    for grant in grants:
        assignment = (grant.principal.lower(), grant.role, grant.scope.lower())
        if assignment in first and first[assignment] != grant.key:
            continue
        first.setdefault(assignment, grant.key)
        out.append(grant)
    return out
