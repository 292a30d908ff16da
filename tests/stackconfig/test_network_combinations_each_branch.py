"""Each rule of stackconfig/combinations.py, from the happy-path config (stackconfig_factory.good_raw), each
case changing one thing and asserting the exact key path and the message's reason and fix.

Sources of the rules (quoted in stackconfig/combinations.py): how-to-managed-network.md "Limitations" (no
cluster in another region than a managed-network workspace; no compute in your own VNet; no FQDN rule to a
storage account with AllowOnlyApprovedOutbound), how-to-network-security-overview.md "Limitations" (a
cluster in a VNet is in the workspace's region), how-to-disable-local-auth-storage.md (keys off needs
identity-based datastores).
"""

from __future__ import annotations

import pytest
from stackconfig_factory import good_raw

from stackconfig import ConfigError, validate

SUB = "00000000-0000-0000-0000-000000000000"
VNET = f"/subscriptions/{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet"
SUBNET = f"{VNET}/subnets/snet"


def problems(raw) -> list[str]:
    try:
        validate(raw)
    except ConfigError as exc:
        return list(exc.problems)
    return []


def same_region() -> dict:
    """good_raw with both clusters in the workspace's region (the second is in westus3 there)."""
    raw = good_raw()
    raw["clusters"][1].pop("region")
    return raw


@pytest.mark.parametrize("mode", ["AllowOnlyApprovedOutbound", "AllowInternetOutbound"])
def test_a_managed_network_refuses_a_cluster_in_another_region(mode):
    raw = good_raw()
    raw["network"] = {"managed": {"isolation_mode": mode}}
    (p,) = problems(raw)
    assert p.startswith(
        "azml-gpu:clusters[1].region: 'westus3' differs from the workspace region (eastus), and Azure ML "
        "does not create a compute cluster in another region"
    )
    assert p.endswith("put the cluster in eastus, or give that region its own workspace (stack) and quota")


def test_a_managed_network_keeps_clusters_in_its_region():
    raw = same_region()
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
    assert problems(raw) == []


def test_a_cluster_naming_the_workspace_region_explicitly_is_in_it():
    raw = same_region()
    raw["clusters"][1]["region"] = "eastus"
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
    assert problems(raw) == []


def test_a_managed_network_refuses_a_cluster_subnet():
    raw = same_region()
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
    raw["clusters"][0]["subnet_id"] = SUBNET
    (p,) = problems(raw)
    assert p.startswith(
        "azml-gpu:clusters[0].subnet_id: a workspace with a managed network can't put computes"
    )
    assert p.endswith("remove subnet_id (the cluster joins the managed network) or remove network.managed")


def test_a_disabled_managed_network_allows_a_subnet_and_another_region_without_one():
    raw = good_raw()  # the second cluster is in westus3, with no subnet
    raw["network"] = {"managed": {"isolation_mode": "Disabled"}}
    raw["clusters"][0]["subnet_id"] = SUBNET
    assert problems(raw) == []


def test_a_cluster_in_your_vnet_must_be_in_the_workspace_region():
    raw = good_raw()
    raw["clusters"][1]["subnet_id"] = SUBNET
    (p,) = problems(raw)
    assert p.startswith(
        "azml-gpu:clusters[1].region: 'westus3' differs from the workspace region (eastus); a cluster in a "
        "virtual network must be in the workspace's region"
    )
    assert p.endswith("put it in eastus or drop subnet_id")


def test_a_cluster_in_your_vnet_in_the_workspace_region_is_fine():
    raw = same_region()
    raw["clusters"][1]["subnet_id"] = SUBNET
    assert problems(raw) == []


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"outbound_rules": [{"name": "pypi", "type": "fqdn", "destination": "pypi.org"}]}, "outbound_rules"),
        ({"firewall_sku": "Standard"}, "firewall_sku"),
    ],
)
def test_a_disabled_managed_network_refuses_rules_and_a_firewall(extra, key):
    raw = good_raw()
    raw["network"] = {"managed": {"isolation_mode": "Disabled", **extra}}
    (p,) = problems(raw)
    assert p == (
        f"azml-gpu:network.managed.{key}: outbound rules and the firewall SKU belong to a managed network, "
        "and isolation_mode is Disabled; remove them or set isolation_mode: AllowOnlyApprovedOutbound"
    )


@pytest.mark.parametrize(
    ("destination", "refused"),
    [
        ("stdata.blob.core.windows.net", True),
        ("STDATA.FILE.CORE.WINDOWS.NET", True),  # host names are case-insensitive
        ("stdata.dfs.core.windows.net", True),
        ("pypi.org", False),
        ("core.windows.net.example.com", False),  # only a suffix match is a storage host
    ],
)
def test_approved_outbound_refuses_an_fqdn_rule_to_storage(destination, refused):
    raw = same_region()
    rules = [
        {"name": "pypi", "type": "fqdn", "destination": "files.pythonhosted.org"},
        {"name": "st", "type": "fqdn", "destination": destination},
    ]
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound", "outbound_rules": rules}}
    got = problems(raw)
    if refused:
        (p,) = got
        assert p.startswith(
            f"azml-gpu:network.managed.outbound_rules[1].destination: '{destination}' is an Azure Storage "
            "host"
        )
        assert p.endswith("use a private_endpoint rule with the account's id and subresource_target blob")
    else:
        assert got == []


def test_the_storage_host_rule_is_only_about_approved_outbound():
    # with AllowInternetOutbound an FQDN rule is refused as needless (every destination is allowed), not as
    # a storage host
    raw = same_region()
    rules = [{"name": "st", "type": "fqdn", "destination": "stdata.blob.core.windows.net"}]
    raw["network"] = {"managed": {"isolation_mode": "AllowInternetOutbound", "outbound_rules": rules}}
    assert not [p for p in problems(raw) if "is an Azure Storage host" in p]


@pytest.mark.parametrize(("registry", "refused"), [(False, True), (True, False)])
def test_a_registry_endpoint_needs_a_registry(registry, refused):
    raw = same_region()
    raw["workspace"]["container_registry"] = registry
    raw["network"] = {
        "private_endpoints": {"subnet_id": SUBNET, "targets": ["workspace", "container_registry"]}
    }
    got = problems(raw)
    if refused:
        assert got == [
            "azml-gpu:network.private_endpoints.targets: container_registry is listed but the stack declares "
            "no registry; set workspace.container_registry: true or remove container_registry from targets"
        ]
    else:
        assert got == []


@pytest.mark.parametrize(
    ("mode", "keys", "refused"),
    [
        ("accessKey", False, True),
        ("identity", False, False),
        ("accessKey", True, False),
        ("identity", True, False),
    ],
)
def test_storage_keys_off_need_identity_datastores(mode, keys, refused):
    raw = same_region()
    raw["identity"] = {"system_datastores_auth_mode": mode, "storage_shared_key_access": keys}
    got = problems(raw)
    if refused:
        (p,) = got
        assert p.startswith(
            "azml-gpu:identity.storage_shared_key_access: false turns off the storage account"
        )
        assert p.endswith(
            "set identity.system_datastores_auth_mode: identity or storage_shared_key_access: true"
        )
    else:
        assert got == []


def test_every_cluster_is_checked_not_only_the_first():
    raw = good_raw()
    raw["clusters"].append(dict(raw["clusters"][1], name="a100-spot-b"))
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
    assert [p.split(": ")[0] for p in problems(raw)] == [
        "azml-gpu:clusters[1].region",
        "azml-gpu:clusters[2].region",
    ]
