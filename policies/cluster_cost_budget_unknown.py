"""cluster-cost-budget-unknown (advisory, stack): the budget cluster-cost-budget cannot check.

The advisory side of cluster-cost-budget (same sources): no price file, a file that cannot be read, a
cluster whose size, region and tier the file gives no price for, or a cluster whose cost cannot be computed
in this preview. A price unknown is never counted as zero, so each of these says the budget is not (fully)
checked. The findings are cluster-cost-budget's (one computation), left for this policy in the same
AnalyzeStack call, as quota-reservation-unknown does (docs/policies.md "Companion policies"). With
cluster-cost-budget disabled, or no budget configured, it reports nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies import cluster_cost_budget
from policies._policy import STACK, Violation

NAME = "cluster-cost-budget-unknown"
DESCRIPTION = "Every cluster under a cost budget should have a known price (a price file that gives it)."
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = STACK
CONFIG: dict[str, Any] = {}


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    return [Violation(message) for message in cluster_cost_budget.take_advisories()]
