"""Quota reservation: pools per (region, family), regional totals, low-priority per region."""

from __future__ import annotations

import pytest

from vmsizes import all_sizes
from vmsizes.quota import (
    ClusterDemand,
    Pool,
    catalog_family,
    config_key,
    config_value,
    family_key,
    reserve,
    reserve_each,
    same_family,
)

H100 = "Standard_ND96isr_H100_v5"


def _pools(report) -> set[tuple]:
    return {(p.region, p.kind, p.family, p.vcpus, p.clusters) for p in report.pools}


@pytest.mark.parametrize(("nodes", "vcpus"), [(4, 384), (2, 192), (1, 96), (0, 0)])
def test_the_seed_example(nodes: int, vcpus: int) -> None:
    """Seed: one ND96isr_H100_v5 is 96 vCPUs; 4 nodes need 384 of the family, 2 nodes 192."""
    report = reserve([ClusterDemand("h100-x4", H100, "eastus", "dedicated", nodes)])
    assert _pools(report) == {
        ("eastus", "family", "standardNDSH100v5Family", vcpus, ("h100-x4",)),
        ("eastus", "regional-total", None, vcpus, ("h100-x4",)),
    }
    assert [p.kind for p in report.pools] == ["family", "regional-total"]


def test_low_priority_goes_to_the_region_low_priority_pool_only() -> None:
    report = reserve(
        [
            ClusterDemand("h100-x4", H100, "eastus", "dedicated", 4),
            ClusterDemand("spot-a100", "Standard_NC24ads_A100_v4", "eastus", "low_priority", 3),
            ClusterDemand("spot-t4", "Standard_NC4as_T4_v3", "eastus", "low_priority", 5),
        ]
    )
    assert _pools(report) == {
        ("eastus", "family", "standardNDSH100v5Family", 384, ("h100-x4",)),
        ("eastus", "regional-total", None, 384, ("h100-x4",)),
        # one value across families: 3 x 24 + 5 x 4
        ("eastus", "low-priority", None, 92, ("spot-a100", "spot-t4")),
    }


def test_two_regions_are_kept_apart() -> None:
    report = reserve(
        [
            ClusterDemand("east", H100, "eastus", "dedicated", 2),
            ClusterDemand("west", H100, "westus3", "dedicated", 1),
            ClusterDemand("west-lp", H100, "westus3", "low_priority", 1),
        ]
    )
    assert _pools(report) == {
        ("eastus", "family", "standardNDSH100v5Family", 192, ("east",)),
        ("eastus", "regional-total", None, 192, ("east",)),
        ("westus3", "family", "standardNDSH100v5Family", 96, ("west",)),
        ("westus3", "regional-total", None, 96, ("west",)),
        ("westus3", "low-priority", None, 96, ("west-lp",)),
    }
    assert report.regions == ["eastus", "westus3"]
    assert {p.kind for p in report.for_region("westus3")} == {"family", "regional-total", "low-priority"}
    assert report.for_region("centralus") == []


def test_families_in_one_region_add_up_in_the_regional_total() -> None:
    report = reserve(
        [
            ClusterDemand("a", "Standard_NC24ads_A100_v4", "eastus", "dedicated", 2),
            ClusterDemand("b", "standard_nc96ads_a100_v4", "East US", "dedicated", 1),
            ClusterDemand("c", H100, "eastus", "dedicated", 1),
        ]
    )
    assert report.find("eastus", "family", "StandardNCADSA100v4Family").vcpus == 2 * 24 + 96
    assert report.find("eastus", "family", "standardncadsa100v4family").clusters == ("a", "b")
    assert report.find("EAST US", "family", "standardNDSH100v5Family").vcpus == 96
    assert report.find("eastus", "regional-total").vcpus == 2 * 24 + 96 + 96
    assert report.find("eastus", "low-priority") is None


def test_constrained_sizes_reserve_their_base_vcpus() -> None:
    """Unconfirmed whether quota counts active or base vCPUs (azure-notes.md 1.2): the larger, base count."""
    report = reserve([ClusterDemand("hpc", "Standard_HB120-16rs_v3", "southcentralus", "dedicated", 2)])
    assert report.find("southcentralus", "family", "standardHBv3Family").vcpus == 240
    (line,) = report.reservations
    assert (line.size, line.nodes, line.vcpus_per_node, line.vcpus) == ("Standard_HB120-16rs_v3", 2, 120, 240)


def test_sizes_with_unknown_families_get_their_own_pools_with_family_none() -> None:
    report = reserve(
        [
            ClusterDemand("rtx", "Standard_NC128ds_xl_RTXPRO6000BSE_v6", "eastus", "dedicated", 1),
            ClusterDemand("rtx2", "Standard_NC256ds_xl_RTXPRO6000BSE_v6", "eastus", "dedicated", 2),
            ClusterDemand("noib", "Standard_ND96is_noIB_H100_v5", "eastus", "dedicated", 1),
        ]
    )
    family_pools = [p for p in report.pools if p.kind == "family"]
    assert {(p.family, p.vcpus, p.label) for p in family_pools} == {
        (None, 128, "unknown family of Standard_NC128ds_xl_RTXPRO6000BSE_v6"),
        (None, 512, "unknown family of Standard_NC256ds_xl_RTXPRO6000BSE_v6"),
        (None, 96, "unknown family of Standard_ND96is_noIB_H100_v5"),  # inferred from the name
    }
    assert report.find("eastus", "regional-total").vcpus == 128 + 512 + 96


def test_pool_labels() -> None:
    report = reserve(
        [
            ClusterDemand("a", H100, "eastus", "dedicated", 1),
            ClusterDemand("b", H100, "eastus", "low_priority", 1),
        ]
    )
    assert [p.label for p in report.pools] == [
        "standardNDSH100v5Family",
        "total regional dedicated vCPUs",
        "low-priority vCPUs (all families)",
    ]
    assert isinstance(report.pools[0], Pool)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tier": "spot"}, "cluster 'c': tier 'spot' is not one of dedicated, low_priority"),
        ({"max_instances": -1}, "cluster 'c': max_instances -1 must be a whole number >= 0"),
        ({"max_instances": True}, "max_instances True"),
        ({"max_instances": 2.5}, "max_instances 2.5"),
        ({"region": " "}, "cluster 'c': region is empty"),
    ],
)
def test_bad_demands_name_the_field(kwargs: dict, message: str) -> None:
    fields = {"name": "c", "size": H100, "region": "eastus", "tier": "dedicated", "max_instances": 1} | kwargs
    with pytest.raises(ValueError) as caught:
        ClusterDemand(**fields)
    assert message in str(caught.value)


def test_unknown_size_in_a_demand_raises_unknown_size() -> None:
    from vmsizes import UnknownSize

    with pytest.raises(UnknownSize, match="'ND96'"):
        reserve([ClusterDemand("c", "ND96", "eastus", "dedicated", 1)])


def test_reserve_each_reserves_the_valid_claims_and_names_the_rest() -> None:
    report, rejected = reserve_each(
        [
            ("h100-x4", H100, "East US", "dedicated", 4),
            ("typo", "gpu-large", "eastus", "dedicated", 2),
            ("odd-tier", H100, "eastus", "spot", 1),
            ("no-region", H100, None, "dedicated", 1),
            ("no-size", None, "eastus", "dedicated", 1),
            ("h100-x1", H100, "eastus", "dedicated", 1),
        ]
    )
    assert _pools(report) == {
        ("eastus", "family", "standardNDSH100v5Family", 480, ("h100-x4", "h100-x1")),
        ("eastus", "regional-total", None, 480, ("h100-x4", "h100-x1")),
    }
    assert [name for name, _ in rejected] == ["typo", "odd-tier", "no-region", "no-size"]
    assert rejected[0][1].startswith("'gpu-large' is not an Azure VM size name")
    assert rejected[1][1] == "cluster 'odd-tier': tier 'spot' is not one of dedicated, low_priority"
    assert reserve_each([]) == (reserve([]), [])


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("standardNDSH100v5Family", "standardndsh100v5"),  # Compute usages name.value (the catalog)
        ("Standard NDSH100v5 Family vCPUs", "standardndsh100v5"),  # its localizedValue
        ("Standard NDSH100v5 Family Cluster Dedicated vCPUs", "standardndsh100v5"),  # Azure ML usages
        ("Standard NCASv3_T4 Family", "standardncasv3t4"),  # the catalog's spelling with spaces and "_"
        ("Standard NCASv3_T4 Family Cluster Dedicated vCPUs", "standardncasv3t4"),
        ("standardNDISR GB300V6 Family", "standardndisrgb300v6"),  # azure-notes.md section 3
        ("standardNCPromoFamily", "standardncpromo"),
        # low-priority family rows keep their suffix, so they match no dedicated family
        ("Standard NC Family Cluster LowPriority vCPUs", "standardncfamilyclusterlowpriority"),
        ("total", "total"),
        ("lowPriority", "lowpriority"),
    ],
)
def test_family_key_pins_the_one_matching_rule(name: str, key: str) -> None:
    assert family_key(name) == key


def test_family_names_match_across_spellings_and_families_stay_apart() -> None:
    assert same_family("Standard NCASv3_T4 Family", "standardNCASv3_T4Family")
    assert same_family("standardNCSv3Family", "Standard NCSv3 Family Cluster Dedicated vCPUs")
    assert not same_family("standardNCFamily", "standardNCSv3Family")
    assert not same_family("standardNCFamily", "standardNCPromoFamily")
    assert same_family(None, None) and not same_family(None, "standardNCFamily")
    # Every catalog family keeps its own key: the rule merges no two catalog families.
    families = {s.quota_family for s in all_sizes() if s.quota_family}
    assert len({family_key(f) for f in families}) == len(families)
    assert catalog_family("Standard NDSH100v5 Family Cluster Dedicated vCPUs") == "standardNDSH100v5Family"
    assert catalog_family("Standard DSv2 Family Cluster Dedicated vCPUs") is None


def test_config_keys_of_the_three_pool_kinds() -> None:
    assert config_key("regional-total", None) == "total"
    assert config_key("low-priority", None) == "lowPriority"
    assert config_key("family", "standardNCSv3Family") == "standardNCSv3Family"
    assert config_key("family", None) is None
    region = {"Total": 500, "LowPriority": 50, "Standard NCSv3 Family vCPUs": 48, "foo": 1}
    assert config_value(region, "regional-total", None) == 500
    assert config_value(region, "low-priority", None) == 50
    assert config_value(region, "family", "standardNCSv3Family") == 48
    assert config_value(region, "family", "standardNCFamily") is None
    assert config_value(region, "family", None) is None


def test_one_pool_per_family_whatever_the_spelling_of_the_size_names() -> None:
    """Two T4 sizes share `Standard NCASv3_T4 Family`; the pool is found by the Azure ML spelling."""
    report = reserve(
        [
            ClusterDemand("t4-a", "Standard_NC4as_T4_v3", "East US", "dedicated", 2),
            ClusterDemand("t4-b", "Standard_NC8as_T4_v3", "eastus", "dedicated", 1),
        ]
    )
    pool = report.find("EAST US", "family", "Standard NCASv3_T4 Family Cluster Dedicated vCPUs")
    assert pool is not None and (pool.vcpus, pool.clusters) == (2 * 4 + 8, ("t4-a", "t4-b"))


# QuotaReport.find without a family: the pool of a size whose family the catalog does not know (family
# None), as the quota-reservation policy and `jobs quota` see it.
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
