"""Rules that involve more than one field. Each returns (key, "<what is wrong>; <fix>") pairs.

They take plain values so `validate()` can apply them to the fields that passed their own checks even when
other fields of the same cluster failed, and so every problem is reported at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import vmsizes
from vmsizes import azureml

NODE_PUBLIC_IP_PROBLEM = (
    "node_public_ip",
    "false needs subnet_id or a managed network: nodes without a public IP must sit in a virtual network; "
    "set "
    "subnet_id to the subnet's ARM id, add network.managed, or set node_public_ip: true",
)


def cluster_rules(values: Mapping[str, Any], managed_network: bool | None = False) -> list[tuple[str, str]]:
    """Rules of one cluster. `values` holds only the fields that passed their own checks (defaults filled).
    `managed_network`: whether the workspace has one (None: not known here, the node public IP rule is left
    to `stackconfig.combinations`). The other network rules (subnet, region) are in
    `stackconfig.combinations`.

    Nodes without a public IP need a virtual network: a subnet, or the workspace's managed network
    (MicrosoftDocs/azure-docs articles/machine-learning/v1/how-to-secure-training-vnet.md; how-to-managed-
    network-compute.md; terraform azurerm required subnet_resource_id with node_public_ip_enabled false until
    managed-network workspaces were exempted, hashicorp/terraform-provider-azurerm #25901, #26073)."""
    problems: list[tuple[str, str]] = []
    if (
        managed_network is False
        and values.get("node_public_ip") is False
        and "subnet_id" in values
        and values["subnet_id"] is None
    ):
        problems.append(NODE_PUBLIC_IP_PROBLEM)
    low, high = values.get("min_instances"), values.get("max_instances")
    if high is not None:
        if low is not None and high < low:
            problems.append(("max_instances", f"{high} is below min_instances ({low}); use at least {low}"))
        elif high < 1:
            problems.append(
                (
                    "max_instances",
                    f"{high} is below 1; use at least 1 (min_instances: 0 still scales to zero)",
                )
            )
        elif high > azureml.RDMA_MAX_NODES and _rdma(values.get("size")):
            problems.append(
                (
                    "max_instances",
                    f"{high} is above {azureml.RDMA_MAX_NODES}, the most nodes Azure ML runs in one cluster "
                    f"of an RDMA size ({values['size']}) ({azureml.RDMA_MAX_NODES_SOURCE}); use at most "
                    f"{azureml.RDMA_MAX_NODES}, and a second cluster for more",
                )
            )
    return problems


def _rdma(size: Any) -> bool:
    """Whether `size` (a name that passed its own check, or absent) is an RDMA size."""
    if not isinstance(size, str):
        return False
    try:
        return vmsizes.describe(size).rdma
    except vmsizes.UnknownSize:
        return False


def stack_rules(cluster_names: Sequence[str | None]) -> list[tuple[str, str]]:
    """Rules across clusters. `cluster_names[i]` is None when that cluster's name failed its own check."""
    problems: list[tuple[str, str]] = []
    first: dict[str, int] = {}
    for index, name in enumerate(cluster_names):
        if name is None:
            continue
        # Compute names are unique per workspace, compared case-insensitively like every ARM name
        # (resource-name-rules.md: "Always perform a case-insensitive comparison of names").
        key = name.lower()
        if key in first:
            problems.append(
                (
                    f"clusters[{index}].name",
                    f"'{name}' is already the name of clusters[{first[key]}]; give each cluster its own name",
                )
            )
        else:
            first[key] = index
    return problems
