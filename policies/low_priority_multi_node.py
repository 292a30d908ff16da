"""low-priority-multi-node (advisory): low-priority nodes in a multi-node cluster.

Sources: azure-notes.md 5 (how-to-create-attach-compute-cluster.md: low-priority VMs "might be preempted
while in use. You have to restart a preempted job"); the seed: low-priority is "a poor fit for multi-node
jobs that need every node at once, because losing one node stops all of them".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._policy import RESOURCE, AnalyzedResource
from policies.clusters import Cluster, judge_cluster

NAME = "low-priority-multi-node"
DESCRIPTION = "Low-priority AmlCompute clusters should not be used for multi-node jobs."
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = RESOURCE
CONFIG: dict[str, Any] = {}


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    return judge_cluster(resource, ("priority", "max_nodes"), _messages)


def _messages(cluster: Cluster) -> list[str]:
    if cluster.tier != "low_priority" or cluster.max_nodes is None or cluster.max_nodes <= 1:
        return []
    return [
        f"low-priority cluster with max_instances={cluster.max_nodes}: "
        "a preemption of any one node stops the whole multi-node job, "
        "which must be restarted from its last checkpoint, and the risk grows with the node count. "
        "Fix: use tier 'dedicated' for multi-node training, "
        "or keep low-priority clusters to one node and checkpoint often."
    ]
