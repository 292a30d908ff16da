"""preflight/costs.py: the gate's cost rows from the recorded engine runs (tests/fixtures/engine) and a price
file with the recorded Retail Prices pages' illustrative prices (98.32 per ND96isr H100 v5 node-hour in
eastus, 0.7346 per NC24ads A100 v4 Low Priority node-hour). Expected figures are worked by hand."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest

from preflight import costs, gate, report
from vmsizes import prices

from .recorded import run

H100, A100 = "Standard_ND96isr_H100_v5", "Standard_NC24ads_A100_v4"
PRICES = prices.Prices(
    "2026-12-01T00:00:00+00:00",
    "USD",
    "https://prices.azure.com/api/retail/prices",
    {"eastus": {H100: {"pay_as_you_go": 98.32}, A100: {"pay_as_you_go": 3.673, "low_priority": 0.7346}}},
    "/tmp/prices.json",
)


def by_name(table: dict) -> dict:
    return {r["cluster"]: r for r in table["clusters"]}


def test_prod_rows_and_total() -> None:
    table = costs.cost_table(run("prod", "update").steps, PRICES, with_state=False)
    rows = by_name(table)
    h100 = rows["h100-x4"]["after"]
    assert h100["price_per_node_hour"] == 98.32
    assert h100["per_hour_at_max"] == pytest.approx(393.28)  # 4 x 98.32
    assert h100["idle_per_job"] == pytest.approx(32.7733, abs=1e-4)  # 4 x 98.32 x 300 s / 3600
    assert h100["month_at_max"] == pytest.approx(287094.4)  # 393.28 x 730
    assert rows["a100-spot"]["after"]["price_per_node_hour"] == 0.7346  # low-priority meter
    assert table["total"]["per_hour_at_max"] == pytest.approx(394.0146)
    assert table["total"]["partial"] is False
    assert "before" not in rows["h100-x4"] and "total_before" not in table
    assert table["currency"] == "USD" and table["hours_per_month"] == 730


def test_without_a_price_file_every_price_is_unknown_never_zero() -> None:
    table = costs.cost_table(run("prod", "update").steps, None, with_state=False)
    assert all(r["after"]["per_hour_at_max"] is None for r in table["clusters"])
    assert table["total"] == {
        "per_hour_at_max": None,
        "idle_per_job": None,
        "month_at_max": None,
        "clusters": 2,
        "price_unknown": 2,
        "partial": True,
    }
    rows = costs.table_rows(table)
    assert rows[0][2:] == ["price unknown"] * 4
    assert costs.title(table).startswith(
        "Cost at max nodes: price unknown (no price file: set AZML_GPU_PRICES"
    )


def test_a_resize_to_an_unpriced_size_shows_before_and_unknown_after() -> None:
    table = costs.cost_table(run("prod-size-change", "update").steps, PRICES, with_state=True)
    row = by_name(table)["h100-x4"]
    assert row["before"]["per_hour_at_max"] == pytest.approx(393.28)
    assert row["after"]["size"] == "Standard_ND96isr_H200_v5" and row["after"]["per_hour_at_max"] is None
    cells = next(r for r in costs.table_rows(table) if r[0] == "h100-x4")
    assert cells[1] == f"4 x {H100} -> 4 x Standard_ND96isr_H200_v5"
    assert cells[3] == "393.28 -> price unknown"
    total = costs.table_rows(table)[-1]
    # The total after counts a100-spot alone and says the H200's price is unknown (never counted as 0).
    assert total[3] == "394.01 -> 0.73 + price unknown"


def test_two_to_eight_nodes_under_state_shows_before_and_after() -> None:
    steps = []
    for s in run("prod", "update").steps:
        if s.type == costs.COMPUTE and s.name == "h100-x4":
            old, new = copy.deepcopy(s.old), copy.deepcopy(s.new)
            old["inputs"]["properties"]["properties"]["scaleSettings"]["maxNodeCount"] = 2
            new["inputs"]["properties"]["properties"]["scaleSettings"]["maxNodeCount"] = 8
            s = dataclasses.replace(s, op="update", old=old, new=new)
        steps.append(s)
    table = costs.cost_table(steps, PRICES, with_state=True)
    cells = next(r for r in costs.table_rows(table) if r[0] == "h100-x4")
    # 2 x 98.32 = 196.64 -> 8 x 98.32 = 786.56; idle 300 s: 16.39 -> 65.55;
    # month x 730: 143,547.20 -> 574,188.80
    assert cells == [
        "h100-x4",
        f"2 x {H100} -> 8 x {H100}",
        "98.32",
        "196.64 -> 786.56",
        "16.39 -> 65.55",
        "143,547.20 -> 574,188.80",
    ]
    total = costs.table_rows(table)[-1]
    assert total[3] == "197.37 -> 787.29"  # + a100-spot's 0.7346, unchanged


def test_a_deleted_cluster_shows_what_it_cost() -> None:
    table = costs.cost_table(run("prod-cluster-removed", "update").steps, PRICES, with_state=True)
    deleted = [r for r in costs.table_rows(table) if r[0].endswith("(deleted)")]
    assert deleted and deleted[0][3].endswith(" -> -")


def test_the_price_file_comes_from_the_policy_config_then_the_environment(tmp_path: Path) -> None:
    config = {"cluster-cost-budget": {"prices_file": "p.json"}}
    assert costs.price_file(config, tmp_path, {prices.ENV: "/e.json"}) == (
        tmp_path / "p.json",
        "cluster-cost-budget.prices_file",
    )
    assert costs.price_file({}, tmp_path, {prices.ENV: "/e.json"}) == (Path("/e.json"), "AZML_GPU_PRICES")
    assert costs.price_file({}, tmp_path, {}) == (None, "")
    table, problems = costs.load(tmp_path / "none.json", "AZML_GPU_PRICES")
    assert table is None and problems[0].startswith("AZML_GPU_PRICES: price file ")
    assert "not found; write it with `python -m jobs prices --refresh" in problems[0]


def test_the_policy_gets_the_file_the_gate_read(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    prices.dump(PRICES, path)
    sent = costs.with_prices({"cluster-cost-budget": "mandatory"}, prices.load(path))
    assert sent == {
        "cluster-cost-budget": {"enforcementLevel": "mandatory", "prices_file": str(path.resolve())}
    }
    assert costs.with_prices({"a": "advisory"}, None) == {"a": "advisory"}


def test_the_report_and_markdown_carry_the_cost_table() -> None:
    result = gate.GateResult("prod", evaluation_date="2026-12-05")
    first = gate.Evaluation(gate.FIRST_DEPLOY, "none (a new stack)", run("prod", "first-deploy"))
    result.evaluations = [first]
    result.costs = costs.cost_table(run("prod", "update").steps, PRICES, with_state=False)
    text = report.markdown(result)
    assert (
        "### Cost at max nodes\n\nCost at max nodes, in USD (Azure Retail Prices of 2026-12-01T00:00:00+00:00"
        in text
    )
    assert "month = 730 hours" in text
    assert max(len(line) for line in text.splitlines() if not line.startswith("|")) <= 110
    assert f"| h100-x4 | 4 x {H100} | 98.32 | 393.28 | 32.77 | 287,094.40 |" in text
    assert "| total |  |  | 394.01 | 32.83 | 287,630.66 |" in text  # idle: 32.7733 + 0.7346 x 300 s / 3600
    assert json.loads(json.dumps(result.summary()))["costs"]["total"]["per_hour_at_max"] == pytest.approx(
        394.0146
    )
