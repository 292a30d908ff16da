"""policies/clusters.py, the public reader of AmlCompute clusters (which the gate uses too): the fields and
Azure's defaults for left-out ones, the idle-timer parser, unknowns in a preview; and the rules every cluster
policy shares through it: ignore what is not an AmlCompute cluster, decide the same with the values a first
preview does not know, report (not skip) a deciding value that is unknown, and treat a left-out optional
field as Azure's default."""

from __future__ import annotations

from typing import Any

import pytest

from policies import _policy, registry
from policies._common import UNKNOWN as NOT_KNOWN  # what the readers return for the engine's sentinel
from policies.clusters import aml_cluster, cluster_of, clusters_of, parse_seconds
from preflight.wire import UNKNOWN

from .policies_helpers import (
    COMPUTE,
    COMPUTE_TYPE,
    CREDENTIALS,
    DELETE,
    IDLE,
    LOCAL_AUTH,
    LOCK_AT_SUB,
    MAX,
    MIN,
    PRIORITY,
    PUBLIC_IP,
    REGION,
    REMOTE,
    SIZE,
    SUBNET,
    SUBNET_ID,
    cluster,
    resource_args,
    stack_resource,
    verdict,
)

RESOURCE_MODULES = [m for m in registry.MODULES if m.KIND == _policy.RESOURCE]
NOT_CLUSTER = {
    "no-resource-group-locks",
    "no-privileged-role-assignments",
    "private-network-inputs",
    "workspace-user-assigned-identity",
}
CLUSTER_MODULES = [m for m in RESOURCE_MODULES if m.NAME not in NOT_CLUSTER]


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("PT5M", 300),
        ("PT30S", 30),
        ("P1DT1H", 90000),
        ("P1M", None),
        ("P1Y", None),
        ("half an hour", None),
        ("", None),
        (300, None),
        (None, None),
    ],
)
def test_parse_seconds_reads_fixed_length_iso_durations_only(value: Any, seconds: int | None) -> None:
    assert parse_seconds(value) == seconds


def test_the_happy_path_cluster_read_from_inputs() -> None:
    c = cluster_of(resource_args(COMPUTE, cluster(), None))
    assert c is not None
    assert (c.name, c.size, c.min_nodes, c.max_nodes, c.idle, c.region) == (
        "h100-x4",
        "Standard_ND96isr_H100_v5",
        0,
        4,
        "PT5M",
        "eastus",
    )
    assert (c.priority, c.tier, c.remote_login, c.ssh_enabled, c.node_public_ip) == (
        "Dedicated",
        "dedicated",
        "Enabled",
        True,
        True,
    )
    assert (c.subnet_id, c.admin_password, c.disable_local_auth) == (None, None, False)


@pytest.mark.parametrize(
    ("overrides", "field", "value"),
    [
        ({PRIORITY: DELETE}, "tier", "dedicated"),
        ({PRIORITY: DELETE}, "priority", "Dedicated"),
        ({PRIORITY: ""}, "priority", "Dedicated"),
        (
            {"properties__properties__userAccountCredentials__adminUserSshPublicKey": ""},
            "ssh_public_key",
            None,
        ),
        ({"properties__properties__userAccountCredentials": DELETE}, "ssh_public_key", None),
        ({"properties__properties__userAccountCredentials__adminUserPassword": ""}, "admin_password", None),
        ({SUBNET_ID: {"id": ""}}, "subnet_id", None),
        ({SUBNET_ID: DELETE}, "subnet_id", None),
        ({PRIORITY: "LowPriority"}, "tier", "low_priority"),
        ({PUBLIC_IP: DELETE}, "node_public_ip", True),
        ({PUBLIC_IP: False}, "node_public_ip", False),
        ({REGION: DELETE, "location": "West US 3"}, "region", "westus3"),
        ({SUBNET_ID: {"id": SUBNET}}, "subnet_id", SUBNET),
        ({"computeName": DELETE}, "name", "h100-x4"),  # the resource name, when computeName is not given
        ({"computeName": UNKNOWN}, "name", "h100-x4"),
        ({PRIORITY: UNKNOWN}, "tier", NOT_KNOWN),
    ],
)
def test_cluster_fields_and_their_defaults(overrides: dict[str, Any], field: str, value: Any) -> None:
    c = aml_cluster(COMPUTE, resource_args(COMPUTE, cluster(**overrides), None).props, "h100-x4", "u")
    assert getattr(c, field) is value if value in (NOT_KNOWN, None) else getattr(c, field) == value


def test_ssh_enabled_is_unknown_when_a_credential_is() -> None:
    c = cluster_of(
        resource_args(COMPUTE, cluster(**{"properties__properties__userAccountCredentials": UNKNOWN}), None)
    )
    assert c is not None and c.ssh_enabled is NOT_KNOWN
    with pytest.raises(TypeError, match="has no truth value"):
        bool(c.ssh_enabled)


def test_clusters_of_reads_only_aml_clusters_from_outputs() -> None:
    resources = [
        stack_resource(COMPUTE, "h100-x4", cluster()),
        stack_resource(COMPUTE, "ci", cluster(**{"properties__computeType": "ComputeInstance"})),
        stack_resource(LOCK_AT_SUB, "l", {"level": "ReadOnly"}),
    ]
    assert [c.name for c in clusters_of(resources)] == ["h100-x4"]


@pytest.mark.parametrize(
    ("overrides", "unknown"),
    [
        (
            {"properties__properties": UNKNOWN},
            ("size", "min_nodes", "max_nodes", "idle", "priority", "subnet_id"),
        ),
        ({"properties__properties__scaleSettings": UNKNOWN}, ("min_nodes", "max_nodes", "idle")),
        ({SUBNET_ID: UNKNOWN}, ("subnet_id",)),
        ({SUBNET_ID: {"id": UNKNOWN}}, ("subnet_id",)),
    ],
)
def test_a_whole_unknown_block_makes_its_fields_unknown(
    overrides: dict[str, Any], unknown: tuple[str, ...]
) -> None:
    c = cluster_of(resource_args(COMPUTE, cluster(**overrides), None))
    assert c is not None
    assert {
        f
        for f in ("size", "min_nodes", "max_nodes", "idle", "priority", "subnet_id")
        if getattr(c, f) is NOT_KNOWN
    } == set(unknown)


@pytest.mark.parametrize("module", CLUSTER_MODULES, ids=[m.NAME for m in CLUSTER_MODULES])
def test_a_compute_instance_is_not_a_cluster(module: Any) -> None:
    props = cluster(
        **{COMPUTE_TYPE: "ComputeInstance", SIZE: "Standard_NC24r", MIN: 3, REMOTE: DELETE, IDLE: "x"}
    )
    assert verdict(module, props, {"evaluation_date": "2030-01-01"}) == []


# The first preview of a new stack: a Compute's workspaceName and resourceGroupName are outputs of resources
# not created yet (pulumi/pulumi analyzer_plugin.go marshals with KeepUnknowns). Reading one would turn a
# policy into pulumi-policy's advisory "can't run policy ... during preview".
FIRST_PREVIEW = {"workspaceName": UNKNOWN, "resourceGroupName": UNKNOWN, "azureApiVersion": "2025-12-01"}
VARIANTS = [
    {},
    {SIZE: "Standard_NC24r", MIN: 2},
    {PRIORITY: "LowPriority", IDLE: "PT30S"},
    {REMOTE: "NotSpecified", CREDENTIALS: DELETE, LOCAL_AUTH: True},
    {SIZE: "Standard_NV12s_v3", IDLE: "P1M", PUBLIC_IP: False},
]


@pytest.mark.parametrize("module", CLUSTER_MODULES, ids=[m.NAME for m in CLUSTER_MODULES])
@pytest.mark.parametrize("overrides", VARIANTS, ids=range(len(VARIANTS)))
def test_verdicts_do_not_read_what_a_first_preview_does_not_know(module: Any, overrides: dict) -> None:
    config = {"evaluation_date": "2026-09-01"}
    assert verdict(module, cluster(**overrides, **FIRST_PREVIEW), config) == verdict(
        module, cluster(**overrides), config
    )


# Cluster field -> the override that makes it unknown, and the wire path the message names.
UNKNOWABLE = {
    "size": (SIZE, "properties.properties.vmSize"),
    "max_nodes": (MAX, "properties.properties.scaleSettings.maxNodeCount"),
    "min_nodes": (MIN, "properties.properties.scaleSettings.minNodeCount"),
    "idle": (IDLE, "properties.properties.scaleSettings.nodeIdleTimeBeforeScaleDown"),
    "priority": (PRIORITY, "properties.properties.vmPriority"),
    "region": (REGION, "properties.computeLocation (else location)"),
    "remote_login": (REMOTE, "properties.properties.remoteLoginPortPublicAccess"),
    "ssh_public_key": (
        CREDENTIALS + "__adminUserSshPublicKey",
        "userAccountCredentials.adminUserSshPublicKey",
    ),
    "admin_password": (CREDENTIALS + "__adminUserPassword", "userAccountCredentials.adminUserPassword"),
    "subnet_id": (SUBNET_ID, "properties.properties.subnet.id"),
    "node_public_ip": (PUBLIC_IP, "properties.properties.enableNodePublicIp"),
    "disable_local_auth": (LOCAL_AUTH, "properties.disableLocalAuth"),
}


# What each cluster policy's verdict reads (and so must report as undecided when unknown).
READS = {
    "multi-node-requires-rdma": ("size", "max_nodes"),
    "no-retired-vm-series": ("size", "region"),
    "vm-series-retiring-soon": ("size", "region"),
    "ssh-decided-at-creation": ("remote_login", "ssh_public_key", "admin_password", "disable_local_auth"),
    "min-nodes-zero": ("min_nodes", "size"),
    "idle-timer-bounds": ("idle",),
    "idle-timer-parseable": ("idle",),
    "low-priority-multi-node": ("priority", "max_nodes"),
    "secure-defaults": (
        "remote_login",
        "ssh_public_key",
        "admin_password",
        "disable_local_auth",
        "subnet_id",
        "node_public_ip",
    ),
}


UNDECIDED_CASES = [(m, f) for m in CLUSTER_MODULES for f in UNKNOWABLE]


@pytest.mark.parametrize(
    ("module", "field"), UNDECIDED_CASES, ids=[f"{m.NAME}/{f}" for m, f in UNDECIDED_CASES]
)
def test_an_unknown_deciding_value_is_reported_and_no_other_is_read(module: Any, field: str) -> None:
    key, path = UNKNOWABLE[field]
    overrides = {key: {"id": UNKNOWN} if field == "subnet_id" else UNKNOWN}
    if field == "region":
        overrides["location"] = UNKNOWN
    found = verdict(module, cluster(**overrides), {"evaluation_date": "2026-09-01"})
    if field in READS[module.NAME]:
        assert len(found) == 1 and found[0].startswith("cannot decide during preview: ") and path in found[0]
    else:
        assert found == verdict(module, cluster(), {"evaluation_date": "2026-09-01"})


def test_two_unknown_values_are_named_together() -> None:
    (message,) = verdict(
        registry.BY_NAME["multi-node-requires-rdma"], cluster(**{SIZE: UNKNOWN, MAX: UNKNOWN})
    )
    assert "vmSize, properties.properties.scaleSettings.maxNodeCount are not known" in message
    assert "give them a literal value" in message


# Optional AmlCompute fields and the value Azure applies when one is left out (azure-native
# AmlComputePropertiesArgs / ScaleSettingsArgs / AmlComputeArgs docstrings; ARM: computeLocation defaults to
# the resource's location).
AZURE_DEFAULTS = {
    PRIORITY: "Dedicated",
    MIN: 0,
    REMOTE: "NotSpecified",
    PUBLIC_IP: True,
    LOCAL_AUTH: False,
    REGION: "eastus",
}


VARIATIONS = [
    {},
    {SIZE: "Standard_NC6s_v3", MAX: 1},
    {CREDENTIALS: DELETE, REMOTE: "Disabled"},
    {SUBNET_ID: {"id": "/x"}},
]


DEFAULT_CASES = [(m, k, v) for m in CLUSTER_MODULES for k in AZURE_DEFAULTS for v in range(len(VARIATIONS))]


@pytest.mark.parametrize(
    ("module", "key", "variation"),
    DEFAULT_CASES,
    ids=[f"{m.NAME}/{k.split('__')[-1]}/{v}" for m, k, v in DEFAULT_CASES],
)
def test_a_left_out_optional_field_is_judged_as_azure_default(module: Any, key: str, variation: int) -> None:
    base = VARIATIONS[variation]
    config = {"evaluation_date": "2026-11-30"}
    left_out = verdict(module, cluster(**{**base, key: DELETE}), config)
    # the one difference allowed: ssh-decided-at-creation says which of the two it saw
    left_out = [m.replace("is absent:", "is 'NotSpecified':") for m in left_out]
    assert left_out == verdict(module, cluster(**{**base, key: AZURE_DEFAULTS[key]}), config)
