"""Azure ML compute quota: live usage and limits per VM family and region.

Which API, and why: AmlCompute clusters (and serverless jobs) draw on the *Azure Machine Learning*
compute quota, which "has a separate quota from the core compute quota" (azure-notes.md 3.5,
how-to-manage-quotas.md). It is served by `Microsoft.MachineLearningServices/locations/{region}/usages`,
which azure-ai-ml already wraps as `MLClient.compute.list_usage(location=...)`, so no extra package is
needed. azure-mgmt-compute's `usage.list` reads the Compute RP's cores (VMs and scale sets), a different
pool that AmlCompute does not consume, so it would answer the wrong question.

Response rows (azure-rest-api-specs, machinelearningservices stable/2022-10-01 examples/Usage/list.json):
`type` `.../dedicatedCores/usages` ("Total Cluster Dedicated Regional vCPUs"), `.../lowPriorityCores/usages`
("Total Cluster LowPriority Regional vCPUs"), `.../totalCores/usages` ("Clusters"), `.../vmFamily/usages`
("Standard NC Family Cluster Dedicated vCPUs"; the "... Cluster LowPriority vCPUs" family rows carry
limit -1: low-priority is one regional value), and workspace / compute scoped rows (skipped here).

The Azure ML family names ("Standard NDSH100v5 Family Cluster Dedicated vCPUs") differ in spelling from
the Compute RP names the catalog carries (`standardNDSH100v5Family`); they are matched by
`vmsizes.quota.family_key`, the rule the catalog and the quota-reservation policy use too (an inference
from the naming patterns, not a documented mapping: see vmsizes/quota.py).
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobs.errors import UsageError

if TYPE_CHECKING:
    from azure.ai.ml import MLClient

    from stackconfig.outputs import StackOutputs

#: policies/quota_reservation.py reads {"quotas": {region: {family | "total" | "lowPriority": vCPUs}}}
POLICY = "quota-reservation"


@dataclass
class UsageRow:
    region: str
    kind: str  # family | regional-total | low-priority | clusters
    name: str  # as Azure ML prints it
    used: int
    limit: int
    family: str | None = None  # the catalog's family name, when one matches
    stack_vcpus: int | None = None  # what the stack's clusters reserve in this pool

    @property
    def free(self) -> int:
        return self.limit - self.used


def _field(obj: Any, name: str) -> Any:
    # azure-ai-ml's Usage._from_rest_object copies the REST model's `as_dict()` into the object
    # (entities/_compute/_usage.py). With the 2023-08-01-preview models that leaves the wire names:
    # `current_value` stays None and `currentValue` holds the number; `name` is a dict. Read both spellings.
    value = getattr(obj, name, None)
    if value is None:
        head, *rest = name.split("_")
        value = getattr(obj, head + "".join(w.title() for w in rest), None)
    return value


def rows_from_usages(region: str, usages: list[Any]) -> list[UsageRow]:
    from vmsizes.quota import catalog_families, family_key

    families = catalog_families()
    rows: list[UsageRow] = []
    for u in usages:
        rtype = str(_field(u, "type") or "")
        name_obj = _field(u, "name") or {}
        name = name_obj.get("value") if isinstance(name_obj, dict) else getattr(name_obj, "value", None)
        name = name or ""
        used, limit = int(_field(u, "current_value") or 0), int(_field(u, "limit") or 0)
        if "/workspaces/" in str(_field(u, "id") or "") or "workspace" in rtype.lower():
            continue  # per-workspace and per-compute breakdown rows
        if rtype.endswith("/dedicatedCores/usages"):
            rows.append(UsageRow(region, "regional-total", name, used, limit))
        elif rtype.endswith("/lowPriorityCores/usages"):
            rows.append(UsageRow(region, "low-priority", name, used, limit))
        elif rtype.endswith("/totalCores/usages"):
            rows.append(UsageRow(region, "clusters", name, used, limit))
        elif rtype.endswith("/vmFamily/usages") and "lowpriority" not in name.lower().replace(" ", ""):
            rows.append(UsageRow(region, "family", name, used, limit, families.get(family_key(name))))
    return rows


def fetch(ml: MLClient, regions: list[str]) -> list[UsageRow]:
    """`compute.list_usage(location=r)` for each region."""
    rows: list[UsageRow] = []
    for region in regions:
        rows += rows_from_usages(region, list(ml.compute.list_usage(location=region)))
    return rows


def attach_stack(rows: list[UsageRow], outputs: StackOutputs) -> None:
    """Fill `stack_vcpus`: what the stack's clusters reserve in each pool (vmsizes.quota.reserve)."""
    from vmsizes.quota import ClusterDemand, reserve
    from vmsizes.regions import normalize_region

    report = reserve(
        [ClusterDemand(c.name, c.size, c.region, c.tier, c.max_instances) for c in outputs.clusters.values()]
    )
    for row in rows:
        region = normalize_region(row.region)
        if row.kind == "family":
            if row.family is None:
                continue
            pool = report.find(region, "family", row.family)
        elif row.kind in ("regional-total", "low-priority"):
            pool = report.find(region, row.kind)
        else:
            continue
        if pool is not None:
            row.stack_vcpus = pool.vcpus


def policy_quotas(rows: list[UsageRow]) -> dict[str, dict[str, int]]:
    """The quota-reservation policy's `quotas` object: limits by region and catalog family name."""
    from vmsizes.quota import config_key

    out: dict[str, dict[str, int]] = {}
    for row in rows:
        key = None if row.kind == "clusters" else config_key(row.kind, row.family)  # type: ignore[arg-type]
        if key is None:  # the cluster count, or a family the catalog does not know
            continue
        out.setdefault(row.region, {})[key] = row.limit
    return out


def read_policy_config(path: Path) -> dict:
    """The `--write` target's current content ({} when it does not exist yet), or a UsageError.

    Called before the live query, so a target that cannot be read, parsed or written costs no Azure call.
    """
    from jobs.paths import check_out_file

    check_out_file(path, "--write", example="prod.json")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UsageError(f"--write {path}: cannot read it ({exc.strerror}); pick another file") from None
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"--write {path}: not UTF-8 text (byte {exc.start}); pass a JSON policy config "
            "(policies/config/<stack>.json) or a new file"
        ) from None
    try:
        data = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--write {path}: not JSON ({exc.msg} at line {exc.lineno}); fix or remove it"
        ) from None
    if not isinstance(data, dict):
        raise UsageError(f"--write {path}: expected a JSON object of policy names")
    return data


def merge_quotas(quotas: dict[str, Any], written: dict[str, dict[str, int]]) -> dict[str, Any]:
    """`quotas` with the `written` limits in place of the values they replace. A region already there under
    another spelling ("East US") and a key already there under another spelling of the same family
    (`Standard NDSH100v5 Family`) are replaced, not kept beside the new one: the policy reads the first
    matching key, which would otherwise be the stale one. Other regions and keys stay as they were."""
    from vmsizes.quota import family_key
    from vmsizes.regions import normalize_region

    merged = dict(quotas)
    for region, values in written.items():
        old: dict[str, Any] = {}
        for key in [k for k in merged if normalize_region(str(k)) == normalize_region(region)]:
            value = merged.pop(key)
            old.update(value if isinstance(value, dict) else {})
        replaced = {family_key(k) for k in values}
        kept = {k: v for k, v in old.items() if family_key(str(k)) not in replaced}
        merged[region] = {**kept, **values}
    return merged


def write_policy_config(path: Path, rows: list[UsageRow], data: dict | None = None) -> dict:
    """Merge the limits into a `--policy-pack-config` file under quota-reservation.quotas; other keys stay.

    `data` is the file's content from `read_policy_config` (read here when not given).
    """
    data = dict(read_policy_config(path) if data is None else data)
    entry = data.get(POLICY)
    if isinstance(entry, str):  # an enforcement level alone
        entry = {"enforcementLevel": entry}
    entry = dict(entry or {})
    entry["quotas"] = merge_quotas(dict(entry.get("quotas") or {}), policy_quotas(rows))
    data[POLICY] = entry
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--write {path}: cannot write it ({exc.strerror}); pick another file") from None
    return data


def to_json(rows: list[UsageRow]) -> list[dict]:
    return [asdict(r) | {"free": r.free} for r in rows]


def render_text(rows: list[UsageRow], only_used: bool = True) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Azure ML compute quota (vCPUs)")
    for col in ("region", "quota", "used", "limit", "free", "stack reserves"):
        table.add_column(
            col, justify="right" if col in ("used", "limit", "free", "stack reserves") else "left"
        )
    for r in rows:
        if only_used and r.kind == "family" and r.limit == 0 and r.used == 0 and r.stack_vcpus is None:
            continue
        flag = "" if r.stack_vcpus is None or r.stack_vcpus <= r.limit else " (over)"
        table.add_row(
            r.region,
            # A family by the catalog's key (vmsizes.quota.family_key), the one spelling plan, audit, run
            # and the policies print; Azure's name for the row stays in --json's `name`. Text, not markup.
            Text(r.family or r.name),
            str(r.used),
            str(r.limit),
            str(r.free),
            ("" if r.stack_vcpus is None else str(r.stack_vcpus)) + flag,
        )
    buf = io.StringIO()
    Console(file=buf, width=140, no_color=True).print(table)
    return buf.getvalue()
