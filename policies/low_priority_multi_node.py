"""low-priority-multi-node (advisory): low-priority nodes in a multi-node cluster.

Sources: azure-notes.md 5 (how-to-create-attach-compute-cluster.md: low-priority VMs "might be preempted
while in use. You have to restart a preempted job"); the seed: low-priority is "a poor fit for multi-node
jobs that need every node at once, because losing one node stops all of them".
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from policies._common import Cluster, cluster_validator

NAME = "low-priority-multi-node"


def messages(cluster: Cluster) -> list[str]:
    if cluster.tier != "low_priority" or cluster.max_nodes is None or cluster.max_nodes <= 1:
        return []
    return [
        f"low-priority cluster with max_instances={cluster.max_nodes}: a preemption of any one node stops "
        "the "
        "whole multi-node job, which must be restarted from its last checkpoint, and the risk grows with "
        "the "
        "node count. Fix: use tier 'dedicated' for multi-node training, or keep low-priority clusters to "
        "one "
        f"node and checkpoint often."
    ]


validate = cluster_validator(lambda cluster, _config: messages(cluster), ("priority", "max_nodes"))


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="Low-priority AmlCompute clusters should not be used for multi-node jobs.",
    validate=validate,
    enforcement_level=EnforcementLevel.ADVISORY,
)
