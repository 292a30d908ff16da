"""quota-reservation-unknown (advisory, stack): a quota pool nothing checks.

The advisory side of quota-reservation (same sources): a pool the clusters reserve whose quota the
quota-reservation config does not give, a size whose quota family the catalog does not know, or a cluster
whose reservation cannot be computed. The findings are quota-reservation's `findings` (one computation);
this policy reports the advisory ones that quota-reservation left for it in the same AnalyzeStack call, as
pulumi-policy gives each policy only its own config and the quotas are quota-reservation's (the one
order-dependent pair: docs/policies.md "Companion policies"). With quota-reservation disabled it reports
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies import quota_reservation
from policies._policy import STACK, Violation

NAME = "quota-reservation-unknown"
DESCRIPTION = "Every quota pool the clusters reserve should have a quota in the quota-reservation config."
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = STACK
CONFIG: dict[str, Any] = {}


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    return [Violation(message) for message in quota_reservation.take_advisories()]
