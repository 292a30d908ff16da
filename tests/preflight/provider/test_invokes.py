"""The provider functions the stacks call, answered offline (preflight/provider/invokes.py), and
`python -m preflight --existing F`, the way a user tells the offline gate about resources outside the stack
(`read_existing`): above all the customer-managed key's vault (`getVault`).

Shapes from the sources: the SDK's results (pulumi_azure_native 3.29 `authorization.GetClientConfigResult`,
`resources.GetResourceGroupResult`, `managedidentity.GetUserAssignedIdentityResult`,
`keyvault.GetVaultResult` and `VaultPropertiesResponse`), the REST spec's `VaultProperties` defaults
(azure-rest-api-specs keyvault.json 2024-11-01: enableSoftDelete true, enableRbacAuthorization false,
softDeleteRetentionInDays 90; none for enablePurgeProtection), ARM's 404 for a resource that does not exist
(learn.microsoft.com/azure/azure-resource-manager/troubleshooting/error-not-found, "Symptom"), and what
`az keyvault show --ids ID` prints (one ARM GET body).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pulumi_azure_native.authorization as authorization
import pulumi_azure_native.keyvault as keyvault
import pulumi_azure_native.managedidentity as managedidentity
import pulumi_azure_native.resources as resources
import pytest

from preflight.provider import invokes, model
from preflight.provider.invokes import ExistingFileError, UnknownInvoke, answer, read_existing

SUB = "00000000-0000-0000-0000-000000000000"
KV = f"/subscriptions/{SUB}/resourceGroups/rg-keys/providers/Microsoft.KeyVault/vaults/kv-cmk"
GET_VAULT = "azure-native:keyvault:getVault"
ARGS = {"resourceGroupName": "rg-keys", "vaultName": "kv-cmk"}
IDENTITY = (
    f"/subscriptions/{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/userAssignedIdentities"
)
IDENTITY += "/id-cmk"


def wire_names(cls: type) -> set[str]:
    return {
        getattr(v.fget, "_pulumi_name", None) or n for n, v in vars(cls).items() if isinstance(v, property)
    }


def record(properties: dict[str, Any], arm_id: str = KV) -> dict[str, Any]:
    """A vault as `read_existing` keeps what `az keyvault show` printed."""
    return {
        "id": arm_id,
        "type": "",
        "inputs": {},
        "outputs": {"id": arm_id, "name": "kv-cmk", "properties": properties},
    }


# --- getClientConfig, getResourceGroup, getUserAssignedIdentity --------------------------------------------


def test_client_config_names_the_configured_subscription() -> None:
    got = answer("azure-native:authorization:getClientConfig", {}, "6f1c0e5a-1111-4222-8333-944445555666", {})
    assert set(got) == wire_names(authorization.GetClientConfigResult)
    assert got["subscriptionId"] == "6f1c0e5a-1111-4222-8333-944445555666"
    # the tenant is the one a deployed managed identity reports (model.deployed_outputs)
    assert got["tenantId"] == model.FAKE_TENANT_ID
    assert len({got["tenantId"], got["clientId"], got["objectId"]}) == 3


def test_a_resource_group_is_answered_with_its_arm_id() -> None:
    got = answer("azure-native:resources:getResourceGroup", {"resourceGroupName": "rg-train"}, SUB, {})
    assert set(got) <= wire_names(resources.GetResourceGroupResult)
    assert got["id"] == f"/subscriptions/{SUB}/resourceGroups/rg-train"
    assert (got["name"], got["type"]) == ("rg-train", "Microsoft.Resources/resourceGroups")


def test_a_user_assigned_identity_has_stable_ids_its_deployed_users_agree_on() -> None:
    args = {"resourceName": "id-cmk", "resourceGroupName": "rg-id"}
    got = answer("azure-native:managedidentity:getUserAssignedIdentity", args, SUB, {})
    assert set(got) <= wire_names(managedidentity.GetUserAssignedIdentityResult)
    assert (got["id"], got["name"]) == (IDENTITY, "id-cmk")
    assert got == answer("azure-native:managedidentity:getUserAssignedIdentity", args, SUB, {})
    assert uuid.UUID(got["principalId"]).version == uuid.UUID(got["clientId"]).version == 5  # uuid5 of the id
    other = answer(
        "azure-native:managedidentity:getUserAssignedIdentity", {**args, "resourceName": "id-other"}, SUB, {}
    )
    assert other["principalId"] != got["principalId"]
    # A resource deployed with this identity reports the same principal and client (what a role assignment to
    # the identity names), whatever the case of the id it was given.
    inputs = {
        "workspaceName": "ws",
        "identity": {"type": "UserAssigned", "userAssignedIdentities": [IDENTITY.upper()]},
    }
    deployed = model.deployed_outputs(
        "azure-native:machinelearningservices:Workspace",
        inputs,
        "ws",
        "Microsoft.MachineLearningServices/workspaces",
    )
    assert deployed["identity"]["userAssignedIdentities"][IDENTITY.upper()] == {
        "principalId": got["principalId"],
        "clientId": got["clientId"],
    }


def test_another_function_is_refused_as_the_provider_refuses_it() -> None:
    with pytest.raises(UnknownInvoke, match="^Invoke type azure-native:foo:getBar not found"):
        answer("azure-native:foo:getBar", {}, SUB, {})


# --- getVault ------------------------------------------------------------------------------------------


def test_the_vault_answer_has_the_sdks_shape_and_the_specs_defaults() -> None:
    got = answer(GET_VAULT, ARGS, SUB, {KV.lower(): record({"enablePurgeProtection": True})})
    assert set(got) <= wire_names(keyvault.GetVaultResult)
    assert {"id", "name", "type", "properties", "azureApiVersion"} <= set(got)
    assert (got["id"], got["name"], got["type"]) == (KV, "kv-cmk", "Microsoft.KeyVault/vaults")
    assert got["azureApiVersion"] == "2024-11-01"
    props = got["properties"]
    assert set(props) <= wire_names(keyvault.outputs.VaultPropertiesResponse)
    # What Key Vault stored at creation from the spec's defaults, and the one property the vault sets.
    assert props["enableSoftDelete"] is True
    assert props["enableRbacAuthorization"] is False
    assert props["softDeleteRetentionInDays"] == 90
    assert props["enablePurgeProtection"] is True


def test_purge_protection_never_set_stays_absent_and_stored_values_win() -> None:
    stored = {"enableRbacAuthorization": True, "softDeleteRetentionInDays": 7}
    props = answer(GET_VAULT, ARGS, SUB, {KV.lower(): record(stored)})["properties"]
    assert "enablePurgeProtection" not in props  # the spec gives it no default
    assert (props["enableRbacAuthorization"], props["softDeleteRetentionInDays"]) == (True, 7)


def test_the_vault_is_found_whatever_the_case_of_its_name() -> None:
    """ARM ids compare without regard to case; the answer keeps the id as it was recorded."""
    got = answer(
        GET_VAULT, {"resourceGroupName": "RG-Keys", "vaultName": "KV-CMK"}, SUB, {KV.lower(): record({})}
    )
    assert got["id"] == KV


@pytest.mark.parametrize(
    "existing",
    [
        {},
        {KV.replace("kv-cmk", "kv-other").lower(): record({}, KV.replace("kv-cmk", "kv-other"))},
        # the same vault in another subscription is another vault
        {KV.replace(SUB, "11111111-0000-0000-0000-000000000000").lower(): record({})},
    ],
    ids=["none", "another vault", "another subscription"],
)
def test_a_vault_not_given_is_arms_404(existing: dict) -> None:
    with pytest.raises(model.ResourceNotFound) as info:
        answer(GET_VAULT, ARGS, SUB, existing)
    assert info.value.code == "ResourceNotFound"
    assert str(info.value) == (
        'Status=404 Code="ResourceNotFound" Message="The Resource \'Microsoft.KeyVault/vaults/kv-cmk\' under '
        "resource group 'rg-keys' was not found.\""
    )


# --- --existing F ----------------------------------------------------------------------------------------


def test_read_existing_takes_what_az_keyvault_show_prints(tmp_path: Path) -> None:
    shown = {
        "id": KV,
        "name": "kv-cmk",
        "type": "Microsoft.KeyVault/vaults",
        "properties": {"enablePurgeProtection": None},
    }
    one = tmp_path / "one.json"
    one.write_text(json.dumps(shown))
    many = tmp_path / "many.json"
    other = KV.replace("kv-cmk", "kv-two")
    many.write_text(json.dumps([shown, {**shown, "id": other}]))
    assert read_existing(one) == {
        KV.lower(): {"id": KV, "type": "Microsoft.KeyVault/vaults", "inputs": {}, "outputs": shown}
    }
    assert sorted(read_existing(many)) == sorted([KV.lower(), other.lower()])
    # and getVault answers from it: a vault whose purge protection is off (null), soft delete on
    props = answer(GET_VAULT, ARGS, SUB, read_existing(one))["properties"]
    assert not props.get("enablePurgeProtection") and props["enableSoftDelete"] is True


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "is not JSON"),
        ("[]x", "is not JSON"),
        (json.dumps({"name": "kv-cmk"}), "item 0 has no ARM id"),
        (json.dumps([{"id": KV}, "kv-cmk"]), "item 1 has no ARM id"),
        (json.dumps({"id": "kv-cmk"}), "item 0 has no ARM id"),  # a name, not an ARM id
    ],
)
def test_read_existing_refuses_a_bad_file_naming_it(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "vault.json"
    path.write_text(content)
    with pytest.raises(ExistingFileError) as info:
        read_existing(path)
    message = str(info.value)
    assert message.startswith(f"--existing: {path}") and says in message
    assert message.endswith(
        "give the JSON `az keyvault show --ids <vault id>` prints (one object, or a list of them)"
    )


def test_read_existing_of_a_missing_or_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ExistingFileError, match="^--existing: cannot read /nonexistent/vault.json"):
        read_existing(Path("/nonexistent/vault.json"))
    binary = tmp_path / "vault.json"
    binary.write_bytes(b"\xff\xfe{")
    with pytest.raises(ExistingFileError, match=f"^--existing: cannot read {binary}"):
        invokes.read_existing(binary)
