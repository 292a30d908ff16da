"""stackconfig/rules.py: nodes without a public IP need a virtual network, a subnet of yours or the
workspace's managed network (how-to-secure-training-vnet.md; how-to-managed-network-compute.md). The rules'
other cases (max_instances below min_instances or 1, duplicate names) are rows of the invalid table
(test_validation.py)."""

from __future__ import annotations

import pytest

from stackconfig import validate

from .stackconfig_factory import good_raw, problems


def test_node_public_ip_false_with_a_subnet_is_valid() -> None:
    raw = good_raw()
    subnet = (
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-net/providers/"
        "Microsoft.Network/virtualNetworks/vnet-train/subnets/gpu"
    )
    raw["clusters"][0].update(node_public_ip=False, subnet_id=subnet)
    assert validate(raw).clusters[0].subnet_id == subnet


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


def test_managed_network_lets_nodes_go_without_public_ip_or_subnet() -> None:
    raw = _raw(managed={"isolation_mode": "AllowOnlyApprovedOutbound"})
    raw["clusters"][0].update(region="eastus", node_public_ip=False)
    assert validate(raw).clusters[0].node_public_ip is False


# --- Azure ML's own limits (issue 33 item 5) ----------------------------------------------------------------


@pytest.mark.parametrize(
    "size, nodes, refused",
    [
        ("Standard_ND96isr_H100_v5", 100, False),  # at the limit
        ("Standard_ND96isr_H100_v5", 101, True),  # above it
        ("Standard_ND96isr_H100_v5", 99, False),
        ("Standard_NC24ads_A100_v4", 101, False),  # no RDMA: the non-RDMA pool limit is configurable
    ],
)
def test_an_rdma_cluster_above_100_nodes_is_refused(size: str, nodes: int, refused: bool) -> None:
    """how-to-manage-quotas.md: "Nodes in a single Azure Machine Learning compute (AmlCompute) cluster set up
    as a communication-enabled pool on an RDMA enabled VM Family | 100 nodes"."""

    raw = good_raw()
    raw["clusters"][0].update(size=size, max_instances=nodes)
    got = problems(raw)
    if refused:
        assert got == [
            f"azml-gpu:clusters[0].max_instances: {nodes} is above 100, the most nodes Azure ML runs in "
            f"one cluster of an RDMA size ({size}) (how-to-manage-quotas.md: nodes in a single AmlCompute "
            "cluster set up as a communication-enabled pool on an RDMA enabled VM family: 100 nodes); use "
            "at most 100, and a second cluster for more"
        ]
    else:
        assert got == []
