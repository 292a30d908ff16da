"""cluster-cost-budget (stack; advisory by default, mandatory where the policy config says so): what the
clusters cost per hour at max nodes stays within the budget.

The stack's cost per hour at max nodes is the sum over its clusters of price per node-hour x max_instances
(vmsizes.prices.ClusterCost), the price from the price file (vmsizes/prices.py: `prices_file` below, else
$AZML_GPU_PRICES) for the cluster's size, region and tier (dedicated: the Linux pay-as-you-go meter;
low_priority: the Low Priority meter). The seed: the five cluster settings are "the settings that set its
cost". Over `max_per_hour`, or a cluster over its own `clusters.<name>` budget, is a violation.

A price the file does not give is never counted as zero: the stack's total then counts only the priced
clusters, a violation still when those alone are over the budget, and the companion
cluster-cost-budget-unknown (advisory) says the budget cannot be fully checked (docs/policies.md, "Companion
policies": pulumi-policy gives each policy only its own config; this policy leaves its advisories for it, and
the registry registers the companion right after it). Without `max_per_hour` and `clusters` there is no
budget and neither policy reports anything.

Config: {"enforcementLevel": "mandatory", "max_per_hour": 450, "clusters": {"h100-x4": 400},
"prices_file": "/abs/prices.json"}; amounts in the price file's currency. The gate makes a relative
`prices_file` absolute (from the folder it runs in) before the CLI gets it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._policy import STACK, CompanionFindings, Violation
from policies.clusters import Cluster, clusters_of, parse_seconds
from vmsizes import prices

NAME = "cluster-cost-budget"
DESCRIPTION = "The clusters' cost per hour at max nodes (price x max_instances) must stay within the budget."
ENFORCEMENT = EnforcementLevel.ADVISORY
KIND = STACK
CONFIG: dict[str, Any] = {
    "max_per_hour": {
        "type": "number",
        "minimum": 0,
        "description": "The stack's budget per hour, every cluster at max nodes, in the prices' currency.",
    },
    "clusters": {
        "type": "object",
        "additionalProperties": {"type": "number", "minimum": 0},
        "description": "Cluster names -> each one's own budget per hour at max nodes.",
    },
    "prices_file": {
        "type": "string",
        "description": "The price file (`python -m jobs prices --refresh`); default $AZML_GPU_PRICES.",
    },
}


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    over, unknown = findings(clusters_of(resources), config)
    _advisories.put(unknown)
    return [Violation(m) for m in over]


def budgeted(config: Mapping[str, Any]) -> bool:
    return config.get("max_per_hour") is not None or bool(config.get("clusters"))


def load_prices(config: Mapping[str, Any]) -> tuple[prices.Prices | None, str | None]:
    """(the price file, None) or (None, why there are no prices)."""
    path = prices.locate(config.get("prices_file") or None)
    if path is None:
        return None, (
            f"no price file: set {prices.ENV} or {NAME}.prices_file in the policy config to the file "
            "`python -m jobs prices --refresh --out FILE` writes"
        )
    try:
        return prices.load(path), None
    except prices.PriceFileError as exc:
        return None, str(exc)


def costs(clusters: list[Cluster], table: prices.Prices | None) -> list[prices.ClusterCost]:
    """Each cluster whose size, max_nodes, region and priority are known, at its price (None: unknown)."""
    out = []
    for c in clusters:
        if c.undecided("size", "max_nodes", "region", "priority"):
            continue
        price = table.price(c.size, c.region, c.tier) if table is not None else None
        out.append(
            prices.ClusterCost(
                c.name, c.size, c.region, c.tier, c.max_nodes or 0, parse_seconds(c.idle), price
            )
        )
    return out


def findings(clusters: list[Cluster], config: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(over-budget messages, advisories that the budget cannot be fully checked)."""
    if not budgeted(config):
        return [], []
    table, why = load_prices(config)
    currency = table.currency if table is not None else ""
    over: list[str] = []
    unknown = [
        f"cluster {c.name}: its cost {why_not}, so the budget cannot be checked for it"
        for c in clusters
        if (why_not := c.undecided("size", "max_nodes", "region", "priority"))
    ]
    rows = costs(clusters, table)
    unpriced = [r for r in rows if r.price is None]
    if table is None and rows:
        unknown.append(
            f"price unknown for every cluster ({why}), so the budget cannot be checked; "
            "nothing is counted as zero"
        )
    elif unpriced:
        unknown += [
            f"cluster {r.name}: price unknown for {r.size} ({r.tier}) in {r.region} in {table.describe()}, "
            "so the budget cannot be fully checked (the stack's total counts only the priced clusters, never "
            f"this one as zero). Fix: `python -m jobs prices --refresh --region {r.region}`"
            for r in unpriced
            if table is not None
        ]
    priced = [r for r in rows if r.price is not None]
    limit = config.get("max_per_hour")
    if limit is not None and priced:
        total = sum(r.per_hour_at_max or 0.0 for r in priced)
        if total > float(limit):
            parts = ", ".join(
                f"{r.name} {r.max_nodes} x {prices.rate(r.price)}"
                for r in sorted(priced, key=lambda r: r.name)
            )
            partial = f" (the priced clusters alone; {len(unpriced)} price unknown)" if unpriced else ""
            over.append(
                f"the clusters cost {prices.money(total, currency)} per hour at max nodes{partial} "
                f"({parts}), over the budget of {prices.money(float(limit), currency)} per hour "
                f"({prices.money(total * prices.HOURS_PER_MONTH, currency)} a month at "
                f"{prices.HOURS_PER_MONTH} hours). Fix: lower max_instances, use a smaller size or "
                f"low_priority, or raise {NAME}.max_per_hour in the policy config."
            )
    for name, cap in sorted((config.get("clusters") or {}).items()):
        row = next((r for r in priced if r.name == name), None)
        if row is not None and (row.per_hour_at_max or 0.0) > float(cap):
            over.append(
                f"cluster {name} costs {prices.money(row.per_hour_at_max, currency)} per hour at max nodes "
                f"({row.max_nodes} x {prices.rate(row.price)} for {row.size} in {row.region}), over its "
                f"budget of {prices.money(float(cap), currency)}. Fix: lower its max_instances or raise "
                f"{NAME}.clusters.{name} in the policy config."
            )
    return over, unknown


_advisories = CompanionFindings()


def take_advisories() -> list[str]:
    """The advisories `validate` left in this AnalyzeStack call (once), for cluster-cost-budget-unknown."""
    return _advisories.take()
