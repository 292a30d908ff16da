"""Network and identity combinations Azure refuses (or that cannot work) are config errors, with sources.

Each fixture in tests/fixtures/stacks/rejected/ is a whole stack file whose first line says where it is
rejected and what the message must say: `# REJECTED at <key path> (<text in the message>): <what>.`
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from stackconfig import ConfigError, StackConfig, load_stack_file, validate

REJECTED = Path(__file__).resolve().parents[1] / "fixtures" / "stacks" / "rejected"
FIXTURES = sorted(REJECTED.glob("Pulumi.*.yaml"))
HEADER = re.compile(r"^# REJECTED at (\S+) \((.+?)\): ")


def test_there_is_a_fixture_per_rejected_combination() -> None:
    assert len(FIXTURES) == 10


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name.split(".")[1] for p in FIXTURES])
def test_rejected_fixture_names_its_key_and_reason(path: Path) -> None:
    key, needle = HEADER.match(path.read_text().splitlines()[0]).groups()
    with pytest.raises(ConfigError) as info:
        load_stack_file(path)
    (problem,) = info.value.problems
    assert problem.startswith(f"azml-gpu:{key}: "), problem
    assert needle in problem
    assert "; " in problem  # what is wrong; the fix


def _raw(**network) -> dict:
    return {
        "workspace": {"name": "ws-a", "resource_group": {"name": "rg-a"}, "region": "eastus"},
        "clusters": [
            {
                "name": "h100-x2",
                "size": "Standard_ND96isr_H100_v5",
                "max_instances": 2,
                "idle_time_before_scale_down": 300,
                "tier": "dedicated",
                "ssh": "disabled",
                "region": "westus3",
            }
        ],
        **({"network": network} if network else {}),
    }


def test_a_public_workspace_keeps_its_cross_region_cluster() -> None:
    config = validate(_raw())
    assert config.clusters[0].region == "westus3"


def test_internet_outbound_managed_network_refuses_cross_region_too() -> None:
    with pytest.raises(ConfigError, match=r"clusters\[0\]\.region: .*how-to-managed-network\.md"):
        validate(_raw(managed={"isolation_mode": "AllowInternetOutbound"}))


def test_disabled_managed_network_is_no_managed_network() -> None:
    raw = _raw(managed={"isolation_mode": "Disabled"})
    assert validate(raw).network.managed_enabled is False


def test_managed_network_lets_nodes_go_without_public_ip_or_subnet() -> None:
    raw = _raw(managed={"isolation_mode": "AllowOnlyApprovedOutbound"})
    raw["clusters"][0].update(region="eastus", node_public_ip=False)
    assert validate(raw).clusters[0].node_public_ip is False


def test_models_built_directly_apply_the_combinations() -> None:
    raw = _raw(managed={"isolation_mode": "AllowOnlyApprovedOutbound"})
    with pytest.raises(ValidationError, match="how-to-managed-network.md"):
        StackConfig.model_validate(raw)


def test_combination_problems_come_with_the_other_problems_fixed_first() -> None:
    """A combination needs the whole config typed: it is reported once the keys themselves parse."""
    raw = _raw(managed={"isolation_mode": "AllowOnlyApprovedOutbound"})
    raw["clusters"][0]["max_instances"] = 0
    with pytest.raises(ConfigError) as info:
        validate(raw)
    assert [p.split(": ")[0] for p in info.value.problems] == ["azml-gpu:clusters[0].max_instances"]


def test_node_public_ip_without_subnet_is_reported_with_other_problems() -> None:
    raw = _raw()
    raw["clusters"][0].update(node_public_ip=False, max_instances=0)
    with pytest.raises(ConfigError) as info:
        validate(raw)
    paths = sorted(p.split(": ")[0] for p in info.value.problems)
    assert paths == ["azml-gpu:clusters[0].max_instances", "azml-gpu:clusters[0].node_public_ip"]


def test_outbound_rules_are_typed() -> None:
    raw = _raw(
        managed={
            "isolation_mode": "AllowOnlyApprovedOutbound",
            "outbound_rules": [
                {"name": "pypi", "type": "fqdn", "destination": "pypi.org"},
                {
                    "name": "data",
                    "type": "private_endpoint",
                    "service_resource_id": "/subscriptions/00000000-0000-0000-0000-000000000000/"
                    "resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stdata",
                    "subresource_target": "blob",
                },
                {
                    "name": "mon",
                    "type": "service_tag",
                    "service_tag": "AzureMonitor",
                    "protocol": "TCP",
                    "port_ranges": "443",
                },
            ],
        }
    )
    raw["clusters"][0]["region"] = "eastus"
    rules = validate(raw).network.managed.outbound_rules
    assert [(r.name, r.type) for r in rules] == [
        ("pypi", "fqdn"),
        ("data", "private_endpoint"),
        ("mon", "service_tag"),
    ]
    raw["network"]["managed"]["outbound_rules"][0]["destination"] = "not a host"
    with pytest.raises(ConfigError, match=r"outbound_rules\[0\]: .*not a host name"):
        validate(raw)


def test_unknown_network_and_identity_keys_are_rejected_with_a_suggestion() -> None:
    raw = _raw(managed={"isolation_mod": "Disabled"})
    raw["identity"] = {"system_datastore_auth_mode": "identity"}
    with pytest.raises(ConfigError) as info:
        validate(raw)
    text = "\n".join(info.value.problems)
    assert "network.managed.isolation_mod: unknown key; did you mean isolation_mode?" in text
    assert (
        "identity.system_datastore_auth_mode: unknown key; did you mean system_datastores_auth_mode?" in text
    )


def test_people_roles_need_an_object_id_and_a_known_role() -> None:
    raw = _raw()
    raw["clusters"][0]["region"] = "eastus"
    raw["identity"] = {
        "role_assignments": [
            {"principal_id": "alice@contoso.com", "principal_type": "User", "role": "AzureML Data Scientst"}
        ]
    }
    with pytest.raises(ConfigError) as info:
        validate(raw)
    text = "\n".join(info.value.problems)
    assert "role_assignments[0].principal_id: 'alice@contoso.com' is not a GUID" in text
    assert "role_assignments[0].role: 'AzureML Data Scientst' is not a role this stack grants" in text


def test_subnet_ids_and_resource_ids_are_checked() -> None:
    raw = _raw(private_endpoints={"subnet_id": "snet-pe", "private_dns_zones_resource_group_id": "rg-dns"})
    raw["clusters"][0].update(region="eastus", user_assigned_identity_id="id-train")
    raw["identity"] = {"data_stores": ["stdata"]}
    with pytest.raises(ConfigError) as info:
        validate(raw)
    paths = sorted(p.split(": ")[0].removeprefix("azml-gpu:") for p in info.value.problems)
    assert paths == [
        "clusters[0].user_assigned_identity_id",
        "identity.data_stores",
        "network.private_endpoints.private_dns_zones_resource_group_id",
        "network.private_endpoints.subnet_id",
    ]


def test_customer_managed_key_ids_must_name_a_vault_and_a_user_assigned_identity() -> None:
    sub = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-a/providers"
    vault = f"{sub}/Microsoft.KeyVault/vaults/kv-cmk"
    identity = f"{sub}/Microsoft.ManagedIdentity/userAssignedIdentities/uai-cmk"
    key = "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef"
    good = {
        "key_vault_id": vault,
        "key_uri": key,
        "user_assigned_identity_id": identity,
        "acknowledged": ["cosmos_db_key_access", "providers_registered"],
    }
    validate({**_raw(), "identity": {"customer_managed_key": good}})
    swapped = dict(good, key_vault_id=identity, user_assigned_identity_id=vault)
    with pytest.raises(ConfigError) as info:
        validate({**_raw(), "identity": {"customer_managed_key": swapped}})
    problems = info.value.problems
    assert len(problems) == 2
    keys = sorted(p.split(": ", 1)[0] for p in problems)
    assert keys == [
        "azml-gpu:identity.customer_managed_key.key_vault_id",
        "azml-gpu:identity.customer_managed_key.user_assigned_identity_id",
    ]
    assert any("Microsoft.KeyVault/vaults" in p for p in problems)
    assert any("Microsoft.ManagedIdentity/userAssignedIdentities" in p for p in problems)
