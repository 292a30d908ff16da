"""private-network-cost (advisory, stack): a managed network's costs and risks.

The advisory side of private-network, computed from the same pure `private_network.findings` (sources there):
FQDN outbound rules deploy a billed Azure Firewall. (Locks next to a managed network are mandatory in
private-network.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._policy import STACK, Violation
from policies.private_network import findings

NAME = "private-network-cost"
DESCRIPTION = "Managed network costs: FQDN outbound rules deploy a billed Azure Firewall."
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = STACK
CONFIG: dict[str, Any] = {}


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    return [Violation(text, urn) for text, urn in findings(list(resources), {})[1]]
