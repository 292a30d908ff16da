"""idle-timer-bounds (advisory): SHOULD PASS / SHOULD FAIL from the happy path (PT5M = 300 s), bounds
[min_seconds, max_seconds], defaults 120 and 1800."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from policies import idle_timer_bounds as policy

from .policies_helpers import DELETE, IDLE, cluster, facts, verdict

BOUNDS = {"min_seconds": 120, "max_seconds": 900}

SHOULD_PASS: dict[str, tuple[str, dict[str, Any]]] = {
    "happy path: 300 s": ("PT5M", BOUNDS),
    "at min (boundary)": ("PT2M", BOUNDS),
    "at max (boundary)": ("PT15M", BOUNDS),
    "at the default min, bounds left out": ("PT120S", {}),
    "at the default max, bounds left out": ("PT30M", {}),
    "unparseable: idle-timer-parseable's case": ("P1M", BOUNDS),
}

SHOULD_FAIL: dict[str, tuple[Any, dict[str, Any], tuple[str, ...]]] = {
    "one second below min (boundary)": (
        "PT119S",
        BOUNDS,
        ("idle timer 119 s is below 120 s", "at least 120"),
    ),
    "one second above max (boundary)": (
        "PT901S",
        BOUNDS,
        ("idle timer 901 s is above 900 s", "15 idle minutes", "at most 900"),
    ),
    "below the default min": ("PT119S", {}, ("below 120 s",)),
    "above the default max": ("PT1801S", {}, ("idle timer 1801 s is above 1800 s", "30 idle minutes")),
    "timer left out (Azure's own default applies)": (
        DELETE,
        BOUNDS,
        ("nodeIdleTimeBeforeScaleDown is not set", "Azure applies its own default"),
    ),
}


@pytest.mark.parametrize(("timer", "config"), SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(timer: str, config: dict[str, Any]) -> None:
    assert verdict(policy, cluster(**{IDLE: timer}), config) == []


@pytest.mark.parametrize(("timer", "config", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(timer: Any, config: dict[str, Any], expected: tuple[str, ...]) -> None:
    facts(verdict(policy, cluster(**{IDLE: timer}), config), [expected])


def test_bounds_schema_accepts_zero_and_refuses_negative() -> None:
    schema = {"type": "object", "properties": policy.CONFIG}
    jsonschema.validate({"min_seconds": 0, "max_seconds": 0}, schema)
    assert (policy.CONFIG["min_seconds"]["default"], policy.CONFIG["max_seconds"]["default"]) == (120, 1800)
    for bad in ({"min_seconds": -1}, {"max_seconds": -1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_the_messages_in_full() -> None:
    assert verdict(policy, cluster(**{IDLE: "PT119S"}), BOUNDS) == [
        "idle timer 119 s is below 120 s: nodes are released between back-to-back jobs, so each job waits "
        "minutes for allocation and image pull again. Fix: set idle_time_before_scale_down "
        "(nodeIdleTimeBeforeScaleDown) to at least 120."
    ]
    assert verdict(policy, cluster(**{IDLE: "PT901S"}), BOUNDS) == [
        "idle timer 901 s is above 900 s: every job leaves every node billed for 15 idle minutes. Fix: set "
        "idle_time_before_scale_down (nodeIdleTimeBeforeScaleDown) to at most 900."
    ]
    assert verdict(policy, cluster(**{IDLE: DELETE}), BOUNDS) == [
        "nodeIdleTimeBeforeScaleDown is not set: Azure applies its own default, so idle GPU nodes are billed "
        "for a time nobody chose. Fix: set idle_time_before_scale_down (nodeIdleTimeBeforeScaleDown) in the "
        "stack config."
    ]
