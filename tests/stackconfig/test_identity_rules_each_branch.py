"""`azml-gpu:identity` key rules (stackconfig/identity.py), each branch from the happy-path config with one
value changed: people's role grants (object ids, which roles), the customer-managed key's URI and ids, the
data stores, and the defaults (Azure's: key-based datastores, keys on, no diagnostics)."""

from __future__ import annotations

import pytest
from stackconfig_factory import good_raw

import azroles
from stackconfig import ConfigError, validate

SUB = "00000000-0000-0000-0000-000000000000"
OID = "00000000-0000-0000-0000-00000000A001"
DATA = f"/subscriptions/{SUB}/resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stdata"
KV = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
UAI = (
    f"/subscriptions/{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/userAssignedIdentities/u"
)
KEY_URI = "https://kv-cmk.vault.azure.net/keys/ws-key/0123456789abcdef0123456789abcdef"
AT = "azml-gpu:identity"
ROLES = ", ".join(azroles.PEOPLE_ROLES)


def with_identity(**identity) -> dict:
    raw = good_raw()
    raw["identity"] = identity
    return raw


def problems(raw: dict) -> list[str]:
    try:
        validate(raw)
    except ConfigError as exc:
        return list(exc.problems)
    return []


def grant(**changes) -> dict:
    return {"principal_id": OID, "principal_type": "Group", "role": "AzureML Data Scientist"} | changes


def test_defaults_are_azures():
    ident = validate(good_raw()).identity
    assert (ident.system_datastores_auth_mode, ident.storage_shared_key_access) == ("accessKey", True)
    assert (ident.data_stores, ident.role_assignments, ident.customer_managed_key) == ([], [], None)
    assert ident.diagnostic_settings is False and ident.identity_datastores is False
    assert (
        validate(with_identity(system_datastores_auth_mode="identity")).identity.identity_datastores is True
    )


@pytest.mark.parametrize(
    "role",
    [
        "AzureML Data Scientist",
        "AzureML Compute Operator",
        "AzureML Metrics Writer (preview)",
        "AzureML Registry User",
        "Reader",
    ],
)
def test_each_workspace_role_can_be_granted(role):
    (g,) = validate(with_identity(role_assignments=[grant(role=role)])).identity.role_assignments
    assert g.role == role
    assert g.principal_id == OID.lower()  # object ids are compared lower-case


@pytest.mark.parametrize("role", ["Owner", "Contributor"])
def test_a_privileged_role_is_refused_with_why(role):
    (p,) = problems(with_identity(role_assignments=[grant(role=role)]))
    assert p == (
        f"{AT}.role_assignments[0].role: '{role}' is not granted by this stack (it could change or delete "
        f"every resource of the workspace); use one of {ROLES}"
    )


@pytest.mark.parametrize(
    "role", ["Storage Blob Data Contributor", "azureml data scientist", "User Access Administrator"]
)
def test_another_role_is_refused(role):
    (p,) = problems(with_identity(role_assignments=[grant(role=role)]))
    assert p == f"{AT}.role_assignments[0].role: '{role}' is not a role this stack grants; use one of {ROLES}"


@pytest.mark.parametrize("oid", ["not-a-guid", "00000000-0000-0000-0000-00000000a00", ""])
def test_a_principal_must_be_an_object_id(oid):
    (p,) = problems(with_identity(role_assignments=[grant(principal_id=oid)]))
    assert p.startswith(f"{AT}.role_assignments[0].principal_id: ")
    assert "object id of the user, group or service principal" in p


ACKNOWLEDGED = ["cosmos_db_key_access", "providers_registered"]


def cmk(**changes) -> dict:
    return {
        "key_vault_id": KV,
        "key_uri": KEY_URI,
        "user_assigned_identity_id": UAI,
        "acknowledged": ACKNOWLEDGED,
    } | changes


def test_a_customer_managed_key_is_accepted():
    key = validate(with_identity(customer_managed_key=cmk())).identity.customer_managed_key
    assert (key.key_vault_id, key.key_uri, key.user_assigned_identity_id) == (KV, KEY_URI, UAI)


@pytest.mark.parametrize(
    "uri",
    [
        "http://kv-cmk.vault.azure.net/keys/ws-key/1",
        "https://kv-cmk.vault.azure.net/secrets/ws-key/1",
        "kv-cmk/keys/k",
    ],
)
def test_the_key_uri_is_an_https_key_identifier(uri):
    (p,) = problems(with_identity(customer_managed_key=cmk(key_uri=uri)))
    assert p == (
        f"{AT}.customer_managed_key.key_uri: '{uri}' is not a key vault key identifier; use "
        "https://<vault>.vault.azure.net/keys/<key>/<version>"
    )


@pytest.mark.parametrize(("key", "wrong"), [("key_vault_id", UAI), ("user_assigned_identity_id", KV)])
def test_each_key_id_names_its_resource_type(key, wrong):
    (p,) = problems(with_identity(customer_managed_key=cmk(**{key: wrong})))
    assert p.startswith(f"{AT}.customer_managed_key.{key}: ")


def test_data_stores_are_storage_account_ids():
    assert validate(with_identity(data_stores=[DATA])).identity.data_stores == [DATA]
    (p,) = problems(with_identity(data_stores=[DATA, KV]))
    assert p.startswith(f"{AT}.data_stores: ") and "Microsoft.Storage/storageAccounts" in p
