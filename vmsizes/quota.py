"""Quota reservation: the one implementation of "a cluster reserves max_instances x vCPUs".

Sources (azure-notes.md 3.5, MicrosoftDocs/azure-ai-docs:articles/machine-learning/how-to-manage-quotas.md and
how-to-create-attach-compute-cluster.md; the seed, "Quota: the constraint you meet first"):
- Dedicated cores are counted per region per VM family, plus a total regional quota.
- Low-priority cores per region are "a single value across VM families", separate from dedicated quota.
- A GPU node is counted by its vCPUs, not its GPUs, and a cluster scaled to zero still holds quota for its
  unprovisioned nodes, so each cluster reserves max_instances x vCPUs per node until it is deleted.

Quota family names come in three spellings for one family (the rule that matches them is `family_key`):
- the Compute usages API's `name.value`, which the catalog carries (`standardNDSH100v5Family`, some with
  spaces: `Standard NCASv3_T4 Family`; azure-notes.md section 3; Usage - List,
  https://learn.microsoft.com/en-us/rest/api/compute/usage/list),
- its `name.localizedValue` (`Standard NDSH100v5 Family vCPUs`: what `az vm list-usage` and the portal print),
- the Azure ML usages API's names, `value` and `localizedValue` alike (`Standard NDSH100v5 Family Cluster
  Dedicated vCPUs`; azure-rest-api-specs machinelearningservices stable/2022-10-01 examples/Usage/list.json,
  https://learn.microsoft.com/en-us/rest/api/azureml/usages/list).
No Microsoft source maps one spelling to another; the rule is an inference from these patterns.

Constrained sizes (HB120-16rs_v3): whether quota charges the active or the base vCPUs is not confirmed
(azure-notes.md 1.2). We charge the BASE count, the larger one, so a plan never promises capacity the
subscription may not have.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from vmsizes.catalog import all_sizes, describe
from vmsizes.errors import UnknownSize
from vmsizes.regions import normalize_region

Tier = Literal["dedicated", "low_priority"]
# (name, size, region, tier, max_instances) as read from a stack, not yet checked: reserve_each's input.
Claim = tuple[str, Any, Any, Any, Any]
PoolKind = Literal["family", "regional-total", "low-priority"]
TIERS: tuple[str, ...] = ("dedicated", "low_priority")
_KIND_ORDER = {"family": 0, "regional-total": 1, "low-priority": 2}
# The quota-reservation policy config's keys for the two pools that are no family:
# {"quotas": {region: {<family>: vCPUs, "total": vCPUs, "lowPriority": vCPUs}}}
TOTAL_KEY = "total"
LOW_PRIORITY_KEY = "lowPriority"
POOL_KEYS: tuple[str, ...] = (TOTAL_KEY, LOW_PRIORITY_KEY)
_POOL_KEY_OF_KIND: dict[str, str] = {"regional-total": TOTAL_KEY, "low-priority": LOW_PRIORITY_KEY}
# Suffixes after "<family> Family" in usage names: the Azure ML dedicated row, then the Compute localized
# value. The Azure ML low-priority family rows ("... Cluster LowPriority vCPUs", limit -1) are deliberately
# not here: low-priority quota is one regional value, so such a name must match no dedicated family.
_USAGE_SUFFIXES = ("clusterdedicatedvcpus", "vcpus")


def family_key(name: str) -> str:
    """The form in which two quota family names are compared: letters and digits only, lower case, without
    a trailing usage suffix ("Cluster Dedicated vCPUs", "vCPUs") and then without a trailing "family".

    `standardNDSH100v5Family`, `Standard NDSH100v5 Family vCPUs` and `Standard NDSH100v5 Family Cluster
    Dedicated vCPUs` all give `standardndsh100v5`; `Standard NCASv3_T4 Family` and `standardNCASv3_T4Family`
    give `standardncasv3t4`. Separators (space, `_`) are dropped because the same family is spelt with and
    without them (`standardNDAMSv4_A100Family`, `standardNDISR GB300V6 Family`; azure-notes.md section 3).
    """
    key = "".join(ch for ch in name.lower() if ch.isascii() and ch.isalnum())
    for suffix in _USAGE_SUFFIXES:
        if key.endswith(suffix):
            key = key[: -len(suffix)]
            break
    return key.removesuffix("family")


def catalog_families() -> dict[str, str]:
    """Every quota family of the catalog by its `family_key`: key -> the catalog's spelling."""
    return {family_key(s.quota_family): s.quota_family for s in all_sizes() if s.quota_family}


def catalog_family(name: str) -> str | None:
    """The catalog's spelling of the quota family `name` (any spelling), None when the catalog has none."""
    return catalog_families().get(family_key(name))


def same_family(a: str | None, b: str | None) -> bool:
    """Whether two quota family names name the same family (`family_key`); None matches only None."""
    if a is None or b is None:
        return a is b
    return family_key(a) == family_key(b)


def config_key(kind: PoolKind, family: str | None) -> str | None:
    """The quota-reservation config key of a pool: "total", "lowPriority" or the family name (None for a
    family pool whose family the catalog does not know)."""
    return _POOL_KEY_OF_KIND.get(kind, family)


def config_value(region_quotas: Mapping[str, Any], kind: PoolKind, family: str | None) -> Any:
    """The value one region's quota-reservation config gives a pool, None when no key matches. Keys compare
    by `family_key` ("Total" is "total", "Standard NDSH100v5 Family vCPUs" is standardNDSH100v5Family)."""
    wanted = config_key(kind, family)
    if wanted is None:
        return None
    return next((v for k, v in region_quotas.items() if family_key(str(k)) == family_key(wanted)), None)


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
        """One pool by region, kind and (for "family" pools) family name, in any spelling (`family_key`)."""
        for pool in self.for_region(region):
            if pool.kind != kind:
                continue
            if kind != "family" or same_family(pool.family, family):
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
            pool_key = family_key(size.quota_family) if size.quota_family else f"?{size.name.lower()}"
            keys = [
                ((region, "family", pool_key), size.quota_family),
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
