"""no-locks-on-cluster-network (mandatory, stack): no lock on the network resources a cluster uses.

Sources: the seed, "Failure modes": "never [lock] the networking resources the cluster creates for itself";
MicrosoftDocs/azure-docs articles/machine-learning/how-to-secure-training-vnet.md: the compute cluster
"automatically allocates additional networking resources in the resource group that contains the virtual
network ... One network security group, One public IP address, One load balancer". Those are named by
Azure at deployment, so any NSG, load balancer or public IP lock in the resource group of a cluster's virtual
network is treated as one of them; the virtual network and subnet are matched by id.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, StackValidationArgs, StackValidationPolicy
from pulumi_policy.proxy import UnknownValueError

from policies._common import ReportViolation, clusters_of, get
from policies._locks import relative, target

NAME = "no-locks-on-cluster-network"
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
            kind = path[len(rg + _NETWORK):].split("/")[0]
            if kind in _CREATED_BY_AZURE_ML:
                return f"a {_CREATED_BY_AZURE_ML[kind]} in the virtual network's resource group", clusters
    return None


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    subnets: dict[str, list[str]] = {}
    for cluster in clusters_of(args.resources):
        path = relative(cluster.subnet_id) if cluster.subnet_id else None
        if path and "/subnets/" in path:
            subnets.setdefault(path, []).append(cluster.name)
    if not subnets:
        return
    for r in args.resources:
        try:
            scope = target(r)
        except UnknownValueError:
            continue
        if scope is None or scope.kind != "resource" or not scope.path:
            continue
        hit = _what(scope.path, subnets)
        if hit is None:
            continue
        what, clusters = hit
        level = get(r.props, "level", default="a")
        report_violation(
            f"{level} lock '{r.name}' on {what} ({scope.shown}) used by cluster(s) {', '.join(clusters)}: "
            "Azure "
            f"ML creates, updates and deletes these network resources as it scales, so scaling fails and the "
            f"cluster sticks at 'resizing'. Fix: remove the lock; lock the storage, key vault and registry "
            f"instead.",
            r.urn,
        )


POLICY = StackValidationPolicy(
    name=NAME,
    description=(
        "Locks must not cover the virtual network, subnet, NSG, load balancer or public IP a cluster uses."
    ),
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
)
