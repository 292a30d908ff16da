"""Shared reading of azure-native wire-format properties for the policies (camelCase names, numbers as
floats), safe for what the engine does not know during a preview.

During a preview the engine sends unknown values as a sentinel (pulumi/pulumi pkg/resource/plugin/
analyzer_plugin.go marshals Analyze and AnalyzeStack properties with `KeepUnknowns: true`), and reading one
through pulumi-policy's proxy raises UnknownValueError, which the servicer turns into an ADVISORY "can't run
policy ... during preview" for the whole policy (pulumi_policy/policy.py, Analyze). A mandatory policy that
reads an unknown therefore lets the pull request through and fails half-way through `pulumi up`. So the
policies read each field with `read`, which returns UNKNOWN instead of raising, read only the fields their
verdict needs, and say so in their message when one of those is unknown (`Cluster.undecided`).

In the first preview of a new stack the values that come from other resources' outputs are unknown: a
Compute's `workspaceName` and `resourceGroupName`, every id-derived value such as a lock's `scope`. The
fields that decide a cluster (size, scale settings, priority, credentials, SSH port) are literals in the
program and known.

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

from vmsizes.regions import normalize_region

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


class _Unknown:
    """A value the engine does not know during this preview."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise TypeError("an UNKNOWN value has no truth value; test `value is UNKNOWN` first")


UNKNOWN: Any = _Unknown()


def read(props: Mapping[str, Any] | None, *path: str, default: Any = None) -> Any:
    """`get`, but UNKNOWN for a value the engine does not know yet (instead of UnknownValueError)."""
    try:
        return get(props, *path, default=default)
    except UnknownValueError:
        return UNKNOWN


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
    (vmsizes.regions.normalize_region, the one rule). None for anything that is not a string."""
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


def undecided(**values: Any) -> str | None:
    """The message when any of these values (by the path shown for it) is unknown in this preview, else None:
    `undecided(minimumTlsVersion=tls, allowBlobPublicAccess=public)`."""
    unknown = [path for path, value in values.items() if value is UNKNOWN]
    return undecided_message(unknown) if unknown else None


def undecided_message(paths: list[str]) -> str:
    """What a policy reports when the values its verdict needs are unknown in this preview."""
    verb = "is" if len(paths) == 1 else "are"
    return (
        f"cannot decide during preview: {', '.join(paths)} {verb} not known until deployment (computed "
        f"from another resource's output), so this check would first run during `pulumi up`, after "
        f"resources were already created. Fix: give {'it' if len(paths) == 1 else 'them'} a literal "
        f"value in the program (the stack config)."
    )


# Cluster field -> the wire path it is read from (shown when it is unknown).
FIELD_PATHS = {
    "size": "properties.properties.vmSize",
    "min_nodes": "properties.properties.scaleSettings.minNodeCount",
    "max_nodes": "properties.properties.scaleSettings.maxNodeCount",
    "idle": "properties.properties.scaleSettings.nodeIdleTimeBeforeScaleDown",
    "priority": "properties.properties.vmPriority",
    "region": "properties.computeLocation (else location)",
    "remote_login": "properties.properties.remoteLoginPortPublicAccess",
    "ssh_public_key": "properties.properties.userAccountCredentials.adminUserSshPublicKey",
    "admin_password": "properties.properties.userAccountCredentials.adminUserPassword",
    "subnet_id": "properties.properties.subnet.id",
    "node_public_ip": "properties.properties.enableNodePublicIp",
    "disable_local_auth": "properties.disableLocalAuth",
}


@dataclass(frozen=True)
class Cluster:
    """The fields of an AmlCompute cluster the policies read, from its wire-format inputs (Analyze) or
    outputs (AnalyzeStack). Any field may be UNKNOWN during a preview; check with `undecided` first."""

    name: str
    urn: str
    size: str | None
    min_nodes: int | None
    max_nodes: int | None
    idle: Any
    priority: str  # "Dedicated" | "LowPriority" (azure-native VmPriority)
    region: str | None  # computeLocation, else location
    remote_login: str | None
    ssh_public_key: str | None
    admin_password: str | None
    subnet_id: str | None
    node_public_ip: bool
    disable_local_auth: bool | None

    def undecided(self, *fields: str) -> str | None:
        """None when every field is known; else the message a policy reports instead of a verdict."""
        unknown = [FIELD_PATHS[f] for f in fields if getattr(self, f) is UNKNOWN]
        return undecided_message(unknown) if unknown else None

    @property
    def ssh_enabled(self) -> Any:
        """SSH (on Azure ML computes also local authentication): the port opened or admin credentials;
        UNKNOWN when one of those is."""
        if any(v is UNKNOWN for v in (self.remote_login, self.ssh_public_key, self.admin_password)):
            return UNKNOWN
        return self.remote_login == "Enabled" or bool(self.ssh_public_key or self.admin_password)

    @property
    def tier(self) -> Any:
        """vmsizes.quota tier: "dedicated" | "low_priority" (UNKNOWN when the priority is)."""
        if self.priority is UNKNOWN:
            return UNKNOWN
        return "low_priority" if self.priority.lower() == "lowpriority" else "dedicated"


def _int_or_unknown(value: Any) -> Any:
    return UNKNOWN if value is UNKNOWN else as_int(value)


def aml_cluster(resource_type: str, props: Mapping[str, Any], name: str, urn: str) -> Cluster | None:
    """The cluster view of a Compute resource, None for anything that is not an AmlCompute cluster.
    Reads inputs (Analyze) and azure-native outputs (AnalyzeStack: `properties` is echoed from the inputs in
    a preview and returned by Azure once deployed; `computeName` is an input only, `name` the output)."""
    # computeType is a literal the SDK's AmlComputeArgs always sends ('AmlCompute').
    if resource_type != COMPUTE or read(props, "properties", "computeType") != "AmlCompute":
        return None
    inner = read(props, "properties", "properties", default={})
    if inner is UNKNOWN:
        inner = {
            key: UNKNOWN
            for key in (
                "vmSize",
                "scaleSettings",
                "vmPriority",
                "remoteLoginPortPublicAccess",
                "userAccountCredentials",
                "subnet",
                "enableNodePublicIp",
            )
        }
    scale = read(inner, "scaleSettings", default={})
    credentials = read(inner, "userAccountCredentials", default={})
    subnet = read(inner, "subnet", default={})
    # The cluster region: azure-native AmlComputeArgs.compute_location ("Location for the underlying
    # compute"); the terraform azurerm provider keeps `location` at the workspace region and sends the
    # cluster region as properties.computeLocation. Prefer computeLocation, fall back to location.
    region = read(props, "properties", "computeLocation")
    if region is None:
        region = read(props, "location")
    public_ip = read(inner, "enableNodePublicIp")
    given = read(props, "computeName")
    if given is UNKNOWN or not given:
        given = read(props, "name")
    return Cluster(
        name=str(given) if isinstance(given, str) and given else name,
        urn=urn,
        size=read(inner, "vmSize"),
        min_nodes=UNKNOWN if scale is UNKNOWN else _int_or_unknown(read(scale, "minNodeCount")),
        max_nodes=UNKNOWN if scale is UNKNOWN else _int_or_unknown(read(scale, "maxNodeCount")),
        idle=UNKNOWN if scale is UNKNOWN else read(scale, "nodeIdleTimeBeforeScaleDown"),
        priority=_or(read(inner, "vmPriority"), "Dedicated"),
        region=UNKNOWN if region is UNKNOWN else norm_region(region),
        remote_login=read(inner, "remoteLoginPortPublicAccess"),
        ssh_public_key=UNKNOWN
        if credentials is UNKNOWN
        else _or(read(credentials, "adminUserSshPublicKey"), None),
        admin_password=UNKNOWN
        if credentials is UNKNOWN
        else _or(read(credentials, "adminUserPassword"), None),
        subnet_id=UNKNOWN if subnet is UNKNOWN else _or(read(subnet, "id"), None),
        # azure-native defaults enableNodePublicIp to true when it is not given.
        node_public_ip=UNKNOWN if public_ip is UNKNOWN else public_ip is not False,
        disable_local_auth=read(props, "properties", "disableLocalAuth"),
    )


def _or(value: Any, fallback: Any) -> Any:
    """`value or fallback`, keeping UNKNOWN."""
    if value is UNKNOWN:
        return UNKNOWN
    return value or fallback


def cluster_validator(
    messages: ClusterMessages, needs: tuple[str, ...]
) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    """A ResourceValidationPolicy `validate`: reports `messages(cluster, config)` on each AmlCompute cluster
    (no property path) and ignores every other resource. `needs`: the Cluster fields the verdict reads; when
    one is unknown (a preview), the policy reports why it cannot decide instead."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        cluster = aml_cluster(args.resource_type, args.props, args.name, args.urn)
        if cluster is None:
            return
        if (why := cluster.undecided(*needs)) is not None:
            report_violation(why, None)
            return
        for message in messages(cluster, args.get_config()):
            report_violation(message, None)

    return validate


def clusters_of(resources: Iterable[Any]) -> list[Cluster]:
    """Every AmlCompute cluster among a stack's PolicyResources (their outputs), unknown fields as UNKNOWN."""
    found = (aml_cluster(r.resource_type, r.props, r.name, r.urn) for r in resources)
    return [c for c in found if c is not None]


def depends_on(resource: Any, key: str) -> list[Any]:
    """The PolicyResources a property's value comes from (AnalyzeStack's propertyDependencies: the engine
    sends them for every resource, pulumi/pulumi step_generator.go AnalyzeResources)."""
    return list((getattr(resource, "property_dependencies", None) or {}).get(key, []))


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
