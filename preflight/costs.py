"""The gate's cost rows: what each cluster costs at its price, and, against deployed state, before -> after.

Per cluster (vmsizes.prices.ClusterCost, the arithmetic the cluster-cost-budget policy uses): the price per
node-hour of its size, region and tier from the price file; the cost per hour at max nodes (price x
max_instances); the idle cost per job (price x max_instances x the idle timer: every node of a job waits the
idle timer before it is released); a month at max nodes (730 hours, the Azure pricing calculator's
convention). Per stack, the total of the priced clusters; a cluster without a price is "price unknown",
listed, and never counted as zero (the total is then marked partial).

Under `--state` (or any update whose steps carry the deployed inputs), each row also has `before`, the same
figures from the state's inputs, as Infracost's diff shows a change: a cluster raised from 2 to 8 nodes reads
"196.64 -> 786.56". A cluster the change creates has no `before`; one it deletes has no `after`.

The price file: `cluster-cost-budget.prices_file` in the policy config (relative to the program's folder),
else $AZML_GPU_PRICES (vmsizes.prices.locate); none: every price unknown.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vmsizes import prices

POLICY = "cluster-cost-budget"
COMPUTE = "azure-native:machinelearningservices:Compute"
FIGURES = ("price_per_node_hour", "per_hour_at_max", "idle_per_job", "month_at_max")


def price_file(
    policy_config: Mapping[str, Any], root: Path, env: Mapping[str, str] | None = None
) -> tuple[Path | None, str]:
    """(the price file, where it was named) or (None, ""): the policy config's `prices_file` (relative to
    `root`), else $AZML_GPU_PRICES."""
    given = (
        (policy_config.get(POLICY) or {}).get("prices_file")
        if isinstance(policy_config.get(POLICY), Mapping)
        else None
    )
    if isinstance(given, str) and given.strip():
        path = Path(given.strip())
        return (path if path.is_absolute() else root / path), f"{POLICY}.prices_file"
    found = prices.locate(None, os.environ if env is None else env)
    return (found, prices.ENV) if found is not None else (None, "")


def load(path: Path | None, named_by: str) -> tuple[prices.Prices | None, list[str]]:
    """The price file, or the input problem (the gate's exit 2) naming where it was named."""
    if path is None:
        return None, []
    try:
        return prices.load(path), []
    except prices.PriceFileError as exc:
        return None, [f"{named_by}: {exc}"]


def with_prices(config: dict[str, Any], table: prices.Prices | None) -> dict[str, Any]:
    """The policy config the CLI gets, with the price file the gate read as cluster-cost-budget's
    absolute `prices_file` (the policy then reads the same file, wherever the CLI starts the pack)."""
    if table is None or table.path is None:
        return config
    entry = config.get(POLICY, {})
    entry = {"enforcementLevel": entry} if isinstance(entry, str) else dict(entry)
    entry["prices_file"] = str(Path(table.path).resolve())
    return {**config, POLICY: entry}


def _cost(
    step_inputs: Mapping[str, Any], step: Any, table: prices.Prices | None
) -> prices.ClusterCost | None:
    from policies.cluster_cost_budget import costs
    from policies.clusters import aml_cluster

    cluster = aml_cluster(step.type, step_inputs, step.name, step.urn)
    if cluster is None:
        return None
    found = costs([cluster], table)
    return found[0] if found else None


def _figures(cost: prices.ClusterCost | None) -> dict[str, Any] | None:
    if cost is None:
        return None
    return {
        "size": cost.size,
        "region": cost.region,
        "tier": cost.tier,
        "max_nodes": cost.max_nodes,
        "idle_seconds": cost.idle_seconds,
        **{k: cost.as_json()[k] for k in FIGURES},
    }


def cost_table(steps: list[Any], table: prices.Prices | None, with_state: bool) -> dict[str, Any]:
    """The `costs` block of the gate's result (docs/preflight.md): rows, totals, the price file."""
    from preflight.events import DELETE_OPS

    rows = []
    for step in sorted((s for s in steps if s.type == COMPUTE), key=lambda s: s.urn):
        after = None if step.op in DELETE_OPS else _figures(_cost(step.inputs, step, table))
        before = _figures(_cost(step.old_inputs, step, table)) if with_state and step.old else None
        if after is None and before is None:
            continue
        name = step.name
        row: dict[str, Any] = {"cluster": name, "after": after}
        if with_state:
            row["before"] = before
        rows.append(row)
    out: dict[str, Any] = {
        "prices": _describe(table),
        "hours_per_month": prices.HOURS_PER_MONTH,
        "currency": table.currency if table is not None else None,
        "clusters": rows,
        "total": _total([r["after"] for r in rows]),
    }
    if with_state:
        out["total_before"] = _total([r.get("before") for r in rows])
    return out


def _total(figures: list[dict[str, Any] | None]) -> dict[str, Any]:
    """The priced clusters' sums, and the clusters whose price is unknown (never counted as zero)."""
    present = [f for f in figures if f is not None]
    unknown = [f for f in present if f["price_per_node_hour"] is None]
    sums = {
        k: (sum(f[k] for f in present if f[k] is not None) if len(unknown) < len(present) else None)
        for k in ("per_hour_at_max", "idle_per_job", "month_at_max")
    }
    return {**sums, "clusters": len(present), "price_unknown": len(unknown), "partial": bool(unknown)}


def _describe(table: prices.Prices | None) -> dict[str, Any] | None:
    if table is None:
        return None
    age = table.age_days(datetime.now(UTC))
    return {
        "file": table.path,
        "fetched": table.fetched,
        "age_days": None if age is None else round(age, 1),
        "currency": table.currency,
        "source": table.source,
    }


def _money(figures: Mapping[str, Any] | None, key: str) -> str:
    """One figure as the report shows it: `393.28`, "price unknown", or "-" where the cluster is absent."""
    return "-" if figures is None else prices.money(figures.get(key))


def _sum(total: Mapping[str, Any] | None, key: str) -> str:
    """A total: `394.01`, `0.73 + price unknown` when some cluster has no price (never counted as zero)."""
    if total is None:
        return "-"
    value = total.get(key)
    if value is None:
        return "price unknown"
    return prices.money(value) + (" + price unknown" if total.get("partial") else "")


def _rate(figures: Mapping[str, Any] | None) -> str:
    return "-" if figures is None else prices.rate(figures.get("price_per_node_hour"))


def _nodes(figures: Mapping[str, Any] | None) -> str:
    return "-" if figures is None else f"{figures['max_nodes']} x {figures['size']}"


def _pair(before: str, after: str, stated: bool) -> str:
    """`after`, or `before -> after` against a state where they differ (Infracost's diff)."""
    return f"{before} -> {after}" if stated and before != after else after


def table_rows(costs: Mapping[str, Any]) -> list[list[str]]:
    """The report's rows (HEADERS), the stack's total last."""
    out = []
    for row in costs.get("clusters", []):
        after, before, stated = row.get("after"), row.get("before"), "before" in row
        label = row["cluster"]
        if stated and after is None:
            label += " (deleted)"
        elif stated and before is None:
            label += " (new)"
        cells = [label, _pair(_nodes(before), _nodes(after), stated)]
        cells.append(_pair(_rate(before), _rate(after), stated))
        cells += [_pair(_money(before, k), _money(after, k), stated) for k in FIGURES[1:]]
        out.append(cells)
    if out:
        total, before_total = costs.get("total", {}), costs.get("total_before")
        stated = before_total is not None
        cells = ["total", "", ""]
        cells += [_pair(_sum(before_total, k), _sum(total, k), stated) for k in FIGURES[1:]]
        out.append(cells)
    return out


HEADERS = [
    "cluster",
    "nodes x size",
    "price/node-h",
    "per hour at max nodes",
    "idle per job",
    "month at max nodes",
]


def title(costs: Mapping[str, Any]) -> str:
    p = costs.get("prices")
    if p is None:
        return (
            "Cost at max nodes: price unknown (no price file: set AZML_GPU_PRICES or "
            "cluster-cost-budget.prices_file; `python -m jobs prices --refresh` writes one)"
        )
    age = f", {p['age_days']:.0f} days old" if p.get("age_days") is not None else ""
    return (
        f"Cost at max nodes, in {p['currency']} (Azure Retail Prices of {p['fetched']}{age}, {p['file']}; "
        f"month = {costs.get('hours_per_month', prices.HOURS_PER_MONTH)} hours)"
    )
