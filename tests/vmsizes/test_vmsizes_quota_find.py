"""QuotaReport.find without a family: the pool of a size whose family the catalog does not know (family None),
as the quota-reservation policy and `jobs quota` see it."""

from __future__ import annotations

from vmsizes.quota import ClusterDemand, reserve


def test_find_without_a_family_is_the_unknown_family_pool() -> None:
    report = reserve(
        [
            ClusterDemand("x", "Standard_ND200isr_X_v9", "eastus", "dedicated", 2),
            ClusterDemand("h", "Standard_ND96isr_H100_v5", "eastus", "dedicated", 1),
        ]
    )
    pool = report.find("eastus", "family")
    assert pool is not None and pool.family is None and pool.clusters == ("x",) and pool.vcpus == 400
    assert report.find("eastus", "family", "standardNDSH100v5Family").clusters == ("h",)
