"""Fetch GPU VM prices from the Azure Retail Prices API into a price file (vmsizes/prices.py reads it).

The API (learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices, "Azure Retail Prices
overview"): `GET https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&$filter=...`,
public, no credentials. Filter values are case-sensitive from 2023-01-01-preview on ("only Virtual Machines
works"), so sizes are asked as the catalog spells them (armSkuName) and regions in lower case (armRegionName).
A response is `{"BillingCurrency", "CustomerEntityId", "CustomerEntityType", "Items": [...], "NextPageLink",
"Count"}`; a page holds up to 1,000 items and NextPageLink names the next page (null on the last).
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from vmsizes.prices import API_URL, API_VERSION, Prices, from_items

#: Sizes per request: each adds `armSkuName eq '...'` (about 45 characters) to the URL.
CHUNK = 15
#: Pages followed at most for one request (a loop guard: a filtered GPU query returns a few pages).
MAX_PAGES = 200

GetJson = Callable[[str], dict[str, Any]]


def get_json(url: str, timeout: float = 60.0) -> dict[str, Any]:
    """GET one page (urllib; the API needs no credentials)."""
    request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "azml-gpu"})
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - a fixed https URL
        return json.loads(response.read().decode("utf-8"))


def query_url(sizes: list[str], region: str | None, currency: str = "USD") -> str:
    """The first page's URL: Linux and Windows consumption meters of these sizes (Windows is dropped on read:
    the API has no productName filter for "not Windows")."""
    terms = ["serviceName eq 'Virtual Machines'", "priceType eq 'Consumption'"]
    if region:
        terms.append(f"armRegionName eq '{region}'")
    terms.append("(" + " or ".join(f"armSkuName eq '{s}'" for s in sizes) + ")")
    params = {"api-version": API_VERSION, "currencyCode": f"'{currency}'", "$filter": " and ".join(terms)}
    return f"{API_URL}?{urllib.parse.urlencode(params, quote_via=urllib.parse.quote)}"


def pages(url: str, get: GetJson = get_json) -> Iterator[dict[str, Any]]:
    """Every page from `url` on, following NextPageLink."""
    seen = 0
    next_url: str | None = url
    while next_url:
        seen += 1
        if seen > MAX_PAGES:
            raise RuntimeError(f"more than {MAX_PAGES} pages from {url}; narrow it with --region")
        page = get(next_url)
        if not isinstance(page, dict) or not isinstance(page.get("Items"), list):
            raise RuntimeError(f"{next_url}: the answer has no Items list (not a Retail Prices page)")
        yield page
        next_url = page.get("NextPageLink") or None


def fetch(
    sizes: Iterable[str],
    regions: Iterable[str] | None = None,
    currency: str = "USD",
    get: GetJson | None = None,
    now: datetime | None = None,
) -> Prices:
    """The prices of `sizes` in `regions` (None: every region the API lists), all pages, as a Prices;
    `get` fetches one page (default `get_json`)."""
    get = get or get_json
    names = list(sizes)
    where = list(regions) if regions else [None]
    items: list[dict[str, Any]] = []
    first = None
    for region in where:
        for start in range(0, len(names), CHUNK):
            url = query_url(names[start : start + CHUNK], region, currency)
            first = first or url
            for page in pages(url, get):
                items.extend(page["Items"])
    when = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    return Prices(when, currency, first or API_URL, from_items(items, names, currency))
