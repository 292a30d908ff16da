"""`getVault` as the engine calls it (preflight/provider/server.py `Invoke`): offline from the resources
outside the stack the gate was told about (`--existing`), with an ARM endpoint from a GET of the vault, and a
missing vault the same ARM 404 both ways (azure-native's invoke fails with it).

From the sources: a vault's GET answers the spec's stored defaults (azure-rest-api-specs keyvault.json
2024-11-01 `VaultProperties`: enableSoftDelete true; no default for enablePurgeProtection); a missing one is
ARM's 404 ResourceNotFound (azure-resource-manager troubleshooting/error-not-found)."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from pulumi.runtime.proto import provider_pb2

from preflight.provider import model
from preflight.provider.server import AzureNativeStandIn

from .stand_in import SUB, Aborted, Context, configured, localml, plain, struct

KV = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
ARGS = {"resourceGroupName": "rg-keys", "vaultName": "kv-cmk"}
MISSING = (
    'Status=404 Code="ResourceNotFound" Message="The Resource \'Microsoft.KeyVault/vaults/kv-cmk\' under '
    "resource group 'rg-keys' was not found.\""
)
VAULT_URN = "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:keyvault:Vault::ws-kv"
GROUP_URN = "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:resources:ResourceGroup::rg"
GROUP = {"resourceGroupName": "rg-keys", "location": "eastus", "azureApiVersion": "2024-03-01"}
VAULT_INPUTS = {
    "vaultName": "kv-cmk",
    "resourceGroupName": "rg-keys",
    "location": "eastus",
    "azureApiVersion": "2024-11-01",
    "properties": {
        "tenantId": "11111111-1111-1111-1111-111111111111",
        "sku": {"family": "A", "name": "standard"},
        "enablePurgeProtection": True,
    },
}


def get_vault(provider: AzureNativeStandIn) -> dict:
    r = provider.Invoke(provider_pb2.InvokeRequest(tok=model.GET_VAULT, args=struct(ARGS)), Context())
    return plain(getattr(r, "return"))


def test_a_missing_vault_is_the_same_404_offline_and_from_arm(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(Aborted) as info:
        get_vault(configured(monkeypatch))
    assert info.value.args == (grpc.StatusCode.UNKNOWN, MISSING)
    provider = configured(monkeypatch, localml(tmp_path))
    with pytest.raises(Aborted) as info:  # ARM's own answer: here, the group is missing too
        get_vault(provider)
    assert info.value.args[1] == (
        'Status=404 Code="ResourceGroupNotFound" Message="Resource group \'rg-keys\' could not be found."'
    )
    provider.Create(provider_pb2.CreateRequest(urn=GROUP_URN, properties=struct(GROUP)), Context())
    with pytest.raises(Aborted) as info:
        get_vault(provider)
    assert info.value.args == (grpc.StatusCode.UNKNOWN, MISSING)


def test_with_arm_the_vault_an_earlier_up_made_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    plane = localml(tmp_path)
    provider = configured(monkeypatch, plane)
    provider.Create(provider_pb2.CreateRequest(urn=GROUP_URN, properties=struct(GROUP)), Context())
    created = provider.Create(
        provider_pb2.CreateRequest(urn=VAULT_URN, properties=struct(VAULT_INPUTS)), Context()
    )
    assert created.id == KV
    answer = get_vault(provider)
    assert answer["properties"]["enablePurgeProtection"] is True
    assert answer["properties"]["enableSoftDelete"] is True and answer["location"] == "eastus"
    # It is read from ARM, not remembered: gone there, it is gone for the invoke too.
    provider.Delete(provider_pb2.DeleteRequest(id=KV, urn=VAULT_URN), Context())
    with pytest.raises(Aborted):
        get_vault(provider)
