"""Valid configs: the real stack files, defaults, canonical forms, every problem at once, key types."""

from __future__ import annotations

import base64
import os
import struct
from pathlib import Path

import pytest
from pydantic import ValidationError
from stackconfig_factory import good_raw

from stackconfig import ClusterConfig, ConfigError, SshConfig, StackConfig, load_stack_file, validate
from stackconfig.outputs import stack_outputs

REPO = Path(__file__).resolve().parents[2]


def test_prod_stack_is_the_seed_reference_plan() -> None:
    config = load_stack_file(REPO / "Pulumi.prod.yaml")
    assert (config.workspace.name, config.workspace.resource_group.name, config.workspace.region) == (
        "ws-llm",
        "rg-train",
        "eastus",
    )
    main = config.cluster("h100-x4")
    assert (main.size, main.region, main.min_instances, main.max_instances) == (
        "Standard_ND96isr_H100_v5",
        "eastus",
        0,
        4,
    )
    # SSH decided at creation: off (no-public-IP nodes in a managed network, stackconfig.combinations [SSH]).
    assert (main.idle_time_before_scale_down, main.tier, main.ssh_enabled) == (300, "dedicated", False)
    others = [c for c in config.clusters if c.name != "h100-x4"]
    # The seed's second H100 cluster is in westus3: a private prod workspace (managed network) can't have a
    # cluster in another region, so it lives in the westus3 sibling stack (Pulumi.prod-westus3.yaml).
    assert not [c for c in others if c.size == "Standard_ND96isr_H100_v5"]
    sibling = load_stack_file(REPO / "Pulumi.prod-westus3.yaml")
    (second_h100,) = sibling.clusters
    assert (second_h100.name, second_h100.size, second_h100.region) == (
        "h100-wus3",
        "Standard_ND96isr_H100_v5",
        "westus3",
    )
    assert second_h100.max_instances > 1 and sibling.workspace.region == "westus3"
    spot = [c for c in others if c.tier == "low_priority"]
    assert len(spot) == 1 and spot[0].max_instances == 1
    # No locks next to a managed network (docs/azure-behaviour.md 17): the capacity stack carries them.
    assert not any(config.locks.model_dump().values())
    assert not any(sibling.locks.model_dump().values())
    # Private and identity-first by default.
    assert config.workspace.public_network_access == "Disabled"
    assert config.network.managed_enabled and config.network.private_endpoints is not None
    assert config.identity.identity_datastores and not config.identity.storage_shared_key_access
    assert not any(c.node_public_ip for c in config.clusters)


def test_capacity_stack_carries_the_cross_region_cluster_locks_and_ssh() -> None:
    """The mission's promises the private stacks can't carry (Pulumi.capacity.yaml says why)."""
    config = load_stack_file(REPO / "Pulumi.capacity.yaml")
    (cluster,) = config.clusters
    assert config.workspace.public_network_access == "Enabled" and not config.network.managed_enabled
    assert config.network.private_endpoints is None
    assert (config.workspace.region, cluster.region) == ("eastus", "westus3")
    assert cluster.ssh_enabled and cluster.node_public_ip
    assert config.locks.model_dump() == {
        "storage": True,
        "key_vault": False,  # the workspace identity's Key Vault Administrator sits on it
        "container_registry": True,
        "application_insights": True,
        "workspace": False,
    }


def test_dev_stack_is_a_small_cluster_with_a_long_idle_timer() -> None:
    config = load_stack_file(REPO / "Pulumi.dev.yaml")
    assert config.workspace.resource_group.name != "rg-train"
    (cluster,) = config.clusters
    assert (cluster.min_instances, cluster.max_instances, cluster.idle_time_before_scale_down) == (0, 1, 1800)
    assert cluster.ssh_enabled and cluster.region == config.workspace.region
    # Cheap and public: no private endpoint, no managed network (the reason is in the file's comment).
    assert config.workspace.public_network_access == "Enabled"
    assert config.network.managed is None and config.network.private_endpoints is None


def test_sizes_are_canonical_and_regions_default_to_the_workspace() -> None:
    raw = good_raw()
    raw["clusters"][0]["size"] = "standard_nd96isr_h100_v5"
    raw["workspace"]["region"] = "East US"
    config = validate(raw)
    assert config.clusters[0].size == "Standard_ND96isr_H100_v5"
    assert config.workspace.region == "eastus"
    assert config.clusters[0].region == "eastus"  # defaulted
    assert config.clusters[1].region == "westus3"  # kept


def test_defaults_are_filled() -> None:
    config = validate(good_raw())
    spot = config.cluster("a100-spot")
    assert (spot.min_instances, spot.node_public_ip, spot.subnet_id) == (0, True, None)
    assert spot.ssh == "disabled" and not spot.ssh_enabled
    assert config.workspace.resource_group.create is True
    assert config.workspace.public_network_access == "Enabled"
    assert (config.locks.storage, config.locks.workspace) == (True, False)


def test_local_auth_follows_ssh() -> None:
    """On Azure ML computes local authentication is SSH (azure-ai-ml: disableLocalAuth = not ssh_settings)."""
    config = validate(good_raw())
    assert (config.cluster("h100-x4").local_auth, config.cluster("a100-spot").local_auth) == (True, False)


def test_a_catalog_size_in_any_case_gets_the_catalog_casing_and_a_known_gpu_count() -> None:
    raw = good_raw()
    raw["clusters"][0]["size"] = "standard_nd96isr_h100_v5"
    config = validate(raw)
    assert config.clusters[0].size == "Standard_ND96isr_H100_v5"
    outputs = stack_outputs(config, "00000000-0000-0000-0000-000000000000", "kv-test")
    assert outputs.clusters["h100-x4"].gpus_per_node == 8


def test_node_public_ip_false_with_a_subnet_is_valid() -> None:
    raw = good_raw()
    subnet = (
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-net/providers/"
        "Microsoft.Network/virtualNetworks/vnet-train/subnets/gpu"
    )
    raw["clusters"][0].update(node_public_ip=False, subnet_id=subnet)
    assert validate(raw).clusters[0].subnet_id == subnet


def test_every_problem_is_reported_at_once() -> None:
    raw = good_raw()
    raw["workspce"] = {}
    raw["workspace"]["region"] = "mars"
    raw["clusters"][0].update(name="cpu-cluster-1", min_instances=2, max_instances=1, tier="spot")
    raw["clusters"][0]["ssh"]["password"] = "x"
    raw["clusters"][1].update(idle_time_before_scale_down="30m", node_public_ip=False, size="nonsense")
    with pytest.raises(ConfigError) as info:
        validate(raw)
    paths = sorted(p.split(": ", 1)[0].removeprefix("azml-gpu:") for p in info.value.problems)
    assert paths == sorted(
        [
            "workspce",
            "workspace.region",
            "clusters[0].name",
            "clusters[0].max_instances",
            "clusters[0].tier",
            "clusters[0].ssh.password",
            "clusters[1].idle_time_before_scale_down",
            "clusters[1].node_public_ip",
            "clusters[1].size",
        ]
    )


def test_not_a_mapping_is_one_clear_problem() -> None:
    with pytest.raises(ConfigError) as info:
        validate(["workspace"])
    assert info.value.problems == [
        "azml-gpu: expected a mapping of keys, got list; write workspace, clusters and locks as keys"
    ]


def test_models_built_directly_still_enforce_the_cross_field_rules() -> None:
    raw = good_raw()
    raw["clusters"][0].update(min_instances=3, max_instances=2)
    with pytest.raises(ValidationError, match=r"max_instances: 2 is below min_instances \(3\)"):
        StackConfig.model_validate(raw)
    raw = good_raw()
    raw["clusters"][1]["name"] = "h100-x4"
    with pytest.raises(ValidationError, match=r"already the name of clusters\[0\]"):
        StackConfig.model_validate(raw)


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _key(key_type: str, rsa_bits: int = 3072) -> str:
    """A public key line in the OpenSSH wire format (RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709 §4)."""
    if key_type == "ssh-rsa":
        modulus = (1 << (rsa_bits - 1)) | int.from_bytes(os.urandom(rsa_bits // 8), "big") | 1
        fields = [_string(b"\x01\x00\x01"), _string(b"\x00" + modulus.to_bytes(rsa_bits // 8, "big"))]
    elif key_type == "ssh-ed25519":
        fields = [_string(os.urandom(32))]
    else:
        curve = key_type.rsplit("-", 1)[1].encode()
        fields = [_string(curve), _string(b"\x04" + os.urandom(64))]
    blob = _string(key_type.encode()) + b"".join(fields)
    return f"{key_type} {base64.b64encode(blob).decode()} someone@example"


@pytest.mark.parametrize("bits", [2048, 3072, 4096])
def test_rsa_keys_of_2048_bits_and_more_are_accepted(bits: int) -> None:
    ssh = SshConfig(admin_user="azureuser", public_key=_key("ssh-rsa", rsa_bits=bits))
    assert ssh.public_key.startswith("ssh-rsa ")


@pytest.mark.parametrize(
    "key_type", ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521"]
)
def test_well_formed_keys_azure_ml_refuses_name_the_source_and_the_fix(key_type: str) -> None:
    with pytest.raises(ValidationError) as info:
        SshConfig(admin_user="azureuser", public_key=_key(key_type))
    assert (
        f"a {key_type} key is not accepted: Azure ML compute takes RSA keys only (docs: "
        "machine-learning-enable-ssh.md, 'starting with ssh-rsa'); generate one with "
        "`ssh-keygen -t rsa -b 3072`"
    ) in str(info.value)


def test_rsa_keys_below_2048_bits_are_rejected() -> None:
    with pytest.raises(ValidationError, match="this RSA key has 1024 bits, Azure needs at least 2048"):
        SshConfig(admin_user="azureuser", public_key=_key("ssh-rsa", rsa_bits=1024))


def test_rsa_line_with_another_key_type_inside_is_rejected() -> None:
    line = _key("ecdsa-sha2-nistp256").replace("ecdsa-sha2-nistp256", "ssh-rsa", 1)
    with pytest.raises(ValidationError, match="the key inside is 'ecdsa-sha2-nistp256'"):
        SshConfig(admin_user="azureuser", public_key=line)


@pytest.mark.parametrize("name", ["gpu-a", "a1-b2c", "H100x4", "abc", "g" * 24, "nc-t4-dev"])
def test_compute_names_azure_accepts(name: str) -> None:
    raw = good_raw()
    raw["clusters"][0]["name"] = name
    assert validate(raw).clusters[0].name == name


def test_cluster_model_exposes_ssh_enabled() -> None:
    cluster = validate(good_raw()).clusters[0]
    assert isinstance(cluster, ClusterConfig) and cluster.ssh_enabled
