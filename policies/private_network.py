"""private-network (mandatory, stack): a private workspace that still works.

Stack policies: each rule needs two resources together (a workspace and its endpoints, a cluster and its
workspace, a workspace and its storage), found through AnalyzeStack's propertyDependencies, which the engine
sends in every preview (so the first-deploy and update evaluations reach the same verdict).

private-network (mandatory): combinations Azure accepts that leave the workspace or its jobs broken.
- A workspace with `publicNetworkAccess: Disabled` needs a private endpoint to it or a managed network
  (learn.microsoft.com/azure/machine-learning/how-to-configure-private-link: with public access disabled the
  workspace is reached through its private endpoint; how-to-managed-network.md: "An Azure Virtual Network
  that you create and manage is used to provide network isolation inbound access to the workspace"; a managed
  network carries the managed computes' traffic).
- A cluster with `enableNodePublicIp: false` needs a subnet or a workspace with a managed network
  (no-public-IP compute sits in a virtual network: v1/how-to-secure-training-vnet.md; with a managed
  network Azure ML puts
  it in the managed one: how-to-managed-network-compute.md, whose examples set enable_node_public_ip=False
  without a subnet).
- A storage account with `allowSharedKeyAccess: false` used by a workspace whose `systemDatastoresAuthMode` is
  not Identity: the datastores authenticate with the account key and every upload, mount and datastore read
  fails (how-to-disable-local-auth-storage.md).

private-network-cost (advisory; policies/private_network_cost.py, from the same `findings`): combinations that
work but cost or risk more.
- FQDN outbound rules in a managed network deploy an Azure Firewall, billed hourly (how-to-managed-network.md,
  "Pricing": "FQDN outbound rules are implemented using Azure Firewall ... charges ... are added").
- Locks with a managed network: "Make sure there are no scope locks on the Azure Machine Learning resources
  and resource group. Internal operations related to managed virtual network might be blocked" (same page,
  Limitations).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import LOCK_TYPES, STORAGE_ACCOUNT, UNKNOWN, WORKSPACE, depends_on, read
from policies._policy import STACK, Violation
from policies.clusters import cluster_of

NAME = "private-network"
DESCRIPTION = (
    "A private workspace that works: public access off needs a private endpoint or a managed network; "
    "no node public IP needs a subnet or a managed network; keyless storage needs identity datastores."
)
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = STACK
CONFIG: dict[str, Any] = {}
PRIVATE_ENDPOINT = "azure-native:network:PrivateEndpoint"
_MANAGED = ("AllowInternetOutbound", "AllowOnlyApprovedOutbound")


# Workspace URN -> managedNetwork.isolationMode as its inputs gave it at Analyze (None when absent). In the
# first preview of a new stack an output the inputs do not set is unknown (preflight/azure_native.py
# preview_outputs, after the provider's PreviewOutputs), so AnalyzeStack cannot tell "no managed network" from
# "not known yet"; the inputs can, and the engine runs every Analyze of a preview before its AnalyzeStack in
# the same pack process (policies/locks.py cites pulumi/pulumi). Recorded by private-network-inputs.
_MODES: dict[str, Any] = {}


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    return [Violation(text, urn) for text, urn in findings(list(resources))[0]]


def record(resource: Any) -> None:
    """Record a workspace's managed network mode from its inputs (Analyze); nothing for other resources."""
    if resource.resource_type == WORKSPACE:
        _MODES[resource.urn] = read(resource.props, "managedNetwork", "isolationMode")


def managed_mode(workspace: Any) -> Any:
    """The workspace's managed network isolation mode: a managed mode, "Disabled" / None, or UNKNOWN."""
    mode = read(workspace.props, "managedNetwork", "isolationMode")
    if mode is UNKNOWN and workspace.urn in _MODES:
        return _MODES[workspace.urn]
    return mode


def _reaches(endpoint: Any, workspace: Any) -> bool:
    """True when a private endpoint's connection targets the workspace: by property dependency (the id comes
    from the workspace resource) or by a literal id ending in the workspace's name."""
    if any(d.urn == workspace.urn for d in depends_on(endpoint, "privateLinkServiceConnections")):
        return True
    name = read(workspace.props, "name")
    for connection in read(endpoint.props, "privateLinkServiceConnections") or []:
        target = read(connection, "privateLinkServiceId")
        if isinstance(target, str) and isinstance(name, str):
            suffix = f"/providers/microsoft.machinelearningservices/workspaces/{name}".lower()
            if target.lower().endswith(suffix):
                return True
    return False


def findings(resources: list[Any]) -> tuple[list[tuple[str, str | None]], list[tuple[str, str | None]]]:
    """(mandatory, advisory) findings as (message, urn)."""
    mandatory: list[tuple[str, str | None]] = []
    advisory: list[tuple[str, str | None]] = []
    workspaces = [r for r in resources if r.resource_type == WORKSPACE]
    endpoints = [r for r in resources if r.resource_type == PRIVATE_ENDPOINT]
    for ws in workspaces:
        access, mode = read(ws.props, "publicNetworkAccess"), managed_mode(ws)
        if access == "Disabled" and mode not in _MANAGED and not any(_reaches(e, ws) for e in endpoints):
            if mode is UNKNOWN:
                mandatory.append(
                    (
                        f"workspace '{ws.name}': cannot decide during preview: managedNetwork is unknown",
                        ws.urn,
                    )
                )
            else:
                mandatory.append(
                    (
                        f"workspace '{ws.name}' has publicNetworkAccess Disabled "
                        "but no private endpoint reaches it and it has no managed network: "
                        "nobody can reach the workspace API and jobs can't start. "
                        "Fix: add network.private_endpoints (and a managed network for the clusters), "
                        "or set public_network_access: Enabled.",
                        ws.urn,
                    )
                )
        if mode in _MANAGED:
            rules = read(ws.props, "managedNetwork", "outboundRules") or {}
            fqdn = (
                sorted(k for k, v in rules.items() if read(v, "type") == "FQDN")
                if hasattr(rules, "items")
                else []
            )
            if fqdn:
                advisory.append(
                    (
                        f"workspace '{ws.name}': FQDN outbound rules ({', '.join(fqdn)}) "
                        "make Azure deploy an Azure Firewall in the managed network, "
                        "billed per hour and per GB (Standard unless firewall_sku: Basic). "
                        "Fix: prefer private-endpoint or service-tag rules, or accept the cost.",
                        ws.urn,
                    )
                )
            locks = [r for r in resources if r.resource_type in LOCK_TYPES]
            if locks:
                advisory.append(
                    (
                        f"workspace '{ws.name}' has a managed network and the stack declares "
                        f"{len(locks)} lock(s): "
                        "Azure ML asks for no scope locks on its resources and resource group, "
                        "since internal operations of the managed network might be blocked "
                        "(how-to-managed-network.md, Limitations). "
                        "Fix: if the managed network fails to provision or update, "
                        "remove the locks (azml-gpu:locks) and retry.",
                        ws.urn,
                    )
                )
        auth = read(ws.props, "systemDatastoresAuthMode")
        for storage in depends_on(ws, "storageAccount"):
            if storage.resource_type != STORAGE_ACCOUNT:
                continue
            if read(storage.props, "allowSharedKeyAccess") is False and auth != "Identity":
                mandatory.append(
                    (
                        f"storage account '{storage.name}' has shared key access off "
                        f"but workspace '{ws.name}' uses systemDatastoresAuthMode "
                        f"{auth or 'AccessKey (default)'}: "
                        "its datastores authenticate with the account key, "
                        "so uploads, mounts and datastore reads fail. "
                        "Fix: set identity.system_datastores_auth_mode: identity.",
                        storage.urn,
                    )
                )
    for r in resources:
        cluster = cluster_of(r)
        if cluster is None or cluster.node_public_ip is not False or cluster.subnet_id:
            continue
        homes = [d for d in depends_on(r, "workspaceName") if d.resource_type == WORKSPACE]
        modes = [managed_mode(w) for w in homes]
        if any(m in _MANAGED for m in modes):
            continue
        if UNKNOWN in modes:
            mandatory.append(
                (
                    f"cluster {cluster.name}: "
                    "cannot decide during preview: its workspace's managedNetwork is unknown",
                    r.urn,
                )
            )
            continue
        mandatory.append(
            (
                f"cluster {cluster.name}: node public IP is off "
                "but the cluster has no subnet and its workspace has no managed network: "
                "the nodes have no route to the workspace and jobs never start. "
                "Fix: set subnet_id, add network.managed, or set node_public_ip: true.",
                r.urn,
            )
        )
    return mandatory, advisory
