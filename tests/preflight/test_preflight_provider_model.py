"""The provider model (preflight.azure_native, preflight.provider.schema.metadata) against azure-native's own rules,
each case written from the upstream source it cites, not from the gate's code:

- provider/pkg/provider/diff.go `objectDiff` / `valueDiff` (pulumi sdk `PropertyValue.DeepEquals`: a computed
  value equals only a computed value, so an unknown new value is a change), `calculateDetailedDiff` (path
  parameters and force-new keys replace; a child UPDATE under a replace key replaces), `diffKeyedArrays`
  (`x-ms-identifiers`), `calculateChangesAndReplacements` (a default-valued ADD is no change; an ADD_REPLACE
  equal to the old output is an ADD);
- provider/pkg/gen/replacement.go `forceNewMap` (Authorization RoleAssignment principalId, scope; Network
  PrivateEndpoint subnet; Resources ResourceGroup location; Storage StorageAccount isHnsEnabled, location) and
  gen/properties.go `forceNew` (`x-ms-mutability` create without update);
- provider.go `Diff`: delete-before-replace unless `__createBeforeDelete` is true.
"""

from __future__ import annotations

from typing import Any

import pytest

from preflight.provider import model as azure_native
from preflight.provider import schema
from preflight.provider.model import SECRET_SIG, SIG_KEY, UNKNOWN, detailed_diff, replacement_keys

ROLE = "azure-native:authorization:RoleAssignment"
ENDPOINT = "azure-native:network:PrivateEndpoint"
DIAGNOSTIC = "azure-native:monitor:DiagnosticSetting"
COMPONENT = "azure-native:applicationinsights:Component"
COMPUTE = "azure-native:machinelearningservices:Compute"
VAULT = "azure-native:keyvault:Vault"
REGISTRY = "azure-native:containerregistry:Registry"
STORAGE = "azure-native:storage:StorageAccount"
GROUP = "azure-native:resources:ResourceGroup"

ROLE_INPUTS: dict[str, Any] = {
    "scope": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/st",
    "roleAssignmentName": "6c9f8a2e-0000-5000-8000-000000000001",
    "principalId": "11111111-2222-3333-4444-555555555555",
    "principalType": "ServicePrincipal",
    "roleDefinitionId": "/subscriptions/s/providers/Microsoft.Authorization/roleDefinitions/r",
    "azureApiVersion": "2022-04-01",
}
ENDPOINT_INPUTS: dict[str, Any] = {
    "privateEndpointName": "ws-pe-blob",
    "resourceGroupName": "rg",
    "location": "eastus",
    "subnet": {
        "id": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/a"
    },
    "privateLinkServiceConnections": [{"name": "blob", "privateLinkServiceId": "/st", "groupIds": ["blob"]}],
    "azureApiVersion": "2024-05-01",
}
DIAGNOSTIC_INPUTS: dict[str, Any] = {
    "name": "ws-diag",
    "resourceUri": "/subscriptions/s/providers/Microsoft.MachineLearningServices/workspaces/ws",
    "workspaceId": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.OperationalInsights/workspaces/l",
    "logs": [{"categoryGroup": "allLogs", "enabled": True}],
    "azureApiVersion": "2021-05-01-preview",
}
COMPONENT_INPUTS: dict[str, Any] = {
    "resourceName": "ws-appi",
    "resourceGroupName": "rg",
    "location": "eastus",
    "kind": "web",
    "applicationType": "web",
    "azureApiVersion": "2020-02-02",
}


def test_the_replace_keys_are_the_providers() -> None:
    assert replacement_keys(ROLE) == {"scope", "principalId", "roleAssignmentName"}
    assert replacement_keys(ENDPOINT) == {"privateEndpointName", "resourceGroupName", "subnet"}
    assert replacement_keys(DIAGNOSTIC) == {"name", "resourceUri"}
    # x-ms-mutability [create, read] on applicationType and location in components_API.json
    assert replacement_keys(COMPONENT) == {"resourceName", "resourceGroupName", "applicationType", "location"}
    assert replacement_keys(STORAGE) >= {"accountName", "resourceGroupName", "location", "isHnsEnabled"}
    assert replacement_keys(GROUP) == {"resourceGroupName", "location"}
    # a Compute's properties are a union: nothing under them is force-new in the provider
    assert replacement_keys(COMPUTE) == {"computeName", "workspaceName", "resourceGroupName"}


@pytest.mark.parametrize(
    ("token", "old", "key", "value", "expected"),
    [
        (
            ROLE,
            ROLE_INPUTS,
            "principalId",
            "99999999-2222-3333-4444-555555555555",
            {"principalId": "UPDATE_REPLACE"},
        ),
        (ROLE, ROLE_INPUTS, "scope", "/subscriptions/s/resourceGroups/rg2", {"scope": "UPDATE_REPLACE"}),
        (ROLE, ROLE_INPUTS, "principalType", "User", {"principalType": "UPDATE"}),
        (ENDPOINT, ENDPOINT_INPUTS, "subnet", {"id": "/other/subnet"}, {"subnet.id": "UPDATE_REPLACE"}),
        (DIAGNOSTIC, DIAGNOSTIC_INPUTS, "name", "ws-diag-2", {"name": "UPDATE_REPLACE"}),
        (DIAGNOSTIC, DIAGNOSTIC_INPUTS, "workspaceId", "/other/law", {"workspaceId": "UPDATE"}),
        (COMPONENT, COMPONENT_INPUTS, "applicationType", "other", {"applicationType": "UPDATE_REPLACE"}),
        (COMPONENT, COMPONENT_INPUTS, "kind", "ios", {"kind": "UPDATE"}),
    ],
    ids=[
        "role principalId",
        "role scope",
        "role principalType updates",
        "endpoint subnet",
        "diagnostic name",
        "diagnostic workspace updates",
        "component create-only",
        "component kind updates",
    ],
)
def test_which_change_replaces(token: str, old: dict, key: str, value: Any, expected: dict) -> None:
    diff = detailed_diff(token, old, {**old, key: value})
    assert diff.detailed == expected
    replaces = tuple(k for k, kind in expected.items() if kind.endswith("_REPLACE"))
    assert (diff.replaces, diff.changed, diff.delete_before_replace) == (replaces, True, bool(replaces))


def test_an_unknown_new_value_is_a_change() -> None:
    """The engine sends an unknown for a value from a resource being replaced; it never equals a known one."""
    assert detailed_diff(ROLE, ROLE_INPUTS, {**ROLE_INPUTS, "principalId": UNKNOWN}).detailed == {
        "principalId": "UPDATE_REPLACE"
    }
    assert detailed_diff(ROLE, ROLE_INPUTS, {**ROLE_INPUTS, "description": UNKNOWN}).detailed == {
        "description": "ADD"
    }
    same = {**ROLE_INPUTS, "principalId": UNKNOWN}
    assert not detailed_diff(ROLE, same, same).changed  # computed equals computed


def test_keyed_arrays_compare_as_sets() -> None:
    """Vault accessPolicies carry x-ms-identifiers in keyvault.json: reordering them is no change."""
    assert schema.metadata(VAULT, "2024-11-01").identifiers["properties.accessPolicies"]
    a = {"tenantId": "t", "objectId": "a", "permissions": {"keys": ["get"]}}
    b = {"tenantId": "t", "objectId": "b", "permissions": {"keys": ["get"]}}
    old = {"vaultName": "kv", "resourceGroupName": "rg", "properties": {"accessPolicies": [a, b]}}
    new = {**old, "properties": {"accessPolicies": [b, a]}}
    assert not detailed_diff(VAULT, old, new).changed
    # an array without identifiers is compared by index
    endpoint = {**ENDPOINT_INPUTS, "privateLinkServiceConnections": [{"name": "x"}, {"name": "y"}]}
    turned = {**endpoint, "privateLinkServiceConnections": [{"name": "y"}, {"name": "x"}]}
    assert detailed_diff(ENDPOINT, endpoint, turned).detailed == {
        "privateLinkServiceConnections[0].name": "UPDATE",
        "privateLinkServiceConnections[1].name": "UPDATE",
    }


def test_a_new_property_at_its_spec_default_is_no_change() -> None:
    """containerregistry.json: adminUserEnabled defaults to false."""
    old = {"registryName": "cr", "resourceGroupName": "rg", "sku": {"name": "Premium"}, "location": "eastus"}
    at_default = detailed_diff(REGISTRY, old, {**old, "adminUserEnabled": False})
    assert (at_default.detailed, at_default.changed) == ({"adminUserEnabled": "ADD"}, False)
    assert detailed_diff(REGISTRY, old, {**old, "adminUserEnabled": True}).changes == ("adminUserEnabled",)


def test_an_added_force_new_key_equal_to_the_old_output_does_not_replace() -> None:
    old = {"accountName": "st", "resourceGroupName": "rg", "location": "eastus", "kind": "StorageV2"}
    diff = detailed_diff(STORAGE, old, {**old, "isHnsEnabled": False}, old_outputs={"isHnsEnabled": False})
    assert (diff.detailed, diff.replaces) == ({"isHnsEnabled": "ADD"}, ())
    fresh = detailed_diff(STORAGE, old, {**old, "isHnsEnabled": True}, old_outputs={"isHnsEnabled": False})
    assert (fresh.detailed, fresh.replaces) == ({"isHnsEnabled": "ADD_REPLACE"}, ("isHnsEnabled",))


def test_create_before_delete_flag_and_case_insensitive_names() -> None:
    flagged = {**ROLE_INPUTS, "__createBeforeDelete": True}
    diff = detailed_diff(
        ROLE, flagged, {**ROLE_INPUTS, "principalId": "99999999-2222-3333-4444-555555555555"}
    )
    assert (diff.replaces, diff.delete_before_replace) == (("principalId",), False)
    comp = {**COMPONENT_INPUTS, "resourceGroupName": "RG", "location": "East US"}
    assert not detailed_diff(COMPONENT, COMPONENT_INPUTS, comp).changed


def test_secrets_and_numbers_compare_by_value() -> None:
    secret = {SIG_KEY: SECRET_SIG, "value": "ssh-rsa AAAA"}
    old = {**ROLE_INPUTS, "description": secret}
    assert not detailed_diff(ROLE, old, {**old, "description": dict(secret)}).changed
    assert detailed_diff(ROLE, old, {**old, "description": {**secret, "value": "x"}}).detailed == {
        "description": "UPDATE"
    }
    assert not detailed_diff(ROLE, {**ROLE_INPUTS, "n": 4}, {**ROLE_INPUTS, "n": 4.0}).changed


def test_no_vendored_spec_falls_back_to_the_sdk_shape() -> None:
    assert replacement_keys(COMPUTE, "2099-01-01") == azure_native.shape(COMPUTE).path_params
