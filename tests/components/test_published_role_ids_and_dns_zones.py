"""Azure facts the stack depends on, pinned to the values Azure publishes (written from the pages, not from
the code): the private DNS zone of each private-link group (the built-in role definition GUIDs: azroles,
tests/azroles/test_init.py).

DNS zones: learn.microsoft.com/azure/private-link/private-endpoint-dns, "Azure services DNS zone
configuration" (MicrosoftDocs/azure-docs articles/private-link/private-endpoint-dns.md): the
"Private link resource type / Subresource" and "Private DNS zone name" columns.
"""

from __future__ import annotations

import pytest

from components import network

# private-link subresource (group id) -> the zones the page lists for it
PUBLISHED_ZONES = {
    "amlworkspace": ("privatelink.api.azureml.ms", "privatelink.notebooks.azure.net"),
    "blob": ("privatelink.blob.core.windows.net",),
    "file": ("privatelink.file.core.windows.net",),
    "vault": ("privatelink.vaultcore.azure.net",),
    "registry": ("privatelink.azurecr.io",),
}
SUB = "11111111-2222-3333-4444-555555555555"


@pytest.mark.parametrize(
    ("target", "group"),
    [
        ("workspace", "amlworkspace"),
        ("storage_blob", "blob"),
        ("storage_file", "file"),
        ("key_vault", "vault"),
        ("container_registry", "registry"),
    ],
)
def test_each_private_endpoint_uses_the_published_group_and_zones(target, group):
    assert network.TARGETS[target] == (group, PUBLISHED_ZONES[group])


def test_zone_ids_are_private_dns_zones_in_the_given_group():
    rg = f"/subscriptions/{SUB}/resourceGroups/rg-hub-dns"
    assert network.zone_id(rg, "privatelink.azurecr.io") == (
        f"{rg}/providers/Microsoft.Network/privateDnsZones/privatelink.azurecr.io"
    )
