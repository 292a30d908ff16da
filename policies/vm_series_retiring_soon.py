"""vm-series-retiring-soon (advisory): a cluster on a VM size whose announced retirement is near.

The advisory side of no-retired-vm-series (pulumi-policy gives a policy one enforcement level): a size whose
retirement date (catalog, regional extensions honoured) falls within `warn_days` of the evaluation date, and
is not yet retired (that case is no-retired-vm-series). Sources: as no-retired-vm-series.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import EVALUATION_DATE_SCHEMA, evaluation_date
from policies._policy import RESOURCE, AnalyzedResource
from policies.clusters import cluster_of
from vmsizes import UnknownSize, describe, retired, retirement_date

NAME = "vm-series-retiring-soon"
DESCRIPTION = (
    "AmlCompute clusters should not use a VM size whose announced retirement falls within warn_days."
)
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = RESOURCE
DEFAULT_WARN_DAYS = 180
CONFIG: dict[str, Any] = {
    "warn_days": {
        "type": "integer",
        "minimum": 0,
        "default": DEFAULT_WARN_DAYS,
        "description": "Days before an announced retirement that the policy starts to warn.",
    },
    "evaluation_date": EVALUATION_DATE_SCHEMA,
}


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    cluster = cluster_of(resource)
    if cluster is None:
        return []
    if why := cluster.undecided("size", "region"):
        return [why]
    warn_days = int(config.get("warn_days", DEFAULT_WARN_DAYS))
    return _messages(cluster.size, cluster.region, evaluation_date(config), warn_days)


def _messages(size: str | None, region: str | None, on: date, warn_days: int) -> list[str]:
    """The warning for a size that retires within `warn_days` after `on` in `region` (empty otherwise)."""
    if not size:
        return []
    try:
        described = describe(size)
    except UnknownSize:
        return []
    when = retirement_date(described, region)
    if when is None or retired(described, on, region) or (when - on).days > warn_days:
        return []
    where = f" in {region}" if region else ""
    return [
        f"{described.name} ({described.series}) retires on {when.isoformat()}{where}, "
        f"{(when - on).days} days after {on.isoformat()}: "
        "from then the cluster cannot get nodes and must be recreated (size cannot be changed in place). "
        "Fix: plan the move to a current size now."
    ]
