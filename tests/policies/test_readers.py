"""The pack's public readers, which the gate uses too: policies.clusters (AmlCompute clusters, the idle-timer
parser) and policies.locks (what a lock covers)."""

from __future__ import annotations

from typing import Any

import pytest

from policies import locks
from policies._common import UNKNOWN as NOT_KNOWN  # what the readers return for the engine's sentinel
from policies._common import evaluation_date, norm_region
from policies.clusters import aml_cluster, cluster_of, clusters_of, parse_seconds
from preflight.wire import UNKNOWN
from vmsizes.regions import normalize_region

from .policies_helpers import (
    COMPUTE,
    DELETE,
    LOCK_AT_RESOURCE,
    LOCK_AT_RG,
    LOCK_AT_SUB,
    LOCK_BY_SCOPE,
    PRIORITY,
    PUBLIC_IP,
    REGION,
    SUB,
    SUBNET,
    SUBNET_ID,
    cluster,
    resource_args,
    stack_resource,
)


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


def test_norm_region_is_the_catalog_normaliser_and_none_safe() -> None:
    assert norm_region("US Gov Virginia") == normalize_region("US Gov Virginia") == "usgovvirginia"
    assert (norm_region(None), norm_region(42)) == (None, None)


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


def test_evaluation_date_reads_the_config() -> None:
    assert evaluation_date({"evaluation_date": "2026-01-31"}).isoformat() == "2026-01-31"


RG_ID = f"{SUB}/resourceGroups/RG-Train"


@pytest.mark.parametrize(
    ("type_", "props", "kind", "path"),
    [
        (LOCK_AT_SUB, {}, "subscription", None),
        (LOCK_AT_RG, {"resourceGroupName": "RG-Train"}, "resource-group", "/resourcegroups/rg-train"),
        (LOCK_AT_RG, {"resourceGroupName": UNKNOWN}, "resource-group", None),
        (LOCK_AT_RG, {}, "resource-group", "/resourcegroups/?"),  # required by azure-native; shown as "?"
        (LOCK_BY_SCOPE, {"scope": SUB}, "subscription", None),
        (LOCK_BY_SCOPE, {"scope": RG_ID + "/"}, "resource-group", "/resourcegroups/rg-train"),
        (LOCK_BY_SCOPE, {"scope": SUBNET}, "resource", SUBNET.lower().split(SUB.lower())[1]),
        (LOCK_BY_SCOPE, {"scope": UNKNOWN}, "unknown", None),
        (
            LOCK_AT_RESOURCE,
            {
                "resourceGroupName": "rg",
                "resourceProviderNamespace": "Microsoft.KeyVault",
                "resourceType": "vaults",
                "resourceName": "kv",
            },
            "resource",
            "/resourcegroups/rg/providers/microsoft.keyvault/vaults/kv",
        ),
        (LOCK_AT_RESOURCE, {"resourceGroupName": "rg", "resourceName": UNKNOWN}, "unknown", None),
    ],
)
def test_lock_targets_from_inputs(type_: str, props: dict[str, Any], kind: str, path: str | None) -> None:
    target = locks.from_inputs(type_, resource_args(type_, props, None).props)
    assert target is not None and (target.kind, target.path) == (kind, path)


def test_lock_required_fields_left_out() -> None:
    """azure-native requires them; a hand-made resource without them reads as "?" / an empty scope."""
    at_resource = {
        "resourceProviderNamespace": "Microsoft.KeyVault",
        "resourceType": "vaults",
        "resourceName": "kv",
    }
    assert locks.from_inputs(LOCK_AT_RESOURCE, at_resource) == locks.LockTarget(
        "resource",
        "/resourcegroups/?/providers/microsoft.keyvault/vaults/kv",
        "/resourceGroups/?/providers/Microsoft.KeyVault/vaults/kv",
    )
    assert locks.from_inputs(LOCK_BY_SCOPE, {}) == locks.LockTarget("resource", None, "")


def test_not_a_lock() -> None:
    assert locks.from_inputs(COMPUTE, {}) is None and not locks.is_lock(COMPUTE)
    assert locks.relative("/subscriptions/s") is None
    locks.record_analyzed(resource_args(COMPUTE, cluster(), None))
    assert locks.observed(resource_args(COMPUTE, cluster(), None).urn) is None


def test_lock_targets_from_dependencies() -> None:
    rg = stack_resource("azure-native:resources:ResourceGroup", "rg", {"resourceGroupName": "rg"})
    st = stack_resource("azure-native:storage:StorageAccount", "st", {"accountName": "st"})
    of = lambda deps: locks.from_dependencies(stack_resource(LOCK_BY_SCOPE, "l", {"scope": UNKNOWN}, deps))  # noqa: E731
    assert (of({"scope": [st, rg]}).kind, of({"scope": [st]}).kind, of({}).kind) == (
        "resource-group",
        "resource",
        "unknown",
    )
    assert of({"scope": [st]}).shown == "StorageAccount st of this stack"


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
