"""no-retired-vm-series (mandatory) and its advisory companion vm-series-retiring-soon.

A retired series "can't be provisioned" and remaining VMs are deallocated (azure-notes.md 2, CD:
retirements-and-capacity-restrictions.md); compare the catalog's retirement date, with its regional extensions
(e.g. NCv3 in US Gov Virginia to 2026-12-31, ncv3-retirement.md), to the evaluation date rather than trusting
the status text. The evaluation date is config `evaluation_date`, else $AZML_GPU_POLICY_DATE, else today.

One concern, two enforcement levels: pulumi-policy gives a policy one level, so the advisory case ("retirement
announced within warn_days") is the companion policy vm-series-retiring-soon. Both are computed here once.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from policies._common import Handoff, ReportViolation, aml_cluster, evaluation_date
from vmsizes import UnknownSize, describe, retired, retirement_date

NAME = "no-retired-vm-series"
COMPANION = "vm-series-retiring-soon"
DEFAULT_WARN_DAYS = 180
_handoff = Handoff()

DATE_SCHEMA = {
    "type": "string",
    "pattern": r"^\d{4}-\d{2}-\d{2}$",
    "description": "Day to evaluate retirement on (YYYY-MM-DD); default $AZML_GPU_POLICY_DATE, else today.",
}


def findings(size: str | None, region: str | None, on: date, warn_days: int) -> tuple[list[str], list[str]]:
    """(mandatory, advisory) messages for one cluster's size in its region on the day `on`."""
    if not size:
        return [], []
    try:
        described = describe(size)
    except UnknownSize:
        return [], []
    where = f" in {region}" if region else ""
    if retired(described, on, region):
        when = retirement_date(described, region)
        since = f"was retired on {when.isoformat()}" if when else "was withdrawn"
        return [
            f"{described.name} ({described.series}) {since}{where} (evaluated on {on.isoformat()}): Azure "
            f"cannot provision it and deallocates remaining VMs, so the cluster never gets a node. Fix: "
            "recreate the cluster on a current size (e.g. Standard_NC40ads_H100_v5 or "
            "Standard_ND96isr_H100_v5)."
        ], []
    when = retirement_date(described, region)
    if when is not None and (when - on).days <= warn_days:
        left = (when - on).days
        return [], [
            f"{described.name} ({described.series}) retires on {when.isoformat()}{where}, {left} days after "
            f"{on.isoformat()}: from then the cluster cannot get nodes and must be recreated (size cannot be "
            f"changed in place). Fix: plan the move to a current size now."
        ]
    return [], []


def _settings(config: Mapping[str, Any]) -> tuple[date, int]:
    warn = config.get("warn_days", DEFAULT_WARN_DAYS)
    return evaluation_date(config), int(warn)


def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    cluster = aml_cluster(args.resource_type, args.props, args.name, args.urn)
    if cluster is None:
        return
    if (why := cluster.undecided("size", "region")) is not None:
        _handoff.put(args.urn, [])
        report_violation(why, None)
        return
    on, warn_days = _settings(args.get_config())
    mandatory, advisory = findings(cluster.size, cluster.region, on, warn_days)
    _handoff.put(args.urn, advisory)
    for message in mandatory:
        report_violation(message, None)


def validate_companion(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    for message in _handoff.take(args.urn):
        report_violation(message, None)


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="AmlCompute clusters must not use a VM size that is retired on the evaluation date.",
    validate=validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "warn_days": {
                "type": "integer",
                "minimum": 0,
                "default": DEFAULT_WARN_DAYS,
                "description": "Days before an announced retirement that vm-series-retiring-soon warns.",
            },
            "evaluation_date": DATE_SCHEMA,
        }
    ),
)

COMPANION_POLICY = ResourceValidationPolicy(
    name=COMPANION,
    description=(
        "AmlCompute clusters should not use a VM size whose announced retirement falls within warn_days "
        "(set on no-retired-vm-series)."
    ),
    validate=validate_companion,
    enforcement_level=EnforcementLevel.ADVISORY,
)
