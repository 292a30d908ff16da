"""compute-in-virtual-network (advisory, stack): a cluster outside any virtual network.

The counterpart of PSRule for Azure's Azure.ML.ComputeVnet (AZR-000405, "ML Compute should be in a virtual
network": `properties.properties.subnet.id` has a value; Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/
rules/Azure.ML.Rule.yaml). One difference, on purpose: a cluster of a workspace with a managed network counts
as in a virtual network ("Managed compute resources you create for the workspace automatically use this
managed virtual network", how-to-managed-network.md), where PSRule, reading only the subnet, would flag it.

Advisory: the project's public stacks choose otherwise and say why (Pulumi.dev.yaml: reached from laptops
and CI without a VPN; Pulumi.capacity.yaml: a cluster in another region than its workspace, which neither a
managed network nor a VNet cluster allows, docs/azure-behaviour.md section 15); their policy configs list
those clusters in `acknowledged`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import UNKNOWN, WORKSPACE, depends_on
from policies._policy import STACK, Violation
from policies.clusters import cluster_of
from policies.private_network import managed_mode

NAME = "compute-in-virtual-network"
DESCRIPTION = "AmlCompute clusters should sit in a virtual network (a subnet or the managed network)."
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = STACK
CONFIG: dict[str, Any] = {
    "acknowledged": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Cluster names deliberately outside any virtual network.",
    }
}
_MANAGED = ("AllowInternetOutbound", "AllowOnlyApprovedOutbound")


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    acknowledged = set(config.get("acknowledged", []))
    workspaces = [r for r in resources if r.resource_type == WORKSPACE]
    found: list[Violation] = []
    for r in resources:
        cluster = cluster_of(r)
        if cluster is None or cluster.name in acknowledged or cluster.subnet_id is UNKNOWN:
            continue
        if cluster.subnet_id:
            continue
        homes = [d for d in depends_on(r, "workspaceName") if d.resource_type == WORKSPACE]
        if not homes and len(workspaces) == 1:
            homes = workspaces
        modes = [managed_mode(w) for w in homes]
        if any(m in _MANAGED or m is UNKNOWN for m in modes):
            continue  # in the managed network (or not known in this preview: an advisory stays quiet)
        found.append(
            Violation(
                f"cluster {cluster.name} is in no virtual network (no subnet, and its workspace has no "
                "managed network): its nodes take public IPs and their traffic crosses the internet "
                "(PSRule Azure.ML.ComputeVnet). Fix: add network.managed or a subnet_id, or add "
                f"'{cluster.name}' to compute-in-virtual-network.acknowledged if the cluster is public on "
                "purpose (a cross-region cluster can't be in either).",
                r.urn,
            )
        )
    return found
