"""Network and identity combinations Azure refuses, or that cannot work, checked across the whole config.

Each rule returns (key path, "<what is wrong>; <fix>") and cites its source here. They run over the typed
config (`StackConfig`), so `validate()` reports them once every key parses. Combinations Azure accepts but
that cannot work or cost more (a private workspace without a private endpoint, FQDN rules' firewall) are
judged by
the policy pack instead (policies/private_network.py).

Sources:
- [MN] learn.microsoft.com/azure/machine-learning/how-to-managed-network, "Limitations" (MicrosoftDocs/
  azure-docs articles/machine-learning/how-to-managed-network.md): "Creating a compute cluster in a different
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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackconfig import rules

if TYPE_CHECKING:
    from stackconfig.models import StackConfig

# Azure Storage service host names (blob, file, dfs, queue, table, web endpoints), public cloud.
_STORAGE_HOST_SUFFIXES = (".core.windows.net",)


def _storage_host(fqdn: str) -> bool:
    host = fqdn.lower()
    return any(host.endswith(suffix) for suffix in _STORAGE_HOST_SUFFIXES)


def problems(config: StackConfig) -> list[tuple[str, str]]:
    """Every combination problem of a parsed config."""
    out: list[tuple[str, str]] = []
    ws = config.workspace
    network = config.network
    managed = network.managed_enabled
    endpoints = network.private_endpoints

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
        if managed and cluster.subnet_id is not None:
            out.append(
                (
                    f"{at}.subnet_id",
                    "a workspace with a managed network can't put computes in your own virtual network "
                    "(how-to-managed-network.md, Limitations); remove subnet_id (the cluster joins the "
                    "managed network) or remove network.managed",
                )
            )
        if not managed and cluster.subnet_id is not None and region != ws.region:
            out.append(
                (
                    f"{at}.region",
                    f"'{region}' differs from the workspace region ({ws.region}); a cluster in a virtual "
                    "network must be in the workspace's region (how-to-network-security-overview.md, "
                    f"Limitations); put it in {ws.region} or drop subnet_id",
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

    targets = (endpoints.targets or []) if endpoints is not None else []
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
    return out
