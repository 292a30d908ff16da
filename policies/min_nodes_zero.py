"""min-nodes-zero (advisory): clusters scale to zero unless allow-listed.

Source: AID:includes/machine-learning-min-nodes.md (azure-notes.md 3.3): "Any value larger than 0 will keep
that number of nodes running, even if they are not in use".
"""

from __future__ import annotations

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ResourceValidationPolicy,
)

from policies._common import Cluster, cluster_validator

NAME = "min-nodes-zero"


def messages(cluster: Cluster, allow: list[str]) -> list[str]:
    if not cluster.min_nodes or cluster.min_nodes <= 0 or cluster.name in allow:
        return []
    return [
        f"min_instances={cluster.min_nodes} keeps {cluster.min_nodes} node(s) of {cluster.size} running and "
        f"billed around the clock, even with no job. Fix: set min_instances to 0, or add '{cluster.name}' to "
        f"the min-nodes-zero allow list in the policy config if warm nodes are intended."
    ]


validate = cluster_validator(
    lambda cluster, config: messages(cluster, list(config.get("allow", []))), ("min_nodes", "size")
)


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="AmlCompute clusters should scale to zero nodes when idle (min_instances 0).",
    validate=validate,
    enforcement_level=EnforcementLevel.ADVISORY,
    config_schema=PolicyConfigSchema(
        properties={
            "allow": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Cluster names allowed to keep warm nodes (min_instances > 0).",
            }
        }
    ),
)
