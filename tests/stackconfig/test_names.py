"""stackconfig/names.py: the Azure names and ARM ids of the config: compute names Azure accepts, and every
subnet, resource group and resource id checked where it is given. The refused compute, workspace and
resource-group names are rows of the invalid table (test_validation.py)."""

from __future__ import annotations

import pytest

from stackconfig import ConfigError, validate

from .stackconfig_factory import good_raw


@pytest.mark.parametrize("name", ["gpu-a", "a1-b2c", "H100x4", "abc", "g" * 24, "nc-t4-dev"])
def test_compute_names_azure_accepts(name: str) -> None:
    raw = good_raw()
    raw["clusters"][0]["name"] = name
    assert validate(raw).clusters[0].name == name


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
