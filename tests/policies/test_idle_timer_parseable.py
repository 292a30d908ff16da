"""idle-timer-parseable (mandatory): SHOULD PASS / SHOULD FAIL from the happy path (PT5M)."""

from __future__ import annotations

from typing import Any

import pytest

from policies import idle_timer_parseable as policy

from .policies_helpers import DELETE, IDLE, cluster, facts, verdict

SHOULD_PASS: dict[str, Any] = {
    "happy path: PT5M": "PT5M",
    "days and hours": "P1DT1H",
    "timer left out: idle-timer-bounds' case": DELETE,
}

SHOULD_FAIL: dict[str, tuple[Any, tuple[str, ...]]] = {
    "free text": ("30 minutes", ("nodeIdleTimeBeforeScaleDown '30 minutes' is not an ISO-8601 duration",)),
    "months have no fixed length": ("P1M", ("'P1M' is not an ISO-8601 duration of fixed length",)),
    "a number of seconds, not a duration": (300, ("nodeIdleTimeBeforeScaleDown 300.0",)),
    "empty": ("", ("nodeIdleTimeBeforeScaleDown '' is not",)),
}


@pytest.mark.parametrize("timer", SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(timer: Any) -> None:
    assert verdict(policy, cluster(**{IDLE: timer})) == []


@pytest.mark.parametrize(("timer", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(timer: Any, expected: tuple[str, ...]) -> None:
    facts(verdict(policy, cluster(**{IDLE: timer})), [expected])


def test_the_message_in_full() -> None:
    assert verdict(policy, cluster(**{IDLE: "P1M"})) == [
        "nodeIdleTimeBeforeScaleDown 'P1M' is not an ISO-8601 duration of fixed length, which ARM expects (a "
        ".NET TimeSpan): the deployment fails or the timer is not the one intended. Fix: set "
        "idle_time_before_scale_down (nodeIdleTimeBeforeScaleDown) in seconds in the stack config (the "
        "program sends e.g. 'PT5M')."
    ]
