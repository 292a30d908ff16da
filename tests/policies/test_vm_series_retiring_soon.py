"""vm-series-retiring-soon (advisory): SHOULD PASS / SHOULD FAIL from the happy path, with its own
`warn_days` (default 180) and `evaluation_date`. NVv3 retires 2026-09-30; NCv3 in US Gov Virginia on
2026-12-31 (vmsizes/data/sizes.yaml)."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from policies import vm_series_retiring_soon as policy

from .policies_helpers import DELETE, MAX, REGION, SIZE, cluster, facts, verdict

NVV3 = {SIZE: "Standard_NV12s_v3", MAX: 1}

SHOULD_PASS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "happy path: H100 v5 has no retirement": ({}, {"evaluation_date": "2026-09-01"}),
    "121 days ahead, warn_days 120 (boundary)": (NVV3, {"evaluation_date": "2026-06-01", "warn_days": 120}),
    "181 days ahead, warn_days left out (default 180)": (NVV3, {"evaluation_date": "2026-04-02"}),
    "already retired: no-retired-vm-series' case": (NVV3, {"evaluation_date": "2026-09-30"}),
    "unparseable size": ({SIZE: "gpu-large"}, {"evaluation_date": "2026-09-01"}),
    "size left out": ({SIZE: DELETE}, {"evaluation_date": "2026-09-01"}),
}

SHOULD_FAIL: dict[str, tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]] = {
    "121 days ahead, warn_days 121 (boundary)": (
        NVV3,
        {"evaluation_date": "2026-06-01", "warn_days": 121},
        ("Standard_NV12s_v3 (NVv3) retires on 2026-09-30 in eastus", "121 days after 2026-06-01"),
    ),
    "180 days ahead, warn_days left out (default 180)": (
        NVV3,
        {"evaluation_date": "2026-04-03"},
        ("retires on 2026-09-30", "180 days after 2026-04-03"),
    ),
    "the day before retirement": (NVV3, {"evaluation_date": "2026-09-29"}, ("1 days after 2026-09-29",)),
    "NCv3 in usgovvirginia: the regional extension's date": (
        {SIZE: "Standard_NC6s_v3", MAX: 1, REGION: "usgovvirginia"},
        {"evaluation_date": "2026-11-30"},
        ("Standard_NC6s_v3 (NCv3) retires on 2026-12-31 in usgovvirginia", "31 days after 2026-11-30"),
    ),
}


@pytest.mark.parametrize(("overrides", "config"), SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(overrides: dict[str, Any], config: dict[str, Any]) -> None:
    assert verdict(policy, cluster(**overrides), config) == []


@pytest.mark.parametrize(("overrides", "config", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(overrides: dict[str, Any], config: dict[str, Any], expected: tuple[str, ...]) -> None:
    facts(verdict(policy, cluster(**overrides), config), [expected])


def test_warn_days_schema_accepts_zero_and_refuses_negative() -> None:
    schema = {"type": "object", "properties": policy.CONFIG}
    jsonschema.validate({"warn_days": 0, "evaluation_date": "2026-01-31"}, schema)
    assert policy.CONFIG["warn_days"]["default"] == policy.DEFAULT_WARN_DAYS == 180
    for bad in ({"warn_days": -1}, {"evaluation_date": "31/01/2026"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_the_message_in_full() -> None:
    assert verdict(policy, cluster(**NVV3), {"evaluation_date": "2026-06-01", "warn_days": 121}) == [
        "Standard_NV12s_v3 (NVv3) retires on 2026-09-30 in eastus, 121 days after 2026-06-01: from then the "
        "cluster cannot get nodes and must be recreated (size cannot be changed in place). Fix: plan the "
        "move to a current size now."
    ]
