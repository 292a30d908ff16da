"""Compare the live clusters of the workspace with the stack outputs (`python -m jobs check-deploy`).

Why: a cluster that `pulumi up` replaced has come back with its old VM size (Azure/azure-rest-api-specs
#18889: after a delete, a PUT of the same name with a new `vmSize` was accepted and acknowledged, and
the cluster was created with the previous one; docs/azure-behaviour.md, "Replacements that come back
wrong"), and scale settings edited in the portal or with `az ml compute update` are not seen by
`pulumi up` until a refresh. Neither shows in Pulumi's state, only in the live resource.

What is compared, per stack cluster, with what azure-ai-ml reads back (`ml.compute.get(name)` ->
`AmlCompute._load_from_rest`, azure-ai-ml `entities/_compute/aml_compute.py`):

- size: `size` vs `size` <- `properties.properties.vmSize` (case-insensitive);
- tier: `tier` vs `tier` <- `vmPriority` (`camel_to_snake`: LowPriority -> low_priority);
- ssh: `ssh_enabled` vs `ssh_public_access_enabled` (`remoteLoginPortPublicAccess == "Enabled"`);
  `ssh_settings` (the admin user) is reported, not compared (see `ssh_state`);
- subnet_id: `subnet_id` vs `network_settings.subnet` <- `subnet.id` (ARM ids compare case-insensitively);
- node_public_ip: `node_public_ip` vs `enable_node_public_ip` <- `enableNodePublicIp` (absent: true);
- region: `region` vs `location` <- `computeLocation`, else the resource `location` (normalised);
- min_instances, max_instances, idle_seconds: vs `scaleSettings` min/max/`nodeIdleTimeBeforeScaleDown`.

And, per cluster, whether Azure ML offers its size in its region today (`list_sizes`: azure-ai-ml
`ComputeOperations.list_sizes(location=R, compute_type="amlcompute")`, the REST virtual-machine-sizes list,
`az ml compute list-sizes`), beside whether concept-compute-target.md's table lists its series
(`vmsizes.azureml`): a note, never a failure (the cluster exists; a size no longer offered refuses a
re-created one), and a list that cannot be read is a note too.

Local auth is not compared: `disableLocalAuth` follows from SSH (azure-ai-ml sends
`disable_local_auth = not ssh_settings`, `_to_rest_object`) and azure-ai-ml does not read it back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stackconfig.outputs import ClusterOutput, StackOutputs

#: Settings Azure fixes when a cluster is created (components/gpu_cluster.py IMMUTABLE_PROPERTY_PATHS):
#: a live value that differs can only be fixed by deleting and recreating the cluster.
CREATE_TIME = ("size", "tier", "ssh", "subnet_id", "node_public_ip", "region")
#: Scale settings, which Azure updates in place.
SCALE = ("min_instances", "max_instances", "idle_seconds")
FIELDS = CREATE_TIME + SCALE

#: provisioningState values (REST spec 2025-12-01, `Compute.provisioningState` enum).
SETTLED = "Succeeded"

ISSUE_18889 = "Azure/azure-rest-api-specs#18889"


@dataclass(frozen=True)
class LiveCluster:
    """A compute as azure-ai-ml read it: only what check-deploy compares."""

    name: str
    type: str
    provisioning_state: str | None
    size: str | None
    tier: str | None
    ssh: str
    admin_user: str | None  # informational: GET may leave the credentials out
    subnet_id: str | None
    node_public_ip: bool | None
    region: str | None
    min_instances: int | None
    max_instances: int | None
    idle_seconds: int | None


@dataclass
class FieldCheck:
    field: str
    stack: Any
    live: Any
    ok: bool


@dataclass
class ClusterCheck:
    """One stack cluster against its live compute.

    `state`: ok | mismatch | missing | not-ready (provisioningState not Succeeded) | wrong-type."""

    cluster: str
    state: str
    provisioning_state: str | None = None
    fields: list[FieldCheck] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    recovery: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    @property
    def mismatched(self) -> list[FieldCheck]:
        return [f for f in self.fields if not f.ok]


@dataclass(frozen=True)
class SizeOffer:
    """A cluster's size against Azure ML's live list of its region (`offered` None: the list was not read)
    and concept-compute-target.md's table of series (`documented`)."""

    cluster: str
    size: str
    region: str
    offered: bool | None
    documented: bool


@dataclass
class Report:
    clusters: list[ClusterCheck]
    extra: list[LiveCluster]  # live AmlCompute clusters the stack does not declare (advisory)
    sizes: list[SizeOffer] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # advisory: sizes not offered, a list not read

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.clusters)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


@dataclass(frozen=True)
class Where:
    """Names the recovery commands need."""

    stack: str  # `--stack` value, or "<stack>" when the outputs came from a file
    resource_group: str
    workspace: str


def _text(value: Any) -> str | None:
    """An SDK enum (`ProvisioningState.SUCCEEDED`) or string as its plain value."""
    if value is None:
        return None
    return str(getattr(value, "value", value))


def ssh_state(public_access: bool | None) -> str:
    """`enabled` when the public SSH port is open, `disabled` when closed.

    The port decides: `remoteLoginPortPublicAccess` "after creation ... will be either enabled or disabled"
    (REST spec 2025-12-01, AmlComputeProperties). The admin account does not: its key is `x-ms-secret`,
    and the spec's GET example (examples/Compute/get/AmlCompute.json) carries no `userAccountCredentials`
    at all, so a cluster created with a key may read back without `ssh_settings`."""
    if public_access is None:
        return "unknown"
    return "enabled" if public_access else "disabled"


def live_cluster(compute: Any) -> LiveCluster:
    """The fields check-deploy compares, from an azure-ai-ml `Compute` (an `AmlCompute` for a cluster)."""
    ssh_settings = getattr(compute, "ssh_settings", None)
    network = getattr(compute, "network_settings", None)
    idle = getattr(compute, "idle_time_before_scale_down", None)
    return LiveCluster(
        name=compute.name,
        type=str(_text(getattr(compute, "type", None)) or "unknown"),
        provisioning_state=_text(getattr(compute, "provisioning_state", None)),
        size=getattr(compute, "size", None),
        tier=_text(getattr(compute, "tier", None)),
        ssh=ssh_state(getattr(compute, "ssh_public_access_enabled", None)),
        admin_user=getattr(ssh_settings, "admin_username", None),
        subnet_id=getattr(network, "subnet", None) if network is not None else None,
        node_public_ip=getattr(compute, "enable_node_public_ip", None),
        region=getattr(compute, "location", None),
        min_instances=getattr(compute, "min_instances", None),
        max_instances=getattr(compute, "max_instances", None),
        idle_seconds=round(idle) if idle is not None else None,
    )


def _region(value: str | None) -> str | None:
    if value is None:
        return None
    from vmsizes.regions import normalize_region

    return normalize_region(value)


def _same(name: str, stack: Any, live: Any) -> bool:
    if name in ("size", "subnet_id"):  # VM size names and ARM ids compare case-insensitively
        return (stack or "").lower() == (live or "").lower()
    if name == "region":
        return _region(stack) == _region(live)
    return stack == live


def expected(cluster: ClusterOutput) -> dict[str, Any]:
    """The stack's value of each compared field."""
    return {
        "size": cluster.size,
        "tier": cluster.tier,
        "ssh": "enabled" if cluster.ssh_enabled else "disabled",
        "subnet_id": cluster.subnet_id,
        "node_public_ip": cluster.node_public_ip,
        "region": cluster.region,
        "min_instances": cluster.min_instances,
        "max_instances": cluster.max_instances,
        "idle_seconds": cluster.idle_seconds,
    }


def _recreate_steps(name: str, where: Where, what: str) -> list[str]:
    ws = f"--resource-group {where.resource_group} --workspace-name {where.workspace}"
    return [
        f"{what} is fixed when Azure creates the cluster, so {name} has to be deleted and created again "
        f"(a replacement that came back with its old settings, {ISSUE_18889}, or a cluster recreated "
        "outside Pulumi):",
        f"1. az ml compute delete --name {name} {ws} --yes   (delete the underlying compute, "
        "underlyingResourceAction=Delete as azure-ai-ml's compute.begin_delete does by default, never "
        "Detach: after a Detach a create under the same name has come back with the old VM size, "
        "hashicorp/terraform-provider-azurerm#15825)",
        f"2. wait until `az ml compute show --name {name} {ws}` answers ResourceNotFound: a create under "
        "the same name while the delete still runs races with it",
        f"3. pulumi refresh --stack {where.stack} --yes   (Pulumi's state forgets the deleted cluster)",
        f"4. pulumi up --stack {where.stack}   (creates it with the stack's settings)",
        f"5. python -m jobs check-deploy --stack {where.stack}",
    ]


def _scale_steps(name: str, where: Where, fields: list[str]) -> list[str]:
    return [
        f"{', '.join(fields)} changed outside Pulumi (portal or `az ml compute update`); Azure updates scale "
        "settings in place, but `pulumi up` alone compares the program with Pulumi's last recorded state "
        "and sees no change:",
        f"1. pulumi refresh --stack {where.stack} --yes   (the state takes the live values)",
        f"2. pulumi up --stack {where.stack}   (sends the stack's scale settings back)",
        f"   or keep the live value: set it in Pulumi.{where.stack}.yaml (azml-gpu:clusters, cluster "
        f"{name}) and run pulumi up",
        f"3. python -m jobs check-deploy --stack {where.stack}",
    ]


def compare(cluster: ClusterOutput, live: LiveCluster | None, where: Where) -> ClusterCheck:
    """One stack cluster against its live compute (None: not found)."""
    name = cluster.name
    if live is None:
        return ClusterCheck(
            name,
            "missing",
            problems=[
                f"{name}: not deployed: workspace {where.workspace} has no compute of that name "
                "(never created, deleted outside Pulumi, or a replacement whose create failed)"
            ],
            recovery=[
                f"1. pulumi refresh --stack {where.stack} --yes   (the state forgets it)",
                f"2. pulumi up --stack {where.stack}   (creates it)",
                f"3. python -m jobs check-deploy --stack {where.stack}",
            ],
        )
    if live.type.lower() != "amlcompute":
        return ClusterCheck(
            name,
            "wrong-type",
            live.provisioning_state,
            problems=[f"{name}: the compute of that name is a {live.type}, not an AmlCompute cluster"],
            recovery=_recreate_steps(name, where, "the compute type"),
        )
    want = expected(cluster)
    got = {f: getattr(live, f) for f in FIELDS}
    checks = [FieldCheck(f, want[f], got[f], _same(f, want[f], got[f])) for f in FIELDS]
    result = ClusterCheck(name, "ok", live.provisioning_state, checks)
    for c in result.mismatched:
        result.problems.append(f"{name}: {c.field}: stack {_show(c.stack)}, live {_show(c.live)}")
    fixed = [c.field for c in result.mismatched if c.field in CREATE_TIME]
    scale = [c.field for c in result.mismatched if c.field in SCALE]
    if fixed:
        result.recovery += _recreate_steps(name, where, ", ".join(fixed))
    if scale:
        result.recovery += _scale_steps(name, where, scale)
    if fixed or scale:
        result.state = "mismatch"
    if live.provisioning_state and live.provisioning_state != SETTLED:
        result.state = "not-ready"
        result.problems.insert(0, _unsettled(name, live.provisioning_state))
        result.recovery = _unsettled_steps(name, live.provisioning_state, where) + result.recovery
    return result


def _unsettled(name: str, state: str) -> str:
    if state == "Deleting":
        return f"{name}: provisioningState Deleting: a delete is still running"
    if state == "Failed":
        return f"{name}: provisioningState Failed: the cluster did not provision"
    return f"{name}: provisioningState {state}: not settled yet"


def _unsettled_steps(name: str, state: str, where: Where) -> list[str]:
    ws = f"--resource-group {where.resource_group} --workspace-name {where.workspace}"
    if state == "Deleting":
        return [
            f"wait until `az ml compute show --name {name} {ws}` answers ResourceNotFound, then "
            f"pulumi refresh --stack {where.stack} --yes and pulumi up --stack {where.stack} "
            "(creating the name again before the delete finishes races with it)"
        ]
    if state == "Failed":
        return [f"read the provisioning errors: az ml compute show --name {name} {ws}"]
    return [f"run python -m jobs check-deploy --stack {where.stack} again when it is {SETTLED}"]


def _show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check(
    outputs: StackOutputs,
    get: Callable[[str], Any | None],
    list_all: Callable[[], Iterable[Any]],
    where: Where,
    progress: Callable[[str], None] = lambda line: None,
    list_sizes: Callable[[str], Iterable[str]] | None = None,
) -> Report:
    """`get(name)` -> the azure-ai-ml compute, or None when Azure answers 404; `list_all()` -> every compute
    of the workspace (to find the clusters the stack does not declare); `list_sizes(region)` -> the names of
    the sizes Azure ML offers for AmlCompute there (module docstring). `progress` gets one line per call."""
    clusters = sorted(outputs.clusters.values(), key=lambda c: c.name)
    results = []
    for i, cluster in enumerate(clusters, 1):
        progress(f"reading compute {cluster.name} ({i}/{len(clusters)}) in workspace {where.workspace}")
        found = get(cluster.name)
        results.append(compare(cluster, live_cluster(found) if found is not None else None, where))
    progress(f"listing the computes of workspace {where.workspace}")
    declared = {c.name.lower() for c in clusters}
    extra = [live_cluster(c) for c in list_all() if c.name.lower() not in declared]
    extra = [c for c in extra if c.type.lower() == "amlcompute"]
    report = Report(results, sorted(extra, key=lambda c: c.name))
    if list_sizes is not None:
        _sizes_offered(report, clusters, list_sizes, progress)
    return report


def _sizes_offered(
    report: Report,
    clusters: list[ClusterOutput],
    list_sizes: Callable[[str], Iterable[str]],
    progress: Callable[[str], None],
) -> None:
    """Each cluster's size against Azure ML's live list of its region (one read per region)."""
    import vmsizes
    from vmsizes import azureml

    offered: dict[str, list[str] | None] = {}
    for region in sorted({c.region for c in clusters}):
        progress(f"listing the sizes Azure ML offers in {region} (az ml compute list-sizes)")
        try:
            offered[region] = list(list_sizes(region))
        except Exception as exc:  # noqa: BLE001 - a note, the comparison is advisory
            from jobs.errors import error_detail

            offered[region] = None
            report.notes.append(
                f"the sizes Azure ML offers in {region} could not be read ({error_detail(exc)}); check with "
                f"`az ml compute list-sizes --location {region} --type amlcompute`"
            )
    for c in clusters:
        names = offered[c.region]
        found = None if names is None else azureml.offered_live(c.size, names)
        try:
            documented = azureml.documented(vmsizes.describe(c.size))
        except vmsizes.UnknownSize:
            documented = False
        report.sizes.append(SizeOffer(c.name, c.size, c.region, found, documented))
        if found is False:
            report.notes.append(
                f"{c.name}: Azure ML does not list {c.size} in {c.region} today (az ml compute "
                f"list-sizes --location {c.region} --type amlcompute): the live cluster keeps running, but "
                "re-creating it (a replace, `pulumi destroy` then `up`) would be refused; request the size "
                "or pick one listed"
            )


def to_json(report: Report) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "exit_code": report.exit_code,
        "clusters": [
            {
                "cluster": c.cluster,
                "state": c.state,
                "ok": c.ok,
                "provisioning_state": c.provisioning_state,
                "fields": [asdict(f) for f in c.fields],
                "problems": c.problems,
                "recovery": c.recovery,
            }
            for c in report.clusters
        ],
        "mismatches": [
            {"cluster": c.cluster, "field": f.field, "stack": f.stack, "live": f.live}
            for c in report.clusters
            for f in c.mismatched
        ],
        "extra_clusters": [asdict(c) for c in report.extra],
        "sizes_offered": [asdict(o) for o in report.sizes],
        "notes": report.notes,
    }


def render_text(report: Report, where: Where) -> str:
    lines = []
    for c in report.clusters:
        if c.ok:
            v = {f.field: f.live for f in c.fields}
            lines.append(
                f"{c.cluster}: ok ({v['size']}, {v['tier']}, {v['region']}, SSH {v['ssh']}, "
                f"{v['min_instances']}-{v['max_instances']} nodes, idle {v['idle_seconds']} s)"
            )
            continue
        lines.append(f"{c.cluster}: {c.state.upper()}")
        lines += [f"  {p}" for p in c.problems]
        if c.recovery:
            lines.append("  recovery:")
            lines += [f"    {step}" for step in c.recovery]
    for x in report.extra:
        lines.append(
            f"note: {x.name} ({x.size}, {x.max_instances} max nodes) is live in workspace {where.workspace} "
            "but not in the stack (advisory); if nobody uses it, delete it to release its quota"
        )
    lines += [f"note: {n}" for n in report.notes]
    bad = [c.cluster for c in report.clusters if not c.ok]
    lines.append(
        f"check-deploy: {len(report.clusters) - len(bad)} of {len(report.clusters)} clusters match the stack"
        + (f"; not matching: {', '.join(bad)}" if bad else "")
    )
    return "\n".join(lines)
