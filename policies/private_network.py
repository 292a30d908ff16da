"""private-network (mandatory, stack): a private workspace that still works.

Stack policies: each rule needs two resources together (a workspace and its endpoints, a cluster and its
workspace, a workspace and its storage), found through AnalyzeStack's propertyDependencies, which the engine
sends in every preview (so the first-deploy and update evaluations reach the same verdict).

private-network (mandatory): combinations Azure accepts, or refuses half-way, that leave the workspace or its
jobs broken. A workspace whose private endpoint is created outside the stack (a hub network team, a
landing-zone policy) is named in config `external_endpoints` with the reason: it then counts as reached by a
private endpoint.
- A workspace with `publicNetworkAccess: Disabled` needs a private endpoint to it; a managed network does not
  replace one (learn.microsoft.com/azure/machine-learning/how-to-configure-private-link: with public access
  disabled the workspace is reached through its private endpoint; how-to-managed-network.md: "Securing your
  workspace with a managed network provides network isolation for outbound access ... An Azure Virtual
  Network that you create and manage is used to provide network isolation inbound access to the workspace.
  For example, a private endpoint for the workspace is created in your Azure Virtual Network": without one
  nobody reaches the data plane).
- A cluster in another region than a workspace with a private endpoint ("Compute clusters can be created in a
  different region than your workspace ... This preview isn't available if you're using a private
  endpoint-enabled workspace", how-to-create-attach-compute-cluster.md, Limitations; conservative reading in
  docs/azure-behaviour.md section 15).
- A cluster without node public IPs in your own virtual network (a subnet) needs a private endpoint to its
  workspace: "You must use a workspace private endpoint for the compute resource to communicate with Azure
  Machine Learning services from the VNet" (how-to-secure-training-vnet.md, "Compute instance/cluster or
  serverless compute with no public IP").
- Locks next to a managed network: "Make sure there are no scope locks on the Azure Machine Learning
  resources and resource group. Internal operations related to managed virtual network might be blocked"
  (how-to-managed-network.md, Limitations): mandatory, since the stack can't tell which operation a lock
  will block (docs/azure-behaviour.md section 17).
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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import (
    LOCK_TYPES,
    STORAGE_ACCOUNT,
    UNKNOWN,
    WORKSPACE,
    depends_on,
    norm_region,
    read,
)
from policies._policy import STACK, Violation
from policies.clusters import cluster_of

NAME = "private-network"
DESCRIPTION = (
    "A private workspace that works: public access off needs a private endpoint; no node public IP needs a "
    "subnet (and then a workspace private endpoint) or a managed network; no cross-region cluster next to a "
    "private endpoint; no locks next to a managed network; keyless storage needs identity datastores."
)
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = STACK
CONFIG: dict[str, Any] = {
    "external_endpoints": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "workspace": {"type": "string", "minLength": 1},
                "reason": {"type": "string", "minLength": 1},
            },
            "required": ["workspace", "reason"],
            "additionalProperties": False,
        },
        "description": "Workspaces (by name) whose private endpoint is created outside the stack, each with "
        "the reason (who creates it): they count as reached by a private endpoint.",
    }
}
PRIVATE_ENDPOINT = "azure-native:network:PrivateEndpoint"
_MANAGED = ("AllowInternetOutbound", "AllowOnlyApprovedOutbound")


# Workspace URN -> managedNetwork.isolationMode as its inputs gave it at Analyze (None when absent). In the
# first preview of a new stack an output the inputs do not set is unknown (preflight/provider/model.py
# preview_outputs, after the provider's PreviewOutputs), so AnalyzeStack cannot tell "no managed network" from
# "not known yet"; the inputs can, and the engine runs every Analyze of a preview before its AnalyzeStack in
# the same pack process (policies/locks.py cites pulumi/pulumi). Recorded by private-network-inputs.
_MODES: dict[str, Any] = {}
# Workspace URN -> its Azure name (`workspaceName` input, a path parameter absent from the outputs), recorded
# with the mode: `external_endpoints` names workspaces by it.
_AZURE_NAMES: dict[str, str] = {}


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    return [Violation(text, urn) for text, urn in findings(list(resources), config)[0]]


def config_problems(config: Mapping[str, Any]) -> list[str]:
    """Beyond the JSON schema: a blank reason, or one workspace listed twice."""
    out: list[str] = []
    seen: set[str] = set()
    for i, entry in enumerate(config.get("external_endpoints") or []):
        if not isinstance(entry, Mapping):
            continue
        name, reason = entry.get("workspace"), entry.get("reason")
        if isinstance(reason, str) and not reason.strip():
            out.append(
                f"private-network.external_endpoints[{i}].reason: blank; say who creates the workspace's "
                "private endpoint (e.g. 'hub network team, landing-zone policy')"
            )
        if isinstance(name, str):
            if name.lower() in seen:
                out.append(
                    f"private-network.external_endpoints[{i}].workspace: '{name}' is listed twice; keep one "
                    "entry per workspace"
                )
            seen.add(name.lower())
    return out


def _external(config: Mapping[str, Any]) -> set[str]:
    entries = config.get("external_endpoints") or []
    return {
        str(e.get("workspace")).lower()
        for e in entries
        if isinstance(e, Mapping) and str(e.get("reason") or "").strip()
    }


def _names(workspace: Any) -> set[str]:
    """The names a workspace goes by: its Azure name (input `workspaceName`, output `name`) and its
    resource name, lower-case."""
    out = {str(workspace.name).lower()}
    if workspace.urn in _AZURE_NAMES:
        out.add(_AZURE_NAMES[workspace.urn].lower())
    for key in ("workspaceName", "name"):
        value = read(workspace.props, key)
        if isinstance(value, str):
            out.add(value.lower())
    return out


def record(resource: Any) -> None:
    """Record a workspace's managed network mode from its inputs (Analyze); nothing for other resources."""
    if resource.resource_type == WORKSPACE:
        _MODES[resource.urn] = read(resource.props, "managedNetwork", "isolationMode")
        name = read(resource.props, "workspaceName")
        if isinstance(name, str):
            _AZURE_NAMES[resource.urn] = name


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


def findings(
    resources: list[Any], config: Mapping[str, Any]
) -> tuple[list[tuple[str, str | None]], list[tuple[str, str | None]]]:
    """(mandatory, advisory) findings as (message, urn); `config` is private-network's own (its
    `external_endpoints`), {} for a companion that has none."""
    mandatory: list[tuple[str, str | None]] = []
    advisory: list[tuple[str, str | None]] = []
    external = _external(config)
    workspaces = [r for r in resources if r.resource_type == WORKSPACE]
    endpoints = [r for r in resources if r.resource_type == PRIVATE_ENDPOINT]
    locks = [r for r in resources if r.resource_type in LOCK_TYPES]
    reached: dict[str, bool] = {}  # workspace URN -> a private endpoint reaches it (stack's or external)
    for ws in workspaces:
        reached[ws.urn] = bool(_names(ws) & external) or any(_reaches(e, ws) for e in endpoints)
        access, mode = read(ws.props, "publicNetworkAccess"), managed_mode(ws)
        if access == "Disabled" and not reached[ws.urn]:
            mandatory.append(
                (
                    f"workspace '{ws.name}' has publicNetworkAccess Disabled "
                    "but no private endpoint reaches it"
                    + (" (its managed network isolates outbound traffic only)" if mode in _MANAGED else "")
                    + ": nobody can reach the workspace API or its data plane, and jobs can't be submitted. "
                    "Fix: add network.private_endpoints (targets including workspace), name the workspace in "
                    "private-network.external_endpoints with the reason if its endpoint is created outside "
                    "the stack, or set public_network_access: Enabled.",
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
            for lock in locks:
                mandatory.append(
                    (
                        f"lock '{lock.name}' in a stack whose workspace '{ws.name}' has a managed network: "
                        "Azure ML asks for no scope locks on its resources and resource group, since "
                        "internal operations of the managed network might be blocked "
                        "(how-to-managed-network.md, Limitations). "
                        "Fix: remove the lock (azml-gpu:locks: false; unset flags are off with a managed "
                        "network).",
                        lock.urn,
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
                        "Fix: set identity.system_datastores_auth_mode (systemDatastoresAuthMode): identity.",
                        storage.urn,
                    )
                )
    for r in resources:
        cluster = cluster_of(r)
        if cluster is None:
            continue
        homes = [d for d in depends_on(r, "workspaceName") if d.resource_type == WORKSPACE]
        if not homes and len(workspaces) == 1:
            homes = workspaces
        for home in homes:
            if not reached.get(home.urn):
                continue
            here, there = cluster.region, read(home.props, "location")
            if here is UNKNOWN or there is UNKNOWN or here is None or not isinstance(there, str):
                continue
            if norm_region(here) != norm_region(there):
                mandatory.append(
                    (
                        f"cluster {cluster.name} runs in {here} but its workspace '{home.name}' is in "
                        f"{norm_region(there)} and has a private endpoint: a cluster in another region is "
                        "not available for a private-endpoint workspace (how-to-create-attach-compute-"
                        f"cluster.md, Limitations). Fix: create the cluster in {norm_region(there)}, or give "
                        f"{here} its own workspace (stack); a public workspace keeps cross-region clusters.",
                        r.urn,
                    )
                )
        if cluster.node_public_ip is not False:
            continue
        if cluster.subnet_id is UNKNOWN:
            continue
        if cluster.subnet_id:
            if homes and not any(reached.get(h.urn) for h in homes):
                mandatory.append(
                    (
                        f"cluster {cluster.name}: node public IP is off in your virtual network, but no "
                        "private endpoint reaches its workspace: no-public-IP nodes reach Azure ML through "
                        "the workspace's private endpoint (how-to-secure-training-vnet.md), so they never "
                        "join. Fix: add network.private_endpoints (or name the workspace in "
                        "private-network.external_endpoints), or set node_public_ip: true.",
                        r.urn,
                    )
                )
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
                "Fix: set subnet_id (subnet.id), add network.managed (the workspace's managedNetwork), or "
                "set node_public_ip (enableNodePublicIp): true.",
                r.urn,
            )
        )
    return mandatory, advisory
