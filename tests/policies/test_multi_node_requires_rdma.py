"""multi-node-requires-rdma (mandatory): SHOULD PASS / SHOULD FAIL, each case one change to the happy path
(h100-x4: Standard_ND96isr_H100_v5, max 4 nodes)."""

from __future__ import annotations

from typing import Any

import pytest

from policies import multi_node_requires_rdma as policy

from .policies_helpers import DELETE, MAX, SIZE, cluster, facts, verdict

NO_RDMA = "Standard_NC96ads_A100_v4"

SHOULD_PASS: dict[str, dict[str, Any]] = {
    "happy path: ND H100 v5 (RDMA, NCCL can use it) x4": {},
    "no RDMA, one node (boundary: max_instances 1)": {SIZE: NO_RDMA, MAX: 1},
    "no RDMA, zero nodes": {SIZE: NO_RDMA, MAX: 0},
    "a size not in the catalog, inferred with 'r'": {SIZE: "Standard_ND200isr_X_v9"},
    "RDMA size, one node": {MAX: 1},
    "size left out (nothing to judge; azure-native requires it)": {SIZE: DELETE},
    "maxNodeCount left out": {MAX: DELETE},
}

SHOULD_FAIL: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "no 'r' in the name, two nodes (boundary)": (
        {SIZE: NO_RDMA, MAX: 2},
        (NO_RDMA, "has no RDMA/InfiniBand network", "max_instances=2", "TCP sockets"),
    ),
    "NC24r: RDMA without SR-IOV": (
        {SIZE: "Standard_NC24r"},
        ("Standard_NC24r", "has RDMA but no SR-IOV", "max_instances=4"),
    ),
    "inferred from the name, without 'r'": (
        {SIZE: "Standard_ND200is_X_v9"},
        ("Standard_ND200is_X_v9", "has no RDMA", "(inferred from the size name"),
    ),
    "a name that follows no convention": (
        {SIZE: "gpu-large"},
        ("gpu-large is not in the size catalog", "RDMA cannot be confirmed for max_instances=4"),
    ),
}


@pytest.mark.parametrize("overrides", SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(overrides: dict[str, Any]) -> None:
    assert verdict(policy, cluster(**overrides)) == []


@pytest.mark.parametrize(("overrides", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(overrides: dict[str, Any], expected: tuple[str, ...]) -> None:
    facts(verdict(policy, cluster(**overrides)), [expected])


def test_a_catalog_size_is_named_in_its_canonical_casing() -> None:
    facts(verdict(policy, cluster(**{SIZE: NO_RDMA.lower()})), [(NO_RDMA + " has no RDMA",)])
    assert "inferred" not in verdict(policy, cluster(**{SIZE: NO_RDMA}))[0]


def test_the_message_in_full() -> None:
    """What the user reads: the size, the cause, the cost, the fix."""
    assert verdict(policy, cluster(**{SIZE: NO_RDMA, MAX: 2})) == [
        "Standard_NC96ads_A100_v4 has no RDMA/InfiniBand network; with max_instances=2, NCCL falls back to "
        "TCP sockets, so gradient all-reduce crawls and extra nodes are paid for without speeding training "
        "up. Fix: use an RDMA size (an 'r' in the name, e.g. Standard_ND96isr_H100_v5), or set "
        "max_instances (scaleSettings.maxNodeCount) to 1."
    ]
    assert verdict(policy, cluster(**{SIZE: "gpu-large"})) == [
        "gpu-large is not in the size catalog and its name does not follow Azure's naming convention, so "
        "RDMA cannot be confirmed for max_instances=4. Fix: use a catalog size with 'r' (e.g. "
        "Standard_ND96isr_H100_v5), or set max_instances (scaleSettings.maxNodeCount) to 1."
    ]
