"""private-network-inputs (advisory, resource; reports nothing): each workspace's managed network mode.

In the first preview of a new stack an output the inputs do not set is unknown, so AnalyzeStack cannot tell
"no managed network" from "not known yet"; the inputs can. This policy records each workspace's
`managedNetwork.isolationMode` at Analyze (`private_network.record`) for private-network and
private-network-cost. The engine runs every Analyze of a preview before its one AnalyzeStack, in the same pack
process (policies/locks.py cites pulumi/pulumi), so the registry order does not matter; disabled, the stack
policies read the outputs alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._policy import RESOURCE, AnalyzedResource
from policies.private_network import record

NAME = "private-network-inputs"
DESCRIPTION = "Records each workspace's managed network mode from its inputs for private-network."
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = RESOURCE
CONFIG: dict[str, Any] = {}


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    record(resource)
    return []
