"""vmsizes.prices: the price file (read, refused with the file and the fix), and the reading of Azure Retail
Prices items (tests/jobs/fixtures/retail-prices, shaped as "Azure Retail Prices overview" documents them)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vmsizes import prices

PAGES = Path(__file__).resolve().parents[1] / "jobs" / "fixtures" / "retail-prices"
H100, A100, T4 = "Standard_ND96isr_H100_v5", "Standard_NC24ads_A100_v4", "Standard_NC4as_T4_v3"


def items() -> list[dict]:
    return [
        i for name in ("page-1.json", "page-2.json") for i in json.loads((PAGES / name).read_text())["Items"]
    ]


def test_items_become_region_size_tier_prices():
    got = prices.from_items(items(), [H100, A100, T4])
    # The Windows meter of the H100 (102.00) is dropped; the Linux one kept.
    assert got["eastus"][H100] == {"pay_as_you_go": 98.32, "spot": 29.5}
    # Of two A100 pay-as-you-go items, the newer effectiveStartDate (3.673 from 2025-06-01, not 3.400).
    assert got["eastus"][A100] == {"pay_as_you_go": 3.673, "low_priority": 0.7346, "spot": 0.9183}
    assert got["eastus"][T4] == {"pay_as_you_go": 0.526, "low_priority": 0.105}
    assert got["westus3"] == {A100: {"pay_as_you_go": 3.673}, H100: {"pay_as_you_go": 98.32}}


def test_sizes_not_asked_for_and_other_currencies_are_left_out():
    assert prices.from_items(items(), [T4]) == {
        "eastus": {T4: {"pay_as_you_go": 0.526, "low_priority": 0.105}}
    }
    assert prices.from_items(items(), [T4], currency="EUR") == {}


@pytest.mark.parametrize(
    ("change", "tier"),
    [
        ({}, "pay_as_you_go"),
        ({"meterName": "X Spot", "skuName": "X Spot"}, "spot"),
        ({"meterName": "X Low Priority", "skuName": "X Low Priority"}, "low_priority"),
        ({"productName": "Virtual Machines X Series Windows"}, None),
        ({"type": "Reservation"}, None),
        ({"type": "DevTestConsumption"}, None),
        ({"unitOfMeasure": "1/Month"}, None),
        ({"serviceName": "Storage"}, None),
    ],
)
def test_meter_tier(change, tier):
    base = {
        "serviceName": "Virtual Machines",
        "type": "Consumption",
        "unitOfMeasure": "1 Hour",
        "productName": "Virtual Machines X Series",
        "meterName": "X",
        "skuName": "X",
    }
    assert prices.meter_tier({**base, **change}) == tier


def write(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(doc))
    return path


DOC = {
    "fetched": "2026-12-01T00:00:00+00:00",
    "currency": "USD",
    "source": "https://prices.azure.com/api/retail/prices",
    "prices": {"eastus": {H100: {"pay_as_you_go": 98.32}}},
}


def test_load_and_look_up(tmp_path):
    p = prices.load(write(tmp_path, DOC))
    assert p.price(H100, "eastus", "dedicated") == 98.32
    assert p.price(H100.lower(), "East US", "pay_as_you_go") == 98.32
    # Unknown is None, never 0: another tier, region or size.
    assert p.price(H100, "eastus", "low_priority") is None
    assert p.price(H100, "westus3", "dedicated") is None
    assert p.price(T4, "eastus", "dedicated") is None
    assert p.price(None, "eastus", "dedicated") is None
    assert p.age_days(datetime(2026, 12, 6, tzinfo=UTC)) == 5
    assert "fetched 2026-12-01T00:00:00+00:00 (5 days ago)" in p.describe(datetime(2026, 12, 6, tzinfo=UTC))


def test_dump_then_load_round_trips(tmp_path):
    p = prices.Prices(DOC["fetched"], "USD", DOC["source"], DOC["prices"])
    prices.dump(p, tmp_path / "sub" / "p.json")
    assert prices.load(tmp_path / "sub" / "p.json").as_json() == DOC


def test_bad_files_name_the_file_every_problem_and_the_fix(tmp_path):
    with pytest.raises(prices.PriceFileError, match=r"price file .*missing\.json: not found; write it with"):
        prices.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(prices.PriceFileError, match="not JSON"):
        prices.load(tmp_path / "bad.json")
    bad = {**DOC, "currency": 1, "prices": {"eastus": {H100: {"pay_as_you_go": -1, "hourly": 2}}}}
    with pytest.raises(prices.PriceFileError) as err:
        prices.load(write(tmp_path, bad))
    text = str(err.value)
    assert "'currency' is missing or not text" in text
    assert f"prices.eastus.{H100}.pay_as_you_go: -1 is not a price" in text
    assert f"prices.eastus.{H100}.hourly: not a tier" in text
    assert "python -m jobs prices --refresh --out" in text


def test_locate_prefers_the_explicit_path_then_the_environment():
    assert prices.locate("a.json", {prices.ENV: "b.json"}) == Path("a.json")
    assert prices.locate(None, {prices.ENV: "b.json"}) == Path("b.json")
    assert prices.locate(None, {prices.ENV: " "}) is None
    assert prices.locate(None, {}) is None


def test_gpu_sizes_are_the_catalog_sizes_with_gpus():
    names = prices.gpu_size_names()
    assert H100 in names and A100 in names and T4 in names
    assert "Standard_HB120rs_v3" not in names  # an HPC size without GPUs


def test_hours_per_month_is_the_pricing_calculators():
    assert prices.HOURS_PER_MONTH == 730


@pytest.mark.parametrize(
    ("value", "rate", "money"),
    [
        (98.32, "98.32", "98.32"),
        (0.7346, "0.7346", "0.73"),
        (1234.5, "1,234.5", "1,234.50"),
        (3.0, "3", "3.00"),
    ],
)
def test_prices_and_amounts_as_printed(value, rate, money):
    assert prices.rate(value) == rate
    assert prices.money(value) == money
    assert prices.rate(None) == prices.money(None) == "price unknown"
    assert prices.money(value, "USD") == f"{money} USD"


def test_a_price_of_zero_is_a_price_and_a_negative_one_is_not(tmp_path):
    free = {**DOC, "prices": {"eastus": {H100: {"pay_as_you_go": 0}}}}
    assert prices.load(write(tmp_path, free)).price(H100, "eastus", "dedicated") == 0.0
    minus = {**DOC, "prices": {"eastus": {H100: {"pay_as_you_go": -0.01}}}}
    with pytest.raises(prices.PriceFileError, match=r"-0\.01 is not a price"):
        prices.load(write(tmp_path, minus))


def test_age_of_a_file_without_a_zone_is_utc_and_an_unreadable_date_is_unknown():
    naive = prices.Prices("2026-12-01T12:00:00", "USD", "x", {})
    assert naive.age_days(datetime(2026, 12, 2, 0, 0, tzinfo=UTC)) == 0.5
    odd = prices.Prices("last week", "USD", "x", {})
    assert odd.age_days(datetime(2026, 12, 2, tzinfo=UTC)) is None
    assert odd.describe(datetime(2026, 12, 2, tzinfo=UTC)) == (
        "prices in USD from the Azure Retail Prices API, fetched last week"
    )
    assert prices.Prices("2026-12-01T00:00:00+00:00", "USD", "x", {}).age_days() > 0  # now, not None


def test_the_same_meter_listed_twice_keeps_the_newest_and_the_first_on_a_tie():
    base = {
        "serviceName": "Virtual Machines",
        "type": "Consumption",
        "unitOfMeasure": "1 Hour",
        "productName": "NDSH100v5 Series",
        "meterName": "ND96isr H100 v5",
        "armSkuName": H100,
        "armRegionName": "eastus",
        "currencyCode": "USD",
    }
    old = {**base, "retailPrice": 90.0, "effectiveStartDate": "2025-01-01T00:00:00Z"}
    new = {**base, "retailPrice": 98.32, "effectiveStartDate": "2026-01-01T00:00:00Z"}
    tie = {**base, "retailPrice": 99.0, "effectiveStartDate": "2026-01-01T00:00:00Z"}
    assert prices.from_items([new, old], [H100])["eastus"][H100]["pay_as_you_go"] == 98.32
    assert prices.from_items([old, new], [H100])["eastus"][H100]["pay_as_you_go"] == 98.32
    assert prices.from_items([new, tie], [H100])["eastus"][H100]["pay_as_you_go"] == 98.32


def test_a_clusters_cost_is_unknown_when_its_price_or_idle_timer_is():
    known = prices.ClusterCost("a", H100, "eastus", "dedicated", 2, 1800, 98.32)
    assert known.per_hour_at_max == pytest.approx(196.64)
    assert known.month_at_max == pytest.approx(196.64 * 730)
    assert known.idle_per_job == pytest.approx(98.32)  # 2 nodes x half an hour
    unpriced = prices.ClusterCost("b", H100, "westus3", "dedicated", 2, 1800, None)
    assert (unpriced.per_hour_at_max, unpriced.month_at_max, unpriced.idle_per_job) == (None, None, None)
    untimed = prices.ClusterCost("c", H100, "eastus", "dedicated", 2, None, 98.32)
    assert untimed.idle_per_job is None
    assert untimed.per_hour_at_max == pytest.approx(196.64)


def test_locate_reads_the_process_environment_by_default(monkeypatch, tmp_path):
    monkeypatch.setenv("AZML_GPU_PRICES", str(tmp_path / "p.json"))
    assert prices.locate() == tmp_path / "p.json"
    monkeypatch.setenv("AZML_GPU_PRICES", "  ")
    assert prices.locate() is None


def test_an_item_without_a_region_is_left_out():
    item = {
        "serviceName": "Virtual Machines",
        "type": "Consumption",
        "unitOfMeasure": "1 Hour",
        "meterName": "ND96isr H100 v5",
        "armSkuName": H100,
        "currencyCode": "USD",
        "retailPrice": 98.32,
    }
    assert prices.from_items([item], [H100]) == {}
    assert prices.from_items([{**item, "armRegionName": "East US"}], [H100]) == {
        "eastus": {H100: {"pay_as_you_go": 98.32}}
    }


@pytest.mark.parametrize(
    ("doc", "problems"),
    [
        ([1, 2], ["not a JSON object"]),
        (
            {"fetched": "x", "currency": "USD", "source": "s", "prices": []},
            ["'prices' is missing or not an object of region -> size -> tier -> price"],
        ),
        (
            # Every problem at once: a bad region and a bad size do not hide the ones after them.
            {
                "fetched": "x",
                "currency": "USD",
                "source": "s",
                "prices": {
                    "eastus": 5,
                    "westus3": {H100: 7, A100: {"pay_as_you_go": "free"}},
                    "swedencentral": {H100: {"spot": -2}},
                },
            },
            [
                "prices.eastus: not an object of size -> tier -> price",
                f"prices.westus3.{H100}: not an object of tier -> price",
                f"prices.westus3.{A100}.pay_as_you_go: 'free' is not a price (a number, 0 or more)",
                f"prices.swedencentral.{H100}.spot: -2 is not a price (a number, 0 or more)",
            ],
        ),
    ],
)
def test_each_shape_problem_is_named_and_none_hides_another(tmp_path, doc, problems):
    with pytest.raises(prices.PriceFileError) as err:
        prices.load(write(tmp_path, doc))
    path = tmp_path / "prices.json"
    fix = f"write it with `python -m jobs prices --refresh --out {path}`"
    assert str(err.value) == f"price file {path}: " + "; ".join(problems) + f"; {fix}"


def test_items_of_another_size_tier_or_currency_do_not_stop_the_reading():
    base = {
        "serviceName": "Virtual Machines",
        "type": "Consumption",
        "unitOfMeasure": "1 Hour",
        "meterName": "ND96isr H100 v5",
        "armSkuName": H100,
        "armRegionName": "eastus",
        "currencyCode": "USD",
        "retailPrice": 98.32,
    }
    skipped = [
        {**base, "armSkuName": "Standard_D2s_v5", "retailPrice": 1.0},
        {**base, "type": "Reservation", "retailPrice": 1.0},
        {**base, "currencyCode": "EUR", "retailPrice": 1.0},
        {**base, "retailPrice": True},
        {**base, "retailPrice": "98"},
    ]
    for item in skipped:
        assert prices.from_items([item, base], [H100]) == {"eastus": {H100: {"pay_as_you_go": 98.32}}}
