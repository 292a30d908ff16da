"""cross-region-compute (advisory, stack): a cluster in another region than its workspace.

Sources: azure-notes.md 3.6 ("Compute clusters may be created in a different region from the workspace"); the
seed: "you then pay for latency and cross-region data transfer on every read. Copy the data to that region
first." The cluster region is properties.computeLocation, else location (policies/_common.py).

A stack policy, so it sees outputs: a Compute's outputs have no `workspaceName` (a path parameter), so its
workspace is the one its `workspaceName` input comes from (the engine's property dependencies), else the
stack's only workspace. The workspace region is its `location` output, echoed from the input in every
preview.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import UNKNOWN, WORKSPACE, depends_on, norm_region, read, undecided
from policies._policy import STACK, Violation
from policies.clusters import cluster_of

NAME = "cross-region-compute"
DESCRIPTION = "AmlCompute clusters should run in their workspace's region unless acknowledged."
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = STACK
CONFIG: dict[str, Any] = {
    "acknowledged": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Cluster names deliberately placed outside the workspace region.",
    }
}


def _workspace_region(workspace: Any) -> Any:
    region = read(workspace.props, "location")
    return UNKNOWN if region is UNKNOWN else norm_region(region)


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    acknowledged = set(config.get("acknowledged", []))
    workspaces = [r for r in resources if r.resource_type == WORKSPACE]
    found = []
    for r in resources:
        c = cluster_of(r)
        if c is None or c.name in acknowledged:
            continue
        homes = [d for d in depends_on(r, "workspaceName") if d.resource_type == WORKSPACE]
        if not homes and len(workspaces) == 1:
            homes = workspaces
        if not homes:
            continue  # the cluster's workspace is not in this stack: nothing to compare with
        home = _workspace_region(homes[0])
        if why := undecided(**{"the cluster region": c.region, "the workspace location": home}):
            found.append(Violation(f"cluster {c.name}: {why}", c.urn))
            continue
        if home is None or c.region is None or c.region == home:
            continue
        found.append(
            Violation(
                f"cluster {c.name} runs in {c.region} but its workspace is in {home}: "
                "every read of data in the workspace's storage crosses regions, "
                "adding latency and egress charges per job. "
                f"Fix: copy the data to {c.region} first and add '{c.name}' to "
                f"cross-region-compute.acknowledged, or create the cluster in {home}.",
                c.urn,
            )
        )
    return found
