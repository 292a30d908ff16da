"""stackconfig/outputs.py: the stack outputs, built from config + catalog, in the shape docs/architecture.md
gives; outputs exported by older programs still read; a subscription id that is not a GUID (ARM's
SubscriptionIdParameter is `format: uuid`) refused where it enters (the program's outputs, the outputs jobs
read back; `python -m stackconfig FILE`: test_cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

import vmsizes
from stackconfig import ClusterConfig, load_stack_file
from stackconfig.models import SKIP_CROSS_RULES
from stackconfig.outputs import ClusterOutput, KeyVaultOutput, StackOutputs, cluster_output, stack_outputs

from .stackconfig_factory import good_raw

REPO = Path(__file__).resolve().parents[2]
SUB = "00000000-0000-0000-0000-000000000000"


# The example object of docs/architecture.md ("Stack outputs"), for the prod stack's main cluster.
ARCHITECTURE_EXAMPLE = {
    "name": "h100-x4", "size": "Standard_ND96isr_H100_v5", "region": "eastus", "tier": "dedicated",
    "min_instances": 0, "max_instances": 4, "idle_seconds": 300, "gpus_per_node": 8, "vcpus_per_node": 96,
    "rdma_usable": True, "ssh_enabled": False, "node_public_ip": False,
}  # fmt: skip


def test_prod_outputs_match_the_documented_shape() -> None:
    config = load_stack_file(REPO / "Pulumi.prod.yaml")
    outputs = stack_outputs(config, SUB, "kv-ws-llm-123abc")
    dumped = outputs.model_dump(mode="json")
    assert {k: dumped[k] for k in ("resource_group", "workspace_name", "workspace_region")} == {
        "resource_group": "rg-train",
        "workspace_name": "ws-llm",
        "workspace_region": "eastus",
    }
    assert dumped["clusters"]["h100-x4"] == ARCHITECTURE_EXAMPLE
    assert set(dumped["clusters"]) == {c.name for c in config.clusters}
    assert StackOutputs.model_validate(dumped) == outputs


def test_cluster_output_takes_node_facts_from_the_size() -> None:
    config = load_stack_file(REPO / "Pulumi.prod.yaml")
    spot = config.cluster("a100-spot")
    out = cluster_output(spot, vmsizes.lookup(spot.size))
    assert (out.gpus_per_node, out.vcpus_per_node, out.rdma_usable, out.ssh_enabled) == (1, 24, False, False)
    assert out.tier == "low_priority" and out.idle_seconds == spot.idle_time_before_scale_down


def test_outputs_reject_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        ClusterOutput.model_validate(ARCHITECTURE_EXAMPLE | {"extra": 1})


def test_outputs_exported_before_the_network_fields_still_read_but_say_so() -> None:
    old = {k: v for k, v in ARCHITECTURE_EXAMPLE.items() if k != "node_public_ip"}
    out = ClusterOutput.model_validate(old)
    assert (out.subnet_id, out.node_public_ip) == (None, True)
    assert not out.network_fields_exported()
    assert ClusterOutput.model_validate(ARCHITECTURE_EXAMPLE).network_fields_exported()


def test_vnet_cluster_outputs_carry_its_subnet_and_no_public_ip() -> None:
    config = load_stack_file(REPO / "tests" / "fixtures" / "stacks" / "clean-vnet" / "Pulumi.clean-vnet.yaml")
    out = stack_outputs(config, SUB, "kv-ws-x").clusters["h100-x2"]
    assert out.subnet_id is not None and out.subnet_id.endswith("/subnets/snet-train")
    assert out.node_public_ip is False
    assert out.model_dump(mode="json")["subnet_id"] == out.subnet_id  # exported when set


def test_key_vault_facts_come_from_the_config_and_the_derived_name() -> None:
    prod = stack_outputs(load_stack_file(REPO / "Pulumi.prod.yaml"), SUB, "kv-ws-llm-123abc")
    dev = stack_outputs(load_stack_file(REPO / "Pulumi.dev.yaml"), SUB, "kv-ws-llm-dev-456def")
    assert prod.model_dump(mode="json")["key_vault"] == {
        "name": "kv-ws-llm-123abc",
        "purge_protection": True,
        "soft_delete_days": 90,
    }
    expected = KeyVaultOutput(name="kv-ws-llm-dev-456def", purge_protection=False, soft_delete_days=7)
    assert dev.key_vault == expected


def test_outputs_exported_before_the_key_vault_facts_still_read_without_them() -> None:
    dumped = stack_outputs(load_stack_file(REPO / "Pulumi.dev.yaml"), SUB, "kv-x").model_dump(mode="json")
    old = {k: v for k, v in dumped.items() if k != "key_vault"}
    model = StackOutputs.model_validate(old)
    assert model.key_vault is None and "key_vault" not in model.model_dump(mode="json")
    with pytest.raises(ValidationError):
        StackOutputs.model_validate(dumped | {"key_vault": {"name": "kv-x", "purge_protection": False}})


def test_a_cluster_built_outside_validate_has_no_region_for_its_outputs() -> None:
    cluster = ClusterConfig.model_validate(good_raw()["clusters"][0], context={SKIP_CROSS_RULES: True})
    with pytest.raises(ValueError, match=r"^cluster h100-x4 has no region; build it through"):
        cluster_output(cluster, None)  # type: ignore[arg-type]


# A subscription id that is not a GUID (ARM's SubscriptionIdParameter is `format: uuid`) is refused where it
# enters: the program's outputs, the outputs jobs read back, and `python -m stackconfig FILE`.
PLACEHOLDER = "<your subscription id>"
PLACEHOLDER_MESSAGE = (
    "azure-native:subscriptionId: '<your subscription id>' is not a subscription id (a GUID, 8-4-4-4-12 hex "
    "digits such as 00000000-0000-0000-0000-000000000000); set yours: "
    'pulumi config set azure-native:subscriptionId "$(az account show --query id -o tsv)"'
)


@pytest.mark.parametrize(
    "value",
    [
        PLACEHOLDER,
        "",
        "00000000-0000-0000-0000-00000000000",  # one digit short
        "{00000000-0000-0000-0000-000000000000}",  # a .NET GUID string, not ARM's form
        "00000000000000000000000000000000",  # no hyphens
        "my-subscription",  # a name, not the id
    ],
)
def test_a_subscription_id_that_is_not_a_guid_is_a_config_error(value: str) -> None:
    from stackconfig.errors import ConfigError

    config = load_stack_file(REPO / "Pulumi.dev.yaml")
    with pytest.raises(ConfigError) as exc:
        stack_outputs(config, value, "kv")
    assert exc.value.problems == [PLACEHOLDER_MESSAGE.replace(repr(PLACEHOLDER), repr(value))]


@pytest.mark.parametrize(
    "value", [SUB, "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "3f2504e0-4f89-11d3-9a0c-0305e82c3301"]
)
def test_a_guid_in_either_case_is_a_subscription_id(value: str) -> None:
    config = load_stack_file(REPO / "Pulumi.dev.yaml")
    assert stack_outputs(config, value, "kv").subscription_id == value


def test_outputs_read_back_with_a_placeholder_are_refused_by_key() -> None:
    dumped = stack_outputs(load_stack_file(REPO / "Pulumi.dev.yaml"), SUB, "kv").model_dump(mode="json")
    with pytest.raises(ValidationError) as exc:
        StackOutputs.model_validate({**dumped, "subscription_id": PLACEHOLDER})
    (error,) = exc.value.errors()
    assert error["loc"] == ("subscription_id",)
    assert PLACEHOLDER_MESSAGE.removeprefix("azure-native:subscriptionId: ") in error["msg"]
