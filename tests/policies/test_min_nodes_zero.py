"""min-nodes-zero (advisory): SHOULD PASS / SHOULD FAIL from the happy path (min 0)."""

from __future__ import annotations

from typing import Any

import pytest

from policies import min_nodes_zero as policy

from .policies_helpers import DELETE, MIN, cluster, facts, verdict

SHOULD_PASS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "happy path: min 0 (boundary)": ({}, {}),
    "minNodeCount left out (Azure's default 0)": ({MIN: DELETE}, {}),
    "warm nodes, allow-listed": ({MIN: 2}, {"allow": ["h100-x4"]}),
}

SHOULD_FAIL: dict[str, tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]] = {
    "min 1 (boundary)": ({MIN: 1}, {}, ("min_instances=1 keeps 1 node(s) of Standard_ND96isr_H100_v5",)),
    "min 2, another cluster allow-listed": (
        {MIN: 2},
        {"allow": ["warm-cluster"]},
        ("min_instances=2 keeps 2 node(s)", "add 'h100-x4' to the min-nodes-zero allow list"),
    ),
}


@pytest.mark.parametrize(("overrides", "config"), SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(overrides: dict[str, Any], config: dict[str, Any]) -> None:
    assert verdict(policy, cluster(**overrides), config) == []


@pytest.mark.parametrize(("overrides", "config", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(overrides: dict[str, Any], config: dict[str, Any], expected: tuple[str, ...]) -> None:
    facts(verdict(policy, cluster(**overrides), config), [expected])


def test_the_message_in_full() -> None:
    assert verdict(policy, cluster(**{MIN: 1})) == [
        "min_instances=1 keeps 1 node(s) of Standard_ND96isr_H100_v5 running and billed around the clock, "
        "even with no job. Fix: set min_instances (scaleSettings.minNodeCount) to 0, or add 'h100-x4' to the "
        "min-nodes-zero allow list "
        "in the policy config if warm nodes are intended."
    ]
