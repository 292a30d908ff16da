"""Network and identity combinations Azure refuses, or that cannot work, checked across the whole config.

Each rule returns (key path, "<what is wrong>; <fix>") and cites its source here. They run over the typed
config (`StackConfig`), so `validate()` reports them once every key parses. Combinations Azure accepts but
that cannot work or cost more (a private workspace without a private endpoint, FQDN rules' firewall) are
judged by
the policy pack instead (policies/private_network.py).

Sources:
- [MN] learn.microsoft.com/azure/machine-learning/how-to-managed-network, "Limitations" (MicrosoftDocs/
  azure-ai-docs articles/machine-learning/how-to-managed-network.md; the Azure ML pages moved there from
  MicrosoftDocs/azure-docs): "Creating a compute cluster in a different
  region than the workspace isn't supported when using a managed virtual network"; "When using Managed
  virtual network, you can't deploy compute resources inside your custom virtual network"; "If your managed
  network is configured to allow only approved outbound, you can't use an FQDN rule to access Azure Storage
  Accounts. You must use a private endpoint instead."
- [MNC] learn.microsoft.com/azure/machine-learning/how-to-managed-network-compute, "Limitations": the same
  cross-region sentence; the page's compute examples set `enable_node_public_ip=False` with no subnet.
- [NSO] learn.microsoft.com/azure/machine-learning/how-to-network-security-overview, "Secure the training
  environment > Limitations": "Azure Compute Instance and Azure Compute Clusters must be in the same virtual
  network, region, and subscription as the workspace."
- Node public IP off needs a subnet or a managed network: stackconfig.rules.cluster_rules (sources there).
- [KEYS] learn.microsoft.com/azure/machine-learning/how-to-disable-local-auth-storage: with shared key access
  disabled on the storage account, the workspace's datastores must use identity-based access
  (systemDatastoresAuthMode identity).
- [MNO] how-to-managed-network.md, "Configure a managed virtual network to allow only approved outbound":
  "Adding an outbound for a service tag or FQDN is only valid when the managed VNet is configured to
  allow_only_approved_outbound"; allow-only-approved traffic leaves only through the required rules and
  the user's rules, and "you can't use an FQDN rule to access Azure Storage Accounts. You must use a private
  endpoint instead": a data store read by the jobs needs a private-endpoint rule.
- [CCR] learn.microsoft.com/azure/machine-learning/how-to-create-attach-compute-cluster, "Limitations"
  (MicrosoftDocs/azure-ai-docs articles/machine-learning/how-to-create-attach-compute-cluster.md): "Compute
  clusters can be created in a different region than your workspace ... This preview isn't available if
  you're using a private endpoint-enabled workspace."
- [SSH] how-to-managed-network.md, "Limitations": "If your compute instance is in a managed network and is
  configured for no public IP, use the `az ml compute connect-ssh` command to connect to it using SSH". SSH
  into a no-public-IP node of a managed network is documented for compute instances only; a cluster's SSH
  there may be unreachable. Conservative reading (docs/azure-behaviour.md section 15): refused, since SSH
  (and with it local auth) is fixed at creation and would be left on for nothing.
- [PL] learn.microsoft.com/azure/machine-learning/how-to-configure-private-link, "Add a private endpoint to a
  workspace": "If you have any existing compute targets associated with this workspace, and they aren't
  behind the same virtual network that the private endpoint is created in, they won't work." A private
  workspace (public access Disabled) reached through its own private endpoint, with no managed network:
  each cluster needs a subnet (of that network).
- [LOCK] learn.microsoft.com/azure/azure-resource-manager/management/lock-resources, "Considerations
  before applying your locks": "A cannot-delete lock on a resource or resource group prevents the deletion
  of Azure RBAC assignments"; how-to-managed-network.md, "Limitations": "Make sure there are no scope locks
  on the Azure Machine Learning resources and resource group. Internal operations related to managed
  virtual network might be blocked". The decision (docs/azure-behaviour.md section 17): a lock never sits
  on a resource the stack grants a role on (replacing a cluster, removing a grant or `pulumi destroy` would
  fail half-way), and a workspace with a managed network has no locks. An unset lock flag follows the
  decision (`resolved_locks`); a flag set to true against it is a config error.
- [DEPLOY] stackconfig/deploy.py (sources there): with identity-based datastores the deploy pipeline's smoke
  job uploads its code as the pipeline's principal, which needs Storage Blob Data Contributor and Storage File
  Data Privileged Contributor on the workspace storage (how-to-disable-local-auth-storage.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from stackconfig import rules
from stackconfig.deploy import CI_DATA_ROLES, DeployConfig, smoke_plan
from stackconfig.identity import STACK_SCOPES, IdentityConfig, PlannedGrant, grant_plan
from stackconfig.network import NetworkConfig

# Azure Storage service host names (blob, file, dfs, queue, table, web endpoints), public cloud.
_STORAGE_HOST_SUFFIXES = (".core.windows.net",)

# What each lock flag locks, as messages name it.
LOCK_TARGET_NAMES = {
    "storage": "the storage account",
    "key_vault": "the key vault",
    "container_registry": "the container registry",
    "application_insights": "Application Insights",
    "workspace": "the workspace",
}


class StackLike(Protocol):
    """What the combinations read of a parsed config (`stackconfig.StackConfig` satisfies it; typed
    structurally so this module does not import the models that import it)."""

    workspace: Any
    clusters: Sequence[Any]
    locks: Any
    network: NetworkConfig
    identity: IdentityConfig
    deploy: DeployConfig


def _storage_host(fqdn: str) -> bool:
    host = fqdn.lower()
    return any(host.endswith(suffix) for suffix in _STORAGE_HOST_SUFFIXES)


def private_endpoint_rule_targets(network: NetworkConfig) -> list[str]:
    """The ARM ids the managed network's user-defined private-endpoint rules reach."""
    if network.managed is None or not network.managed.enabled:
        return []
    return [
        r.service_resource_id
        for r in network.managed.outbound_rules
        if r.type == "private_endpoint" and r.service_resource_id
    ]


def plan(config: StackLike) -> list[PlannedGrant]:
    """The stack's role assignments (`stackconfig.identity.grant_plan`) for this config."""
    return grant_plan(
        config.identity,
        {c.name: c.user_assigned_identity_id for c in config.clusters},
        has_registry=config.workspace.container_registry,
        private_endpoint_rule_targets=private_endpoint_rule_targets(config.network),
        ci_principal=config.deploy.ci_principal_id,
    )


def granted_scopes(config: StackLike) -> dict[str, list[PlannedGrant]]:
    """Stack resource (a lock flag name) -> the stack's grants on it."""
    out: dict[str, list[PlannedGrant]] = {scope: [] for scope in STACK_SCOPES}
    for grant in plan(config):
        if grant.scope in out:
            out[grant.scope].append(grant)
    return out


def resolved_locks(config: StackLike) -> dict[str, bool]:
    """Each lock flag's value after the decision [LOCK]: an unset flag locks its resource only when the
    workspace has no managed network and the stack grants no role on that resource; a set flag keeps its
    value (`problems` reports a true one the decision refuses)."""
    managed = config.network.managed_enabled
    granted = granted_scopes(config)
    out: dict[str, bool] = {}
    for flag in STACK_SCOPES:
        value = getattr(config.locks, flag)
        out[flag] = (not managed and not granted[flag]) if value is None else bool(value)
    return out


def _lock_problems(config: StackLike) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    managed = config.network.managed_enabled
    granted = granted_scopes(config)
    for flag in STACK_SCOPES:
        if getattr(config.locks, flag) is not True:
            continue
        if flag == "container_registry" and not config.workspace.container_registry:
            continue  # nothing to lock: the flag is ignored
        what = LOCK_TARGET_NAMES[flag]
        if managed:
            out.append(
                (
                    f"locks.{flag}",
                    "true, and the workspace has a managed network: Azure ML asks for no scope locks on its "
                    "resources, since internal operations of the managed network might be blocked "
                    "(how-to-managed-network.md, Limitations); set it to false or leave it unset (unset "
                    "locks are off with a managed network)",
                )
            )
        elif granted[flag]:
            shown = ", ".join(g.why for g in granted[flag][:3])
            more = f" and {len(granted[flag]) - 3} more" if len(granted[flag]) > 3 else ""
            out.append(
                (
                    f"locks.{flag}",
                    f"true, but the stack grants roles on {what} ({shown}{more}), and a CanNotDelete lock "
                    "blocks deleting a role assignment on the resource it locks (lock-resources.md): "
                    "replacing a cluster, removing a grant or `pulumi destroy` would fail half-way; set it "
                    "to false or leave it unset (unset, a resource is locked only when it carries no grant)",
                )
            )
    return out


def problems(config: StackLike) -> list[tuple[str, str]]:
    """Every combination problem of a parsed config."""
    out: list[tuple[str, str]] = []
    ws = config.workspace
    network = config.network
    managed = network.managed_enabled
    endpoints = network.private_endpoints
    targets = (endpoints.targets or []) if endpoints is not None else []
    # The stack's own private endpoint to the workspace (targets unset: every target, the workspace too).
    workspace_endpoint = endpoints is not None and (endpoints.targets is None or "workspace" in targets)

    for index, cluster in enumerate(config.clusters):
        at = f"clusters[{index}]"
        region = cluster.region or ws.region
        if managed and region != ws.region:
            out.append(
                (
                    f"{at}.region",
                    f"'{region}' differs from the workspace region ({ws.region}), and Azure ML does not "
                    "create a compute cluster in another region than a workspace with a managed network "
                    "(how-to-managed-network.md, Limitations); put the cluster in "
                    f"{ws.region}, or give that region its own workspace (stack) and quota",
                )
            )
        elif not managed and cluster.subnet_id is not None and region != ws.region:
            out.append(
                (
                    f"{at}.region",
                    f"'{region}' differs from the workspace region ({ws.region}); a cluster in a virtual "
                    "network must be in the workspace's region (how-to-network-security-overview.md, "
                    f"Limitations); put it in {ws.region} or drop subnet_id",
                )
            )
        elif workspace_endpoint and region != ws.region:
            out.append(
                (
                    f"{at}.region",
                    f"'{region}' differs from the workspace region ({ws.region}), and a cluster in another "
                    "region is not available for a workspace with a private endpoint "
                    "(how-to-create-attach-compute-cluster.md, Limitations); put the cluster in "
                    f"{ws.region}, or give that region its own workspace (stack) and quota",
                )
            )
        if managed and cluster.subnet_id is not None:
            out.append(
                (
                    f"{at}.subnet_id",
                    "a workspace with a managed network can't put computes in your own virtual network "
                    "(how-to-managed-network.md, Limitations); remove subnet_id (the cluster joins the "
                    "managed network) or remove network.managed",
                )
            )
        if managed and cluster.ssh_enabled and cluster.node_public_ip is False:
            out.append(
                (
                    f"{at}.ssh",
                    "SSH on a cluster without node public IPs in a managed network may be unreachable: Azure "
                    "documents SSH to such nodes for compute instances only (how-to-managed-network.md, "
                    "Limitations), and SSH (with local auth) can't be changed after creation; set ssh: "
                    "disabled (debug through the job's logs and `jobs submit health`)",
                )
            )
        if (
            ws.public_network_access == "Disabled"
            and workspace_endpoint
            and not managed
            and not cluster.subnet_id
        ):
            out.append(
                (
                    f"{at}.subnet_id",
                    f"cluster '{cluster.name}' is in no virtual network, and the workspace is reached only "
                    "through its private endpoint (public_network_access Disabled, no managed network): "
                    '"compute targets ... not behind the same virtual network that the private endpoint '
                    "is created in ... won't work\" (how-to-configure-private-link.md, Add a private "
                    "endpoint to a workspace); set subnet_id to a subnet of the private endpoint's virtual "
                    "network, or enable network.managed (the cluster then joins the managed network)",
                )
            )
        for key, message in rules.cluster_rules(
            {"node_public_ip": cluster.node_public_ip, "subnet_id": cluster.subnet_id}, managed
        ):
            out.append((f"{at}.{key}", message))

    if network.managed is not None:
        mn = network.managed
        if not mn.enabled and (mn.outbound_rules or mn.firewall_sku):
            out.append(
                (
                    "network.managed.outbound_rules" if mn.outbound_rules else "network.managed.firewall_sku",
                    "outbound rules and the firewall SKU belong to a managed network, and isolation_mode is "
                    "Disabled; remove them or set isolation_mode: AllowOnlyApprovedOutbound",
                )
            )
        if mn.isolation_mode == "AllowInternetOutbound":
            for j, rule in enumerate(mn.outbound_rules):
                if rule.type in ("fqdn", "service_tag"):
                    out.append(
                        (
                            f"network.managed.outbound_rules[{j}].type",
                            f"{rule.type} rules are only valid with AllowOnlyApprovedOutbound (how-to-"
                            "managed-network.md); with AllowInternetOutbound every destination is already "
                            "allowed: remove the rule, or set isolation_mode: AllowOnlyApprovedOutbound",
                        )
                    )
        if mn.isolation_mode == "AllowOnlyApprovedOutbound":
            for j, rule in enumerate(mn.outbound_rules):
                if rule.type == "fqdn" and rule.destination and _storage_host(rule.destination):
                    out.append(
                        (
                            f"network.managed.outbound_rules[{j}].destination",
                            f"'{rule.destination}' is an Azure Storage host: with AllowOnlyApprovedOutbound "
                            "an FQDN rule can't reach a storage account (how-to-managed-network.md, "
                            "Limitations); use a private_endpoint rule with the account's id and "
                            "subresource_target blob",
                        )
                    )
            reached = {t.lower() for t in private_endpoint_rule_targets(network)}
            for k, store in enumerate(config.identity.data_stores):
                if store.lower() not in reached:
                    out.append(
                        (
                            f"identity.data_stores[{k}]",
                            "the jobs read this storage account, and with AllowOnlyApprovedOutbound the "
                            "managed network reaches a storage account only through a private-endpoint "
                            "rule (how-to-managed-network.md); add to network.managed.outbound_rules "
                            f"{{name: ..., type: private_endpoint, service_resource_id: {store}, "
                            "subresource_target: blob}",
                        )
                    )

    if private_endpoint_rule_targets(network) and config.identity.workspace_identity_id is None:
        # User-defined private-endpoint rules are approved with the Azure AI Enterprise Network Connection
        # Approver role on each target, which Azure no longer gives the workspace identity itself
        # (how-to-managed-network.md; stackconfig.identity.grant_plan). A user-assigned identity's principal
        # exists before the workspace, so the stack grants it first; a system-assigned one's only after the
        # workspace, i.e. after the network is provisioned (with the workspace under provision_at_creation,
        # else with the first cluster, and every stack has one).
        out.append(
            (
                "network.managed.outbound_rules",
                "private_endpoint rules need the workspace identity's Azure AI Enterprise Network "
                "Connection Approver grant on each target before the managed network is provisioned (with "
                "the workspace, or with the first cluster), and a system-assigned identity exists only after "
                "the workspace; set identity.workspace_identity_id to a user-assigned identity (the stack "
                "grants it the role before the workspace), or remove the private_endpoint rules",
            )
        )

    if "container_registry" in targets and not ws.container_registry:
        out.append(
            (
                "network.private_endpoints.targets",
                "container_registry is listed but the stack declares no registry; set "
                "workspace.container_registry: true or remove container_registry from targets",
            )
        )

    identity = config.identity
    if not identity.storage_shared_key_access and not identity.identity_datastores:
        out.append(
            (
                "identity.storage_shared_key_access",
                "false turns off the storage account keys, which the workspace's datastores use with "
                "system_datastores_auth_mode accessKey (how-to-disable-local-auth-storage.md); set "
                "identity.system_datastores_auth_mode: identity or storage_shared_key_access: true",
            )
        )
    out.extend(_lock_problems(config))
    out.extend(_deploy_problems(config))
    return out


def _deploy_problems(config: StackLike) -> list[tuple[str, str]]:
    """[DEPLOY] The smoke job the deploy pipeline runs uploads its code with the pipeline's identity, which
    with identity-based datastores needs the storage data roles (stackconfig/deploy.py, sources there)."""
    if not config.identity.identity_datastores or config.deploy.ci_principal_id is not None:
        return []
    plan = smoke_plan("", config)
    if not plan.run:
        return []
    return [
        (
            "deploy.ci_principal_id",
            f"not set, and the deploy pipeline's smoke job (on {plan.runner}) uploads its code with the "
            "pipeline's own identity, which with identity.system_datastores_auth_mode: identity needs "
            f"{' and '.join(CI_DATA_ROLES)} on the workspace storage (how-to-disable-local-auth-storage.md); "
            "set it to the object id of the pipeline's service principal (`az ad sp show --id "
            "<AZURE_CLIENT_ID> --query id -o tsv`) so the stack grants both, or set deploy.smoke: false",
        )
    ]
