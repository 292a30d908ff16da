"""no-resource-group-locks (mandatory, stack): no lock at resource-group or subscription scope next to Azure
ML.

Sources: azure-notes.md 3.6 ("Resource locks on the workspace resource group block scaling ('stuck at resizing
0 -> 0')"); platform-notes.md ("a delete or read-only lock on the resource group blocks cluster scaling"); the
seed, "Failure modes": "Lock individual resources instead". A subscription lock covers every resource group.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, StackValidationArgs, StackValidationPolicy
from pulumi_policy.proxy import UnknownValueError

from policies._common import WORKSPACE, ReportViolation, get
from policies._locks import target

NAME = "no-resource-group-locks"


def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    if not any(r.resource_type == WORKSPACE for r in args.resources):
        return
    for r in args.resources:
        try:
            scope = target(r)
        except UnknownValueError:  # a lock whose inputs resolve only at deployment
            continue
        if scope is None or scope.kind not in ("resource-group", "subscription"):
            continue
        level = get(r.props, "level", default="a")
        report_violation(
            f"{level} lock '{r.name}' on {scope.shown} applies to the Azure ML workspace's clusters: Azure "
            "ML cannot resize them, so clusters stick at 'resizing 0 -> 0' and jobs queue forever. Fix: "
            "lock "
            f"individual resources (storage, key vault, registry) with the locks config instead.",
            r.urn,
        )


POLICY = StackValidationPolicy(
    name=NAME,
    description="A stack with an Azure ML workspace must not lock a resource group or the subscription.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
)
