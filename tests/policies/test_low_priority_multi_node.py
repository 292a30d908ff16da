"""low-priority-multi-node (advisory): SHOULD PASS / SHOULD FAIL from the happy path (Dedicated, max 4)."""

from __future__ import annotations

from typing import Any

import pytest

from policies import low_priority_multi_node as policy

from .policies_helpers import DELETE, MAX, PRIORITY, cluster, facts, verdict

SHOULD_PASS: dict[str, dict[str, Any]] = {
    "happy path: dedicated, 4 nodes": {},
    "vmPriority left out (Azure's default Dedicated)": {PRIORITY: DELETE},
    "low priority, one node (boundary)": {PRIORITY: "LowPriority", MAX: 1},
    "low priority, maxNodeCount left out": {PRIORITY: "LowPriority", MAX: DELETE},
}

SHOULD_FAIL: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "low priority, two nodes (boundary)": (
        {PRIORITY: "LowPriority", MAX: 2},
        ("low-priority cluster with max_instances=2", "preemption"),
    ),
    "priority in any case": ({PRIORITY: "lowpriority"}, ("low-priority cluster with max_instances=4",)),
}


@pytest.mark.parametrize("overrides", SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(overrides: dict[str, Any]) -> None:
    assert verdict(policy, cluster(**overrides)) == []


@pytest.mark.parametrize(("overrides", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(overrides: dict[str, Any], expected: tuple[str, ...]) -> None:
    facts(verdict(policy, cluster(**overrides)), [expected])


def test_the_message_in_full() -> None:
    assert verdict(policy, cluster(**{PRIORITY: "LowPriority", MAX: 2})) == [
        "low-priority cluster with max_instances=2: a preemption of any one node stops the whole multi-node "
        "job, which must be restarted from its last checkpoint, and the risk grows with the node count. Fix: "
        "use tier 'dedicated' for multi-node training, or keep low-priority clusters to one node and "
        "checkpoint often."
    ]
