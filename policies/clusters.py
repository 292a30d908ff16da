"""The public reader of AmlCompute clusters: the one place the pack, and the gate (preflight/gate.py), read a
cluster from the wire format, inputs (Analyze) or outputs (AnalyzeStack), safe for what the engine does not
know during a preview (policies/_common.py `read`).

Shapes (pulumi-azure-native 3.29 `machinelearningservices/_inputs.py`, `AmlComputeArgs` and
`AmlComputePropertiesArgs`): a cluster is `azure-native:machinelearningservices:Compute` with
`properties = {computeType: "AmlCompute", computeLocation, disableLocalAuth, properties: {vmSize, vmPriority,
scaleSettings: {minNodeCount, maxNodeCount, nodeIdleTimeBeforeScaleDown}, userAccountCredentials,
remoteLoginPortPublicAccess, enableNodePublicIp, subnet: {id}}}`. The SDK fills `remoteLoginPortPublicAccess =
"NotSpecified"` and `enableNodePublicIp = true` when they are not given.

    cluster_of(resource) -> Cluster | None       # Analyze args or an AnalyzeStack PolicyResource
    aml_cluster(type, props, name, urn) -> Cluster | None
    clusters_of(resources) -> list[Cluster]
    parse_seconds(idle_timer) -> int | None      # the one ISO-8601 idle-timer parser
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import isodate

from policies._common import COMPUTE, UNKNOWN, as_int, norm_region, read, undecided_message


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


def clusters_of(resources: Iterable[Any]) -> list[Cluster]:
    """Every AmlCompute cluster among a stack's PolicyResources (their outputs), unknown fields as UNKNOWN."""
    found = (aml_cluster(r.resource_type, r.props, r.name, r.urn) for r in resources)
    return [c for c in found if c is not None]


def cluster_of(resource: Any) -> Cluster | None:
    """The cluster view of a policy's resource (`.resource_type`, `.props`, `.name`, `.urn`: pulumi-policy's
    ResourceValidationArgs or PolicyResource), None for anything that is not an AmlCompute cluster."""
    return aml_cluster(resource.resource_type, resource.props, resource.name, resource.urn)


def judge_cluster(resource: Any, needs: tuple[str, ...], judge: Callable[[Cluster], list[str]]) -> list[str]:
    """A cluster policy's verdict on one resource: nothing for a resource that is not an AmlCompute cluster,
    why it cannot decide while a field in `needs` is unknown (never a silent pass), else `judge(cluster)`."""
    cluster = cluster_of(resource)
    if cluster is None:
        return []
    if why := cluster.undecided(*needs):
        return [why]
    return judge(cluster)
