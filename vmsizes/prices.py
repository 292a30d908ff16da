"""VM prices per node-hour: the price cache file, and the reading of Azure Retail Prices API items into it.

Source: the Azure Retail Prices API ("Azure Retail Prices overview",
learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices): `GET
https://prices.azure.com/api/retail/prices`, public, no credentials. Each item carries `armSkuName`,
`armRegionName`, `retailPrice`, `unitOfMeasure` ("1 Hour"), `currencyCode`, `type` ("Consumption",
"Reservation", "DevTestConsumption"), `productName` (Windows meters say "Windows" there) and `meterName` /
`skuName`, which end in "Spot" or "Low Priority" for those meters. Pages follow `NextPageLink`
(jobs/prices/retailprices.py fetches; this module only reads and writes, with the standard library).

The cache file (JSON, written by `python -m jobs prices --refresh`):
    {"fetched": "2026-12-06T01:30:00+00:00", "currency": "USD", "source": "<the first URL asked>",
     "prices": {"eastus": {"Standard_ND96isr_H100_v5": {"pay_as_you_go": 98.32, "spot": 29.5}}}}
Tiers: `pay_as_you_go` (Linux, Consumption), `spot`, `low_priority` (only where the API lists a Low Priority
meter). A price the file does not give is None: "price unknown", never zero.

Where the gate and `jobs` find the file: an explicit path (a flag, or `cluster-cost-budget.prices_file` in
the policy config), else the environment variable AZML_GPU_PRICES; none: every price is unknown.

Month: 730 hours (24 x 365 / 12), the month the Azure pricing calculator
(azure.microsoft.com/pricing/calculator) prices a virtual machine running all month by.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ENV = "AZML_GPU_PRICES"
API_URL = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"
DOCS_URL = "https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices"
HOURS_PER_MONTH = 730
MONTH_SOURCE = "730 hours per month, the Azure pricing calculator's convention"
PAY_AS_YOU_GO, SPOT, LOW_PRIORITY = "pay_as_you_go", "spot", "low_priority"
TIERS = (PAY_AS_YOU_GO, SPOT, LOW_PRIORITY)
#: A cluster's or a plan's tier (vmsizes.quota: "dedicated" | "low_priority"; plan also "spot") -> its meter.
TIER_METER = {
    "dedicated": PAY_AS_YOU_GO,
    "low_priority": LOW_PRIORITY,
    "low-priority": LOW_PRIORITY,
    "spot": SPOT,
}


class PriceFileError(ValueError):
    """The price file cannot be read: the message names the file and the fix."""


@dataclass(frozen=True)
class Prices:
    """A price file's contents. `price` is None where the file gives none (price unknown)."""

    fetched: str
    currency: str
    source: str
    prices: Mapping[str, Mapping[str, Mapping[str, float]]] = field(default_factory=dict)
    path: str | None = None

    def price(self, size: str | None, region: str | None, tier: str) -> float | None:
        """One node-hour of `size` in `region` at `tier` (a TIERS name or a cluster tier), or None."""
        if not isinstance(size, str) or not isinstance(region, str):
            return None
        meter = TIER_METER.get(tier, tier)
        by_size = self.prices.get(_region(region), {})
        for name, tiers in by_size.items():
            if name.lower() == size.lower():
                value = tiers.get(meter)
                return float(value) if value is not None else None
        return None

    def age_days(self, now: datetime | None = None) -> float | None:
        try:
            when = datetime.fromisoformat(self.fetched)
        except ValueError:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return ((now or datetime.now(UTC)) - when).total_seconds() / 86400

    def describe(self, now: datetime | None = None) -> str:
        """ "prices in USD from <source>, fetched <date> (<n> days ago), <file>"."""
        age = self.age_days(now)
        ago = f" ({age:.0f} days ago)" if age is not None else ""
        return f"prices in {self.currency} from the Azure Retail Prices API, fetched {self.fetched}{ago}" + (
            f", {self.path}" if self.path else ""
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "fetched": self.fetched,
            "currency": self.currency,
            "source": self.source,
            "prices": self.prices,
        }


def _region(name: str) -> str:
    return name.replace(" ", "").lower()


def locate(
    explicit: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path | None:
    """The price file to read: `explicit` when given, else $AZML_GPU_PRICES, else None (prices unknown)."""
    if explicit:
        return Path(explicit)
    value = (os.environ if env is None else env).get(ENV, "").strip()
    return Path(value) if value else None


def load(path: str | os.PathLike[str]) -> Prices:
    """Read a price file; PriceFileError naming the file, what is wrong and the fix."""
    p = Path(path)
    fix = f"write it with `python -m jobs prices --refresh --out {p}`"
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PriceFileError(f"price file {p}: not found; {fix}, or unset {ENV}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PriceFileError(f"price file {p}: cannot be read ({exc}); {fix}") from None
    except json.JSONDecodeError as exc:
        raise PriceFileError(f"price file {p}: not JSON ({exc.msg}, line {exc.lineno}); {fix}") from None
    problems = _problems(raw)
    if problems:
        raise PriceFileError(f"price file {p}: " + "; ".join(problems) + f"; {fix}")
    return Prices(raw["fetched"], raw["currency"], raw["source"], raw["prices"], str(p))


def _problems(raw: Any) -> list[str]:
    if not isinstance(raw, dict):
        return ["not a JSON object"]
    problems = [
        f"'{key}' is missing or not text"
        for key in ("fetched", "currency", "source")
        if not isinstance(raw.get(key), str)
    ]
    prices = raw.get("prices")
    if not isinstance(prices, dict):
        return [*problems, "'prices' is missing or not an object of region -> size -> tier -> price"]
    for region, sizes in prices.items():
        if not isinstance(sizes, dict):
            problems.append(f"prices.{region}: not an object of size -> tier -> price")
            continue
        for size, tiers in sizes.items():
            if not isinstance(tiers, dict):
                problems.append(f"prices.{region}.{size}: not an object of tier -> price")
                continue
            for tier, value in tiers.items():
                if tier not in TIERS:
                    problems.append(
                        f"prices.{region}.{size}.{tier}: not a tier; use one of {', '.join(TIERS)}"
                    )
                elif (
                    isinstance(value, bool)
                    or not isinstance(value, (int, float))
                    or not math.isfinite(value)
                    or value < 0
                ):
                    problems.append(
                        f"prices.{region}.{size}.{tier}: {value!r} is not a price (a number, 0 or more)"
                    )
    return problems


def dump(prices: Prices, path: str | os.PathLike[str]) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(prices.as_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8")


def meter_tier(item: Mapping[str, Any]) -> str | None:
    """The tier of one Retail Prices item, None for an item that is no Linux hourly consumption meter (a
    reservation or dev/test rate, a Windows meter, another unit)."""
    if item.get("serviceName") != "Virtual Machines" or item.get("type") != "Consumption":
        return None
    if item.get("unitOfMeasure") != "1 Hour" or "windows" in str(item.get("productName", "")).lower():
        return None
    names = f"{item.get('meterName', '')} {item.get('skuName', '')}".lower()
    if "low priority" in names:
        return LOW_PRIORITY
    if "spot" in names:
        return SPOT
    return PAY_AS_YOU_GO


def from_items(
    items: Iterable[Mapping[str, Any]], sizes: Iterable[str], currency: str = "USD"
) -> dict[str, dict[str, dict[str, float]]]:
    """region -> size -> tier -> retailPrice, for the `sizes` (any case; each keeps the catalog's
    spelling) and the items in `currency`. Where the API lists one meter twice, the newest
    effectiveStartDate wins."""
    wanted = {s.lower(): s for s in sizes}
    newest: dict[tuple[str, str, str], tuple[str, float]] = {}
    for item in items:
        size = wanted.get(str(item.get("armSkuName", "")).lower())
        tier = meter_tier(item)
        price = item.get("retailPrice")
        if size is None or tier is None or item.get("currencyCode", currency) != currency:
            continue
        if isinstance(price, bool) or not isinstance(price, (int, float)):
            continue
        key = (_region(str(item.get("armRegionName", ""))), size, tier)
        start = str(item.get("effectiveStartDate", ""))
        if key[0] and (key not in newest or start > newest[key][0]):
            newest[key] = (start, float(price))
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (region, size, tier), (_start, price) in sorted(newest.items()):
        out.setdefault(region, {}).setdefault(size, {})[tier] = price
    return out


def gpu_size_names() -> list[str]:
    """The catalog's sizes with at least one GPU (or a GPU partition): what `jobs prices` asks the API for."""
    from vmsizes.catalog import all_sizes

    return [s.name for s in all_sizes() if s.gpus or s.gpu_fraction]


@dataclass(frozen=True)
class ClusterCost:
    """What one cluster costs at its price (None: price unknown, and so is every amount below).

    per_hour_at_max = price x max_nodes; month_at_max = that x HOURS_PER_MONTH; idle_per_job = price x
    max_nodes x idle timer: after a job on every node, each node waits the idle timer before it is released
    (the seed: the idle timer "costs you up to half an hour of every node per job").
    """

    name: str
    size: str | None
    region: str | None
    tier: str
    max_nodes: int
    idle_seconds: int | None
    price: float | None

    @property
    def per_hour_at_max(self) -> float | None:
        return None if self.price is None else self.price * self.max_nodes

    @property
    def month_at_max(self) -> float | None:
        per_hour = self.per_hour_at_max
        return None if per_hour is None else per_hour * HOURS_PER_MONTH

    @property
    def idle_per_job(self) -> float | None:
        if self.price is None or self.idle_seconds is None:
            return None
        return self.price * self.max_nodes * self.idle_seconds / 3600.0

    def as_json(self) -> dict[str, Any]:
        return {
            "cluster": self.name,
            "size": self.size,
            "region": self.region,
            "tier": self.tier,
            "max_nodes": self.max_nodes,
            "idle_seconds": self.idle_seconds,
            "price_per_node_hour": self.price,
            "per_hour_at_max": self.per_hour_at_max,
            "idle_per_job": self.idle_per_job,
            "month_at_max": self.month_at_max,
        }


def rate(value: float | None) -> str:
    """A price per node-hour to four decimals, trailing zeros dropped (`98.32`, `0.7346`); "price unknown"."""
    if value is None:
        return "price unknown"
    return f"{value:,.4f}".rstrip("0").rstrip(".")


def money(value: float | None, currency: str = "") -> str:
    """`393.28 USD`, or "price unknown" for None (never 0)."""
    if value is None:
        return "price unknown"
    return f"{value:,.2f}{' ' + currency if currency else ''}"
