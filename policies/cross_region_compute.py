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

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    StackValidationArgs,
    StackValidationPolicy,
)

from policies._common import (
    UNKNOWN,
    WORKSPACE,
    ReportViolation,
    aml_cluster,
    depends_on,
    norm_region,
    read,
    undecided,
)

NAME = "cross-region-compute"


def _workspace_region(workspace: Any) -> Any:
    region = read(workspace.props, "location")
    return UNKNOWN if region is UNKNOWN else norm_region(region)


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    acknowledged = set(args.get_config().get("acknowledged", []))
    workspaces = [r for r in args.resources if r.resource_type == WORKSPACE]
    for r in args.resources:
        c = aml_cluster(r.resource_type, r.props, r.name, r.urn)
        if c is None or c.name in acknowledged:
            continue
        homes = [d for d in depends_on(r, "workspaceName") if d.resource_type == WORKSPACE]
        if not homes and len(workspaces) == 1:
            homes = workspaces
        if not homes:
            continue  # the cluster's workspace is not in this stack: nothing to compare with
        home = _workspace_region(homes[0])
        if why := undecided(**{"the cluster region": c.region, "the workspace location": home}):
            report_violation(f"cluster {c.name}: {why}", c.urn)
            continue
        if home is None or c.region is None or c.region == home:
            continue
        report_violation(
            f"cluster {c.name} runs in {c.region} but its workspace is in {home}: every read of data in the "
            f"workspace's storage crosses regions, adding latency and egress charges per job. Fix: copy the "
            f"data to {c.region} first and add '{c.name}' to cross-region-compute.acknowledged, or create "
            f"the cluster in {home}.",
            c.urn,
        )


POLICY = StackValidationPolicy(
    name=NAME,
    description="AmlCompute clusters should run in their workspace's region unless acknowledged.",
    validate=validate,
    enforcement_level=EnforcementLevel.ADVISORY,
    config_schema=PolicyConfigSchema(
        properties={
            "acknowledged": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Cluster names deliberately placed outside the workspace region.",
            }
        }
    ),
)
