"""no-retired-vm-series (mandatory): no cluster on a VM size retired on the evaluation date.

A retired series "can't be provisioned" and remaining VMs are deallocated (azure-notes.md 2, CD:
retirements-and-capacity-restrictions.md); compare the catalog's retirement date, with its regional extensions
(e.g. NCv3 in US Gov Virginia to 2026-12-31, ncv3-retirement.md), to the evaluation date rather than trusting
the status text. The evaluation date is config `evaluation_date`, else $AZML_GPU_POLICY_DATE, else today.
A retirement announced but still ahead is vm-series-retiring-soon (advisory).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import EVALUATION_DATE_SCHEMA, evaluation_date
from policies._policy import RESOURCE, AnalyzedResource
from policies.clusters import judge_cluster
from vmsizes import UnknownSize, describe, retired, retirement_date

NAME = "no-retired-vm-series"
DESCRIPTION = "AmlCompute clusters must not use a VM size that is retired on the evaluation date."
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = RESOURCE
CONFIG: dict[str, Any] = {"evaluation_date": EVALUATION_DATE_SCHEMA}


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    return judge_cluster(
        resource,
        ("size", "region"),
        lambda cluster: _messages(cluster.size, cluster.region, evaluation_date(config)),
    )


def _messages(size: str | None, region: str | None, on: date) -> list[str]:
    """The violation for a size retired on the day `on` in `region` (empty when it is not)."""
    if not size:
        return []
    try:
        described = describe(size)
    except UnknownSize:
        return []  # multi-node-requires-rdma reports a size it cannot read
    if not retired(described, on, region):
        return []
    when = retirement_date(described, region)
    since = f"was retired on {when.isoformat()}" if when else "was withdrawn"
    where = f" in {region}" if region else ""
    return [
        f"{described.name} ({described.series}) {since}{where} (evaluated on {on.isoformat()}): "
        "Azure cannot provision it and deallocates remaining VMs, so the cluster never gets a node. "
        "Fix: recreate the cluster on a current size "
        "(e.g. Standard_NC40ads_H100_v5 or Standard_ND96isr_H100_v5)."
    ]
