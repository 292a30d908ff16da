"""min-nodes-zero (advisory): clusters scale to zero unless allow-listed.

Source: AID:includes/machine-learning-min-nodes.md (azure-notes.md 3.3): "Any value larger than 0 will keep
that number of nodes running, even if they are not in use".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._policy import RESOURCE, AnalyzedResource
from policies.clusters import Cluster, judge_cluster

NAME = "min-nodes-zero"
DESCRIPTION = "AmlCompute clusters should scale to zero nodes when idle (min_instances 0)."
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = RESOURCE
CONFIG: dict[str, Any] = {
    "allow": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Cluster names allowed to keep warm nodes (min_instances > 0).",
    }
}


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    return judge_cluster(
        resource, ("min_nodes", "size"), lambda cluster: _messages(cluster, list(config.get("allow", [])))
    )


def _messages(cluster: Cluster, allow: list[str]) -> list[str]:
    if cluster.min_nodes is None or cluster.min_nodes <= 0 or cluster.name in allow:
        return []  # minNodeCount absent: Azure's default is 0
    return [
        f"min_instances={cluster.min_nodes} keeps {cluster.min_nodes} node(s) of {cluster.size} "
        "running and billed around the clock, even with no job. "
        f"Fix: set min_instances (scaleSettings.minNodeCount) to 0, or add '{cluster.name}' to the "
        "min-nodes-zero allow list "
        "in the policy config if warm nodes are intended."
    ]
