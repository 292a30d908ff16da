"""Before a job is created: can its nodes fit in the quota of its region? And while it waits: what is the
cluster doing?

Quota: the same usage read as `python -m jobs quota` (`jobs.quota.quotausage.fetch`, azure-ai-ml
`compute.list_usage`), against what the job's nodes need, counted the way the stack's reservations are
(`vmsizes.quota.reserve`: vCPUs per node x nodes, in the family pool and the regional total for dedicated
nodes, in the one regional low-priority pool for low-priority and Spot; azure-notes.md section 3.5). The
nodes a cluster already holds (`currentNodeCount`) are in `used` and are the job's to use, so they are
counted back. A job whose need is above what is left is refused before anything is created.

Allocation: `compute.get(cluster)` gives `allocationState` (Steady / Resizing), `currentNodeCount`,
`targetNodeCount`, `nodeStateCounts` and `errors` (AmlComputeProperties in the Azure ML REST spec,
azure-ai-ml `AmlCompute._load_from_rest`), shown while a job is queued instead of a bare "Queued".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from azure.ai.ml import MLClient

    from jobs.builders import BuiltJob


@dataclass
class QuotaCheck:
    checked: bool
    fits: bool = True
    region: str | None = None
    pools: list[dict[str, Any]] = field(default_factory=list)  # {pool, need, used, limit, held, free}
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def message(self) -> str:
        short = [p for p in self.pools if p["need"] > p["free"]]
        return "; ".join(
            f"{p['pool']} in {self.region}: the job needs {p['need']} vCPUs, {p['used']} of {p['limit']} are "
            f"in use ({p['held']} held by this cluster), {p['free']} free"
            for p in short
        )


def _aml_state(ml: MLClient, cluster: str | None) -> Any:
    """The cluster's AmlComputeProperties (allocationState, currentNodeCount, nodeStateCounts, errors), or
    None. azure-ai-ml's `AmlCompute` entity drops these read-only fields, so this makes the same REST call
    `ComputeOperations.get` makes (`_compute_operations.py`: `self._operation.get(rg, ws, name)`) and keeps
    the REST model."""
    if not cluster:
        return None
    try:
        ops = ml.compute
        rest = ops._operation.get(ops._operation_scope.resource_group_name, ops._workspace_name, cluster)
        return rest.properties.properties
    except Exception:  # informational: the job goes on without it
        return None


def _held_vcpus(ml: MLClient, cluster: str | None, vcpus_per_node: int) -> int:
    props = _aml_state(ml, cluster)
    return int(getattr(props, "current_node_count", None) or 0) * vcpus_per_node


def check_quota(ml: MLClient, built: BuiltJob, region: str, tier: str, cluster: str | None) -> QuotaCheck:
    """The job's nodes against live usage in `region`. A usage read that fails is reported, not fatal."""
    from jobs.quota.quotausage import fetch
    from vmsizes.quota import ClusterDemand, reserve, vcpus_per_node

    try:
        rows = fetch(ml, [region])
    except Exception as exc:
        text = str(exc).strip().splitlines()
        return QuotaCheck(False, region=region, error=f"{type(exc).__name__}: {text[0] if text else ''}")
    pool_tier = "low_priority" if tier in ("low_priority", "spot") else "dedicated"
    demand = reserve([ClusterDemand("job", built.size, region, pool_tier, built.nodes)])
    per_node = vcpus_per_node(built.size)
    held = _held_vcpus(ml, cluster, per_node)
    result = QuotaCheck(True, region=region)
    for pool in demand.pools:
        row = next(
            (
                r
                for r in rows
                if (r.kind == pool.kind and pool.kind != "family")
                or (pool.kind == "family" and r.kind == "family" and r.family == pool.family)
            ),
            None,
        )
        if row is None:
            continue  # Azure lists no such pool: nothing to compare with
        free = row.limit - row.used + held
        result.pools.append(
            {
                "pool": pool.label,
                "need": pool.vcpus,
                "used": row.used,
                "limit": row.limit,
                "held": held,
                "free": free,
            }
        )
        if pool.vcpus > free:
            result.fits = False
    return result


def allocation(ml: MLClient, cluster: str | None) -> str | None:
    """One line on the cluster's allocation, or None (serverless, or the read failed)."""
    props = _aml_state(ml, cluster)
    if props is None:
        return None
    state = getattr(props, "allocation_state", None)
    state = getattr(state, "value", state) or "unknown"  # a str enum: its value reads "Resizing"
    current, target = getattr(props, "current_node_count", None), getattr(props, "target_node_count", None)
    parts = [f"cluster {cluster}: allocation {state}", f"nodes {current}/{target}"]
    counts = getattr(props, "node_state_counts", None)
    if counts is not None:
        names = ("preparing", "running", "idle", "unusable", "leaving", "preempted")
        busy = [f"{n} {v}" for n in names if (v := getattr(counts, f"{n}_node_count", None))]
        if busy:
            parts.append(", ".join(busy))
    for err in getattr(props, "errors", None) or []:
        inner = getattr(err, "error", err)
        parts.append(f"error {getattr(inner, 'code', '')}: {getattr(inner, 'message', inner)}")
    return "; ".join(parts)
