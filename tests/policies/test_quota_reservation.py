"""quota-reservation (mandatory, stack) and quota-reservation-unknown (advisory, stack): SHOULD PASS /
SHOULD FAIL from the happy path, the prod plan (h100-x4: 4 x 96 vCPUs of ND H100 v5 in eastus; h100-wus3: 2 x
96 in westus3; a100-spot: 1 x 24 low-priority in eastus) against prod's quotas. The pair runs as in one
AnalyzeStack: quota-reservation, then its companion."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from policies import quota_reservation as policy
from policies import quota_reservation_unknown as companion
from policies import registry
from preflight.wire import UNKNOWN

from .policies_helpers import COMPUTE, MAX, PRIORITY, REGION, SIZE, cluster, facts, stack_resource


def compute(name: str, **overrides: Any) -> Any:
    return stack_resource(COMPUTE, name, cluster(computeName=name, **overrides))


H100_X4 = compute("h100-x4")
H100_WUS3 = compute("h100-wus3", **{REGION: "westus3", MAX: 2})
A100_SPOT = compute("a100-spot", **{SIZE: "Standard_NC24ads_A100_v4", PRIORITY: "LowPriority", MAX: 1})
PLAN = [H100_X4, H100_WUS3, A100_SPOT]
FAMILY = "standardNDSH100v5Family"
QUOTAS = {"eastus": {FAMILY: 384, "total": 500, "lowPriority": 100}, "westus3": {FAMILY: 192, "total": 200}}


def quotas(**changes: Any) -> dict[str, Any]:
    """Prod's quotas with `region__key=value` changed (None removes the key)."""
    out = copy.deepcopy(QUOTAS)
    for dotted, value in changes.items():
        region, key = dotted.split("__")
        if value is None:
            out[region].pop(key)
        else:
            out[region][key] = value
    return {"quotas": out}


def run(resources: list[Any], config: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(quota-reservation's messages, quota-reservation-unknown's), in one AnalyzeStack."""
    mandatory = [v.message for v in policy.validate(resources, config)]
    advisory = [v.message for v in companion.validate(resources, config)]
    return mandatory, advisory


SHOULD_PASS: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "happy path: the prod plan fits": (PLAN, {"quotas": QUOTAS}),
    "family quota exactly the reservation (boundary)": ([H100_X4], quotas(eastus__total=384)),
    "low-priority quota exactly the reservation (boundary)": ([A100_SPOT], quotas(eastus__lowPriority=24)),
    "region key as a display name": ([H100_X4], {"quotas": {"East US": QUOTAS["eastus"]}}),
    "family key in another case, with spaces": (
        [H100_X4],
        {"quotas": {"eastus": {"Standard NDSH100v5 Family": 384, "TOTAL": 500}}},
    ),
    "no clusters": ([], {"quotas": QUOTAS}),
}

SHOULD_FAIL: dict[str, tuple[list[Any], dict[str, Any], list[tuple[str, ...]]]] = {
    "family quota one below (boundary)": (
        [H100_X4],
        quotas(eastus__standardNDSH100v5Family=383),
        [
            (
                "eastus standardNDSH100v5Family",
                "h100-x4 (4 x 96 vCPUs",
                "reserves 384 vCPUs, quota is 383",
                "1 more",
            )
        ],
    ),
    "regional total one below (boundary)": (
        [H100_X4],
        quotas(eastus__total=383),
        [("eastus total regional dedicated vCPUs", "reserves 384 vCPUs, quota is 383", "request 1 more")],
    ),
    "low-priority one below (boundary)": (
        [A100_SPOT],
        quotas(eastus__lowPriority=23),
        [("eastus low-priority vCPUs (all families)", "a100-spot (1 x 24 vCPUs", "quota is 23")],
    ),
    "a second eastus H100 cluster": (
        [H100_X4, compute("h100-x2", **{MAX: 2})],
        {"quotas": QUOTAS},
        [
            ("h100-x4 (4 x 96", "h100-x2 (2 x 96", "reserve 576 vCPUs, quota is 384", "192 more"),
            ("total regional dedicated", "reserve 576 vCPUs, quota is 500", "76 more"),
        ],
    ),
    "westus3 counted in its own pool": (
        [H100_WUS3],
        quotas(westus3__standardNDSH100v5Family=191),
        [("westus3 standardNDSH100v5Family", "reserves 192 vCPUs, quota is 191")],
    ),
    "a misspelt family key": (
        [H100_X4],
        {"quotas": {"eastus": {"standardNDSH100v5Famly": 384, "total": 500}}},
        [("policy config quota-reservation.quotas.eastus.standardNDSH100v5Famly", "did you mean " + FAMILY)],
    ),
    "a key like no family": (
        [H100_X4],
        quotas(eastus__gpus=8),
        [("quotas.eastus.gpus: not a quota family", "use a quota_family of vmsizes/data/sizes.yaml")],
    ),
    "a region key that is no region": (
        [H100_X4],
        {"quotas": {**QUOTAS, "eastsu": {"total": 1}}},
        [("quotas.eastsu: 'eastsu' is not a known Azure region", "did you mean eastus")],
    ),
    "a node count unknown in preview": (
        [H100_X4, compute("h100-x2", **{MAX: UNKNOWN})],
        {"quotas": QUOTAS},
        [("cluster h100-x2: its quota reservation cannot decide during preview", "maxNodeCount")],
    ),
}


@pytest.mark.parametrize(("resources", "config"), SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(resources: list[Any], config: dict[str, Any]) -> None:
    assert run(resources, config) == ([], [])


@pytest.mark.parametrize(("resources", "config", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(resources: list[Any], config: dict[str, Any], expected: list[tuple[str, ...]]) -> None:
    mandatory, _ = run(resources, config)
    facts(mandatory, expected)


ADVISE = "nothing checks that jobs can get nodes"

COMPANION_FAIL: dict[str, tuple[list[Any], dict[str, Any], list[tuple[str, ...]]]] = {
    "no quotas configured (config left out)": (
        [H100_X4, A100_SPOT],
        {},
        [
            (
                "eastus standardNDSH100v5Family",
                "reserves 384 vCPUs",
                ADVISE,
                "quotas.eastus.standardNDSH100v5Family",
            ),
            ("eastus total regional dedicated vCPUs", "quotas.eastus.total"),
            ("eastus low-priority vCPUs (all families)", "reserves 24 vCPUs", "quotas.eastus.lowPriority"),
        ],
    ),
    "the regional total left out": (
        [H100_X4],
        quotas(eastus__total=None),
        [("eastus total regional dedicated vCPUs", "quotas.eastus.total")],
    ),
    "a misspelt family key leaves the pool unchecked": (
        [H100_X4],
        {"quotas": {"eastus": {"standardNDSH100v5Famly": 384, "total": 500}}},
        [("eastus standardNDSH100v5Family", ADVISE)],
    ),
    "a family the catalog does not know": (
        [compute("x", **{SIZE: "Standard_ND200isr_X_v9", MAX: 2})],
        {"quotas": QUOTAS},
        [
            (
                "eastus unknown family of Standard_ND200isr_X_v9",
                "x (2 x 200 vCPUs",
                "reserves 400 vCPUs",
                "az vm",
            )
        ],
    ),
    "a size that is not a VM size": (
        [compute("typo", **{SIZE: "gpu-large"})],
        {"quotas": QUOTAS},
        [("cluster typo: cannot compute its quota reservation", "gpu-large")],
    ),
    "a quota that is not a number": (
        [H100_X4],
        quotas(eastus__total="500"),
        [("eastus total regional dedicated vCPUs", ADVISE)],
    ),
}


@pytest.mark.parametrize(("resources", "config", "expected"), COMPANION_FAIL.values(), ids=COMPANION_FAIL)
def test_companion_should_fail(
    resources: list[Any], config: dict[str, Any], expected: list[tuple[str, ...]]
) -> None:
    mandatory, advisory = run(resources, config)
    assert not any("quota is" in m for m in mandatory)
    facts(advisory, expected)


def test_a_bad_size_leaves_the_other_clusters_checked() -> None:
    mandatory, advisory = run([H100_X4, compute("typo", **{SIZE: "gpu-large"})], quotas(eastus__total=383))
    facts(mandatory, [("quota is 383",)])
    facts(advisory, [("cluster typo",)])


def test_the_companion_reports_each_finding_once() -> None:
    policy.validate([H100_X4], {})
    assert len(companion.validate([H100_X4], {})) == 2
    assert companion.validate([H100_X4], {}) == []


def test_config_problems_is_the_gate_check_too() -> None:
    """The gate (preflight/policyconfig.py) asks the registry for each policy's own config check."""
    assert registry.config_problems(policy.NAME, {"quotas": QUOTAS}) == []
    assert registry.config_problems(policy.NAME, {}) == []
    assert registry.config_problems(policy.NAME, {"quotas": "not an object"}) == []
    assert registry.config_problems(policy.NAME, {"quotas": {"eastus": 5}}) == []
    assert (
        registry.config_problems(policy.NAME, {"quotas": {"West Us 3": {"standardndsh100v5family": 1}}}) == []
    )
    assert registry.config_problems("cluster-replacement", {"acknowledged": []}) == []  # the gate's own check
    assert registry.config_problems(policy.NAME, {"quotas": {"mars": {"total": 1, "gpus": 1}}}) == [
        "quotas.mars: 'mars' is not a known Azure region, so it checks no cluster's quota; "
        "use a region name such as eastus (az account list-locations)",
        "quotas.mars.gpus: not a quota family the size catalog knows, nor total or lowPriority, so it checks "
        "no cluster's quota; use a quota_family of vmsizes/data/sizes.yaml, total or lowPriority",
    ]


def test_configured_quota_ignores_booleans() -> None:
    mandatory, advisory = run([H100_X4], quotas(eastus__total=True))
    assert mandatory == []  # True is no quota of 1 vCPU: the pool is left unchecked, and said so
    facts(advisory, [("eastus total regional dedicated vCPUs", ADVISE, "quotas.eastus.total")])


def test_each_pool_names_only_its_own_clusters() -> None:
    """The prod plan with eastus' family quota one short: the message names h100-x4, not the westus3 cluster
    of the same family nor the low-priority one in eastus."""
    mandatory, _ = run(PLAN, quotas(eastus__standardNDSH100v5Family=383))
    (message,) = mandatory
    assert "h100-x4 (4 x 96 vCPUs of Standard_ND96isr_H100_v5) reserves 384" in message
    assert "h100-wus3" not in message and "a100-spot" not in message
    mandatory, _ = run(PLAN, quotas(eastus__lowPriority=23))
    assert "a100-spot (1 x 24 vCPUs of Standard_NC24ads_A100_v4) reserves 24" in mandatory[0]
    assert "h100-x4" not in mandatory[0]


def test_two_unknown_families_are_two_pools() -> None:
    x = compute("x", **{SIZE: "Standard_ND200isr_X_v9", MAX: 2})
    y = compute("y", **{SIZE: "Standard_ND100isr_Y_v9", MAX: 1})
    _, advisory = run([x, y], {"quotas": QUOTAS})
    facts(
        advisory,
        [
            ("unknown family of Standard_ND100isr_Y_v9: y (1 x 100",),
            ("unknown family of Standard_ND200isr_X_v9: x (2 x 200",),
        ],
    )
    assert not any("x (2" in m and "y (1" in m for m in advisory)


def test_an_undecided_cluster_leaves_the_others_counted() -> None:
    mandatory, advisory = run([H100_X4, compute("h100-x2", **{MAX: UNKNOWN})], quotas(eastus__total=383))
    facts(
        mandatory,
        [("cluster h100-x2: its quota reservation cannot decide",), ("h100-x4 (4 x 96", "quota is 383")],
    )
    assert advisory == []


def test_clusters_of_one_name_in_two_workspaces_are_told_apart_by_size() -> None:
    """Cluster names are unique per workspace only: two workspaces' clusters "a" (deployed: their `name`
    output is known) in two unknown families are two pools, each naming its own size."""
    x = stack_resource(
        COMPUTE, "a-ws1", cluster(computeName="a", **{SIZE: "Standard_ND200isr_X_v9", MAX: 2}), deployed=True
    )
    y = stack_resource(
        COMPUTE, "a-ws2", cluster(computeName="a", **{SIZE: "Standard_ND100isr_Y_v9", MAX: 1}), deployed=True
    )
    _, advisory = run([x, y], {"quotas": QUOTAS})
    facts(
        advisory,
        [
            ("Standard_ND100isr_Y_v9: a (1 x 100 vCPUs of Standard_ND100isr_Y_v9) reserves 100",),
            ("Standard_ND200isr_X_v9: a (2 x 200 vCPUs of Standard_ND200isr_X_v9) reserves 400",),
        ],
    )
    x = stack_resource(COMPUTE, "a-ws1", cluster(computeName="a"), deployed=True)
    y = stack_resource(
        COMPUTE,
        "a-ws2",
        cluster(computeName="a", **{SIZE: "Standard_NC24ads_A100_v4", MAX: 1}),
        deployed=True,
    )
    mandatory, _ = run([x, y], quotas(eastus__standardNDSH100v5Family=383))
    (family,) = mandatory
    assert "a (4 x 96 vCPUs of Standard_ND96isr_H100_v5) reserves 384" in family and "A100" not in family


def test_quota_schema_accepts_zero_and_refuses_negative() -> None:
    schema = {"type": "object", "properties": policy.CONFIG}
    jsonschema.validate({"quotas": {"eastus": {"total": 0}}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"quotas": {"eastus": {"total": -1}}}, schema)


def test_the_messages_in_full() -> None:
    mandatory, _ = run([H100_X4], quotas(eastus__total=383))
    assert mandatory == [
        "eastus total regional dedicated vCPUs: h100-x4 (4 x 96 vCPUs of Standard_ND96isr_H100_v5) reserves "
        "384 vCPUs, quota is 383: clusters hold quota even at zero nodes, so jobs queue for hours once the "
        "pool is exhausted. Fix: lower max_instances (scaleSettings.maxNodeCount), delete unused clusters, "
        "or request 1 more vCPUs of "
        "quota."
    ]
    _, advisory = run([A100_SPOT], {})
    assert advisory == [
        "eastus low-priority vCPUs (all families): a100-spot (1 x 24 vCPUs of Standard_NC24ads_A100_v4) "
        "reserves 24 vCPUs, but the policy config gives no quota for this pool, so nothing checks that jobs "
        "can get nodes. Fix: add quotas.eastus.lowPriority to the quota-reservation config: `python -m jobs "
        "quota --stack STACK --write policies/config/STACK.json` writes the Azure ML quotas."
    ]
