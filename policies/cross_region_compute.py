"""cross-region-compute (advisory, stack): a cluster in another region than its workspace.

Sources: azure-notes.md 3.6 ("Compute clusters may be created in a different region from the workspace"); the
seed: "you then pay for latency and cross-region data transfer on every read. Copy the data to that region
first." The cluster region is properties.computeLocation, else location (policies/_common.py).
"""

from __future__ import annotations

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from policies._common import WORKSPACE, ReportViolation, clusters_of, get, norm_region

NAME = "cross-region-compute"


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    acknowledged = set(args.get_config().get("acknowledged", []))
    workspaces: dict[str, str] = {}
    for r in args.resources:
        if r.resource_type != WORKSPACE:
            continue
        try:
            name = get(r.props, "workspaceName") or r.name
            region = norm_region(get(r.props, "location"))
        except UnknownValueError:
            continue
        if region:
            workspaces[name] = region
    for c in clusters_of(args.resources):
        home = workspaces.get(c.workspace_name or "")
        if home is None and len(workspaces) == 1:
            home = next(iter(workspaces.values()))
        if home is None or c.region is None or c.region == home or c.name in acknowledged:
            continue
        report_violation(
            f"cluster {c.name} runs in {c.region} but its workspace is in {home}: every read of data in the "
            f"workspace's storage crosses regions, adding latency and egress charges per job. Fix: copy the "
            f"data to {c.region} first and add '{c.name}' to cross-region-compute.acknowledged, or create "
            "the "
            f"cluster in {home}.",
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
