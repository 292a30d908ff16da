"""The stack program as a whole (`__main__.py`), run on Pulumi's unit-test path (tests/components/
program_mocks.py) for the shipped stacks and variants of them: an invalid config declares nothing and says
every problem at once, the exports are exactly `stackconfig.outputs`, every resource sits in the stack's
resource group under its component, and a second run declares the same resources."""

from __future__ import annotations

import json

import pytest

import vmsizes
from stackconfig.errors import ConfigError
from stackconfig.outputs import StackOutputs
from tests.components.components_helpers import (
    ACCESS_COMPONENT,
    CLUSTER_COMPONENT,
    COMPUTE,
    DIAGNOSTIC_SETTING,
    DIAGNOSTICS_COMPONENT,
    DNS_ZONE_GROUP,
    ENDPOINTS_COMPONENT,
    KEY_VAULT,
    LOCK,
    LOCKS_COMPONENT,
    PRIVATE_ENDPOINT,
    ROLE_ASSIGNMENT,
    STORAGE,
    SUB,
    WORKSPACE_COMPONENT,
    ns,
    variant,
)
from tests.components.program_mocks import STACK_TYPE, read_stack, run_program

# Every resource type the program declares -> the component that declares it.
PARENT_COMPONENT = {
    "azure-native:resources:ResourceGroup": WORKSPACE_COMPONENT,
    "azure-native:storage:StorageAccount": WORKSPACE_COMPONENT,
    "azure-native:keyvault:Vault": WORKSPACE_COMPONENT,
    "azure-native:operationalinsights:Workspace": WORKSPACE_COMPONENT,
    "azure-native:applicationinsights:Component": WORKSPACE_COMPONENT,
    "azure-native:containerregistry:Registry": WORKSPACE_COMPONENT,
    "azure-native:machinelearningservices:Workspace": WORKSPACE_COMPONENT,
    COMPUTE: CLUSTER_COMPONENT,
    LOCK: LOCKS_COMPONENT,
    PRIVATE_ENDPOINT: ENDPOINTS_COMPONENT,
    DNS_ZONE_GROUP: ENDPOINTS_COMPONENT,
    ROLE_ASSIGNMENT: ACCESS_COMPONENT,
    DIAGNOSTIC_SETTING: DIAGNOSTICS_COMPONENT,
}
OTHER_SUB = "9b2c5e4a-1111-4c3d-8e9f-0123456789ab"
PLACEHOLDER = "<your subscription id>"


# --- an invalid config --------------------------------------------------------------------------------------


def test_invalid_config_declares_nothing_and_lists_every_problem(stack_configs):
    base = stack_configs["prod"]
    clusters = [dict(c) for c in ns(base, "clusters")]
    clusters[0]["max_instances"] = 0
    clusters[1]["idle_time_before_scale_down"] = "5m"
    ws = dict(ns(base, "workspace"), region="mars")
    result = run_program("prod", variant(base, workspace=ws, clusters=clusters))

    assert not result.ok
    assert [r.type for r in result.resources] == [STACK_TYPE]  # nothing else was declared
    assert result.outputs == {}
    keys = sorted(p.split(":", 2)[1] for p in result.problems)
    assert keys == [
        "clusters[0].max_instances",
        "clusters[1].idle_time_before_scale_down",
        "workspace.region",
    ]
    assert all(p.startswith("azml-gpu:") for p in result.problems)
    # The RunError message the engine prints: every problem, the file to fix, no traceback.
    assert result.error.startswith("invalid stack config (3 problems); nothing was declared:\n")
    for p in result.problems:
        assert f"\n  - {p}\n" in result.error
    assert result.error.endswith("Fix them in Pulumi.prod.yaml (schema: docs/config.md).")


def test_missing_workspace_is_one_problem(stack_configs):
    config = {k: v for k, v in stack_configs["dev"].items() if k != "azml-gpu:workspace"}
    result = run_program("dev", config)
    assert result.declared == []
    assert len(result.problems) == 1 and result.problems[0].startswith("azml-gpu:workspace")
    assert result.error.startswith("invalid stack config (1 problem); nothing was declared:\n")


def test_the_program_refuses_a_placeholder_subscription(stack_configs):
    """A subscription id that is not a GUID (ARM's SubscriptionIdParameter is `format: uuid`), as
    getClientConfig answers the provider's config."""
    config = dict(stack_configs["dev"], **{"azure-native:subscriptionId": PLACEHOLDER})
    with pytest.raises(ConfigError) as exc:
        run_program("dev", config)
    assert exc.value.problems == [
        "azure-native:subscriptionId: '<your subscription id>' is not a subscription id (a GUID, 8-4-4-4-12 "
        "hex digits such as 00000000-0000-0000-0000-000000000000); set yours: "
        'pulumi config set azure-native:subscriptionId "$(az account show --query id -o tsv)"'
    ]


# --- the stack outputs --------------------------------------------------------------------------------------


def test_outputs_validate_against_stack_outputs_model(run, typed):
    model = StackOutputs.model_validate(run.outputs)
    assert model.model_dump(mode="json") == run.outputs  # nothing extra, nothing coerced
    assert model.subscription_id == SUB
    assert model.resource_group == typed.workspace.resource_group.name
    assert model.workspace_name == typed.workspace.name
    assert model.workspace_region == typed.workspace.region
    assert set(model.clusters) == {c.name for c in typed.clusters}
    for cluster in typed.clusters:
        out = model.clusters[cluster.name]
        size = vmsizes.describe(cluster.size)
        assert (out.size, out.gpus_per_node, out.vcpus_per_node, out.rdma_usable) == (
            size.name,
            size.gpus,
            size.vcpus,
            size.rdma_usable,
        )
        assert (out.min_instances, out.max_instances, out.idle_seconds) == (
            cluster.min_instances,
            cluster.max_instances,
            cluster.idle_time_before_scale_down,
        )
        assert out.ssh_enabled is cluster.ssh_enabled
        assert out.region == cluster.region and out.tier == cluster.tier
        assert out.node_public_ip is cluster.node_public_ip and out.network_fields_exported()


def test_key_vault_output_names_the_vault_the_component_declares(runs):
    for stack, protected, days in (("prod", True, 90), ("dev", False, 7)):
        result = runs[stack]
        (vault,) = result.of_type(KEY_VAULT)
        assert result.outputs["key_vault"] == {
            "name": vault.inputs["vaultName"],
            "purge_protection": protected,
            "soft_delete_days": days,
        }


def test_subscription_id_comes_from_the_provider_client_config(runs, stack_configs):
    config = dict(stack_configs["dev"], **{"azure-native:subscriptionId": OTHER_SUB})
    result = run_program("dev", config)
    assert result.outputs["subscription_id"] == OTHER_SUB
    assert ("azure-native:authorization:getClientConfig", {}) in result.invokes
    # The subscription also flows into every ARM id and into the globally unique names' suffix.
    (storage,) = result.of_type(STORAGE)
    assert storage.id.startswith(f"/subscriptions/{OTHER_SUB}/")
    (before,) = runs["dev"].of_type(STORAGE)
    assert storage.inputs["accountName"] != before.inputs["accountName"]
    assert runs["dev"].outputs["subscription_id"] == SUB


# --- the resource tree --------------------------------------------------------------------------------------


def test_every_child_is_parented_to_its_component(run):
    (root,) = run.of_type(STACK_TYPE)
    assert run.resources[0] is root
    for r in run.declared:
        if r.custom:
            assert r.type in PARENT_COMPONENT, f"unexpected type {r.type}"
            assert run.by_urn(r.parent).type == PARENT_COMPONENT[r.type], r.urn
        else:
            assert r.type in set(PARENT_COMPONENT.values())
            assert r.parent == root.urn
            assert run.children(r), f"component {r.name} declared no children"


def test_every_resource_sits_in_the_stacks_resource_group(run, typed):
    group = f"/subscriptions/{SUB}/resourceGroups/{typed.workspace.resource_group.name}"
    for r in run.declared:
        if not r.custom:
            assert r.id is None, r.urn
            continue
        # In the group (named by resourceGroupName), or on one of its resources (scope, resourceUri).
        assert r.id == group or r.id.startswith(group + "/providers/Microsoft."), r.id


def _snapshot(result):
    return sorted(
        (r.urn, r.id, json.dumps(r.inputs, sort_keys=True), r.parent, sorted(r.dependencies))
        for r in result.resources
    )


def test_a_second_run_declares_the_same_resources(runs):
    """Every name is derived, never random: a second `pulumi up` finds the same resources (no replacement).
    The prod run in between leaves nothing behind in the next dev run."""
    run_program("prod")
    again = run_program("dev", read_stack("dev"))
    assert again.ok
    assert _snapshot(again) == _snapshot(runs["dev"])
    assert again.outputs == runs["dev"].outputs
