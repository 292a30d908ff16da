"""The one policy module shape (policies/_policy.py), the registry, its adapter to pulumi-policy, and the
rules every cluster policy shares: ignore what is not an AmlCompute cluster, decide the same with the values a
first preview does not know, report (not skip) a deciding value that is unknown, and treat a left-out
optional field as Azure's default."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import pytest
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy

from policies import _policy, locks, registry
from preflight.wire import UNKNOWN

from .policies_helpers import (
    COMPUTE,
    COMPUTE_TYPE,
    CREDENTIALS,
    DELETE,
    IDLE,
    LOCAL_AUTH,
    LOCK_AT_RG,
    MAX,
    MIN,
    PRIORITY,
    PUBLIC_IP,
    REGION,
    REMOTE,
    SIZE,
    SUBNET_ID,
    WORKSPACE,
    Recorder,
    cluster,
    resource_args,
    stack_args,
    stack_resource,
    verdict,
    workspace,
)

ROOT = Path(__file__).resolve().parent.parent.parent
RESOURCE_MODULES = [m for m in registry.MODULES if m.KIND == _policy.RESOURCE]
NOT_CLUSTER = {
    "no-resource-group-locks",
    "no-privileged-role-assignments",
    "private-network-inputs",
    "workspace-user-assigned-identity",
}
CLUSTER_MODULES = [m for m in RESOURCE_MODULES if m.NAME not in NOT_CLUSTER]
ids = [m.NAME for m in registry.MODULES]


@pytest.mark.parametrize("module", registry.MODULES, ids=ids)
def test_every_policy_module_has_the_one_shape(module: Any) -> None:
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", module.NAME)
    assert module.NAME.replace("-", "_") == module.__name__.rsplit(".", 1)[1]  # one module per policy
    assert isinstance(module.DESCRIPTION, str) and module.DESCRIPTION.endswith(".")
    assert isinstance(module.ENFORCEMENT, EnforcementLevel)
    assert isinstance(module.CONFIG, dict)
    assert module.KIND in (_policy.RESOURCE, _policy.STACK)
    first = "resource" if module.KIND == _policy.RESOURCE else "resources"
    assert list(inspect.signature(module.validate).parameters) == [first, "config"]


def test_every_policy_module_is_registered_once() -> None:
    defined = sorted(
        p.stem
        for p in (ROOT / "policies").glob("*.py")
        if re.search(r"^NAME = ", p.read_text(), re.MULTILINE)
    )
    assert sorted(m.__name__.rsplit(".", 1)[1] for m in registry.MODULES) == defined
    assert len(registry.BY_NAME) == len(registry.MODULES)


def test_the_only_order_the_registry_keeps_is_the_quota_pair() -> None:
    names = [m.NAME for m in registry.MODULES]
    assert names.index("quota-reservation") < names.index("quota-reservation-unknown")


@pytest.mark.parametrize("module", registry.MODULES, ids=ids)
def test_the_adapter_builds_the_pulumi_policy(module: Any) -> None:
    policy = registry.POLICIES[registry.MODULES.index(module)]
    kind = ResourceValidationPolicy if module.KIND == _policy.RESOURCE else StackValidationPolicy
    assert isinstance(policy, kind)
    assert (policy.name, policy.description, policy.enforcement_level) == (
        module.NAME,
        module.DESCRIPTION,
        module.ENFORCEMENT,
    )
    properties = policy.config_schema.properties if policy.config_schema else {}
    assert properties == module.CONFIG


def test_the_resource_adapter_reports_each_message_and_records_locks() -> None:
    locks._observed.clear()
    policy = registry.POLICIES[
        registry.MODULES.index(
            registry.BY_NAME["multi-node-requires-rdma"].__class__
            and registry.BY_NAME["multi-node-requires-rdma"]
        )
    ]
    rec = Recorder()
    policy.validate(resource_args(COMPUTE, cluster(**{SIZE: "Standard_NC96ads_A100_v4"}), None), rec)
    assert len(rec.calls) == 1 and rec.calls[0][1] is None
    # any resource policy's Analyze records what it saw of a lock, for the stack policies
    lock = resource_args(LOCK_AT_RG, {"resourceGroupName": "rg-train"}, None, name="l")
    policy.validate(lock, Recorder())
    assert locks.observed(lock.urn) == locks.LockTarget(
        "resource-group", "/resourcegroups/rg-train", "resource group rg-train"
    )


def test_the_stack_adapter_reports_on_the_resource() -> None:
    policy = registry.POLICIES[registry.MODULES.index(registry.BY_NAME["cross-region-compute"])]
    ws = stack_resource(WORKSPACE, "ws", workspace())
    west = stack_resource(COMPUTE, "h100-x4", cluster(**{REGION: "westus3"}), {"workspaceName": [ws]})
    rec = Recorder()
    policy.validate(stack_args([ws, west], None), rec)
    assert [at for _, at in rec.calls] == [west.urn]


def test_a_module_of_no_kind_is_refused() -> None:
    class Odd:
        __name__ = "policies.odd"
        NAME, DESCRIPTION, ENFORCEMENT, CONFIG, KIND = "odd", "Odd.", EnforcementLevel.ADVISORY, {}, "both"

    with pytest.raises(ValueError, match="KIND: 'both'; use 'resource' or 'stack'"):
        _policy.to_pulumi(Odd)  # type: ignore[arg-type]


def test_messages_are_not_split_into_fragments() -> None:
    """A message is written in phrases that can be grepped: no string piece of a few characters on a line
    of its own (the formatter's "the " + "internet..." splits)."""
    fragment = re.compile(r'^\s+f?"[^"]{0,14}"\s*$', re.MULTILINE)
    found = {p.name: fragment.findall(p.read_text()) for p in (ROOT / "policies").glob("*.py")}
    assert {name: hits for name, hits in found.items() if hits} == {}


# -- rules every cluster policy shares ------------------------------------------------------------------


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
