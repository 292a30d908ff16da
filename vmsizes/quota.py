"""Quota reservation: the one implementation of "a cluster reserves max_instances x vCPUs".

Sources (azure-notes.md 3.5, MicrosoftDocs/azure-ai-docs:articles/machine-learning/how-to-manage-quotas.md and
how-to-create-attach-compute-cluster.md; the seed, "Quota: the constraint you meet first"):
- Dedicated cores are counted per region per VM family, plus a total regional quota.
- Low-priority cores per region are "a single value across VM families", separate from dedicated quota.
- A GPU node is counted by its vCPUs, not its GPUs, and a cluster scaled to zero still holds quota for its
  unprovisioned nodes, so each cluster reserves max_instances x vCPUs per node until it is deleted.

Constrained sizes (HB120-16rs_v3): whether quota charges the active or the base vCPUs is not confirmed
(azure-notes.md 1.2). We charge the BASE count, the larger one, so a plan never promises capacity the
subscription may not have.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from vmsizes.catalog import describe
from vmsizes.errors import UnknownSize
from vmsizes.retirement import normalize_region

Tier = Literal["dedicated", "low_priority"]
# (name, size, region, tier, max_instances) as read from a stack, not yet checked: reserve_each's input.
Claim = tuple[str, Any, Any, Any, Any]
PoolKind = Literal["family", "regional-total", "low-priority"]
TIERS: tuple[str, ...] = ("dedicated", "low_priority")
_KIND_ORDER = {"family": 0, "regional-total": 1, "low-priority": 2}


@dataclass(frozen=True)
class ClusterDemand:
    """One cluster's claim on quota; ``region`` is its compute region (may differ from the workspace's)."""

    name: str
    size: str
    region: str
    tier: Tier
    max_instances: int

    def __post_init__(self) -> None:
        if self.tier not in TIERS:
            raise ValueError(f"cluster {self.name!r}: tier {self.tier!r} is not one of {', '.join(TIERS)}")
        count = self.max_instances
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"cluster {self.name!r}: max_instances {count!r} must be a whole number >= 0")
        if not isinstance(self.region, str) or not self.region.strip():
            raise ValueError(f"cluster {self.name!r}: region is empty; give an Azure region such as 'eastus'")


@dataclass(frozen=True)
class Reservation:
    """What one cluster reserves: ``vcpus = nodes x vcpus_per_node``."""

    cluster: str
    size: str
    region: str
    tier: Tier
    family: str | None
    nodes: int
    vcpus_per_node: int
    vcpus: int


@dataclass(frozen=True)
class Pool:
    """A quota pool and the vCPUs its clusters reserve; ``sizes`` names the sizes (for unknown families)."""

    region: str
    kind: PoolKind
    family: str | None
    vcpus: int
    clusters: tuple[str, ...]
    sizes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """For people: the family, "unknown family of <size>", the regional total or the low-priority pool."""
        if self.kind == "regional-total":
            return "total regional dedicated vCPUs"
        if self.kind == "low-priority":
            return "low-priority vCPUs (all families)"
        return self.family if self.family is not None else family_label(None, ", ".join(self.sizes))


@dataclass(frozen=True)
class QuotaReport:
    pools: list[Pool]
    reservations: tuple[Reservation, ...]

    def for_region(self, region: str) -> list[Pool]:
        """The pools of one region (any spelling of the region name)."""
        key = normalize_region(region)
        return [pool for pool in self.pools if pool.region == key]

    def find(self, region: str, kind: PoolKind, family: str | None = None) -> Pool | None:
        """One pool by region, kind and (for "family" pools) family name, compared case-insensitively."""
        for pool in self.for_region(region):
            if pool.kind != kind:
                continue
            if kind != "family" or _fold(pool.family) == _fold(family):
                return pool
        return None

    @property
    def regions(self) -> list[str]:
        return sorted({pool.region for pool in self.pools})


def family_label(family: str | None, size: str) -> str:
    """The family name, or "unknown family of <size>" when the catalog has none."""
    return family if family is not None else f"unknown family of {size}"


def vcpus_per_node(size: str) -> int:
    """vCPUs one node of ``size`` is charged against quota (the base count of a constrained size)."""
    described = describe(size)
    if described.quota_vcpus is None:  # every VmSize from describe() carries it; guard against hand-made ones
        raise ValueError(f"size {size!r}: vCPU count unknown, cannot reserve quota")
    return described.quota_vcpus


def reserve(demands: Iterable[ClusterDemand]) -> QuotaReport:
    """Pools: dedicated per (region, family) plus a regional total; low-priority one per region."""
    reservations: list[Reservation] = []
    # key -> [family, vcpus, clusters, sizes]; unknown families are kept apart per size (family stays None).
    pools: dict[tuple[str, str, str], list] = {}
    for demand in demands:
        size = describe(demand.size)
        region = normalize_region(demand.region)
        per_node = vcpus_per_node(size.name)
        vcpus = per_node * demand.max_instances
        reservations.append(
            Reservation(
                cluster=demand.name,
                size=size.name,
                region=region,
                tier=demand.tier,
                family=size.quota_family,
                nodes=demand.max_instances,
                vcpus_per_node=per_node,
                vcpus=vcpus,
            )
        )
        if demand.tier == "low_priority":
            keys = [((region, "low-priority", ""), None)]
        else:
            family_key = _fold(size.quota_family) or f"?{size.name.lower()}"
            keys = [
                ((region, "family", family_key), size.quota_family),
                ((region, "regional-total", ""), None),
            ]
        for key, family in keys:
            entry = pools.setdefault(key, [family, 0, [], []])
            entry[1] += vcpus
            entry[2].append(demand.name)
            if size.name not in entry[3]:
                entry[3].append(size.name)
    ordered = sorted(pools.items(), key=lambda item: (item[0][0], _KIND_ORDER[item[0][1]], item[0][2]))
    return QuotaReport(
        pools=[
            Pool(region, kind, family, vcpus, tuple(clusters), tuple(sizes))
            for (region, kind, _), (family, vcpus, clusters, sizes) in ordered
        ],
        reservations=tuple(reservations),
    )


def reserve_each(claims: Iterable[Claim]) -> tuple[QuotaReport, list[tuple[str, str]]]:
    """The reservation of every claim that makes a valid demand, and (cluster name, why) for each one that
    does not (unknown size, bad tier, count or region), in claim order. One bad cluster never hides the
    others' reservations."""
    demands: list[ClusterDemand] = []
    rejected: list[tuple[str, str]] = []
    for name, size, region, tier, max_instances in claims:
        try:
            demand = ClusterDemand(name, size, region, tier, max_instances)
            reserve([demand])
        except (UnknownSize, ValueError, TypeError) as e:
            rejected.append((name, str(e)))
            continue
        demands.append(demand)
    return reserve(demands), rejected


def _fold(family: str | None) -> str | None:
    # Family names are compared case-insensitively; some contain spaces (azure-gpu-sizes.yaml schema_notes).
    return family.casefold() if family is not None else None
