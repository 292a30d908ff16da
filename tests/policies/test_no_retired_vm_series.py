"""no-retired-vm-series (mandatory): SHOULD PASS / SHOULD FAIL from the happy path (h100-x4 in eastus).
Catalog dates: NCv3 retired 2025-09-30 (US Gov Virginia extended to 2026-12-31), NVv3 2026-09-30, NC (v1)
2023-09-06 (vmsizes/data/sizes.yaml)."""

from __future__ import annotations

from typing import Any

import pytest

from policies import no_retired_vm_series as policy

from .policies_helpers import DELETE, MAX, REGION, SIZE, cluster, facts, verdict

NCV3 = {SIZE: "Standard_NC6s_v3", MAX: 1}
NVV3 = {SIZE: "Standard_NV12s_v3", MAX: 1}

SHOULD_PASS: dict[str, tuple[dict[str, Any], str]] = {
    "happy path: H100 v5 has no retirement": ({}, "2026-11-30"),
    "NVv3 the day before its retirement (boundary)": (NVV3, "2026-09-29"),
    "NCv3 in usgovvirginia, within its regional extension": (
        {**NCV3, REGION: "usgovvirginia"},
        "2026-11-30",
    ),
    "NCv3 in US Gov Virginia spelt as a display name": ({**NCV3, REGION: "US Gov Virginia"}, "2026-12-30"),
    "a size not in the catalog and unparseable (multi-node-requires-rdma's case)": (
        {SIZE: "gpu-large", MAX: 1},
        "2030-01-01",
    ),
    "size left out": ({SIZE: DELETE}, "2030-01-01"),
}

SHOULD_FAIL: dict[str, tuple[dict[str, Any], str, tuple[str, ...]]] = {
    "NVv3 on its retirement day (boundary)": (
        NVV3,
        "2026-09-30",
        ("Standard_NV12s_v3 (NVv3) was retired on 2026-09-30 in eastus", "evaluated on 2026-09-30"),
    ),
    "NCv3 after 2025-09-30": (
        NCV3,
        "2026-11-30",
        ("Standard_NC6s_v3 (NCv3) was retired on 2025-09-30 in eastus", "evaluated on 2026-11-30"),
    ),
    "NCv3 in usgovvirginia after its extension": (
        {**NCV3, REGION: "usgovvirginia"},
        "2027-01-01",
        ("was retired on 2026-12-31 in usgovvirginia",),
    ),
    "computeLocation left out: the cluster's location applies": (
        {**NCV3, REGION: DELETE},
        "2026-11-30",
        ("was retired on 2025-09-30 in eastus",),
    ),
}


@pytest.mark.parametrize(("overrides", "on"), SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(overrides: dict[str, Any], on: str) -> None:
    assert verdict(policy, cluster(**overrides), {"evaluation_date": on}) == []


@pytest.mark.parametrize(("overrides", "on", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(overrides: dict[str, Any], on: str, expected: tuple[str, ...]) -> None:
    facts(verdict(policy, cluster(**overrides), {"evaluation_date": on}), [expected])


def test_the_message_in_full() -> None:
    assert verdict(policy, cluster(**NCV3), {"evaluation_date": "2026-11-30"}) == [
        "Standard_NC6s_v3 (NCv3) was retired on 2025-09-30 in eastus (evaluated on 2026-11-30): Azure cannot "
        "provision it and deallocates remaining VMs, so the cluster never gets a node. Fix: recreate the "
        "cluster on a current size (e.g. Standard_NC40ads_H100_v5 or Standard_ND96isr_H100_v5)."
    ]
