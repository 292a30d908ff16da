"""Azure public-cloud region names, in the programmatic form ARM expects (`eastus`, not `East US`).

Sources:
- `Azure/azure-sdk-for-net: sdk/core/Azure.Core/src/AzureLocation.cs` (Microsoft's list of public-cloud
  locations with display names; the sovereign and closed regions in it are left out here).
- Newer regions, from `az account list-locations` output copied into public repositories:
  `piotrkica/Cloud_regions_latency: src/azure_provider/regions.py` (westus3, swedencentral, qatarcentral,
  polandcentral), `tal66/cloud-regions: web/data/azureData.js` (jioindiacentral, jioindiawest),
  `claranet/terraform-azurerm-regions: REGIONS.md` (israelcentral, italynorth).

A real region missing here is a one-line addition to `REGIONS` (with its source).
"""

from __future__ import annotations

import difflib

from vmsizes.regions import normalize_region

# name -> display name
REGIONS: dict[str, str] = {
    # Azure.Core AzureLocation.cs (public cloud)
    "eastasia": "East Asia",
    "southeastasia": "Southeast Asia",
    "centralus": "Central US",
    "eastus": "East US",
    "eastus2": "East US 2",
    "westus": "West US",
    "northcentralus": "North Central US",
    "southcentralus": "South Central US",
    "northeurope": "North Europe",
    "westeurope": "West Europe",
    "japanwest": "Japan West",
    "japaneast": "Japan East",
    "brazilsouth": "Brazil South",
    "australiaeast": "Australia East",
    "australiasoutheast": "Australia Southeast",
    "southindia": "South India",
    "centralindia": "Central India",
    "westindia": "West India",
    "canadacentral": "Canada Central",
    "canadaeast": "Canada East",
    "uksouth": "UK South",
    "ukwest": "UK West",
    "westcentralus": "West Central US",
    "westus2": "West US 2",
    "koreacentral": "Korea Central",
    "koreasouth": "Korea South",
    "francecentral": "France Central",
    "francesouth": "France South",
    "australiacentral": "Australia Central",
    "australiacentral2": "Australia Central 2",
    "uaecentral": "UAE Central",
    "uaenorth": "UAE North",
    "southafricanorth": "South Africa North",
    "southafricawest": "South Africa West",
    "switzerlandnorth": "Switzerland North",
    "switzerlandwest": "Switzerland West",
    "germanynorth": "Germany North",
    "germanywestcentral": "Germany West Central",
    "norwaywest": "Norway West",
    "norwayeast": "Norway East",
    "brazilsoutheast": "Brazil Southeast",
    # az account list-locations copies (see module docstring)
    "westus3": "West US 3",
    "swedencentral": "Sweden Central",
    "qatarcentral": "Qatar Central",
    "polandcentral": "Poland Central",
    "jioindiacentral": "Jio India Central",
    "jioindiawest": "Jio India West",
    "israelcentral": "Israel Central",
    "italynorth": "Italy North",
}

_BY_FOLDED: dict[str, str] = {name: name for name in REGIONS} | {
    normalize_region(display): name for name, display in REGIONS.items()
}


def canonical_region(value: str) -> str | None:
    """The programmatic name for `value` (`East US` -> `eastus`: vmsizes.regions), or None."""
    return _BY_FOLDED.get(normalize_region(value))


def nearest_region(value: str) -> str | None:
    """The closest known region name to an unknown `value`, for a 'did you mean' hint."""
    folded = normalize_region(value)
    close = difflib.get_close_matches(folded, list(REGIONS), n=1, cutoff=0.6)
    return close[0] if close else None


def region_problem(value: str) -> str | None:
    """None for a known region, else "'<value>' is not a known Azure region; <fix>" (nearest name)."""
    if canonical_region(value) is not None:
        return None
    near = nearest_region(value)
    fix = f"did you mean {near}?" if near else "use a region name such as eastus (az account list-locations)"
    return f"'{value}' is not a known Azure region; {fix}"
