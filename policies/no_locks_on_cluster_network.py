"""no-locks-on-cluster-network (mandatory, stack): no lock on the network resources a cluster uses.

Sources: the seed, "Failure modes": "never [lock] the networking resources the cluster creates for itself";
MicrosoftDocs/azure-docs articles/machine-learning/how-to-secure-training-vnet.md: the compute cluster
"automatically allocates additional networking resources in the resource group that contains the virtual
network ... One network security group, One public IP address, One load balancer". Those are named by
Azure at deployment, so any NSG, load balancer or public IP lock in the resource group of a cluster's virtual
network is treated as one of them; the virtual network and subnet are matched by id.

A stack policy (it needs the clusters and the locks together), so it sees outputs: a lock's target comes
from what the pack recorded at Analyze (the lock's inputs; policies/locks.py), else from the
resource its scope is computed from (property dependencies): a lock computed from the same network resource
a cluster's subnet comes from is a violation even while both ids are unknown. A lock whose target stays
unknown while clusters use subnets is reported as undecidable (mandatory, never skipped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import UNKNOWN, depends_on, read
from policies._policy import STACK, Violation
from policies.clusters import cluster_of
from policies.locks import is_lock, observed, relative

NAME = "no-locks-on-cluster-network"
DESCRIPTION = (
    "Locks must not cover the virtual network, subnet, NSG, load balancer or public IP a cluster uses."
)
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = STACK
CONFIG: dict[str, Any] = {}
_CREATED_BY_AZURE_ML = {
    "networksecuritygroups": "network security group",
    "loadbalancers": "load balancer",
    "publicipaddresses": "public IP address",
}
_NETWORK = "/providers/microsoft.network/"


def _what(path: str, subnets: dict[str, list[str]]) -> tuple[str, list[str]] | None:
    """(description, clusters) when the lock path is a network resource one of the clusters uses."""
    for subnet, clusters in subnets.items():
        vnet = subnet.split("/subnets/")[0]
        rg = subnet.split("/providers/")[0]
        if path == subnet:
            return "the subnet", clusters
        if path == vnet:
            return "the virtual network", clusters
        if path.startswith(rg + _NETWORK):
            kind = path[len(rg + _NETWORK) :].split("/")[0]
            if kind in _CREATED_BY_AZURE_ML:
                return f"a {_CREATED_BY_AZURE_ML[kind]} in the virtual network's resource group", clusters
    return None


def _message(level: Any, name: str, what: str, shown: str, clusters: list[str]) -> str:
    return (
        f"{level if isinstance(level, str) else 'a'} lock '{name}' on {what} ({shown}) "
        f"used by cluster(s) {', '.join(sorted(clusters))}: "
        "Azure ML creates, updates and deletes these network resources as it scales, "
        "so scaling fails and the cluster sticks at 'resizing'. "
        "Fix: remove the lock; lock the storage, key vault and registry instead."
    )


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    subnets: dict[str, list[str]] = {}
    subnet_sources: dict[str, list[str]] = {}  # URN of a stack resource a cluster's subnet comes from
    for r in resources:
        cluster = cluster_of(r)
        if cluster is None:
            continue
        if cluster.subnet_id is UNKNOWN:
            for source in depends_on(r, "properties"):
                subnet_sources.setdefault(source.urn, []).append(cluster.name)
            continue
        path = relative(cluster.subnet_id) if cluster.subnet_id else None
        if path and "/subnets/" in path:
            subnets.setdefault(path, []).append(cluster.name)
    if not subnets and not subnet_sources:
        return []
    found = []
    for r in resources:
        if not is_lock(r.resource_type):
            continue
        level = read(r.props, "level")
        target = observed(r.urn)
        if target is None or target.kind == "unknown":
            sources = depends_on(r, "scope")
            shared = [s for s in sources if s.urn in subnet_sources]
            if shared:
                what = f"{shared[0].resource_type.split(':')[-1]} {shared[0].name}"
                clusters = subnet_sources[shared[0].urn]
                message = _message(level, r.name, "the network resource", what, clusters)
                found.append(Violation(message, r.urn))
                continue
            if sources:
                continue  # computed from a resource no cluster's subnet comes from
            clusters = ", ".join(sorted({c for cs in subnets.values() for c in cs}))
            found.append(
                Violation(
                    f"cannot decide during preview whether lock '{r.name}' covers a network resource of "
                    f"cluster(s) {clusters}: "
                    "its scope is not known until deployment and comes from no resource of this stack. "
                    "Fix: give the scope as a literal ARM id.",
                    r.urn,
                )
            )
            continue
        if target.kind != "resource" or not target.path:
            continue
        hit = _what(target.path, subnets)
        if hit is not None:
            what, clusters = hit
            found.append(Violation(_message(level, r.name, what, target.shown, clusters), r.urn))
    return found
