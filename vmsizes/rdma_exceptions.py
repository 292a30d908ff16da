"""Sizes whose 'r' (RDMA) does not make RDMA usable for NCCL: the one list of documented exceptions."""

from __future__ import annotations

# RDMA-capable but without SR-IOV, so there is no IP-over-InfiniBand and NCCL cannot use the fabric.
# Source: azure-notes.md section 1.3 item 1, citing
#   MicrosoftDocs/azure-ai-docs:articles/machine-learning/how-to-train-distributed-gpu.md
#     ("The older-generation machine SKU Standard_NC24r is RDMA-enabled, but it doesn't contain SR-IOV
#     hardware required for InfiniBand") and
#   MicrosoftDocs/azure-compute-docs:articles/virtual-machines/sizes/high-performance-compute/
#     setup-infiniband.md (non-SR-IOV sizes: H16r, H16mr, NC24r).
# NC24r_Promo is the same hardware as NC24r (azure-gpu-sizes.yaml notes on the Promo entries).
# H16r and H16mr are CPU sizes outside the catalog; listed so describe() of those names is right too.
NON_SRIOV_RDMA_SIZES: frozenset[str] = frozenset(
    {"standard_nc24r", "standard_nc24r_promo", "standard_h16r", "standard_h16mr"}
)

NON_SRIOV_SOURCE = (
    "azure-notes.md section 1.3 item 1: "
    "MicrosoftDocs/azure-ai-docs:articles/machine-learning/how-to-train-distributed-gpu.md; "
    "MicrosoftDocs/azure-compute-docs:articles/virtual-machines/sizes/high-performance-compute/setup-infiniband.md"
)


def rdma_usable_by_name(name: str, rdma: bool) -> bool:
    """RDMA usable for NCCL: the size has RDMA and is not a documented non-SR-IOV size."""
    return rdma and name.lower() not in NON_SRIOV_RDMA_SIZES
