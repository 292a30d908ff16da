"""stackconfig/regions.py: a region written as the portal shows it is the canonical name Azure's APIs take
(Azure.Core `AzureLocation`: spaces dropped, lower case). Unknown regions with their "did you mean" are rows
of the invalid table (test_validation.py)."""

from __future__ import annotations

import pytest

from stackconfig import validate

from .stackconfig_factory import good_raw


@pytest.mark.parametrize("written", ["East US", "eastus", "EASTUS", "East  US"])
def test_a_region_in_any_spelling_is_its_canonical_name(written: str) -> None:
    raw = good_raw()
    raw["workspace"]["region"] = written
    config = validate(raw)
    assert config.workspace.region == "eastus"
    assert config.clusters[0].region == "eastus"  # the workspace's, canonical
