"""`pulumi preview` of the real engine on a stack with a customer-managed key, against localml: the program's
`getVault` of the key's vault (outside the stack) is a GET to ARM by the offline azure-native provider, as
azure-native's invoke is: the vault missing, then without purge protection, then with it. The same outcomes as
the gate's (tests/components/test_workspace.py), through the engine's own invoke path.

From the sources: "When creating Azure Key Vault, you must enable soft delete and purge protection"
(how-to-setup-customer-managed-keys.md); a missing resource is ARM's ResourceNotFound (azure-resource-manager
troubleshooting/error-not-found); a `pulumi.RunError` is printed without a stack trace."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from doubles.localml import LocalAzureML

from .conftest import arm_request, deployment, stack_config

pytestmark = pytest.mark.slow

TENANT = "11111111-1111-1111-1111-111111111111"


def test_preview_reads_the_keys_vault_from_arm_through_the_engine(
    local: LocalAzureML, tmp_path: Path
) -> None:
    config = copy.deepcopy(stack_config("prod"))
    sub = config["azure-native:subscriptionId"]
    group = f"/subscriptions/{sub}/resourceGroups/rg-keys"
    vault = f"{group}/providers/Microsoft.KeyVault/vaults/kv-cmk"
    identity = dict(config.get("azml-gpu:identity") or {})
    identity["customer_managed_key"] = {
        "key_vault_id": vault,
        "key_uri": "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef",
        "user_assigned_identity_id": (
            f"/subscriptions/{sub}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/"
            "userAssignedIdentities/id-cmk"
        ),
        "acknowledged": ["cosmos_db_key_access", "providers_registered"],
    }
    config["azml-gpu:identity"] = identity
    assert arm_request(local, "PUT", group, "2024-03-01", {"location": "eastus"})[0] == 201

    def put_vault(**properties: object) -> None:
        body = {
            "location": "eastus",
            "properties": {"tenantId": TENANT, "sku": {"family": "A", "name": "standard"}},
        }
        body["properties"].update(properties)
        status, answer = arm_request(local, "PUT", vault, "2024-11-01", body)
        assert status in (200, 201), answer

    with deployment(local, "prod", tmp_path / "deploy", config, policy=True) as d:
        missing = d.preview()
        out = missing.stdout + missing.stderr
        assert missing.exit_code != 0
        assert f"customer-managed key: cannot read the key vault {vault}" in out
        assert (
            "The Resource 'Microsoft.KeyVault/vaults/kv-cmk' under resource group 'rg-keys' was not found."
            in out
        )

        put_vault()
        off = d.preview()
        out = off.stdout + off.stderr
        assert off.exit_code != 0
        assert f"the key vault {vault} has purge protection off" in out
        assert (
            f"az keyvault update --subscription {sub} -g rg-keys -n kv-cmk --enable-purge-protection true"
            in out
        )
        assert "Traceback" not in out

        put_vault(enablePurgeProtection=True)
        on = d.preview()
        assert on.ok, on.tail(40)
        assert "purge protection off" not in on.stdout + on.stderr
