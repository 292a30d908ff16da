"""The one list of sizes whose RDMA NCCL cannot use (vmsizes/rdma_exceptions.py): RDMA without SR-IOV, so no
IP-over-InfiniBand (how-to-train-distributed-gpu.md: Standard_NC24r; setup-infiniband.md: H16r, H16mr,
NC24r)."""

from __future__ import annotations

import pytest

from vmsizes import all_sizes
from vmsizes.rdma_exceptions import NON_SRIOV_RDMA_SIZES, rdma_usable_by_name


def test_the_exceptions_list_covers_exactly_the_catalog_sizes_with_unusable_rdma() -> None:
    unusable = {size.name.lower() for size in all_sizes() if size.rdma and not size.rdma_usable}
    assert unusable == {"standard_nc24r", "standard_nc24r_promo"}
    assert unusable <= NON_SRIOV_RDMA_SIZES


@pytest.mark.parametrize(
    ("name", "rdma", "usable"),
    [
        ("Standard_NC24r", True, False),
        ("STANDARD_NC24R_PROMO", True, False),  # any casing
        ("Standard_H16r", True, False),  # CPU sizes outside the catalog, named by setup-infiniband.md
        ("Standard_H16mr", True, False),
        ("Standard_NC24rs_v3", True, True),  # SR-IOV: NCCL uses the fabric
        ("Standard_NC24", False, False),  # no RDMA at all
    ],
)
def test_rdma_is_usable_unless_the_size_lacks_sr_iov(name: str, rdma: bool, usable: bool) -> None:
    assert rdma_usable_by_name(name, rdma) is usable
