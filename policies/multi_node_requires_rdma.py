"""multi-node-requires-rdma: a cluster that can run more than one node needs a size whose RDMA NCCL can use.

Sources: azure-notes.md 1.1 and 1.3 (AID:how-to-train-distributed-gpu.md: "VM SKUs with an 'r' in their name
contain the required InfiniBand hardware, and those without an 'r' typically do not"; Standard_NC24r is RDMA
capable but has no SR-IOV, so no InfiniBand for NCCL); the seed ("A size without the r falls back to TCP over
Ethernet ... adding nodes can make training slower, not faster"). The catalog's `rdma_usable` carries both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._policy import RESOURCE, AnalyzedResource
from policies.clusters import judge_cluster
from vmsizes import UnknownSize, describe

NAME = "multi-node-requires-rdma"
DESCRIPTION = "Multi-node AmlCompute clusters must use a VM size with RDMA (InfiniBand) that NCCL can use."
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = RESOURCE
CONFIG: dict[str, Any] = {}


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    return judge_cluster(
        resource, ("size", "max_nodes"), lambda cluster: _messages(cluster.size, cluster.max_nodes)
    )


def _messages(size: str | None, max_nodes: int | None) -> list[str]:
    """The violation messages for one cluster (empty when it complies)."""
    if max_nodes is None or max_nodes <= 1 or not size:
        return []
    try:
        described = describe(size)
    except UnknownSize:
        return [
            f"{size} is not in the size catalog and its name does not follow Azure's naming convention, so "
            f"RDMA cannot be confirmed for max_instances={max_nodes}. "
            "Fix: use a catalog size with 'r' (e.g. Standard_ND96isr_H100_v5), or set max_instances "
            "(scaleSettings.maxNodeCount) to 1."
        ]
    if described.rdma_usable:
        return []
    how = " (inferred from the size name: the size is not in the catalog)" if described.inferred else ""
    why = (
        "has RDMA but no SR-IOV, so NCCL cannot use InfiniBand"
        if described.rdma
        else "has no RDMA/InfiniBand network"
    )
    return [
        f"{described.name} {why}{how}; with max_instances={max_nodes}, NCCL falls back to TCP sockets, so "
        f"gradient all-reduce crawls and extra nodes are paid for without speeding training up. Fix: use an "
        "RDMA size (an 'r' in the name, e.g. Standard_ND96isr_H100_v5), or set max_instances "
        "(scaleSettings.maxNodeCount) to 1."
    ]
