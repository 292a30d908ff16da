"""The stand-in azure-native plugin's `getVault` (preflight/provider/server.py `Invoke`), called as the engine
calls it, without building the engine: its ARM store is the world outside the stack, answered by the same
model as the gate's mocks (`preflight.provider.model.get_vault`).

From the sources: a vault's GET answers the spec's stored defaults (azure-rest-api-specs keyvault.json
2024-11-01 `VaultProperties`: enableSoftDelete true; no default for enablePurgeProtection); a missing one is
ARM's 404 ResourceNotFound (troubleshooting/error-not-found), which fails azure-native's invoke."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime.proto import provider_pb2
from stand_in_provider import SUB, Aborted, Context, configured, struct

from preflight.mocks import AzureMocks
from preflight.provider.server import AzureNativeStandIn

KV = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
GET_VAULT = "azure-native:keyvault:getVault"
ARGS = {"resourceGroupName": "rg-keys", "vaultName": "kv-cmk"}
VAULT_URN = "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:keyvault:Vault::ws-kv"


@pytest.fixture
def provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AzureNativeStandIn:
    return configured(tmp_path, monkeypatch)


def get_vault(provider: AzureNativeStandIn) -> dict:
    r = provider.Invoke(provider_pb2.InvokeRequest(tok=GET_VAULT, args=struct(ARGS)), Context())
    return json.loads(json.dumps(dict(getattr(r, "return")), default=dict))


def test_a_seeded_vault_answers_as_the_gates_mocks_do(provider) -> None:
    seeded = {"id": KV, "name": "kv-cmk", "properties": {"enablePurgeProtection": True}}
    provider.store.put(KV, "", {}, seeded)
    answer = get_vault(provider)
    assert answer["id"] == KV and answer["properties"]["enablePurgeProtection"] is True
    assert answer["properties"]["enableSoftDelete"] is True  # the spec's default, stored at creation
    # One model: the same record gives the gate's mocks the same answer.
    mocks = AzureMocks(subscription_id=SUB, existing={KV.lower(): provider.store.get(KV)})
    assert mocks.call(pulumi_mocks.MockCallArgs(GET_VAULT, ARGS, "")) == answer


def test_a_vault_without_purge_protection_is_answered_without_it(provider) -> None:
    provider.store.put(KV, "", {}, {"id": KV, "properties": {"enableSoftDelete": True}})
    assert "enablePurgeProtection" not in get_vault(provider)["properties"]


def test_a_missing_vault_fails_the_invoke_with_arms_404(provider) -> None:
    with pytest.raises(Aborted) as info:
        get_vault(provider)
    code, details = info.value.args
    assert code == grpc.StatusCode.UNKNOWN
    assert details == (
        'Status=404 Code="ResourceNotFound" Message="The Resource \'Microsoft.KeyVault/vaults/kv-cmk\' under '
        "resource group 'rg-keys' was not found.\""
    )


def test_a_vault_an_earlier_up_made_is_found(provider) -> None:
    """A vault the stand-in created (Create, not a preview) exists afterwards, with what it was given."""
    inputs = {
        "vaultName": "kv-cmk",
        "resourceGroupName": "rg-keys",
        "location": "eastus",
        "properties": {
            "tenantId": "11111111-1111-1111-1111-111111111111",
            "sku": {"family": "A", "name": "standard"},
            "enablePurgeProtection": True,
        },
    }
    created = provider.Create(provider_pb2.CreateRequest(urn=VAULT_URN, properties=struct(inputs)), Context())
    assert created.id == KV
    answer = get_vault(provider)
    assert answer["properties"]["enablePurgeProtection"] is True
    assert answer["location"] == "eastus"
