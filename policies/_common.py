"""Shared reading of azure-native wire-format properties for the policies (camelCase names, numbers as
floats).

Shapes (pulumi-azure-native 3.29 `machinelearningservices/_inputs.py`, `AmlComputeArgs` and
`AmlComputePropertiesArgs`): a cluster is `azure-native:machinelearningservices:Compute` with
`properties = {computeType: "AmlCompute", computeLocation, disableLocalAuth, properties: {vmSize, vmPriority,
scaleSettings: {minNodeCount, maxNodeCount, nodeIdleTimeBeforeScaleDown}, userAccountCredentials,
remoteLoginPortPublicAccess, enableNodePublicIp, subnet: {id}}}`. The SDK fills `remoteLoginPortPublicAccess =
"NotSpecified"` and `enableNodePublicIp = true` when they are not given.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import isodate
from pulumi_policy import ResourceValidationArgs
from pulumi_policy.proxy import UnknownValueError

from vmsizes.retirement import normalize_region

COMPUTE = "azure-native:machinelearningservices:Compute"
WORKSPACE = "azure-native:machinelearningservices:Workspace"
STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
KEY_VAULT = "azure-native:keyvault:Vault"
LOCK_AT_RESOURCE = "azure-native:authorization:ManagementLockAtResourceLevel"
LOCK_BY_SCOPE = "azure-native:authorization:ManagementLockByScope"
LOCK_AT_RESOURCE_GROUP = "azure-native:authorization:ManagementLockAtResourceGroupLevel"
LOCK_AT_SUBSCRIPTION = "azure-native:authorization:ManagementLockAtSubscriptionLevel"
LOCK_TYPES = (LOCK_AT_RESOURCE, LOCK_BY_SCOPE, LOCK_AT_RESOURCE_GROUP, LOCK_AT_SUBSCRIPTION)

# Environment variable read when the policy config gives no `evaluation_date` (works under the real CLI, whose
# policy pack process inherits the environment of `pulumi preview`).
DATE_ENV = "AZML_GPU_POLICY_DATE"

ReportViolation = Callable[..., None]
# (cluster, the policy's config) -> the messages to report on that cluster
ClusterMessages = Callable[["Cluster", Mapping[str, Any]], Iterable[str]]


def get(props: Mapping[str, Any] | None, *path: str, default: Any = None) -> Any:
    """props[path[0]][path[1]]...; `default` when a key is missing. Unknown values (preview) raise
    pulumi_policy's UnknownValueError, which the SDK turns into an advisory "can't run policy during
    preview"."""
    cur: Any = props
    for key in path:
        if not isinstance(cur, Mapping) or key not in cur:
            return default
        cur = cur[key]
    return default if cur is None else cur


def as_int(value: Any) -> int | None:
    """Struct numbers arrive as floats (protobuf Struct has one number type)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)) and float(value).is_integer():
        return int(value)
    return None


def norm_region(region: Any) -> str | None:
    """ARM accepts "East US" and "eastus" alike; compare the short lower-case form
    (vmsizes.retirement.normalize_region). None for anything that is not a string."""
    return normalize_region(region) if isinstance(region, str) else None


def parse_seconds(value: Any) -> int | None:
    """Seconds of an ISO-8601 duration with a fixed length (days, hours, minutes, seconds), as ARM sends the
    idle timer (`nodeIdleTimeBeforeScaleDown`, a .NET TimeSpan); None for anything else (not a string, not a
    duration, or years/months, which have no fixed length)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = isodate.parse_duration(value)
    except (isodate.ISO8601Error, ValueError):
        return None
    if not isinstance(parsed, timedelta):
        return None
    return int(parsed.total_seconds())


@dataclass(frozen=True)
class Cluster:
    """The fields of an AmlCompute cluster the policies read, from its wire-format inputs."""

    name: str
    urn: str
    size: str | None
    min_nodes: int | None
    max_nodes: int | None
    idle: Any
    priority: str  # "Dedicated" | "LowPriority" (azure-native VmPriority)
    region: str | None  # computeLocation, else location
    workspace_name: str | None
    remote_login: str | None
    ssh_public_key: str | None
    admin_password: str | None
    subnet_id: str | None
    node_public_ip: bool
    disable_local_auth: bool | None

    @property
    def ssh_enabled(self) -> bool:
        """SSH (on Azure ML computes also local authentication): the port opened or admin credentials."""
        return self.remote_login == "Enabled" or bool(self.ssh_public_key or self.admin_password)

    @property
    def tier(self) -> str:
        """vmsizes.quota tier: "dedicated" | "low_priority"."""
        return "low_priority" if self.priority.lower() == "lowpriority" else "dedicated"


def aml_cluster(resource_type: str, props: Mapping[str, Any], name: str, urn: str) -> Cluster | None:
    """The cluster view of a Compute resource, None for anything that is not an AmlCompute cluster."""
    if resource_type != COMPUTE or get(props, "properties", "computeType") != "AmlCompute":
        return None
    inner = get(props, "properties", "properties", default={})
    # The cluster region: azure-native AmlComputeArgs.compute_location ("Location for the underlying
    # compute"); the terraform azurerm provider keeps `location` at the workspace region and sends the
    # cluster region as properties.computeLocation. Prefer computeLocation, fall back to location.
    region = get(props, "properties", "computeLocation") or get(props, "location")
    public_ip = get(inner, "enableNodePublicIp")
    return Cluster(
        name=str(get(props, "computeName") or name),
        urn=urn,
        size=get(inner, "vmSize"),
        min_nodes=as_int(get(inner, "scaleSettings", "minNodeCount")),
        max_nodes=as_int(get(inner, "scaleSettings", "maxNodeCount")),
        idle=get(inner, "scaleSettings", "nodeIdleTimeBeforeScaleDown"),
        priority=str(get(inner, "vmPriority") or "Dedicated"),
        region=norm_region(region),
        workspace_name=get(props, "workspaceName"),
        remote_login=get(inner, "remoteLoginPortPublicAccess"),
        ssh_public_key=get(inner, "userAccountCredentials", "adminUserSshPublicKey") or None,
        admin_password=get(inner, "userAccountCredentials", "adminUserPassword") or None,
        subnet_id=get(inner, "subnet", "id") or None,
        # azure-native defaults enableNodePublicIp to true when it is not given.
        node_public_ip=public_ip is not False,
        disable_local_auth=get(props, "properties", "disableLocalAuth"),
    )


def cluster_validator(messages: ClusterMessages) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    """A ResourceValidationPolicy `validate`: reports `messages(cluster, config)` on each AmlCompute cluster
    (no property path) and ignores every other resource."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        cluster = aml_cluster(args.resource_type, args.props, args.name, args.urn)
        if cluster is None:
            return
        for message in messages(cluster, args.get_config()):
            report_violation(message, None)

    return validate


def clusters_of(resources: Iterable[Any]) -> list[Cluster]:
    """Every AmlCompute cluster among a stack's PolicyResources; a cluster whose fields are still unknown
    (a preview before its inputs resolve) is skipped rather than aborting the whole stack policy."""
    found = []
    for r in resources:
        try:
            c = aml_cluster(r.resource_type, r.props, r.name, r.urn)
        except UnknownValueError:
            continue
        if c is not None:
            found.append(c)
    return found


def evaluation_date(config: Mapping[str, Any]) -> date:
    """The day retirement is evaluated on: config `evaluation_date`, else $AZML_GPU_POLICY_DATE, else
    today."""
    raw = config.get("evaluation_date") or os.environ.get(DATE_ENV)
    if not raw:
        return date.today()
    try:
        return date.fromisoformat(str(raw))
    except ValueError as e:
        source = "evaluation_date" if config.get("evaluation_date") else DATE_ENV
        raise ValueError(f"{source}: {raw!r} is not a date; use YYYY-MM-DD") from e


class Handoff:
    """Findings a mandatory policy computes for its advisory companion (or the reverse).

    pulumi-policy 1.21 gives every diagnostic its policy's single enforcement level, so a concern that has a
    mandatory and an advisory case is registered as two policies (see registry.py). The first one computes
    every finding once and hands the other level's findings over; the servicer runs the policies of one
    Analyze/AnalyzeStack call in registration order on one thread (pulumi_policy/policy.py,
    `for policy in self.__policies`), so the store is thread-local and keyed by resource URN.
    """

    def __init__(self) -> None:
        self._local = threading.local()

    def _store(self) -> dict[str, list[str]]:
        if not hasattr(self._local, "store"):
            self._local.store = {}
        return self._local.store

    def put(self, key: str, messages: list[str]) -> None:
        self._store()[key] = list(messages)

    def take(self, key: str) -> list[str]:
        return self._store().pop(key, [])
