"""vmsizes/azureml.py: what Azure ML compute clusters can run the project's jobs on, pinned to the published
values: the 100-node limit of an RDMA cluster (how-to-manage-quotas.md: "Nodes in a single Azure
Machine Learning compute (AmlCompute) cluster set up as a communication-enabled pool on an RDMA enabled VM
Family | 100 nodes"), the GPU series concept-compute-target.md's table lists (NC, NC Promo, NCv2, NCv3, ND,
NDv2, NV, NVv3, NCasT4_v3, NDasrA100_v4), AMD GPUs (docs/reference/azure-notes.md 1.3 item 7) and Arm hosts
(item 8) refused."""

from __future__ import annotations

import pytest

import vmsizes
from vmsizes import azureml


def test_an_rdma_cluster_holds_at_most_100_nodes() -> None:
    assert azureml.RDMA_MAX_NODES == 100


@pytest.mark.parametrize("name", ["Standard_ND96isr_MI300X_v5"])
def test_amd_gpus_are_refused_naming_rocm(name: str) -> None:
    reason = azureml.refusal(vmsizes.describe(name))
    assert reason is not None and reason.startswith("has AMD GPUs (AMD Instinct MI300X")
    assert "RCCL/ROCm" in reason and "NVIDIA CUDA/NCCL" in reason


@pytest.mark.parametrize(
    "name", ["Standard_ND128isr_NDR_GB200_v6", "Standard_ND128isr_GB300_v6", "Standard_ND128isrG5_GB300_v6"]
)
def test_arm_hosts_are_refused_naming_the_architecture(name: str) -> None:
    reason = azureml.refusal(vmsizes.describe(name))
    assert reason is not None and reason.startswith("has Arm (Grace) host CPUs (ND GB")
    assert "x86-64" in reason


@pytest.mark.parametrize(
    "name",
    [
        "Standard_ND96isr_H100_v5",
        "Standard_ND96isr_H200_v5",
        "Standard_NC24ads_A100_v4",
        "Standard_NC4as_T4_v3",
        "Standard_ND96amsr_A100_v4",
    ],
)
def test_nvidia_sizes_on_x86_hosts_run_the_jobs(name: str) -> None:
    assert azureml.refusal(vmsizes.describe(name)) is None


@pytest.mark.parametrize(
    "name, listed",
    [
        ("Standard_NC4as_T4_v3", True),  # NCasT4_v3
        ("Standard_ND96asr_v4", True),  # NDasrA100_v4
        ("Standard_NC24s_v3", True),  # NCv3
        ("Standard_ND40rs_v2", True),  # NDv2
        ("Standard_ND96isr_H100_v5", False),  # newer than the table: the live list decides
        ("Standard_NC24ads_A100_v4", False),
    ],
)
def test_the_documented_series_are_the_pages_table(name: str, listed: bool) -> None:
    assert azureml.documented(vmsizes.describe(name)) is listed


def test_the_live_list_compares_names_case_insensitively() -> None:
    offered = ["STANDARD_ND96ISR_H100_V5", "Standard_NC24ads_A100_v4"]
    assert azureml.offered_live("Standard_ND96isr_H100_v5", offered)
    assert not azureml.offered_live("Standard_ND96isr_H200_v5", offered)
    assert not azureml.offered_live("Standard_ND96isr_H100_v5", [])
