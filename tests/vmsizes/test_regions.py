"""The one rule for comparing Azure region names (vmsizes.regions.normalize_region) and its callers."""

from __future__ import annotations

import pytest

from vmsizes.regions import normalize_region


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ("eastus", "eastus"),
        ("East US", "eastus"),
        ("EAST US 2", "eastus2"),
        ("US Gov Virginia", "usgovvirginia"),
        (" West  Europe ", "westeurope"),
        # Only spaces are dropped (AzureLocation.GetNameFromDisplayName): other separators stay.
        ("east-us", "east-us"),
        ("east_us", "east_us"),
    ],
)
def test_spaces_dropped_and_lower_case(given: str, name: str) -> None:
    assert normalize_region(given) == name


def test_every_caller_uses_the_one_rule() -> None:
    """stackconfig's table lookup, the jobs region flags and the policies' reader fold as vmsizes does."""
    from jobs.regions import check_region
    from policies._common import norm_region
    from stackconfig.regions import canonical_region

    for spelling in ("East US 2", "eastus2", "EASTUS2"):
        assert canonical_region(spelling) == check_region(spelling, "--regions") == "eastus2"
        assert norm_region(spelling) == normalize_region(spelling) == "eastus2"
