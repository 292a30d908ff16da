"""The customer-managed key's vault, read at preview and up (`keyvault.get_vault`), under the gate's mocks
with the vault seeded as an existing resource outside the stack.

From the sources, not from the code:
- how-to-setup-customer-managed-keys.md ("Create Azure Key Vault"): "When creating Azure Key Vault, you must
  enable soft delete and purge protection".
- azure-rest-api-specs keyvault.json 2024-11-01 `VaultProperties`: `enablePurgeProtection` has no default
  ("does not accept false"), `enableSoftDelete` defaults to true. `az keyvault show` prints an
  `enablePurgeProtection` of null for a vault that never had it.
- learn.microsoft.com/azure/key-vault/general/key-vault-recovery: the fix, `az keyvault update --subscription
  {SUBSCRIPTION ID} -g {RESOURCE GROUP} -n {VAULT NAME} --enable-purge-protection true`.
- learn.microsoft.com/azure/azure-resource-manager/troubleshooting/error-not-found: a missing resource is
  `ResourceNotFound`, "The Resource '<type>/<name>' under resource group '<group>' was not found."
"""

from __future__ import annotations

import pytest
from components_helpers import KEY_VAULT, ML_WORKSPACE, ns, one, variant

from preflight.program import run_program

SUB = "00000000-0000-0000-0000-000000000000"
KV = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
UAI = (
    f"/subscriptions/{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/userAssignedIdentities/"
    "id-train"
)
KEY_URI = "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef"
GET_VAULT = "azure-native:keyvault:getVault"
PURGE_FIX = f"az keyvault update --subscription {SUB} -g rg-keys -n kv-cmk --enable-purge-protection true"
SOFT_FIX = f"az keyvault update --subscription {SUB} -g rg-keys -n kv-cmk --enable-soft-delete true"


@pytest.fixture
def config(stack_configs) -> dict:
    base = stack_configs["prod"]
    identity = dict(
        ns(base, "identity"),
        customer_managed_key={
            "key_vault_id": KV,
            "key_uri": KEY_URI,
            "user_assigned_identity_id": UAI,
            "acknowledged": ["cosmos_db_key_access", "providers_registered"],
        },
    )
    return variant(base, identity=identity)


def vault(properties: dict, arm_id: str = KV) -> dict:
    """The vault as `az keyvault show` prints it (id, name, type, properties)."""
    body = {"id": arm_id, "name": arm_id.rsplit("/", 1)[-1], "type": "Microsoft.KeyVault/vaults"}
    return {arm_id: {"id": arm_id, "type": "", "outputs": {**body, "properties": properties}}}


def error_of(config: dict, existing: dict, preview: bool = True) -> str:
    result = run_program("prod", config=config, existing=existing, preview=preview)
    assert not result.ok and result.error, "expected the program to fail"
    # Nothing encrypted is declared: the workspace never reaches the engine.
    assert result.of_type(ML_WORKSPACE) == []
    return str(result.error)


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize(
    "properties",
    [
        {"enableSoftDelete": True, "enablePurgeProtection": True},
        {"enablePurgeProtection": True},  # soft delete absent: the spec's default, true
    ],
)
def test_a_purge_protected_vault_gets_the_encrypted_workspace(config, properties, preview) -> None:
    result = run_program("prod", config=config, existing=vault(properties), preview=preview)
    assert result.ok, (result.error, result.problems)
    reads = [a for t, a in result.invokes if t == GET_VAULT]
    assert [(a["resourceGroupName"], a["vaultName"]) for a in reads] == [("rg-keys", "kv-cmk")]
    encryption = one(result, ML_WORKSPACE).program_inputs["encryption"]
    assert encryption["keyVaultProperties"] == {"keyVaultArmId": KV, "keyIdentifier": KEY_URI}
    # The stack's own vault is a different one, untouched by the key's.
    assert one(result, KEY_VAULT).inputs["vaultName"] != "kv-cmk"


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize(
    "properties",
    [
        {"enableSoftDelete": True},  # never turned on: absent
        {"enableSoftDelete": True, "enablePurgeProtection": None},  # as `az keyvault show` prints it
        {"enableSoftDelete": True, "enablePurgeProtection": False},
    ],
)
def test_purge_protection_off_fails_with_the_vault_and_the_fix(config, properties, preview) -> None:
    message = error_of(config, vault(properties), preview)
    assert f"the key vault {KV} has purge protection off" in message
    assert "soft delete and purge protection" in message
    assert message.endswith(PURGE_FIX)
    assert "soft delete off" not in message


def test_soft_delete_off_names_both_fixes_soft_delete_first(config) -> None:
    message = error_of(config, vault({"enableSoftDelete": False}))
    assert f"the key vault {KV} has soft delete off" in message
    assert f"the key vault {KV} has purge protection off" in message
    # purge protection "is effective only if soft delete is also enabled" (VaultProperties): that fix first
    assert message.index(SOFT_FIX) < message.index(PURGE_FIX)


@pytest.mark.parametrize(
    "existing",
    [
        {},  # no vault at all
        # the same name in another resource group: a vault GET is by group and name
        vault({"enablePurgeProtection": True}, KV.replace("rg-keys", "rg-other")),
    ],
)
def test_a_missing_vault_fails_with_arms_not_found(config, existing) -> None:
    message = error_of(config, existing)
    assert message.startswith(f"customer-managed key: cannot read the key vault {KV} (")
    assert "ResourceNotFound" in message
    assert (
        "The Resource 'Microsoft.KeyVault/vaults/kv-cmk' under resource group 'rg-keys' was not found."
        in (message)
    )
    assert "az keyvault show --ids" in message


def test_arm_ids_compare_without_case(config) -> None:
    upper = KV.replace("rg-keys", "RG-KEYS").replace("kv-cmk", "KV-CMK")
    result = run_program("prod", config=config, existing=vault({"enablePurgeProtection": True}, upper))
    assert result.ok, result.error


def test_the_vault_is_not_read_before_the_key_is_acknowledged(config) -> None:
    ident = ns(config, "identity")
    key = {k: v for k, v in ident["customer_managed_key"].items() if k != "acknowledged"}
    result = run_program(
        "prod",
        config=variant(config, identity={**ident, "customer_managed_key": key}),
        existing=vault({"enablePurgeProtection": True}),
    )
    assert [p.split(": ", 1)[0] for p in result.problems] == [
        "azml-gpu:identity.customer_managed_key.acknowledged"
    ]
    assert result.resources == [] or all(r.type == "pulumi:pulumi:Stack" for r in result.resources)
    assert GET_VAULT not in [t for t, _ in result.invokes]


def test_no_key_reads_no_vault(stack_configs) -> None:
    result = run_program("prod", config=stack_configs["prod"])
    assert result.ok
    assert GET_VAULT not in [t for t, _ in result.invokes]


# Azure Cosmos DB (which Azure ML encrypts with the key) "must be accessible through public network access or
# allow trusted Microsoft services to bypass its firewall. An instance that is exclusively accessible through
# private endpoints can't be used" (cosmos-db how-to-setup-customer-managed-keys.md). `networkAcls.bypass`
# defaults to AzureServices and `publicNetworkAccess` to enabled (keyvault.json 2024-11-01, VaultProperties).
BYPASS_FIX = f"az keyvault update --subscription {SUB} -g rg-keys -n kv-cmk --bypass AzureServices"
PROTECTED = {"enablePurgeProtection": True}


@pytest.mark.parametrize(
    ("network", "closed"),
    [
        (
            {"publicNetworkAccess": "disabled", "networkAcls": {"bypass": "None"}},
            "public network access disabled",
        ),
        (
            {"publicNetworkAccess": "Disabled", "networkAcls": {"bypass": "None"}},
            "public network access disabled",
        ),
        ({"networkAcls": {"bypass": "None", "defaultAction": "Deny"}}, "its firewall denying by default"),
    ],
)
def test_a_vault_closed_to_trusted_services_is_refused(config, network, closed) -> None:
    message = error_of(config, vault({**PROTECTED, **network}))
    assert f"the key vault {KV} lets no trusted Microsoft service in ({closed}" in message
    assert message.endswith(BYPASS_FIX)
    assert "purge protection off" not in message


@pytest.mark.parametrize(
    "network",
    [
        {},  # no firewall: public
        {"publicNetworkAccess": "disabled", "networkAcls": {"bypass": "AzureServices"}},
        {"publicNetworkAccess": "disabled", "networkAcls": {"defaultAction": "Deny"}},  # bypass defaults
        {"networkAcls": {"bypass": "None", "defaultAction": "Allow"}},  # public, no rule denies
    ],
)
def test_a_vault_reachable_by_trusted_services_or_publicly_passes(config, network) -> None:
    result = run_program("prod", config=config, existing=vault({**PROTECTED, **network}))
    assert result.ok, result.error


@pytest.mark.parametrize(
    "bad",
    [
        f"/subscriptions/{SUB}/resourceGroups/rg-keys",
        f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.Storage/storageAccounts/kv-cmk",
        KV + "/keys/ws-key",
    ],
)
def test_the_component_refuses_an_id_that_names_no_vault(bad) -> None:
    """Below the config's check (stackconfig refuses these first): the component's own guard, by message."""
    from components.workspace import CustomerKeyError, read_key_vault

    with pytest.raises(CustomerKeyError) as info:
        read_key_vault(bad)
    assert str(info.value) == (
        f"customer-managed key: {bad!r} is not the ARM id of a key vault; use "
        "/subscriptions/<subscription-id>/resourceGroups/<rg>/providers/Microsoft.KeyVault/vaults/<name>"
    )
