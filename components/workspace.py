"""Workspace: the resource group, the Azure ML workspace and the resources it depends on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import pulumi
import pulumi_azure_native.applicationinsights as applicationinsights
import pulumi_azure_native.authorization as authorization
import pulumi_azure_native.containerregistry as containerregistry
import pulumi_azure_native.keyvault as keyvault
import pulumi_azure_native.machinelearningservices as ml
import pulumi_azure_native.managedidentity as managedidentity
import pulumi_azure_native.operationalinsights as operationalinsights
import pulumi_azure_native.resources as resources
import pulumi_azure_native.storage as storage

from components import naming
from components.arguments import ArgumentsError, plain, renamed
from components.identity import (
    Grant,
    PlannedGrantLike,
    RoleAssignments,
    RoleAssignmentsArgs,
    scope_ids,
)
from components.network import ManagedNetwork, managed_network_args

TYPE_TOKEN = "azml-gpu:components:Workspace"


@dataclass(frozen=True)
class WorkspaceArgs:
    """Arguments of the Workspace component.

    Required:
    - `name`: the Azure ML workspace name (3-33 characters; validated by stackconfig). Every other
      name is derived from it (see `components.naming`).
    - `region`: Azure region of the workspace and of all its dependent resources.
    - `resource_group`: resource group name.
    - `public_network_access`: "Enabled" | "Disabled". No default: whether the workspace is reachable
      from the internet is a decision each stack makes explicitly.

    Optional:
    - `create_resource_group` (default True): False looks up an existing group by name
      (`resources.get_resource_group`), so a missing group fails at preview with Azure's own
      ResourceGroupNotFound error instead of half-way through `pulumi up`.
    - `container_registry` (default False): Azure ML creates a registry lazily the first time it
      builds an image when none is attached (learn.microsoft.com/azure/machine-learning/concept-workspace,
      "Associated resources"); True declares one here so it can be locked and owned by the stack.
    - `key_vault_soft_delete_days` (default 90): days a deleted vault stays soft-deleted (7-90, azure-native
      VaultPropertiesArgs.soft_delete_retention_in_days); its globally unique name stays taken that long
      unless the vault is purged, which purge protection forbids (docs/azure-behaviour.md).
    - `key_vault_purge_protection` (default True): irreversible once on; the vault property "does not
      accept false" (azure-native keyvault.VaultPropertiesArgs.enable_purge_protection docstring), so
      False omits the property rather than sending false.
    - `friendly_name`, `description` (default None): shown in Azure ML studio.
    - `tags` (default empty): applied to every resource the component declares.
    - `log_retention_days` (default 30): Log Analytics retention; the PerGB2018 tier includes 31 days
      at no retention charge (learn.microsoft.com/azure/azure-monitor/logs/data-retention-configure).
    - `managed_network` (default None: no managed network, Azure's default): a `components.network.
      ManagedNetwork`, sent as `managedNetwork` with `provisionNetworkNow` from its `provision_at_creation`.
    - `private_registry` (default False): True declares the registry Premium, the tier private endpoints need
      (learn.microsoft.com/azure/container-registry/container-registry-private-link); set it when the
      registry is reached through a private endpoint (yours or the managed network's).
    - `system_datastores_auth_mode` (default "accessKey", Azure's default): "accessKey" | "identity", sent
      explicitly as `systemDatastoresAuthMode` (AccessKey | Identity) so the choice shows in the stack.
    - `storage_shared_key_access` (default True): False sends `allowSharedKeyAccess: false` to the storage
      account (then only Entra ID reaches the data: needs identity datastores; stackconfig checks).
    - `customer_managed_key` (default None): a `CustomerKey`; sent as `encryption` (create-only in Azure:
      learn.microsoft.com/azure/machine-learning/concept-customer-managed-keys), with the key's user-assigned
      identity added to the workspace identity (`SystemAssigned,UserAssigned`). Its key vault must be in
      the workspace's subscription (how-to-setup-customer-managed-keys.md, Limitations: "The key vault that
      contains your customer-managed key must be in the same Azure subscription as the Azure Machine
      Learning workspace"): another subscription raises at construction. The vault is read at preview and up
      (`keyvault.get_vault`): one that is missing, has soft delete or purge protection off ("you must
      enable soft delete and purge protection", same page), or shuts out trusted Microsoft services (Azure
      Cosmos DB needs them), raises CustomerKeyError with the fix.
    - `user_assigned_identity_id` (default None: a system-assigned identity, whose role assignments Azure
      makes itself): ARM id of a user-assigned identity for the workspace, sent as identity type
      UserAssigned with `primaryUserAssignedIdentity` (the shape PSRule's Azure.ML.UserManagedIdentity
      checks). The identity is looked up (a missing one fails at preview), and `identity_grants` (the plan
      entries marked `before_workspace`, `stackconfig.identity.grant_plan`) are declared before the
      workspace, which depends on them: "you need to set up the following access" for a user-assigned
      workspace identity (how-to-identity-based-service-authentication.md, "User-assigned managed
      identity").
    - `identity_grants` (default empty): see `user_assigned_identity_id`.
    """

    name: str
    region: str
    resource_group: str
    public_network_access: Literal["Enabled", "Disabled"]
    create_resource_group: bool = True
    container_registry: bool = False
    key_vault_purge_protection: bool = True
    key_vault_soft_delete_days: int = 90
    friendly_name: str | None = None
    description: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    log_retention_days: int = 30
    managed_network: ManagedNetwork | None = None
    private_registry: bool = False
    system_datastores_auth_mode: Literal["accessKey", "identity"] = "accessKey"
    storage_shared_key_access: bool = True
    customer_managed_key: CustomerKey | None = None
    user_assigned_identity_id: str | None = None
    identity_grants: Sequence[PlannedGrantLike] = ()

    def __post_init__(self) -> None:
        """Checked by stackconfig's workspace rules (components.arguments): every problem at once."""
        from stackconfig.validation import workspace_problems

        raw = plain(
            {
                "name": self.name,
                "region": self.region,
                "resource_group": {"name": self.resource_group, "create": self.create_resource_group},
                "public_network_access": self.public_network_access,
                "container_registry": self.container_registry,
                "key_vault_soft_delete_days": self.key_vault_soft_delete_days,
                "key_vault_purge_protection": self.key_vault_purge_protection,
                "friendly_name": self.friendly_name,
                "description": self.description,
                "tags": dict(self.tags),
            }
        )
        # The stack file's resource_group.{name, create} are two arguments here.
        problems = renamed(
            workspace_problems(raw),
            {"resource_group.name": "resource_group", "resource_group.create": "create_resource_group"},
        )
        if problems:
            raise ArgumentsError("WorkspaceArgs", problems)


@dataclass(frozen=True)
class CustomerKey:
    """Customer-managed key of the workspace. Required: `key_vault_id` (ARM id of the vault), `key_uri` (the
    key identifier), `user_assigned_identity_id` (ARM id of the identity that reads the key; it must hold Key
    Vault Crypto Service Encryption User on the vault before the workspace is created)."""

    key_vault_id: str
    key_uri: str
    user_assigned_identity_id: str


class CustomerKeyError(pulumi.RunError, ValueError):
    """A customer-managed key Azure ML would refuse: the engine prints a RunError without a stack trace
    (pulumi-language-python-exec), so `pulumi preview` fails with the message alone."""


def vault_id_parts(vault_id: str) -> list[str]:
    """`vault_id` split at "/", or CustomerKeyError when it is not the ARM id of a key vault."""
    parts = vault_id.split("/")
    if len(parts) != 9 or [p.lower() for p in parts[6:8]] != ["microsoft.keyvault", "vaults"]:
        raise CustomerKeyError(
            f"customer-managed key: {vault_id!r} is not the ARM id of a key vault; use "
            "/subscriptions/<subscription-id>/resourceGroups/<rg>/providers/Microsoft.KeyVault/vaults/<name>"
        )
    return parts


def read_key_vault(vault_id: str, opts: pulumi.InvokeOptions | None = None) -> keyvault.GetVaultResult:
    """GET the vault of a customer-managed key (`azure-native:keyvault:getVault`, Key Vault `Vaults_Get`) at
    preview and up. A vault that does not exist (ARM's 404 ResourceNotFound) or can't be read raises
    CustomerKeyError naming it."""
    parts = vault_id_parts(vault_id)
    try:
        return keyvault.get_vault(resource_group_name=parts[4], vault_name=parts[8], opts=opts)
    except Exception as e:  # noqa: BLE001 (the invoke's own error, whatever ARM answered, is quoted)
        raise CustomerKeyError(
            f"customer-managed key: cannot read the key vault {vault_id} ({e}); check "
            "identity.customer_managed_key.key_vault_id (`az keyvault show --ids <id>`) and that the "
            "deployer can read the vault (Reader on it)"
        ) from None


def key_vault_problems(vault_id: str, properties: object) -> list[str]:
    """What Azure ML needs of the vault that holds a customer-managed key and `properties` (the getVault
    `VaultPropertiesResponse`) lacks: "When creating Azure Key Vault, you must enable soft delete and purge
    protection" (how-to-setup-customer-managed-keys.md, "Create Azure Key Vault"; concept-customer-managed-
    keys.md, Prerequisites: "The key vault must enable soft delete and purge protection").

    Read as Key Vault stores them (azure-rest-api-specs keyvault.json 2024-11-01 `VaultProperties`):
    `enablePurgeProtection` has no default and "does not accept false", so only `true` is on (absent: never
    turned on); `enableSoftDelete` defaults to true at creation, so only `false` is off. Purge protection "is
    effective only if soft delete is also enabled": with soft delete off, that fix comes first."""
    purge = getattr(properties, "enable_purge_protection", None)
    soft = getattr(properties, "enable_soft_delete", None)
    parts = vault_id.split("/")
    # The fix as learn.microsoft.com/azure/key-vault/general/key-vault-recovery writes it ("Enable purge
    # protection on a key vault": `az keyvault update --subscription {SUBSCRIPTION ID} -g {RESOURCE GROUP}
    # -n {VAULT NAME} --enable-purge-protection true`; soft delete likewise with --enable-soft-delete).
    update = f"az keyvault update --subscription {parts[2]} -g {parts[4]} -n {parts[8]}"
    problems = []
    if soft is False:
        problems.append(
            f"customer-managed key: the key vault {vault_id} has soft delete off; Azure ML needs soft delete "
            "and purge protection on the key's vault (how-to-setup-customer-managed-keys.md). Turn it on "
            f"(irreversible): {update} --enable-soft-delete true"
        )
    if purge is not True:
        problems.append(
            f"customer-managed key: the key vault {vault_id} has purge protection off; Azure ML needs soft "
            "delete and purge protection on the key's vault (how-to-setup-customer-managed-keys.md). Turn it "
            f"on (irreversible): {update} --enable-purge-protection true"
        )
    # Azure ML's Cosmos DB reads the key from Azure: "Your Azure Key Vault instance must be accessible through
    # public network access or allow trusted Microsoft services to bypass its firewall. An instance that is
    # exclusively accessible through private endpoints can't be used to host your customer-managed keys"
    # (learn.microsoft.com/azure/cosmos-db/how-to-setup-customer-managed-keys, MicrosoftDocs/
    # azure-databases-docs; the Azure ML page does not say it: conservative reading, docs/azure-behaviour.md
    # section 18). `networkAcls.bypass` "If not specified the default is 'AzureServices'" (VaultProperties
    # docstrings), `publicNetworkAccess` defaults to enabled (spec): only an explicit None shuts them out.
    acls = getattr(properties, "network_acls", None)
    bypass = str(getattr(acls, "bypass", None) or "AzureServices")
    public = str(getattr(properties, "public_network_access", None) or "enabled").lower() != "disabled"
    denied = str(getattr(acls, "default_action", None) or "Allow").lower() == "deny"
    if bypass.lower() == "none" and (not public or denied):
        closed = "public network access disabled" if not public else "its firewall denying by default"
        problems.append(
            f"customer-managed key: the key vault {vault_id} lets no trusted Microsoft service in ({closed}, "
            "networkAcls.bypass None); the Azure Cosmos DB that Azure ML encrypts with your key needs the "
            "vault reachable publicly or by trusted Microsoft services (cosmos-db how-to-setup-customer-"
            f"managed-keys.md). Let them through: {update} --bypass AzureServices"
        )
    return problems


class Workspace(pulumi.ComponentResource):
    """Resource group (created or looked up), storage account, key vault, Log Analytics workspace,
    workspace-based Application Insights, optional container registry, and the Azure ML workspace
    with a system-assigned identity.

    Outputs (attributes): `resource_group_name`, `workspace_name`, `workspace_id`, `principal_id` (the
    system-assigned identity), `region`,
    `subscription_id`, `tenant_id`, and the child resources `storage_account`, `key_vault`,
    `log_analytics`, `app_insights`, `container_registry` (None when not requested), `ml_workspace`,
    `names` (the derived Azure names), `customer_key_vault` (the customer-managed key's vault as `getVault`
    read it; None without a key).
    """

    def __init__(self, name: str, args: WorkspaceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(args.tags)

        # Tenant and subscription of the credentials the azure-native provider runs with.
        client = authorization.get_client_config(opts=pulumi.InvokeOptions(parent=self))
        self.subscription_id: str = client.subscription_id
        self.tenant_id: str = client.tenant_id
        self.region = args.region
        self.azure_name = args.name
        self.names = naming.workspace_names(args.name, client.subscription_id, args.resource_group)

        if args.create_resource_group:
            self.resource_group: resources.ResourceGroup | None = resources.ResourceGroup(
                f"{name}-rg",
                resource_group_name=args.resource_group,
                location=args.region,
                tags=tags,
                opts=child,
            )
            rg_name: pulumi.Output[str] = self.resource_group.name
        else:
            self.resource_group = None
            existing = resources.get_resource_group_output(
                resource_group_name=args.resource_group,
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
            rg_name = existing.name
        self.resource_group_name = rg_name

        self.storage_account = storage.StorageAccount(
            f"{name}-st",
            account_name=self.names.storage_account,
            resource_group_name=rg_name,
            location=args.region,
            # General-purpose v2 with locally redundant storage: the kind Azure ML's own workspace
            # template creates (learn.microsoft.com/azure/machine-learning/how-to-create-workspace-template).
            kind=storage.Kind.STORAGE_V2,
            sku=storage.SkuArgs(name=storage.SkuName.STANDARD_LRS),
            # HTTPS only, TLS 1.2 minimum, no anonymous blob access (Azure security baseline for
            # Storage; azure-native StorageAccountArgs docstrings for the three properties).
            enable_https_traffic_only=True,
            minimum_tls_version=storage.MinimumTlsVersion.TLS1_2,
            allow_blob_public_access=False,
            # Account keys on or off, sent explicitly (Azure's default is on: null means allowed;
            # azure-native StorageAccountArgs.allow_shared_key_access).
            allow_shared_key_access=args.storage_shared_key_access,
            tags=tags,
            opts=child,
        )

        self.key_vault = keyvault.Vault(
            f"{name}-kv",
            vault_name=self.names.key_vault,
            resource_group_name=rg_name,
            location=args.region,
            properties=keyvault.VaultPropertiesArgs(
                tenant_id=client.tenant_id,
                sku=keyvault.SkuArgs(family=keyvault.SkuFamily.A, name=keyvault.SkuName.STANDARD),
                # Data-plane access through Azure RBAC instead of access policies (no inline
                # policies to drift; azure-native VaultPropertiesArgs.enable_rbac_authorization).
                enable_rbac_authorization=True,
                # Soft delete cannot be turned off once on, 7-90 days retention (same docstrings).
                enable_soft_delete=True,
                soft_delete_retention_in_days=args.key_vault_soft_delete_days,
                # `enablePurgeProtection` "does not accept false as its value": omit it instead.
                enable_purge_protection=True if args.key_vault_purge_protection else None,
            ),
            tags=tags,
            opts=child,
        )

        self.log_analytics = operationalinsights.Workspace(
            f"{name}-log",
            workspace_name=self.names.log_analytics,
            resource_group_name=rg_name,
            location=args.region,
            sku=operationalinsights.WorkspaceSkuArgs(
                name=operationalinsights.WorkspaceSkuNameEnum.PER_GB2018
            ),
            retention_in_days=args.log_retention_days,
            tags=tags,
            opts=child,
        )

        # Workspace-based Application Insights: classic (non-workspace) components were retired on
        # 29 February 2024 (learn.microsoft.com/azure/azure-monitor/app/convert-classic-resource).
        self.app_insights = applicationinsights.Component(
            f"{name}-appi",
            resource_name_=self.names.app_insights,
            resource_group_name=rg_name,
            location=args.region,
            kind="web",
            application_type=applicationinsights.ApplicationType.WEB,
            workspace_resource_id=self.log_analytics.id,
            ingestion_mode=applicationinsights.IngestionMode.LOG_ANALYTICS,
            tags=tags,
            opts=child,
        )

        self.container_registry: containerregistry.Registry | None = None
        if args.container_registry:
            self.container_registry = containerregistry.Registry(
                f"{name}-cr",
                registry_name=self.names.container_registry,
                resource_group_name=rg_name,
                location=args.region,
                # Premium when reached privately: private endpoints need it (container-registry-private-link).
                sku=containerregistry.SkuArgs(
                    name=containerregistry.SkuName.PREMIUM
                    if args.private_registry
                    else containerregistry.SkuName.STANDARD
                ),
                # No admin user (a shared password): Azure ML pulls with the workspace's managed
                # identity (learn.microsoft.com/azure/machine-learning/
                # how-to-identity-based-service-authentication).
                admin_user_enabled=False,
                tags=tags,
                opts=child,
            )

        cmk = args.customer_managed_key
        self.customer_key_vault: keyvault.GetVaultResult | None = None
        if cmk is not None:
            vault_subscription = vault_id_parts(cmk.key_vault_id)[2]  # an id first, then its subscription
            if vault_subscription.lower() != str(client.subscription_id).lower():
                raise CustomerKeyError(
                    f"customer-managed key: the key vault {cmk.key_vault_id} is in subscription "
                    f"{vault_subscription}, not the workspace's ({client.subscription_id}); Azure ML needs "
                    "the key vault in the workspace's subscription (how-to-setup-customer-managed-keys.md, "
                    "Limitations): put the key in a vault of that subscription"
                )
            self.customer_key_vault = read_key_vault(cmk.key_vault_id, pulumi.InvokeOptions(parent=self))
            if problems := key_vault_problems(cmk.key_vault_id, self.customer_key_vault.properties):
                raise CustomerKeyError("; ".join(problems))
        uai = args.user_assigned_identity_id
        depends: list[pulumi.Resource] = []
        self.identity_assignments: RoleAssignments | None = None
        if uai:
            parts = uai.split("/")
            found = managedidentity.get_user_assigned_identity_output(
                resource_group_name=parts[4],
                resource_name=parts[-1],
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
            uai_principal: pulumi.Output[str] = found.principal_id
            scopes = scope_ids(self)
            self.identity_assignments = RoleAssignments(
                f"{name}-identity",
                RoleAssignmentsArgs(
                    subscription_id=client.subscription_id,
                    name_seed=f"/subscriptions/{client.subscription_id}/resourceGroups/{args.resource_group}",
                    # A scope outside the stack (a private-endpoint rule target): an ARM id, as given.
                    grants=[
                        Grant(g.key, scopes.get(g.scope, g.scope), uai_principal, g.principal_type, g.role)
                        for g in args.identity_grants
                        if g.before_workspace and (g.scope in scopes or g.scope.startswith("/subscriptions/"))
                    ],
                ),
                opts=child,
            )
            depends.append(self.identity_assignments)
        ids = ([uai] if uai else []) + (
            [cmk.user_assigned_identity_id] if cmk and cmk.user_assigned_identity_id != uai else []
        )
        if uai:
            # No system-assigned identity: every grant is the stack's (grant_plan).
            identity = ml.ManagedServiceIdentityArgs(
                type=ml.ManagedServiceIdentityType.USER_ASSIGNED, user_assigned_identities=ids
            )
        elif cmk:
            identity = ml.ManagedServiceIdentityArgs(
                type=ml.ManagedServiceIdentityType.SYSTEM_ASSIGNED_USER_ASSIGNED, user_assigned_identities=ids
            )
        else:
            identity = ml.ManagedServiceIdentityArgs(type=ml.ManagedServiceIdentityType.SYSTEM_ASSIGNED)
        self.ml_workspace = ml.Workspace(
            f"{name}-mlw",
            workspace_name=args.name,
            resource_group_name=rg_name,
            location=args.region,
            identity=identity,
            primary_user_assigned_identity=uai,
            encryption=(
                ml.EncryptionPropertyArgs(
                    status=ml.EncryptionStatus.ENABLED,
                    key_vault_properties=ml.KeyVaultPropertiesArgs(
                        key_vault_arm_id=cmk.key_vault_id, key_identifier=cmk.key_uri
                    ),
                    identity=ml.IdentityForCmkArgs(user_assigned_identity=cmk.user_assigned_identity_id),
                )
                if cmk
                else None
            ),
            # AccessKey | Identity: how the workspace's own datastores (workspaceblobstore,
            # workspacefilestore) reach storage (azure-native WorkspaceArgs.system_datastores_auth_mode).
            system_datastores_auth_mode=(
                ml.SystemDatastoresAuthMode.IDENTITY
                if args.system_datastores_auth_mode == "identity"
                else ml.SystemDatastoresAuthMode.ACCESS_KEY
            ),
            managed_network=managed_network_args(args.managed_network) if args.managed_network else None,
            # Provision the managed network with the workspace, not at the first compute
            # (how-to-managed-network.md: "creation of the managed virtual network is deferred until a compute
            # resource is created or provisioning is manually started").
            provision_network_now=(
                True
                if args.managed_network
                and args.managed_network.enabled
                and args.managed_network.provision_at_creation
                else None
            ),
            # Storage account and key vault "cannot be changed once the workspace has been created"
            # (azure-native machinelearningservices.WorkspaceArgs docstrings). Their names derive
            # from the workspace name and resource group, so they only change together with the
            # workspace's own identity (a new workspace).
            storage_account=self.storage_account.id,
            key_vault=self.key_vault.id,
            application_insights=self.app_insights.id,
            container_registry=self.container_registry.id if self.container_registry else None,
            public_network_access=args.public_network_access,
            friendly_name=args.friendly_name,
            description=args.description,
            sku=ml.SkuArgs(name="Basic", tier=ml.SkuTier.BASIC),
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends),
        )
        self.workspace_name: pulumi.Output[str] = self.ml_workspace.name
        self.workspace_id: pulumi.Output[str] = self.ml_workspace.id
        # The workspace identity's principal (an Entra object id): the user-assigned identity's, else the
        # system-assigned one's, known once the workspace exists.
        if uai:
            self.principal_id: pulumi.Output[str] = uai_principal
        else:
            self.principal_id = self.ml_workspace.identity.apply(
                lambda identity: identity.principal_id if identity else None
            )

        self.register_outputs(
            {
                "resourceGroupName": self.resource_group_name,
                "workspaceName": self.workspace_name,
                "workspaceId": self.workspace_id,
                "region": self.region,
                "storageAccountId": self.storage_account.id,
                "keyVaultId": self.key_vault.id,
                "appInsightsId": self.app_insights.id,
                "containerRegistryId": self.container_registry.id if self.container_registry else None,
            }
        )
