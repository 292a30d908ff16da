"""The ARM requests the offline provider builds (preflight/provider/arm.py): the PUT body azure-native's
`SdkInputsToRequestBody` sends for the inputs of each resource type the stacks declare (wire names,
flattened containers put back, unions by their discriminator, path parameters left out, integers), the
SDK outputs of an ARM answer, and Read's refreshed inputs. Each body is also checked against the vendored
REST spec as localml checks it: a body in the wrong shape is refused there, as by Azure."""

from __future__ import annotations

from typing import Any

import pytest

from doubles.localml.validation import check_resource_put
from preflight.provider import arm

SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"
RG = f"{SUB}/resourceGroups/rg"
COMPONENT = "azure-native:applicationinsights:Component"
STORAGE = "azure-native:storage:StorageAccount"
ENDPOINT = "azure-native:network:PrivateEndpoint"
ZONES = "azure-native:network:PrivateDnsZoneGroup"
SETTING = "azure-native:monitor:DiagnosticSetting"
ROLE = "azure-native:authorization:RoleAssignment"


def _compute(**aml: Any) -> dict[str, Any]:
    return {
        "computeName": "t4-dev",
        "resourceGroupName": "rg",
        "workspaceName": "ws",
        "azureApiVersion": "2025-12-01",
        "location": "eastus",
        "identity": {"type": "UserAssigned", "userAssignedIdentities": ["/id/a"]},
        "properties": {
            "computeType": "AmlCompute",
            "disableLocalAuth": True,
            "properties": {"vmSize": "Standard_NC4as_T4_v3", "scaleSettings": {"maxNodeCount": 4.0}, **aml},
        },
    }


CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "application insights: x-ms-client-name back to the wire name, flattened under properties": (
        {
            "resourceName": "appi",
            "resourceGroupName": "rg",
            "azureApiVersion": "2020-02-02",
            "location": "eastus",
            "kind": "web",
            "applicationType": "web",
            "flowType": "Bluefield",
            "requestSource": "rest",
            "ingestionMode": "LogAnalytics",
            "workspaceResourceId": f"{RG}/providers/Microsoft.OperationalInsights/workspaces/log",
        },
        {
            "location": "eastus",
            "kind": "web",
            "properties": {
                "Application_Type": "web",
                "Flow_Type": "Bluefield",
                "Request_Source": "rest",
                "IngestionMode": "LogAnalytics",
                "WorkspaceResourceId": f"{RG}/providers/Microsoft.OperationalInsights/workspaces/log",
            },
        },
    ),
    "storage account: enableHttpsTrafficOnly is supportsHttpsTrafficOnly on the wire": (
        {
            "accountName": "st",
            "resourceGroupName": "rg",
            "azureApiVersion": "2024-01-01",
            "location": "eastus",
            "kind": "StorageV2",
            "sku": {"name": "Standard_LRS"},
            "enableHttpsTrafficOnly": True,
            "minimumTlsVersion": "TLS1_2",
        },
        {
            "location": "eastus",
            "kind": "StorageV2",
            "sku": {"name": "Standard_LRS"},
            "properties": {"supportsHttpsTrafficOnly": True, "minimumTlsVersion": "TLS1_2"},
        },
    ),
    "private endpoint: a connection's own flattened properties put back": (
        {
            "privateEndpointName": "pe",
            "resourceGroupName": "rg",
            "azureApiVersion": "2024-05-01",
            "location": "eastus",
            "subnet": {"id": f"{RG}/providers/Microsoft.Network/virtualNetworks/v/subnets/s"},
            "privateLinkServiceConnections": [
                {"name": "c", "privateLinkServiceId": f"{RG}/x", "groupIds": ["vault"]}
            ],
        },
        {
            "location": "eastus",
            "properties": {
                "subnet": {"id": f"{RG}/providers/Microsoft.Network/virtualNetworks/v/subnets/s"},
                "privateLinkServiceConnections": [
                    {"name": "c", "properties": {"privateLinkServiceId": f"{RG}/x", "groupIds": ["vault"]}}
                ],
            },
        },
    ),
    "dns zone group: each zone config's properties put back, path parameters left out": (
        {
            "privateDnsZoneGroupName": "default",
            "privateEndpointName": "pe",
            "resourceGroupName": "rg",
            "azureApiVersion": "2024-05-01",
            "privateDnsZoneConfigs": [{"name": "z", "privateDnsZoneId": f"{RG}/z"}],
        },
        {
            "properties": {
                "privateDnsZoneConfigs": [{"name": "z", "properties": {"privateDnsZoneId": f"{RG}/z"}}]
            }
        },
    ),
    "diagnostic setting: its name and resource uri are the path, not the body": (
        {
            "name": "to-log",
            "resourceUri": f"{RG}/providers/Microsoft.MachineLearningServices/workspaces/ws",
            "azureApiVersion": "2021-05-01-preview",
            "workspaceId": f"{RG}/providers/Microsoft.OperationalInsights/workspaces/log",
            "logs": [{"categoryGroup": "allLogs", "enabled": True}],
        },
        {
            "properties": {
                "workspaceId": f"{RG}/providers/Microsoft.OperationalInsights/workspaces/log",
                "logs": [{"categoryGroup": "allLogs", "enabled": True}],
            }
        },
    ),
    "role assignment: scope and name are the path": (
        {
            "scope": f"{RG}/providers/Microsoft.Storage/storageAccounts/st",
            "roleAssignmentName": "00000000-0000-0000-0000-000000000001",
            "azureApiVersion": "2022-04-01",
            "principalId": "33333333-3333-3333-3333-333333333333",
            "principalType": "ServicePrincipal",
            "roleDefinitionId": f"{SUB}/providers/Microsoft.Authorization/roleDefinitions/r",
        },
        {
            "properties": {
                "principalId": "33333333-3333-3333-3333-333333333333",
                "principalType": "ServicePrincipal",
                "roleDefinitionId": f"{SUB}/providers/Microsoft.Authorization/roleDefinitions/r",
            }
        },
    ),
    "compute: the union by its computeType, integers, user-assigned identities as a map": (
        _compute(),
        {
            "location": "eastus",
            "identity": {"type": "UserAssigned", "userAssignedIdentities": {"/id/a": {}}},
            "properties": {
                "computeType": "AmlCompute",
                "disableLocalAuth": True,
                "properties": {"vmSize": "Standard_NC4as_T4_v3", "scaleSettings": {"maxNodeCount": 4}},
            },
        },
    ),
}
TOKENS = {
    "application insights": COMPONENT,
    "storage account": STORAGE,
    "private endpoint": ENDPOINT,
    "dns zone group": ZONES,
    "diagnostic setting": SETTING,
    "role assignment": ROLE,
    "compute": arm.COMPUTE,
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_body_is_what_azure_native_sends_and_the_spec_accepts_it(case: str) -> None:
    token = TOKENS[case.split(":")[0]]
    inputs, want = CASES[case]
    body = arm.request_body(token, inputs)
    assert body == want
    scaled = body.get("properties", {}).get("properties", {}).get("scaleSettings", {})
    assert all(isinstance(v, int) for v in scaled.values())
    path = {k: v for k, v in inputs.items() if k not in want and k != "azureApiVersion"}
    result = check_resource_put(token, inputs["azureApiVersion"], path, body)
    assert (
        result.checked and [f.path for f in result.failures if "." in f.path or f.path == "properties"] == []
    )


def test_a_workspace_puts_its_flattened_properties_back_under_properties() -> None:
    body = arm.request_body(
        arm.WORKSPACE,
        {
            "workspaceName": "ws",
            "resourceGroupName": "rg",
            "azureApiVersion": "2025-12-01",
            "location": "eastus",
            "tags": {"env": "dev"},
            "identity": {"type": "SystemAssigned"},
            "storageAccount": "/subscriptions/s/x",
            "publicNetworkAccess": "Enabled",
        },
    )
    assert body == {
        "location": "eastus",
        "tags": {"env": "dev"},
        "identity": {"type": "SystemAssigned"},
        "properties": {"storageAccount": "/subscriptions/s/x", "publicNetworkAccess": "Enabled"},
    }


def test_the_old_envelope_rule_would_be_refused() -> None:
    """What a body in the SDK's names looks like to the service: Application Insights requires
    `Application_Type` (a realistic regression of the body builder)."""
    inputs, _ = CASES[
        "application insights: x-ms-client-name back to the wire name, flattened under properties"
    ]
    sdk_named = {"location": "eastus", "kind": "web", "properties": {"applicationType": "web"}}
    path = {"resourceGroupName": "rg", "resourceName": "appi"}
    result = check_resource_put(COMPONENT, "2020-02-02", path, sdk_named)
    assert [f.path for f in result.failures] == ["properties.Application_Type"]
    assert arm.request_body(COMPONENT, inputs)["properties"]["Application_Type"] == "web"


def test_outputs_are_the_answer_in_the_sdk_shape() -> None:
    answer = {
        "id": f"{RG}/providers/Microsoft.Insights/components/appi",
        "name": "appi",
        "type": "Microsoft.Insights/components",
        "location": "eastus",
        "kind": "web",
        "properties": {"Application_Type": "web", "provisioningState": "Succeeded", "NotInTheExtract": 1},
    }
    out = arm.response_outputs(COMPONENT, answer, "2020-02-02")
    assert out["applicationType"] == "web" and out["provisioningState"] == "Succeeded"
    assert out["name"] == "appi" and out["kind"] == "web" and out["azureApiVersion"] == "2020-02-02"
    assert out["NotInTheExtract"] == 1  # kept as ARM answered it (docstring: trimmed extracts)
    assert "properties" not in out


def test_refresh_applies_a_change_made_outside_pulumi_and_nothing_else() -> None:
    inputs = _compute(scaleSettings={"maxNodeCount": 4, "minNodeCount": 0})
    old = arm.response_outputs(
        arm.COMPUTE,
        {"name": "t4-dev", **arm.request_body(arm.COMPUTE, inputs)},
        "2025-12-01",
    )
    changed = arm.request_body(arm.COMPUTE, inputs)
    changed["properties"]["properties"]["scaleSettings"]["maxNodeCount"] = 8
    changed["properties"]["properties"]["allocationState"] = "Resizing"  # read-only: not an input
    new = arm.response_outputs(arm.COMPUTE, {"name": "t4-dev", **changed}, "2025-12-01")
    refreshed = arm.refreshed_inputs(arm.COMPUTE, "2025-12-01", inputs, old, new)
    assert refreshed["properties"]["properties"]["scaleSettings"] == {"maxNodeCount": 8, "minNodeCount": 0}
    assert "allocationState" not in refreshed["properties"]["properties"]
    assert refreshed["computeName"] == "t4-dev"  # path parameters kept
    unchanged = arm.refreshed_inputs(arm.COMPUTE, "2025-12-01", inputs, old, old)
    assert unchanged == inputs


def test_an_arm_error_reads_as_azure_natives() -> None:
    e = arm.ArmError(404, "ResourceNotFound", "gone")
    assert str(e) == 'Status=404 Code="ResourceNotFound" Message="gone"'
    assert str(arm.ArmError(409, "", "x")) == 'Status=409 Message="x"'


def test_arm_is_used_only_when_an_endpoint_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(arm.METADATA_ENV, raising=False)
    assert not arm.configured()
    monkeypatch.setenv(arm.METADATA_ENV, "https://127.0.0.1:1/metadata")
    assert arm.configured()
