"""`pulumi preview` of the real engine (the CLI built from Pulumi's Go modules, `python -m engine build`) on a
stack with a customer-managed key, the stand-in azure-native plugin answering `getVault` from its ARM store:
the vault missing, then without purge protection, then with it. The same outcomes as the gate's
(tests/components/test_components_customer_key_vault.py), through the engine's own invoke path.

From the sources: "When creating Azure Key Vault, you must enable soft delete and purge protection"
(how-to-setup-customer-managed-keys.md); a missing resource is ARM's ResourceNotFound (azure-resource-manager
troubleshooting/error-not-found); a `pulumi.RunError` is printed without a stack trace."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from preflight import pulumicli as run
from preflight.provider import store
from preflight.workspace import Workspace

pytestmark = pytest.mark.slow


def test_preview_reads_the_keys_vault_through_the_engine(tmp_path: Path) -> None:
    ws = Workspace.create("prod", tmp_path / "work")
    document = yaml.safe_load((ws.project / "Pulumi.prod.yaml").read_text())
    config = document["config"]
    sub = config["azure-native:subscriptionId"]
    vault = f"/subscriptions/{sub}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
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
    (ws.project / "Pulumi.prod.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    arm = store.ArmStore(Path(ws.env[store.ENV]))

    missing = run.preview(ws, capture=True)
    out = missing.stdout + missing.stderr
    assert missing.returncode != 0
    assert f"customer-managed key: cannot read the key vault {vault}" in out
    assert (
        "The Resource 'Microsoft.KeyVault/vaults/kv-cmk' under resource group 'rg-keys' was not found." in out
    )

    arm.put(vault, "", {}, {"id": vault, "name": "kv-cmk", "properties": {"enableSoftDelete": True}})
    off = run.preview(ws, capture=True)
    out = off.stdout + off.stderr
    assert off.returncode != 0
    assert f"the key vault {vault} has purge protection off" in out
    assert (
        f"az keyvault update --subscription {sub} -g rg-keys -n kv-cmk --enable-purge-protection true" in out
    )
    assert "Traceback" not in out

    arm.put(vault, "", {}, {"id": vault, "name": "kv-cmk", "properties": {"enablePurgeProtection": True}})
    on = run.preview(ws, capture=True)
    assert on.returncode == 0, (on.stdout + on.stderr)[-3000:]
    assert "purge protection off" not in on.stdout + on.stderr
