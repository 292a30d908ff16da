"""`identity.customer_managed_key.acknowledged`: what a customer-managed key needs that no Azure read can
check (docs/azure-behaviour.md section 18), refused until acknowledged, each refusal with the commands.

Facts from the sources, not from the code: the Azure Cosmos DB principal and its key permissions
(how-to-setup-customer-managed-keys.md, "Allow Azure Cosmos DB to access the key": "Get, Unwrap Key, and Wrap
key"; "a232010e-820c-4083-83bb-3ace5fc29d0b for all regions other than Azure Government. For Azure Government,
the principal ID is 57506a73-e302-42a9-b869-6f12d9ec29e9"), the RBAC role for it (cosmos-db
how-to-setup-customer-managed-keys.md: "Key Vault Crypto Service Encryption User"), and the providers
(how-to-setup-customer-managed-keys.md, Prerequisites: Microsoft.MachineLearningServices, Microsoft.Storage,
Microsoft.KeyVault, Microsoft.DocumentDB, Microsoft.Search)."""

from __future__ import annotations

import pytest
from stackconfig_factory import good_raw

from stackconfig import ConfigError, validate

SUB = "00000000-0000-0000-0000-000000000000"
KV = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
UAI = (
    f"/subscriptions/{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/userAssignedIdentities/u"
)
KEY_URI = "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef"
AT = "azml-gpu:identity.customer_managed_key.acknowledged"
COSMOS_PUBLIC = "a232010e-820c-4083-83bb-3ace5fc29d0b"
COSMOS_GOVERNMENT = "57506a73-e302-42a9-b869-6f12d9ec29e9"
PROVIDERS = (
    "Microsoft.MachineLearningServices",
    "Microsoft.Storage",
    "Microsoft.KeyVault",
    "Microsoft.DocumentDB",
    "Microsoft.Search",
)


def key(**changes) -> dict:
    raw = good_raw()
    raw["identity"] = {
        "customer_managed_key": {
            "key_vault_id": KV,
            "key_uri": KEY_URI,
            "user_assigned_identity_id": UAI,
            **changes,
        }
    }
    return raw


def problems(raw: dict) -> list[str]:
    try:
        validate(raw)
    except ConfigError as exc:
        return list(exc.problems)
    return []


def test_a_key_without_acknowledgements_is_refused_with_every_command() -> None:
    (p,) = problems(key())
    assert p.startswith(f"{AT}: not acknowledged: cosmos_db_key_access: ")
    # The Cosmos DB principal, in both clouds, and the three key permissions.
    assert COSMOS_PUBLIC in p and COSMOS_GOVERNMENT in p
    assert "Get, Wrap Key and Unwrap Key" in p
    # Both permission models of the vault: an access policy, or the RBAC role on the vault itself.
    assert (
        f"az keyvault set-policy --name kv-cmk --spn {COSMOS_PUBLIC} --key-permissions get wrapKey unwrapKey"
        in p
    )
    assert (
        f"az role assignment create --assignee {COSMOS_PUBLIC} "
        f'--role "Key Vault Crypto Service Encryption User" --scope {KV}'
    ) in p
    # Every provider of the prerequisites table, each with its register command.
    for provider in PROVIDERS:
        assert f"az provider register --namespace {provider}" in p
    assert "add cosmos_db_key_access, providers_registered to acknowledged" in p


@pytest.mark.parametrize(
    ("given", "missing", "absent"),
    [
        (["providers_registered"], "cosmos_db_key_access", "az provider register"),
        (["cosmos_db_key_access"], "providers_registered", COSMOS_PUBLIC),
    ],
)
def test_only_the_missing_acknowledgement_is_named(given: list[str], missing: str, absent: str) -> None:
    (p,) = problems(key(acknowledged=given))
    assert p.startswith(f"{AT}: not acknowledged: {missing}: ")
    assert absent not in p  # the one acknowledged is not asked again
    assert f"then add {missing} to acknowledged" in p


@pytest.mark.parametrize(
    "given",
    [
        ["cosmos_db_key_access", "providers_registered"],
        ["providers_registered", "cosmos_db_key_access"],
        ["providers_registered", "cosmos_db_key_access", "providers_registered"],
    ],
)
def test_both_acknowledgements_in_any_order_are_accepted(given: list[str]) -> None:
    cmk = validate(key(acknowledged=given)).identity.customer_managed_key
    assert cmk is not None and set(cmk.acknowledged) == {"cosmos_db_key_access", "providers_registered"}


@pytest.mark.parametrize("bad", ["cosmos", "Providers_Registered", ""])
def test_an_unknown_acknowledgement_is_refused_by_name(bad: str) -> None:
    (p,) = problems(key(acknowledged=["cosmos_db_key_access", "providers_registered", bad]))
    assert p == (
        f"{AT}: {bad!r} is not an acknowledgement; use cosmos_db_key_access and providers_registered"
    )


def test_acknowledgements_are_a_list() -> None:
    (p,) = problems(key(acknowledged="cosmos_db_key_access"))
    assert p.startswith(f"{AT}: expected a list, got 'cosmos_db_key_access'")


def test_no_customer_managed_key_needs_no_acknowledgement() -> None:
    raw = good_raw()
    raw["identity"] = {}
    assert validate(raw).identity.customer_managed_key is None
