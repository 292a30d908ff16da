"""Audit the stack's clusters: the quota each holds while idle, its last job, and which to delete.

"A scaled-to-zero cluster still holds quota ... Deleting the compute cluster ... releases the quota"
(azure-notes.md 3.5, how-to-create-attach-compute-cluster.md), so each cluster holds max_instances x
vCPUs per node (`vmsizes.quota.reserve`). The seed's last step: "Review clusters monthly and delete the
ones nobody uses, to release their quota" -> a cluster with no job in the last 30 days is flagged.

"No job in 30 days" needs the cluster to be 30 days old: its age is the live compute's `createdOn`
(ComputeResource.properties.createdOn, read-only date-time in the Azure ML REST spec 2025-12-01; azure-ai-ml
`Compute.created_on`). A younger cluster is never flagged (it says when it can be judged), and a cluster the
workspace does not have is not flagged either (nothing to delete; `jobs check-deploy` says what is missing).

With a price file (vmsizes/prices.py) each cluster is priced as the gate prices it
(vmsizes.prices.ClusterCost): the price per node-hour, the idle timer's cost per job (price x max_instances
x idle timer) and, with min_instances above 0, what the warm nodes cost a month (730 hours) with no job.
No price: None ("price unknown"), never zero.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from azure.ai.ml import MLClient

    from stackconfig.outputs import StackOutputs

UNUSED_DAYS = 30


@dataclass
class ClusterAudit:
    cluster: str
    size: str
    region: str
    tier: str
    max_instances: int
    min_instances: int
    quota_family: str | None
    vcpus_held: int
    last_job: str | None
    last_job_at: str | None
    idle_days: float | None
    unused: bool
    reason: str | None
    #: When Azure created the cluster (ISO 8601), None when the workspace does not have it.
    created_at: str | None = None
    #: Why the cluster is not judged yet (too new, or not in the workspace), else None.
    note: str | None = None
    #: Its price per node-hour from the price file, and what its idle timer costs per job (price x
    #: max_instances x idle timer) and its warm nodes (min_instances) per month; None: price unknown.
    price_per_node_hour: float | None = None
    idle_cost_per_job: float | None = None
    warm_nodes_per_month: float | None = None
    currency: str | None = None


def compute_name(compute: Any) -> str | None:
    """A job's compute as a lower-case cluster name: jobs carry the name or the ARM id `.../computes/<name>`.

    ARM resource names are case-insensitive (a job may say `H100-X4` for the cluster `h100-x4`), so
    names are compared in lower case on both sides.
    """
    if not compute:
        return None
    text = str(compute)
    name = (
        text.rstrip("/").rsplit("/", 1)[-1] if "/computes/" in text.lower() else text.removeprefix("azureml:")
    )
    return name.lower() or None


def last_jobs(jobs: Any) -> dict[str, tuple[str, dt.datetime]]:
    """lower-case cluster name -> (newest job name, its creation time), from `ml.jobs.list()`."""
    newest: dict[str, tuple[str, dt.datetime]] = {}
    for job in jobs:
        name = compute_name(getattr(job, "compute", None))
        created = getattr(getattr(job, "creation_context", None), "created_at", None)
        if name is None or created is None:
            continue
        if isinstance(created, str):
            created = dt.datetime.fromisoformat(created.replace("Z", "+00:00"))
        if created.tzinfo is None:
            created = created.replace(tzinfo=dt.UTC)
        if name not in newest or created > newest[name][1]:
            newest[name] = (job.name, created)
    return newest


def _utc(value: dt.datetime | str) -> dt.datetime:
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def created_times(computes: Any) -> dict[str, dt.datetime | None]:
    """lower-case compute name -> when Azure created it (`createdOn`; None when Azure left it out), from
    `ml.compute.list()`."""
    return {
        str(c.name).lower(): _utc(c.created_on) if getattr(c, "created_on", None) else None for c in computes
    }


def audit(
    outputs: StackOutputs,
    jobs: Any,
    now: dt.datetime,
    days: int = UNUSED_DAYS,
    created: dict[str, dt.datetime | None] | None = None,
    prices: Any = None,
) -> list[ClusterAudit]:
    """Each stack cluster's idle quota and last job. `created`: `created_times` of the live computes (None:
    not read, every cluster judged by its jobs alone); `prices`: a vmsizes.prices.Prices (None: no file)."""
    from vmsizes.prices import HOURS_PER_MONTH, ClusterCost
    from vmsizes.quota import ClusterDemand, reserve

    newest = last_jobs(jobs)
    result = []
    for c in sorted(outputs.clusters.values(), key=lambda c: c.name):
        r = reserve([ClusterDemand(c.name, c.size, c.region, c.tier, c.max_instances)]).reservations[0]
        last = newest.get(c.name.lower())
        idle = (now - last[1]).total_seconds() / 86400 if last else None
        live = created is None or c.name.lower() in created
        born = created.get(c.name.lower()) if created is not None else None
        age = (now - born).total_seconds() / 86400 if born is not None else None
        note = None
        if not live:
            unused, reason = False, None
            note = "not in the workspace: nothing to delete (`jobs check-deploy` says what is missing)"
        elif age is not None and age < days and (idle is None or idle > days):
            unused, reason = False, None
            minutes = age * 1440
            when = (  # whole units, rounded down: 29.9 days is "29 days", under 30
                f"{int(minutes)} minutes"
                if minutes < 120
                else f"{int(minutes // 60)} hours"
                if minutes < 48 * 60
                else f"{int(age)} days"
            )
            note = (
                f"created {when} ago, under the {days} days it takes to call a cluster unused; "
                f"judged from {(born + dt.timedelta(days=days)).date().isoformat()}"
            )
        elif last is None:
            unused, reason = True, "no job found on this cluster"
        elif idle is not None and idle > days:
            unused, reason = True, f"last job {idle:.0f} days ago (over {days})"
        else:
            unused, reason = False, None
        price = prices.price(c.size, c.region, c.tier) if prices is not None else None
        cost = ClusterCost(c.name, c.size, c.region, c.tier, c.max_instances, c.idle_seconds, price)
        warm = None if price is None else price * c.min_instances * HOURS_PER_MONTH
        if unused:
            reason += f"; delete it to release {r.vcpus} vCPUs of {r.family or 'its family'} in {c.region}"
            if warm:
                reason += f" and stop its warm nodes' {warm:,.2f} {prices.currency} a month"
        result.append(
            ClusterAudit(
                c.name,
                c.size,
                c.region,
                c.tier,
                c.max_instances,
                c.min_instances,
                r.family,
                r.vcpus,
                last[0] if last else None,
                last[1].isoformat() if last else None,
                idle,
                unused,
                reason,
                born.isoformat() if born is not None else None,
                note,
                price,
                cost.idle_per_job,
                warm,
                prices.currency if prices is not None else None,
            )
        )
    return result


def fetch_jobs(ml: MLClient) -> list[Any]:
    return list(ml.jobs.list())


def fetch_computes(ml: MLClient) -> list[Any]:
    return list(ml.compute.list())


def to_json(rows: list[ClusterAudit]) -> list[dict]:
    return [asdict(r) for r in rows]


def render_text(rows: list[ClusterAudit]) -> str:
    lines = []
    for r in rows:
        last = f"last job {r.last_job} at {r.last_job_at}" if r.last_job else "no jobs"
        lines.append(
            f"{r.cluster} ({r.max_instances} x {r.size}, {r.region}, {r.tier}): holds {r.vcpus_held} "
            f"vCPUs of {r.quota_family or 'unknown family'} while idle; {last}"
            + (f"\n  UNUSED: {r.reason}" if r.unused else "")
            + (f"\n  not judged: {r.note}" if r.note else "")
        )
        if r.price_per_node_hour is None:
            lines.append("  cost: price unknown (no price in the price file for its size, region and tier)")
        else:
            lines.append(
                f"  cost: {r.price_per_node_hour:,.4g} {r.currency} per node-hour; its idle timer costs up "
                f"to {r.idle_cost_per_job:,.2f} {r.currency} per job ({r.max_instances} nodes x the idle "
                "timer)"
                if r.idle_cost_per_job is not None
                else f"  cost: {r.price_per_node_hour:,.4g} {r.currency} per node-hour"
            )
        if r.min_instances > 0:
            warm = (
                f": {r.warm_nodes_per_month:,.2f} {r.currency} a month"
                if r.warm_nodes_per_month is not None
                else ""
            )
            lines.append(
                f"  note: min_instances {r.min_instances} keeps nodes running (and billed) while idle{warm}"
            )
    return "\n".join(lines)
