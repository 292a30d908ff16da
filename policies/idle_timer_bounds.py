"""idle-timer-bounds (advisory): the idle timer is set and lies within the configured bounds.

ARM sends the idle timer as `scaleSettings.nodeIdleTimeBeforeScaleDown`, an ISO-8601 duration such as "PT30S"
(.NET TimeSpan; azure-notes.md 3.2, @azure/arm-machinelearning ScaleSettings). Azure documents no min/max
range (azure-notes.md 3.2: "NOT FOUND"), so the bounds are this project's cost policy: the SDK v2 default is
120 s (how-to-manage-optimize-cost.md) and below it every job pays a fresh allocation and image pull, which
"can take ten minutes or more" for large GPU sizes; above 30 minutes every job leaves every node billed for
the timer (seed, "A GPU cluster and the settings that set its cost"). A timer that is not a fixed-length
duration is idle-timer-parseable's (mandatory).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._policy import RESOURCE, AnalyzedResource
from policies.clusters import cluster_of, parse_seconds

NAME = "idle-timer-bounds"
DESCRIPTION = "AmlCompute idle timers should lie within the configured bounds."
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = RESOURCE
DEFAULT_MIN_SECONDS = 120
DEFAULT_MAX_SECONDS = 1800
CONFIG: dict[str, Any] = {
    "min_seconds": {"type": "integer", "minimum": 0, "default": DEFAULT_MIN_SECONDS},
    "max_seconds": {"type": "integer", "minimum": 0, "default": DEFAULT_MAX_SECONDS},
}


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    cluster = cluster_of(resource)
    if cluster is None:
        return []
    if why := cluster.undecided("idle"):
        return [why]
    low = int(config.get("min_seconds", DEFAULT_MIN_SECONDS))
    high = int(config.get("max_seconds", DEFAULT_MAX_SECONDS))
    return _messages(cluster.idle, low, high)


def _messages(value: Any, min_seconds: int, max_seconds: int) -> list[str]:
    """The timer is missing, or outside [min_seconds, max_seconds]; an unparseable one is not judged here."""
    if value is None:
        return [
            "nodeIdleTimeBeforeScaleDown is not set: "
            "Azure applies its own default, so idle GPU nodes are billed for a time nobody chose. "
            "Fix: set idle_time_before_scale_down (nodeIdleTimeBeforeScaleDown) in the stack config."
        ]
    seconds = parse_seconds(value)
    if seconds is None:
        return []
    if seconds < min_seconds:
        return [
            f"idle timer {seconds} s is below {min_seconds} s: "
            "nodes are released between back-to-back jobs, "
            "so each job waits minutes for allocation and image pull again. "
            f"Fix: set idle_time_before_scale_down (nodeIdleTimeBeforeScaleDown) to at least {min_seconds}."
        ]
    if seconds > max_seconds:
        return [
            f"idle timer {seconds} s is above {max_seconds} s: "
            f"every job leaves every node billed for {seconds // 60} idle minutes. "
            f"Fix: set idle_time_before_scale_down (nodeIdleTimeBeforeScaleDown) to at most {max_seconds}."
        ]
    return []
