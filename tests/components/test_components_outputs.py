"""Stack outputs: exactly the stackconfig.outputs shape, values from the config and the catalog."""

from __future__ import annotations

from components_helpers import ns, variant

import vmsizes
from preflight.program import run_program
from stackconfig.outputs import StackOutputs


def test_outputs_validate_against_stack_outputs_model(run, typed):
    model = StackOutputs.model_validate(run.outputs)
    assert model.model_dump(mode="json") == run.outputs  # nothing extra, nothing coerced
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


def test_outputs_are_plain_json_numbers(runs):
    cluster = runs["prod"].outputs["clusters"]["h100-x4"]
    assert cluster["max_instances"] == 4 and type(cluster["max_instances"]) is int
    assert cluster["idle_seconds"] == 300 and type(cluster["idle_seconds"]) is int


def test_subscription_id_comes_from_the_provider_client_config(stack_configs):
    sub = "9b2c5e4a-1111-4c3d-8e9f-0123456789ab"
    config = dict(stack_configs["dev"], **{"azure-native:subscriptionId": sub})
    result = run_program("dev", config=config)
    assert result.outputs["subscription_id"] == "9b2c5e4a-1111-4c3d-8e9f-0123456789ab"
    assert ("azure-native:authorization:getClientConfig", {}) in result.invokes
    # The subscription also flows into every ARM id and into the globally unique names' suffix.
    storage = result.of_type("azure-native:storage:StorageAccount")[0]
    assert storage.id.startswith("/subscriptions/9b2c5e4a-1111-4c3d-8e9f-0123456789ab/")
    before = run_program("dev").of_type("azure-native:storage:StorageAccount")[0]
    assert storage.inputs["accountName"] != before.inputs["accountName"]


def test_existing_resource_group_is_looked_up_not_created(stack_configs):
    base = stack_configs["prod"]
    ws = dict(ns(base, "workspace"), resource_group={"name": "rg-shared", "create": False})
    result = run_program("prod", config=variant(base, workspace=ws))
    assert result.ok, result.problems
    assert result.of_type("azure-native:resources:ResourceGroup") == []
    assert ("azure-native:resources:getResourceGroup", {"resourceGroupName": "rg-shared"}) in result.invokes
    for r in result.declared:
        if r.custom and "resourceGroupName" in r.inputs:
            assert r.inputs["resourceGroupName"] == "rg-shared", r.urn
    assert result.outputs["resource_group"] == "rg-shared"


def test_key_vault_output_names_the_vault_the_component_declares(runs):
    for stack, protected, days in (("prod", True, 90), ("dev", False, 7)):
        result = runs[stack]
        vault = result.of_type("azure-native:keyvault:Vault")[0]
        assert result.outputs["key_vault"] == {
            "name": vault.inputs["vaultName"],
            "purge_protection": protected,
            "soft_delete_days": days,
        }
        assert vault.inputs["properties"]["softDeleteRetentionInDays"] == days
        assert vault.inputs["properties"].get("enablePurgeProtection", False) is protected
