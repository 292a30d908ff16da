"""`--existing F`: resources outside the stack the program reads, as `az keyvault show` prints them. prod
with a customer-managed key reads the key's vault at preview: a vault the gate was not told about answers as
Azure's 404 (exit 2, with the --existing hint); one with purge protection off is refused by the program
(exit 2, with the command that turns it on); one with it on passes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.gate.runner import Command, Gates, Outcome, Spec
from tests.integration.gate.specs import SUB, stack_text

VAULT = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"


def _customer_key(config: dict[str, Any]) -> None:
    identity = dict(config.get("azml-gpu:identity") or {})
    identity["customer_managed_key"] = {
        "key_vault_id": VAULT,
        "key_uri": "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef",
        "user_assigned_identity_id": (
            f"/subscriptions/{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/"
            "userAssignedIdentities/id-cmk"
        ),
        "acknowledged": ["cosmos_db_key_access", "providers_registered"],
    }
    config["azml-gpu:identity"] = identity


CMK = stack_text("prod", _customer_key)


def vault(**properties: bool) -> str:
    """`az keyvault show --ids VAULT` of the vault, with these properties."""
    body = {"id": VAULT, "name": "kv-cmk", "type": "Microsoft.KeyVault/vaults", "location": "eastus"}
    return json.dumps({**body, "properties": {"enableSoftDelete": True, **properties}})


PURGE_OFF = Spec("prod-cmk-purge-protection-off", "prod", stack_text=CMK, existing_text=vault())
PURGE_ON = Spec(
    "prod-cmk-purge-protection-on", "prod", stack_text=CMK, existing_text=vault(enablePurgeProtection=True)
)


@pytest.fixture(scope="module")
def runs(gates: Gates, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    stack_file = tmp_path_factory.mktemp("cmk") / "Pulumi.prod.yaml"
    stack_file.write_text(CMK)
    missing = Command("prod-cmk-vault-missing", ("prod", "--json", "--config-file", str(stack_file)))
    return {o.name: o for o in gates.run(missing, PURGE_OFF, PURGE_ON)}


def test_a_vault_the_gate_was_not_told_about_is_azures_404_with_the_existing_hint(
    runs: dict[str, Outcome],
) -> None:
    run = runs["prod-cmk-vault-missing"]
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    document = run.json
    assert set(document) == {"stack", "errors", "engine", "summary"}
    assert document["summary"] == {"exit_code": 2}
    assert document["errors"] == [
        f"first-deploy preview: customer-managed key: cannot read the key vault {VAULT} (invoke of "
        "azure-native:keyvault:getVault failed: invocation of azure-native:keyvault:getVault returned an "
        "error: "
        'Status=404 Code="ResourceNotFound" Message="The Resource \'Microsoft.KeyVault/vaults/kv-cmk\' '
        "under "
        "resource group 'rg-keys' was not found.\"); check identity.customer_managed_key.key_vault_id (`az "
        "keyvault show --ids <id>`) and that the deployer can read the vault (Reader on it)",
        "offline, the gate knows a vault outside the stack only from --existing F: `az keyvault show --ids "
        "<vault id> > F`, then add `--existing F` (a file without that vault answers as Azure's 404)",
    ]
    assert document["engine"]["version"]


def test_a_vault_without_purge_protection_is_refused(runs: dict[str, Outcome]) -> None:
    outcome = runs[PURGE_OFF.name]
    assert outcome.exit_code == 2
    assert outcome.errors == [
        f"first-deploy preview: customer-managed key: the key vault {VAULT} has purge protection off; Azure "
        f"ML "
        "needs soft delete and purge protection on the key's vault (how-to-setup-customer-managed-keys.md). "
        f"Turn it on (irreversible): az keyvault update --subscription {SUB} -g rg-keys -n kv-cmk "
        "--enable-purge-protection true"
    ]


def test_a_vault_with_purge_protection_passes(runs: dict[str, Outcome]) -> None:
    outcome = runs[PURGE_ON.name]
    assert outcome.exit_code == 0, outcome.errors
    workspace = next(
        r
        for r in outcome.document["resources"]
        if r["type"] == "azure-native:machinelearningservices:Workspace"
    )
    encryption = workspace["inputs"]["encryption"]
    assert encryption["keyVaultProperties"]["keyVaultArmId"] == VAULT
    assert encryption["status"] == "Enabled"
    # the program read the vault through the provider (the permission it needs is listed)
    assert any(p["action"] == "Microsoft.KeyVault/vaults/read" for p in outcome.document["permissions"])
