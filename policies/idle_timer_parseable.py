"""idle-timer-parseable (mandatory): the idle timer is an ISO-8601 duration of fixed length.

ARM takes `scaleSettings.nodeIdleTimeBeforeScaleDown` as a .NET TimeSpan, sent as an ISO-8601 duration
(azure-notes.md 3.2, @azure/arm-machinelearning ScaleSettings); months and years have no fixed length. A
value that is not one cannot be deployed as intended, so this is mandatory, while the bounds are the
advisory idle-timer-bounds. Parsed by policies/clusters.py `parse_seconds` (isodate), the gate's parser too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._policy import RESOURCE, AnalyzedResource
from policies.clusters import judge_cluster, parse_seconds

NAME = "idle-timer-parseable"
DESCRIPTION = "AmlCompute idle timers must be ISO-8601 durations of fixed length."
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = RESOURCE
CONFIG: dict[str, Any] = {}


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    return judge_cluster(resource, ("idle",), lambda cluster: _messages(cluster.idle))


def _messages(value: Any) -> list[str]:
    """The timer is present but not a fixed-length ISO-8601 duration (absent: idle-timer-bounds' case)."""
    if value is None or parse_seconds(value) is not None:
        return []
    return [
        f"nodeIdleTimeBeforeScaleDown {value!r} is not an ISO-8601 duration of fixed length, "
        "which ARM expects (a .NET TimeSpan): the deployment fails or the timer is not the one intended. "
        "Fix: set idle_time_before_scale_down (nodeIdleTimeBeforeScaleDown) in seconds in the stack config "
        "(the program sends e.g. 'PT5M')."
    ]
