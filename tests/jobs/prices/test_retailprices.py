"""jobs.prices.retailprices: the query URL, NextPageLink followed to the last page, and the price file it
makes, from two recorded pages shaped as the API documents (tests/jobs/fixtures/retail-prices/README.md)."""

from __future__ import annotations

import json
import urllib.parse
from datetime import UTC, datetime

import pytest

from jobs.prices import retailprices

from ..jobs_util import FIXTURES

PAGES = FIXTURES / "retail-prices"
H100, A100, T4 = "Standard_ND96isr_H100_v5", "Standard_NC24ads_A100_v4", "Standard_NC4as_T4_v3"


class Api:
    """The two recorded pages: the first URL asked gets page 1, its NextPageLink page 2."""

    def __init__(self) -> None:
        self.page1 = json.loads((PAGES / "page-1.json").read_text())
        self.page2 = json.loads((PAGES / "page-2.json").read_text())
        self.asked: list[str] = []

    def __call__(self, url: str) -> dict:
        self.asked.append(url)
        return self.page2 if url == self.page1["NextPageLink"] else self.page1


def test_fetch_follows_next_page_link_to_the_last_page():
    api = Api()
    got = retailprices.fetch(
        [H100, A100, T4], ["eastus"], get=api, now=datetime(2026, 12, 6, 1, 30, tzinfo=UTC)
    )
    assert len(api.asked) == 2 and api.asked[1] == api.page1["NextPageLink"]
    assert got.fetched == "2026-12-06T01:30:00+00:00"
    assert got.currency == "USD"
    assert got.source == api.asked[0]
    # page 1's H100 and T4, page 2's A100 (the newer of its two pay-as-you-go items) and westus3.
    assert got.price(H100, "eastus", "dedicated") == 98.32
    assert got.price(H100, "eastus", "spot") == 29.5
    assert got.price(A100, "eastus", "low_priority") == 0.7346
    assert got.price(A100, "eastus", "dedicated") == 3.673
    assert got.price(H100, "westus3", "dedicated") == 98.32
    assert got.price(H100, "eastus", "low_priority") is None


def test_query_url_filters_linux_consumption_of_the_sizes_in_the_region():
    url = retailprices.query_url([H100, A100], "eastus")
    assert url.startswith("https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&")
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    assert query["currencyCode"] == "'USD'"
    assert query["$filter"] == (
        "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and armRegionName eq 'eastus' and "
        f"(armSkuName eq '{H100}' or armSkuName eq '{A100}')"
    )
    assert "armRegionName" not in retailprices.query_url([H100], None)


def test_sizes_are_asked_in_chunks():
    api = Api()
    api.page1["NextPageLink"] = None
    names = [f"Standard_X{i}" for i in range(retailprices.CHUNK + 1)]
    retailprices.fetch(names, ["eastus", "westus3"], get=api)
    assert len(api.asked) == 4  # 2 chunks x 2 regions


def test_a_page_without_items_is_refused():
    with pytest.raises(RuntimeError, match="no Items list"):
        list(retailprices.pages("https://x", get=lambda url: {"error": "x"}))


def test_a_page_loop_stops():
    def forever(url: str) -> dict:
        return {"Items": [], "NextPageLink": url + "x"}

    with pytest.raises(RuntimeError, match="more than 200 pages"):
        list(retailprices.pages("https://x", get=forever))


def test_the_recorded_price_file_is_what_the_recorded_pages_give():
    """tests/jobs/fixtures/retail-prices/prices.json, the price file the gate's integration tests read, is
    this module's output for the two pages (every region: the catalog's GPU sizes in one chunk list)."""
    from vmsizes import prices

    got = retailprices.fetch(prices.gpu_size_names(), None, get=Api(), now=datetime(2026, 12, 1, tzinfo=UTC))
    assert got.as_json() == json.loads((PAGES / "prices.json").read_text())
