"""How an Azure region name is compared: the one rule, used by every part of the project.

ARM accepts a location as its programmatic name (`eastus`) or its display name (`East US`). Azure's SDKs turn
one into the other by dropping the spaces and lower-casing the rest: Azure.Core's `AzureLocation`
(Azure/azure-sdk-for-net sdk/core/Azure.Core/src/AzureLocation.cs, `GetNameFromDisplayName`: every ' '
skipped, every other character `char.ToLowerInvariant`), and the AzureRM Terraform provider compares user
input with API responses the same way (hashicorp/terraform-provider-azurerm
azurerm/internal/location/normalize.go `Normalize`: lower-case, " " removed). Only the space is dropped:
`east-us` or `east_us` is no spelling of `eastus` in either source, so it stays unequal here too.

Which names are real regions is stackconfig.regions' table; this module only says when two spellings are
the same name. It lives in vmsizes, the lowest layer, because the catalog (regional retirement extensions,
quota pools) needs it and the policy pack imports vmsizes but not stackconfig.
"""

from __future__ import annotations


def normalize_region(region: str) -> str:
    """The programmatic form of a region name: spaces dropped, lower case ("East US 2" -> "eastus2")."""
    return region.replace(" ", "").lower()
