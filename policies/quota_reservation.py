"""quota-reservation (mandatory, stack): the vCPUs clusters reserve fit the configured quotas.

Every cluster reserves max_instances x vCPUs of quota even at zero nodes (azure-notes.md 3.5,
how-to-create-attach-compute-cluster.md: "unprovisioned nodes contribute to your quota usage"). Dedicated
quota is per (region, VM family) plus a regional total; low-priority quota is one value per region across
families (how-to-manage-quotas.md). The arithmetic is vmsizes.quota.reserve, the project's single
implementation.

Config (the subscription's Azure ML compute quotas, written by `python -m jobs quota --stack STACK --write
policies/config/STACK.json` from the Azure ML usages API; not `az vm list-usage`, which shows the Compute
provider's VM core quota: Azure ML compute has its own quota, azure-notes.md 3.5):
    {"quotas": {"eastus": {"standardNDSH100v5Family": 384, "total": 500, "lowPriority": 100}}}
Region keys in any spelling ("East US" == "eastus"); family names in any spelling Azure uses (case,
spaces and "_" ignored, "vCPUs" suffixes too: vmsizes.quota.family_key, the one rule the catalog and
`jobs quota --write` use);
"total" is the regional dedicated total and "lowPriority" the regional low-priority pool. A pool whose quota
the config does not give (or whose family the catalog does not know) is reported by quota-reservation-unknown
(advisory). A region key that is no Azure region, or a family key that is no catalog quota family, would
match no pool and so silently turn the check into advisories: `config_problems`, the policy's own config
check, reports them (here as mandatory violations; the gate refuses the config with exit 2).

Not order-free (the one exception, docs/policies.md "Companion policies"): pulumi-policy gives each policy
only its own config, so quota-reservation-unknown cannot read `quotas` itself without users writing the
quotas twice. This policy leaves the advisory findings it computed (`findings`) for it; the registry
registers the companion after it and tests/policies/test_registry.py pins that order.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import norm_region
from policies._policy import STACK, CompanionFindings, Violation
from policies.clusters import Cluster, clusters_of
from stackconfig.regions import region_problem
from vmsizes.quota import (
    POOL_KEYS,
    Pool,
    QuotaReport,
    catalog_families,
    config_key,
    config_value,
    family_key,
    reserve_each,
    same_family,
)

NAME = "quota-reservation"
DESCRIPTION = "The vCPUs clusters reserve (max_instances x vCPUs) must fit each quota pool."
ENFORCEMENT = EnforcementLevel.MANDATORY
KIND = STACK
CONFIG: dict[str, Any] = {
    "quotas": {
        "type": "object",
        "description": "region -> {<quota family>: vCPUs, total: vCPUs, lowPriority: vCPUs}",
        "additionalProperties": {
            "type": "object",
            "additionalProperties": {"type": "integer", "minimum": 0},
        },
    }
}


def validate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    quotas = config.get("quotas", {})
    mandatory, advisory = findings(clusters_of(resources), quotas)
    _advisories.put(advisory)
    return [
        Violation(f"policy config {NAME}.{problem} (in the --policy-pack-config file)")
        for problem in config_problems(config)
    ] + [Violation(message) for message in mandatory]


def config_problems(config: Mapping[str, Any]) -> list[str]:
    """The policy's own config check, beyond its JSON schema (the gate runs it too: preflight/policyconfig.py
    via registry.config_problems): problems with `quotas`, each "quotas.<region>[.<key>]: <what>; <fix>".

    A region that is no Azure region (stackconfig/regions.py), or a key that is no catalog quota family (nor
    total or lowPriority), matches no pool, so the pool it was meant for would silently get only the
    quota-reservation-unknown advisory.
    """
    quotas = config.get("quotas", {})
    if not isinstance(quotas, Mapping):
        return []
    known = catalog_families() | {family_key(k): k for k in POOL_KEYS}
    problems = []
    for region, pools in quotas.items():
        if why := region_problem(str(region)):
            what, _, fix = why.partition("; ")
            problems.append(f"quotas.{region}: {what}, so it checks no cluster's quota; {fix}")
        if not isinstance(pools, Mapping):
            continue
        for key in pools:
            if family_key(str(key)) in known:
                continue
            close = difflib.get_close_matches(family_key(str(key)), list(known), n=1, cutoff=0.6)
            fix = (
                f"did you mean {known[close[0]]}?"
                if close
                else "use a quota_family of vmsizes/data/sizes.yaml, total or lowPriority"
            )
            problems.append(
                f"quotas.{region}.{key}: "
                "not a quota family the size catalog knows, nor total or lowPriority, "
                f"so it checks no cluster's quota; {fix}"
            )
    return problems


def configured_quota(quotas: Mapping[str, Any], pool: Pool) -> int | None:
    """The quota the config gives for this pool, None when it gives none."""
    region = next((v for k, v in quotas.items() if norm_region(k) == pool.region), None)
    if not isinstance(region, Mapping):
        return None
    value = config_value(region, pool.kind, pool.family)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _who(report: QuotaReport, pool: Pool) -> str:
    parts = []
    for r in report.reservations:
        if r.cluster not in pool.clusters or r.region != pool.region:
            continue
        if (pool.kind == "low-priority") != (r.tier == "low_priority"):
            continue
        if pool.kind == "family" and not same_family(r.family, pool.family):
            continue
        if pool.kind == "family" and pool.family is None and r.size not in pool.sizes:
            continue
        parts.append(f"{r.cluster} ({r.nodes} x {r.vcpus_per_node} vCPUs of {r.size})")
    return ", ".join(sorted(parts)) + (" reserves" if len(parts) == 1 else " reserve")


def reservation(clusters: Iterable[Cluster]) -> tuple[QuotaReport, list[tuple[str, str]]]:
    """vmsizes.quota.reserve_each over the clusters whose size, max_nodes and region are set, with
    (cluster name, why) for each of those that cannot be reserved. The policy and the gate's plan use it."""
    return reserve_each(
        (c.name, c.size, c.region, c.tier, c.max_nodes)
        for c in clusters
        if c.size and c.max_nodes is not None and c.region
    )


def findings(clusters: list[Cluster], quotas: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(mandatory, advisory) messages for the clusters' reservations against the configured quotas. A
    cluster whose size, node count, region or priority is unknown in this preview cannot be counted: that
    is a mandatory message of its own (its pool's total is unknown)."""
    decided, mandatory = [], []
    for c in clusters:
        if why := c.undecided("size", "max_nodes", "region", "priority"):
            mandatory.append(f"cluster {c.name}: its quota reservation {why}")
        else:
            decided.append(c)
    report, rejected = reservation(decided)
    advisory = [
        f"cluster {name}: cannot compute its quota reservation ({why}). "
        "Fix: use a size from the catalog (vmsizes/data/sizes.yaml)."
        for name, why in rejected
    ]
    for pool in report.pools:
        quota = configured_quota(quotas, pool)
        who = _who(report, pool)
        if quota is None and pool.kind == "family" and pool.family is None:
            advisory.append(
                f"{pool.region} {pool.label}: {who} {pool.vcpus} vCPUs "
                "in a quota family the size catalog does not know, "
                "so nothing checks that jobs can get nodes. "
                f"Fix: find the family with `az vm list-skus -l {pool.region} --size {pool.sizes[0]}`, "
                "add it to vmsizes/data/sizes.yaml and its quota to the quota-reservation config."
            )
        elif quota is None:
            advisory.append(
                f"{pool.region} {pool.label}: {who} {pool.vcpus} vCPUs, "
                "but the policy config gives no quota for this pool, "
                "so nothing checks that jobs can get nodes. "
                f"Fix: add quotas.{pool.region}.{config_key(pool.kind, pool.family)} "
                "to the quota-reservation config: "
                "`python -m jobs quota --stack STACK --write policies/config/STACK.json` "
                "writes the Azure ML quotas."
            )
        elif pool.vcpus > quota:
            mandatory.append(
                f"{pool.region} {pool.label}: {who} {pool.vcpus} vCPUs, quota is {quota}: "
                "clusters hold quota even at zero nodes, so jobs queue for hours once the pool is exhausted. "
                "Fix: lower max_instances (scaleSettings.maxNodeCount), delete unused clusters, "
                f"or request {pool.vcpus - quota} more vCPUs of quota."
            )
    return mandatory, advisory


_advisories = CompanionFindings()


def take_advisories() -> list[str]:
    """The advisory findings `validate` left in this AnalyzeStack call (once), for
    quota-reservation-unknown."""
    return _advisories.take()
