"""cluster-cost-budget (stack; mandatory where the config says so) and its companion
cluster-cost-budget-unknown (advisory): SHOULD PASS / SHOULD FAIL from the happy path, the prod plan
(h100-x4: 4 x ND96isr H100 v5 in eastus; a100-spot: 1 x NC24ads A100 v4 low-priority) against a price file
with the recorded pages' prices (tests/jobs/fixtures/retail-prices: illustrative 98.32 and 0.7346 per
node-hour). Expected totals are worked by hand: 4 x 98.32 = 393.28; + 0.7346 = 394.0146. The pair runs as in
one AnalyzeStack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from policies import cluster_cost_budget as policy
from policies import cluster_cost_budget_unknown as companion
from policies import registry
from policies.clusters import clusters_of
from preflight.wire import UNKNOWN
from vmsizes import prices

from .policies_helpers import COMPUTE, IDLE, MAX, PRIORITY, REGION, SIZE, cluster, facts, stack_resource

H100, A100 = "Standard_ND96isr_H100_v5", "Standard_NC24ads_A100_v4"


def compute(name: str, **overrides: Any) -> Any:
    return stack_resource(COMPUTE, name, cluster(computeName=name, **overrides))


H100_X4 = compute("h100-x4")
A100_SPOT = compute("a100-spot", **{SIZE: A100, PRIORITY: "LowPriority", MAX: 1})
PLAN = [H100_X4, A100_SPOT]
PRICES = {
    "eastus": {
        H100: {"pay_as_you_go": 98.32, "spot": 29.5},
        A100: {"pay_as_you_go": 3.673, "low_priority": 0.7346},
    }
}


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    monkeypatch.delenv(prices.ENV, raising=False)


@pytest.fixture
def price_file(tmp_path: Path) -> str:
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps(
            {"fetched": "2026-12-01T00:00:00+00:00", "currency": "USD", "source": "test", "prices": PRICES}
        )
    )
    return str(path)


def run(resources: list[Any], config: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(cluster-cost-budget's messages, cluster-cost-budget-unknown's), in one AnalyzeStack."""
    over = [v.message for v in policy.validate(resources, config)]
    unknown = [v.message for v in companion.validate(resources, config)]
    return over, unknown


SHOULD_PASS: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "happy path: the prod plan under its budget": (PLAN, {"max_per_hour": 400}),
    "exactly the budget (boundary)": ([H100_X4], {"max_per_hour": 393.28}),
    "a cluster exactly its own budget (boundary)": ([H100_X4], {"clusters": {"h100-x4": 393.28}}),
    "no budget configured: nothing to check": (PLAN, {}),
    "a budget for a cluster the stack does not have": ([H100_X4], {"clusters": {"gone": 1}}),
}

SHOULD_FAIL: dict[str, tuple[list[Any], dict[str, Any], list[tuple[str, ...]]]] = {
    "a cent over the budget (boundary)": (
        [H100_X4],
        {"max_per_hour": 393.27},
        [("393.28 USD per hour at max nodes", "h100-x4 4 x 98.32", "over the budget of 393.27 USD per hour")],
    ),
    "the prod plan, both clusters counted": (
        PLAN,
        {"max_per_hour": 394},
        [
            (
                "394.01 USD per hour",
                "a100-spot 1 x 0.7346",
                "h100-x4 4 x 98.32",
                "287,630.66 USD a month at 730",
            )
        ],
    ),
    "2 -> 8 nodes": (
        [compute("h100-x4", **{MAX: 8})],
        {"max_per_hour": 400},
        [("786.56 USD per hour", "h100-x4 8 x 98.32", "lower max_instances")],
    ),
    "a cluster over its own budget": (
        PLAN,
        {"clusters": {"h100-x4": 300}},
        [
            (
                "cluster h100-x4 costs 393.28 USD per hour",
                "4 x 98.32",
                "over its budget of 300.00 USD",
                "cluster-cost-budget.clusters.h100-x4",
            )
        ],
    ),
}


@pytest.mark.parametrize(("resources", "config"), SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(resources: list[Any], config: dict[str, Any], price_file: str) -> None:
    assert run(resources, {**config, "prices_file": price_file}) == ([], [])


@pytest.mark.parametrize(("resources", "config", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(
    resources: list[Any], config: dict[str, Any], expected: list[tuple[str, ...]], price_file: str
) -> None:
    over, unknown = run(resources, {**config, "prices_file": price_file})
    facts(over, expected)
    assert unknown == []


def test_the_file_named_by_the_environment(price_file: str, monkeypatch) -> None:
    monkeypatch.setenv(prices.ENV, price_file)
    over, _ = run([H100_X4], {"max_per_hour": 100})
    facts(over, [("393.28 USD per hour",)])


def test_no_price_file_is_never_a_pass_at_zero() -> None:
    over, unknown = run(PLAN, {"max_per_hour": 1})
    assert over == []
    facts(
        unknown,
        [
            (
                "price unknown for every cluster",
                "no price file: set AZML_GPU_PRICES",
                "the budget cannot be checked",
                "nothing is counted as zero",
            )
        ],
    )


def test_an_unreadable_price_file_says_why(tmp_path: Path) -> None:
    _, unknown = run(PLAN, {"max_per_hour": 1, "prices_file": str(tmp_path / "none.json")})
    facts(unknown, [("price unknown for every cluster", "none.json: not found")])


def test_a_cluster_without_a_price_is_unknown_and_the_rest_still_counts(price_file: str) -> None:
    westus3 = compute("h100-wus3", **{REGION: "westus3", MAX: 2})
    over, unknown = run([H100_X4, westus3], {"max_per_hour": 300, "prices_file": price_file})
    # The priced cluster alone is over the budget: a violation, saying the total is partial.
    facts(over, [("393.28 USD per hour at max nodes (the priced clusters alone; 1 price unknown)",)])
    facts(
        unknown,
        [
            (
                "cluster h100-wus3: price unknown for Standard_ND96isr_H100_v5 (dedicated) in westus3",
                "never this one as zero",
                "--region westus3",
            )
        ],
    )
    over, unknown = run([H100_X4, westus3], {"max_per_hour": 400, "prices_file": price_file})
    assert over == [] and len(unknown) == 1


def test_a_dedicated_price_is_not_used_for_low_priority(price_file: str) -> None:
    no_low = compute("h100-lp", **{PRIORITY: "LowPriority", MAX: 1})
    over, unknown = run([no_low], {"max_per_hour": 0, "prices_file": price_file})
    assert over == []  # the file has spot and pay-as-you-go for the H100, no Low Priority meter
    facts(unknown, [("price unknown for Standard_ND96isr_H100_v5 (low_priority) in eastus",)])


def test_an_unknown_node_count_is_reported_not_counted(price_file: str) -> None:
    over, unknown = run(
        [compute("h100-x4", **{MAX: UNKNOWN})], {"max_per_hour": 0, "prices_file": price_file}
    )
    assert over == []
    facts(unknown, [("cluster h100-x4: its cost", "maxNodeCount", "the budget cannot be checked for it")])


def test_the_idle_cost_per_job_and_month() -> None:
    table = prices.Prices("d", "USD", "s", PRICES)
    row = policy.costs(clusters_of([compute("h100-x4", **{IDLE: "PT30M"})]), table)[0]
    assert row.per_hour_at_max == pytest.approx(393.28)
    assert row.idle_per_job == pytest.approx(196.64)  # 4 nodes x 98.32 x 0.5 h
    assert row.month_at_max == pytest.approx(287094.4)  # 393.28 x 730


def test_registered_advisory_with_its_companion_right_after() -> None:
    names = [m.NAME for m in registry.MODULES]
    assert names.index("cluster-cost-budget") + 1 == names.index("cluster-cost-budget-unknown")
    assert policy.ENFORCEMENT.value == "advisory" and companion.ENFORCEMENT.value == "advisory"
