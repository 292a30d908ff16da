"""The gate's cost rows and the cluster-cost-budget policy under the real engine: every shipped stack priced
from the recorded price file (tests/jobs/fixtures/retail-prices/prices.json, illustrative prices) and "price
unknown" without one; prod's h100-x4 raised from 2 to 8 nodes against its deployed state, over a budget that
prod's policy config makes mandatory: exit 1 with the policy's message, the cost before -> after.

Prices per node-hour in the file: ND96isr H100 v5 98.32 (eastus, westus3); NC24ads A100 v4 3.673 (eastus,
westus3) and 0.7346 Low Priority (eastus); NC4as T4 v3 0.526 (eastus). Expected figures are worked by hand."""

from __future__ import annotations

import json
from typing import Any

import pytest

from preflight import costs
from tests.integration.gate.runner import ROOT, Gates, Outcome, Spec
from tests.integration.gate.specs import SHIPPED, STACKS, policy_text, stack_text

PRICE_FILE = ROOT / "tests" / "jobs" / "fixtures" / "retail-prices" / "prices.json"
COMPUTE = "azure-native:machinelearningservices:Compute"
H100 = "Standard_ND96isr_H100_v5"


def _priced(config: dict[str, Any]) -> None:
    config.setdefault("cluster-cost-budget", {})["prices_file"] = str(PRICE_FILE)


PRICED = {stack: Spec(f"{stack}-priced", stack, policy_text=policy_text(stack, _priced)) for stack in STACKS}

#: Each shipped stack's cost per hour at max nodes from the file, by hand.
PER_HOUR = {
    "dev": {"t4-dev": 0.526},  # 1 x 0.526
    "prod": {"h100-x4": 393.28, "a100-spot": 0.7346},  # 4 x 98.32; 1 x 0.7346 (low-priority)
    "prod-westus3": {"h100-wus3": 196.64},  # 2 x 98.32
    "capacity": {"a100-wus3": 3.673},  # 1 x 3.673
}


def _eight_nodes(config: dict[str, Any]) -> None:
    config["azml-gpu:clusters"][0]["max_instances"] = 8


def _budget_and_room(config: dict[str, Any]) -> None:
    """prod's policy config with the recorded prices, a budget of 395 per hour (init-config's for prod: 394.01
    rounded up) and quota room for 8 nodes, so that the budget is the one mandatory finding."""
    _priced(config)
    config["cluster-cost-budget"]["max_per_hour"] = 395
    config["quota-reservation"]["quotas"]["eastus"] |= {"standardNDSH100v5Family": 768, "total": 800}


@pytest.fixture(scope="module")
def runs(gates: Gates) -> dict[str, Outcome]:
    done = {o.name: o for o in gates.run(*SHIPPED.values(), *PRICED.values())}
    # prod deployed as declared, with h100-x4 at 2 nodes in its state; the program now asks for 8.
    state = json.loads(gates.one(SHIPPED["prod"]).state_file.read_text())
    for r in state["deployment"]["resources"]:
        if r["type"] == COMPUTE and r["urn"].endswith("::h100-x4"):
            for side in ("inputs", "outputs"):
                r[side]["properties"]["properties"]["scaleSettings"]["maxNodeCount"] = 2
    raised = Spec(
        "prod-2-to-8-over-budget",
        "prod",
        stack_text=stack_text("prod", _eight_nodes),
        policy_text=policy_text("prod", _budget_and_room),
        state_text=json.dumps(state),
    )
    done[raised.name] = gates.one(raised)
    return done


@pytest.mark.parametrize("stack", STACKS)
def test_each_shipped_stack_shows_its_cost_rows_from_the_price_file(
    runs: dict[str, Outcome], stack: str
) -> None:
    outcome = runs[f"{stack}-priced"]
    assert outcome.errors == [] and outcome.exit_code == 0
    table = outcome.document["summary"]["costs"]
    assert (
        table["prices"]["file"] == str(PRICE_FILE)
        and table["prices"]["fetched"] == "2026-12-01T00:00:00+00:00"
    )
    assert table["currency"] == "USD" and table["hours_per_month"] == 730
    got = {r["cluster"]: r["after"]["per_hour_at_max"] for r in table["clusters"]}
    assert got == pytest.approx(PER_HOUR[stack])
    assert table["total"]["per_hour_at_max"] == pytest.approx(sum(PER_HOUR[stack].values()))
    assert table["total"]["partial"] is False
    # No budget in the shipped configs: the policy and its companion have nothing to say.
    assert not [v for v in outcome.document["violations"] if v["policy"].startswith("cluster-cost-budget")]


def test_prod_s_cost_rows_in_full(runs: dict[str, Outcome]) -> None:
    rows = {r["cluster"]: r["after"] for r in runs["prod-priced"].document["summary"]["costs"]["clusters"]}
    assert rows["h100-x4"] == {
        "size": H100,
        "region": "eastus",
        "tier": "dedicated",
        "max_nodes": 4,
        "idle_seconds": 300,
        "price_per_node_hour": 98.32,
        "per_hour_at_max": pytest.approx(393.28),
        "idle_per_job": pytest.approx(32.7733, abs=1e-4),  # 4 x 98.32 x 300 s / 3600
        "month_at_max": pytest.approx(287094.4),  # 393.28 x 730
    }
    assert rows["a100-spot"]["tier"] == "low_priority" and rows["a100-spot"]["price_per_node_hour"] == 0.7346


@pytest.mark.parametrize("stack", STACKS)
def test_without_a_price_file_every_price_is_unknown(runs: dict[str, Outcome], stack: str) -> None:
    """The shipped runs name no price file (and the tests run without AZML_GPU_PRICES): price unknown,
    never zero."""
    table = runs[stack].document["summary"]["costs"]
    assert table["prices"] is None
    assert table["clusters"] and all(r["after"]["price_per_node_hour"] is None for r in table["clusters"])
    assert table["total"]["per_hour_at_max"] is None and table["total"]["partial"] is True
    rows = costs.table_rows(table)
    assert all(cell == "price unknown" for row in rows[:-1] for cell in row[2:])


def test_two_to_eight_nodes_over_the_budget_fails_mandatory_in_production(runs: dict[str, Outcome]) -> None:
    outcome = runs["prod-2-to-8-over-budget"]
    assert outcome.errors == [] and outcome.exit_code == 1
    found = [
        (v["policy"], v["enforcement"], v["message"])
        for v in outcome.document["violations"]
        if v["enforcement"] == "mandatory"
    ]
    # 8 x 98.32 + 0.7346 = 787.2946 per hour, over 395 (787.2946 x 730 = 574,725.06 a month)
    assert found == [
        (
            "cluster-cost-budget",
            "mandatory",
            "the clusters cost 787.29 USD per hour at max nodes (a100-spot 1 x 0.7346, h100-x4 8 x 98.32), "
            "over the budget of 395.00 USD per hour (574,725.06 USD a month at 730 hours). Fix: lower "
            "max_instances, use a smaller size or low_priority, or raise cluster-cost-budget.max_per_hour "
            "in the policy config.",
        )
    ]
    table = outcome.document["summary"]["costs"]
    h100 = next(r for r in table["clusters"] if r["cluster"] == "h100-x4")
    assert (h100["before"]["max_nodes"], h100["after"]["max_nodes"]) == (2, 8)
    assert h100["before"]["per_hour_at_max"] == pytest.approx(196.64)
    assert h100["after"]["per_hour_at_max"] == pytest.approx(786.56)
    assert table["total_before"]["per_hour_at_max"] == pytest.approx(197.3746)
    assert table["total"]["per_hour_at_max"] == pytest.approx(787.2946)
    row = next(r for r in costs.table_rows(table) if r[0] == "h100-x4")
    assert row[1:] == [
        f"2 x {H100} -> 8 x {H100}",
        "98.32",
        "196.64 -> 786.56",
        "16.39 -> 65.55",
        "143,547.20 -> 574,188.80",
    ]
