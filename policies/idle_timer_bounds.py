"""idle-timer-bounds (advisory) and its mandatory companion idle-timer-parseable.

ARM sends the idle timer as `scaleSettings.nodeIdleTimeBeforeScaleDown`, an ISO-8601 duration such as "PT30S"
(.NET TimeSpan; azure-notes.md 3.2, @azure/arm-machinelearning ScaleSettings). Azure documents no min/max
range (azure-notes.md 3.2: "NOT FOUND"), so the bounds are this project's cost policy: the SDK v2 default is
120 s (how-to-manage-optimize-cost.md) and below it every job pays a fresh allocation and image pull, which
"can take ten minutes or more" for large GPU sizes; above 30 minutes every job leaves every node billed for
the timer (seed, "A GPU cluster and the settings that set its cost"). A value that is not a fixed-length
duration cannot be deployed as intended, so it is mandatory (idle-timer-parseable).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ResourceValidationPolicy,
)

from policies._common import Cluster, cluster_validator, parse_seconds

NAME = "idle-timer-bounds"
COMPANION = "idle-timer-parseable"
DEFAULT_MIN_SECONDS = 120
DEFAULT_MAX_SECONDS = 1800


def unparseable(value: Any) -> list[str]:
    """Mandatory messages: the timer is present but not a fixed-length ISO-8601 duration."""
    if value is None:
        return []
    if parse_seconds(value) is not None:
        return []
    return [
        f"nodeIdleTimeBeforeScaleDown {value!r} is not an ISO-8601 duration of fixed length, which ARM "
        f"expects (a .NET TimeSpan): the deployment fails or the timer is not the one intended. Fix: set "
        f"idle_time_before_scale_down in seconds in the stack config (the program sends e.g. 'PT5M').",
    ]


def out_of_bounds(value: Any, min_seconds: int, max_seconds: int) -> list[str]:
    """Advisory messages: the timer is missing, or outside [min_seconds, max_seconds]."""
    if value is None:
        return [
            "nodeIdleTimeBeforeScaleDown is not set: Azure applies its own default, so idle GPU nodes are "
            "billed for a time nobody chose. Fix: set idle_time_before_scale_down in the stack config."
        ]
    seconds = parse_seconds(value)
    if seconds is None:
        return []
    if seconds < min_seconds:
        return [
            f"idle timer {seconds} s is below {min_seconds} s: nodes are released between back-to-back "
            "jobs, so "
            "each job waits minutes for allocation and image pull again. Fix: set "
            "idle_time_before_scale_down "
            f"to at least {min_seconds}."
        ]
    if seconds > max_seconds:
        return [
            f"idle timer {seconds} s is above {max_seconds} s: every job leaves every node billed for "
            f"{seconds // 60} idle minutes. Fix: set idle_time_before_scale_down to at most {max_seconds}."
        ]
    return []


def _bounds_messages(cluster: Cluster, config: Mapping[str, Any]) -> list[str]:
    low = int(config.get("min_seconds", DEFAULT_MIN_SECONDS))
    high = int(config.get("max_seconds", DEFAULT_MAX_SECONDS))
    return out_of_bounds(cluster.idle, low, high)


# The bounds are advisory and the parse check mandatory: each says so when the timer is unknown.
validate = cluster_validator(_bounds_messages, ("idle",))
validate_companion = cluster_validator(lambda cluster, _config: unparseable(cluster.idle), ("idle",))


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="AmlCompute idle timers should lie within the configured bounds.",
    validate=validate,
    enforcement_level=EnforcementLevel.ADVISORY,
    config_schema=PolicyConfigSchema(
        properties={
            "min_seconds": {"type": "integer", "minimum": 0, "default": DEFAULT_MIN_SECONDS},
            "max_seconds": {"type": "integer", "minimum": 0, "default": DEFAULT_MAX_SECONDS},
        }
    ),
)

COMPANION_POLICY = ResourceValidationPolicy(
    name=COMPANION,
    description="AmlCompute idle timers must be ISO-8601 durations of fixed length.",
    validate=validate_companion,
    enforcement_level=EnforcementLevel.MANDATORY,
)
