"""The provider model (preflight/provider/model.py, with preflight.provider.schema.metadata) against
azure-native's own rules, each case written from the upstream source it cites, not from the model's code:

- provider/pkg/provider/diff.go `objectDiff` / `valueDiff` (pulumi sdk `PropertyValue.DeepEquals`: a computed
  value equals only a computed value, so an unknown new value is a change), `calculateDetailedDiff` (path
  parameters and force-new keys replace; a child UPDATE under a replace key replaces), `diffKeyedArrays`
  (`x-ms-identifiers`), `calculateChangesAndReplacements` (a default-valued ADD is no change; an ADD_REPLACE
  equal to the old output is an ADD);
- provider/pkg/gen/replacement.go `forceNewMap` (Authorization RoleAssignment principalId, scope; Network
  PrivateEndpoint subnet; Resources ResourceGroup location; Storage StorageAccount isHnsEnabled, location) and
  gen/properties.go `forceNew` (`x-ms-mutability` create without update);
- provider.go `Diff`: delete-before-replace unless `__createBeforeDelete` is true;
- provider.go `Check` -> `applyDefaults`: location from the old inputs, else the provider config, else the
  resource group's (unknown while the group's name is); `azureApiVersion` added; nulls dropped;
- convert/previewOutputs.go `PreviewOutputs`: the response shape, inputs echoed, everything else unknown;
- the SDK's shape of each type (pulumi_azure_native 3.29.0's generated `<Type>Args` and `<Type>` classes),
  which `model.shape` reads from the source file without importing it: checked here against the imported
  classes for every type with a vendored spec.
"""

from __future__ import annotations

import importlib
import inspect
import re
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
# A cluster as GpuCluster declares it (prod's a100-spot, tests/fixtures/provider/), before Check.
COMPUTE_NEWS: dict[str, Any] = {
    "computeName": "a100-spot",
    "identity": {"type": "SystemAssigned"},
    "properties": {
        "computeLocation": "eastus",
        "computeType": "AmlCompute",
        "disableLocalAuth": True,
        "properties": {
            "enableNodePublicIp": False,
            "osType": "Linux",
            "remoteLoginPortPublicAccess": "Disabled",
            "scaleSettings": {"maxNodeCount": 1, "minNodeCount": 0, "nodeIdleTimeBeforeScaleDown": "PT5M"},
            "vmPriority": "LowPriority",
            "vmSize": "Standard_NC24ads_A100_v4",
        },
    },
    "resourceGroupName": "rg-train",
    "tags": {"env": "prod", "project": "azml-gpu"},
    "workspaceName": "ws-llm",
}

# --- the SDK's shape, read from its source --------------------------------------------------------------

# The same pattern over the class source as the model's, applied here to `inspect.getsource` of the
# imported class: the SDK's docstring reads "Uses Azure REST API version 2025-12-01. In version 2.x ...".
_API_VERSION = re.compile(r"Uses Azure REST API version (\S+?)\.\s")
VENDORED = sorted(schema.index()["resources"])


def _imported_wire_names(cls: type) -> list[str]:
    """The wire names of an imported SDK class's `@pulumi.getter` properties (`_pulumi_name`, set by
    `pulumi.getter(name=...)`; else the Python name)."""
    return [
        getattr(v.fget, "_pulumi_name", None) or n for n, v in vars(cls).items() if isinstance(v, property)
    ]


def _imported_shape(token: str) -> azure_native.Shape:
    _, module, name = token.split(":")
    sdk = importlib.import_module(f"pulumi_azure_native.{module.replace('/', '.')}")
    cls, args = getattr(sdk, name), getattr(sdk, f"{name}Args")
    found = _API_VERSION.search(inspect.getsource(cls))
    assert found, f"{token}: no API version in the SDK class's docstring"
    return azure_native.Shape(
        token, found.group(1), frozenset(_imported_wire_names(args)), tuple(_imported_wire_names(cls))
    )


@pytest.mark.parametrize("token", VENDORED)
def test_the_shape_read_from_the_sdk_source_is_the_imported_sdks(token: str) -> None:
    shape = azure_native.shape(token)
    assert shape == _imported_shape(token)
    # the API version Check sends is one the specs are vendored at: the check of a default resource runs
    assert shape is not None and shape.api_version in schema.index()["resources"][token]


def test_the_shape_holds_wire_names_and_path_parameters() -> None:
    shape = azure_native.shape(COMPUTE)
    assert shape is not None
    # `disable_local_auth` etc. are under `properties`; the top-level wire names are camelCase
    assert {"computeName", "workspaceName", "resourceGroupName", "location", "properties"} <= shape.inputs
    assert shape.path_params == {"computeName", "workspaceName", "resourceGroupName"}
    assert "systemData" in shape.outputs and "azureApiVersion" in shape.outputs
    assert shape.takes_location
    role = azure_native.shape(ROLE)
    assert role is not None and not role.takes_location  # an extension resource: no location of its own


@pytest.mark.parametrize(
    "token",
    [
        "pulumi:providers:azure-native",  # the provider resource
        "azml-gpu:components:Workspace",  # a component
        "azure-native:storage",  # too few parts
        "azure-native:storage:StorageAccount:x",  # too many
        "azure-native:nosuchmodule:Thing",
        "azure-native:storage:NoSuchThing",
        "azure-native:storage:getStorageAccount",  # a function: its file exists, no resource class in it
    ],
)
def test_anything_but_an_sdk_resource_type_has_no_shape(token: str) -> None:
    assert azure_native.shape(token) is None


# --- Check's defaults -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("olds", "provider_location", "group_location", "news", "expected"),
    [
        ({"location": "westus3"}, "eastus", "northeurope", {}, "westus3"),  # the old inputs first
        (None, "eastus", "northeurope", {}, "eastus"),  # then azure-native:location
        (None, None, "northeurope", {}, "northeurope"),  # then the resource group's
        (None, None, None, {"resourceGroupName": UNKNOWN}, UNKNOWN),  # unknown while the group is
        (None, "eastus", None, {"location": "swedencentral"}, "swedencentral"),  # the program's own
    ],
    ids=["old inputs", "provider config", "group", "unknown group", "given"],
)
def test_check_fills_the_location_in_the_providers_order(
    olds: dict | None, provider_location: str | None, group_location: str | None, news: dict, expected: str
) -> None:
    news = {**COMPUTE_NEWS, **news}
    checked = azure_native.check(COMPUTE, news, olds, provider_location, group_location)
    assert checked["location"] == expected


def test_check_leaves_the_location_out_when_nothing_gives_one() -> None:
    news = {k: v for k, v in COMPUTE_NEWS.items() if k != "resourceGroupName"}
    assert "location" not in azure_native.check(COMPUTE, news, None, None, None)
    # a type without a location never gets one
    assert "location" not in azure_native.check(ROLE, ROLE_INPUTS, None, "eastus", "eastus")


def test_check_adds_the_sdks_api_version_and_keeps_a_given_one() -> None:
    checked = azure_native.check(COMPUTE, COMPUTE_NEWS, None, "eastus", None)
    assert checked["azureApiVersion"] == "2025-12-01"
    pinned = azure_native.check(
        COMPUTE, {**COMPUTE_NEWS, "azureApiVersion": "2024-04-01"}, None, "eastus", None
    )
    assert pinned["azureApiVersion"] == "2024-04-01"
    # everything the program gave is kept as given
    assert {k: v for k, v in checked.items() if k not in ("location", "azureApiVersion")} == COMPUTE_NEWS


def test_check_drops_nulls_at_every_depth() -> None:
    news = {
        **COMPUTE_NEWS,
        "tags": None,
        "identity": {"type": "SystemAssigned", "userAssignedIdentities": None},
    }
    checked = azure_native.check(COMPUTE, news, None, "eastus", None)
    assert "tags" not in checked and checked["identity"] == {"type": "SystemAssigned"}
    # a type the SDK does not declare: nulls dropped, nothing added
    assert azure_native.check("example:x:Y", {"a": None, "b": [1, None]}, None, "eastus", None) == {
        "b": [1, None]
    }


# --- replacements -----------------------------------------------------------------------------------------


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


def test_a_cluster_resize_updates_in_place_and_a_rename_replaces() -> None:
    """The change users make most: a new VM size is an update of the union `properties` (not force-new);
    a new cluster name is a new path (`computeName`), so the cluster is deleted and created again."""
    old = azure_native.check(COMPUTE, COMPUTE_NEWS, None, "eastus", None)
    bigger = {**old, "properties": {**old["properties"], "properties": {**old["properties"]["properties"]}}}
    bigger["properties"]["properties"]["vmSize"] = "Standard_ND96isr_H100_v5"
    resized = detailed_diff(COMPUTE, old, bigger)
    assert (resized.detailed, resized.replaces) == ({"properties.properties.vmSize": "UPDATE"}, ())
    renamed = detailed_diff(COMPUTE, old, {**old, "computeName": "a100-spot-2"})
    assert (renamed.replaces, renamed.delete_before_replace) == (("computeName",), True)


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
    # another location is a change (and location is create-only for a component)
    moved = detailed_diff(COMPONENT, COMPONENT_INPUTS, {**COMPONENT_INPUTS, "location": "East US 2"})
    assert moved.replaces == ("location",)


def test_secrets_and_numbers_compare_by_value() -> None:
    secret = {SIG_KEY: SECRET_SIG, "value": "ssh-rsa AAAA"}
    old = {**ROLE_INPUTS, "description": secret}
    assert not detailed_diff(ROLE, old, {**old, "description": dict(secret)}).changed
    assert detailed_diff(ROLE, old, {**old, "description": {**secret, "value": "x"}}).detailed == {
        "description": "UPDATE"
    }
    assert not detailed_diff(ROLE, {**ROLE_INPUTS, "n": 4}, {**ROLE_INPUTS, "n": 4.0}).changed
    assert detailed_diff(ROLE, {**ROLE_INPUTS, "n": 4}, {**ROLE_INPUTS, "n": 4.5}).changed


def test_no_vendored_spec_falls_back_to_the_sdk_shape() -> None:
    assert replacement_keys(COMPUTE, "2099-01-01") == azure_native.shape(COMPUTE).path_params


# --- preview and deployed outputs ---------------------------------------------------------------------------


def test_preview_outputs_echo_inputs_and_leave_the_rest_unknown() -> None:
    checked = azure_native.check(COMPUTE, COMPUTE_NEWS, None, "eastus", None)
    out = azure_native.preview_outputs(COMPUTE, checked)
    assert set(out) == set(azure_native.shape(COMPUTE).outputs)
    assert (out["location"], out["properties"], out["tags"]) == (
        "eastus",
        checked["properties"],
        checked["tags"],
    )
    assert out["name"] == out["systemData"] == UNKNOWN
    assert "computeName" not in out and "workspaceName" not in out  # path parameters are inputs only
    # the cluster's managed identity does not exist yet: what a role assignment would name is unknown
    assert out["identity"] == {"type": "SystemAssigned", "principalId": UNKNOWN, "tenantId": UNKNOWN}


def test_an_update_preview_keeps_the_deployed_name_and_location() -> None:
    checked = azure_native.check(COMPUTE, COMPUTE_NEWS, None, "eastus", None)
    out = azure_native.preview_outputs(COMPUTE, checked, {"name": "a100-spot", "location": "eastus2"})
    assert (out["name"], out["location"]) == ("a100-spot", "eastus2")


def test_deployed_outputs_are_what_a_create_leaves_in_the_state() -> None:
    checked = azure_native.check(COMPUTE, COMPUTE_NEWS, None, "eastus", None)
    arm_type = "Microsoft.MachineLearningServices/workspaces/computes"
    out = azure_native.deployed_outputs(COMPUTE, checked, "a100-spot", arm_type)
    assert (out["name"], out["type"], out["azureApiVersion"]) == ("a100-spot", arm_type, "2025-12-01")
    props = out["properties"]
    assert props["provisioningState"] == "Succeeded"
    assert props["properties"]["currentNodeCount"] == 0 and props["properties"]["vmSize"] == (
        "Standard_NC24ads_A100_v4"
    )
    principal = out["identity"]["principalId"]
    assert principal != UNKNOWN
    assert azure_native.deployed_outputs(COMPUTE, checked, "a100-spot", arm_type)["identity"][
        "principalId"
    ] == (
        principal  # stable: the update evaluation's state is the same every run
    )


@pytest.mark.parametrize(
    ("given", "subnet", "resolved"),
    [
        ("NotSpecified", None, "Enabled"),
        ("NotSpecified", {"id": "/subnets/a"}, "Disabled"),
        (None, None, "Enabled"),  # absent: the spec's default NotSpecified
        ("Disabled", None, "Disabled"),
    ],
)
def test_a_deployed_cluster_resolves_its_ssh_port_and_returns_no_secret(
    given: str | None, subnet: dict | None, resolved: str
) -> None:
    """machineLearningServices.json 2025-12-01 AmlComputeProperties.remoteLoginPortPublicAccess: NotSpecified
    is "enabled ... if no VNet, else disabled" after creation; Compute_Get returns no secret."""
    inner: dict[str, Any] = {
        "vmSize": "Standard_NC24ads_A100_v4",
        "userAccountCredentials": {"adminUserName": "azureuser", "adminUserSshPublicKey": "ssh-rsa AAAA"},
    }
    if given is not None:
        inner["remoteLoginPortPublicAccess"] = given
    if subnet is not None:
        inner["subnet"] = subnet
    inputs = {**COMPUTE_NEWS, "properties": {"computeType": "AmlCompute", "properties": inner}}
    out = azure_native.deployed_outputs(
        COMPUTE, inputs, "c", "Microsoft.MachineLearningServices/workspaces/computes"
    )
    props = out["properties"]["properties"]
    assert props["remoteLoginPortPublicAccess"] == resolved
    assert props["userAccountCredentials"] == {"adminUserName": "azureuser"}
