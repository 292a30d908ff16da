"""The ARM ids the offline provider gives the resources it creates (preflight/provider/armids.py): what
`pulumi up` leaves in the state and what other resources then reference (a role assignment's scope, a lock's
scope, a private endpoint's target, a diagnostic setting's resourceUri).

Each expected id is written from the resource type's ARM id as Microsoft documents it, not from the module:
learn.microsoft.com/azure/templates/<namespace>/<type> ("Resource format": the type string) with the
`/subscriptions/{sub}/resourceGroups/{rg}/providers/{namespace}/{type}/{name}` form of
learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules, children under their parent
(`.../workspaces/{ws}/computes/{name}`, `.../privateEndpoints/{pe}/privateDnsZoneGroups/{name}`), and
extension resources as `{scope}/providers/{type}/{name}`
(learn.microsoft.com/azure/azure-resource-manager/management/extension-resource-types).
"""

from __future__ import annotations

from typing import Any

import pytest

from preflight.provider import schema
from preflight.provider.armids import DEFAULT_SUBSCRIPTION_ID, UnknownResourceType, arm_identity
from preflight.wire import UNKNOWN
from tests.preflight.provider import recorded

SUB = "6f1c0e5a-1111-4222-8333-944445555666"
RG = f"/subscriptions/{SUB}/resourceGroups/rg-train"
STORAGE_ID = f"{RG}/providers/Microsoft.Storage/storageAccounts/stwsllm1a2b3c"
WORKSPACE_ID = f"{RG}/providers/Microsoft.MachineLearningServices/workspaces/ws-llm"

CASES: list[tuple[str, dict[str, Any], tuple[str, str, str]]] = [
    (
        "azure-native:resources:ResourceGroup",
        {"resourceGroupName": "rg-train", "location": "eastus"},
        (RG, "rg-train", "Microsoft.Resources/resourceGroups"),
    ),
    (
        "azure-native:storage:StorageAccount",
        {"accountName": "stwsllm1a2b3c", "resourceGroupName": "rg-train"},
        (STORAGE_ID, "stwsllm1a2b3c", "Microsoft.Storage/storageAccounts"),
    ),
    (
        "azure-native:keyvault:Vault",
        {"vaultName": "kv-ws-llm-1a2b3c", "resourceGroupName": "rg-train"},
        (
            f"{RG}/providers/Microsoft.KeyVault/vaults/kv-ws-llm-1a2b3c",
            "kv-ws-llm-1a2b3c",
            "Microsoft.KeyVault/vaults",
        ),
    ),
    (
        "azure-native:operationalinsights:Workspace",
        {"workspaceName": "log-ws-llm", "resourceGroupName": "rg-train"},
        (
            f"{RG}/providers/Microsoft.OperationalInsights/workspaces/log-ws-llm",
            "log-ws-llm",
            "Microsoft.OperationalInsights/workspaces",
        ),
    ),
    (
        "azure-native:applicationinsights:Component",
        {"resourceName": "appi-ws-llm", "resourceGroupName": "rg-train"},
        (
            f"{RG}/providers/Microsoft.Insights/components/appi-ws-llm",
            "appi-ws-llm",
            "Microsoft.Insights/components",
        ),
    ),
    (
        "azure-native:containerregistry:Registry",
        {"registryName": "crwsllm1a2b3c", "resourceGroupName": "rg-train"},
        (
            f"{RG}/providers/Microsoft.ContainerRegistry/registries/crwsllm1a2b3c",
            "crwsllm1a2b3c",
            "Microsoft.ContainerRegistry/registries",
        ),
    ),
    (
        "azure-native:machinelearningservices:Workspace",
        {"workspaceName": "ws-llm", "resourceGroupName": "rg-train"},
        (WORKSPACE_ID, "ws-llm", "Microsoft.MachineLearningServices/workspaces"),
    ),
    (
        "azure-native:machinelearningservices:Compute",
        {"computeName": "h100-x4", "workspaceName": "ws-llm", "resourceGroupName": "rg-train"},
        (
            f"{WORKSPACE_ID}/computes/h100-x4",
            "h100-x4",
            "Microsoft.MachineLearningServices/workspaces/computes",
        ),
    ),
    (
        "azure-native:network:PrivateEndpoint",
        {"privateEndpointName": "ws-llm-pe-workspace", "resourceGroupName": "rg-train"},
        (
            f"{RG}/providers/Microsoft.Network/privateEndpoints/ws-llm-pe-workspace",
            "ws-llm-pe-workspace",
            "Microsoft.Network/privateEndpoints",
        ),
    ),
    (
        "azure-native:network:PrivateDnsZoneGroup",
        {
            "privateDnsZoneGroupName": "default",
            "privateEndpointName": "ws-llm-pe-workspace",
            "resourceGroupName": "rg-train",
        },
        (
            f"{RG}/providers/Microsoft.Network/privateEndpoints/ws-llm-pe-workspace/privateDnsZoneGroups/default",
            "default",
            "Microsoft.Network/privateEndpoints/privateDnsZoneGroups",
        ),
    ),
    (
        "azure-native:authorization:RoleAssignment",
        {"roleAssignmentName": "c96114a9-64c0-5bc6-9fef-641b67c1a380", "scope": STORAGE_ID},
        (
            f"{STORAGE_ID}/providers/Microsoft.Authorization/roleAssignments/c96114a9-64c0-5bc6-9fef-641b67c1a380",
            "c96114a9-64c0-5bc6-9fef-641b67c1a380",
            "Microsoft.Authorization/roleAssignments",
        ),
    ),
    (
        "azure-native:monitor:DiagnosticSetting",
        {"name": "ws-llm-diag", "resourceUri": WORKSPACE_ID},
        (
            f"{WORKSPACE_ID}/providers/Microsoft.Insights/diagnosticSettings/ws-llm-diag",
            "ws-llm-diag",
            "Microsoft.Insights/diagnosticSettings",
        ),
    ),
    (
        "azure-native:authorization:ManagementLockByScope",
        {"lockName": "lock-stwsllm1a2b3c", "scope": STORAGE_ID, "level": "CanNotDelete"},
        (
            f"{STORAGE_ID}/providers/Microsoft.Authorization/locks/lock-stwsllm1a2b3c",
            "lock-stwsllm1a2b3c",
            "Microsoft.Authorization/locks",
        ),
    ),
    (  # ManagementLocks_CreateOrUpdateAtResourceGroupLevel's path in the Microsoft.Authorization locks.json
        "azure-native:authorization:ManagementLockAtResourceGroupLevel",
        {"lockName": "rg-lock", "resourceGroupName": "rg-train", "level": "CanNotDelete"},
        (f"{RG}/providers/Microsoft.Authorization/locks/rg-lock", "rg-lock", "Microsoft.Authorization/locks"),
    ),
    (  # ManagementLocks_CreateOrUpdateAtSubscriptionLevel
        "azure-native:authorization:ManagementLockAtSubscriptionLevel",
        {"lockName": "sub-lock", "level": "ReadOnly"},
        (
            f"/subscriptions/{SUB}/providers/Microsoft.Authorization/locks/sub-lock",
            "sub-lock",
            "Microsoft.Authorization/locks",
        ),
    ),
    (
        "azure-native:authorization:ManagementLockAtResourceLevel",
        {
            "lockName": "lock-st",
            "resourceGroupName": "rg-train",
            "resourceProviderNamespace": "Microsoft.Storage",
            "parentResourcePath": "",
            "resourceType": "storageAccounts",
            "resourceName": "stwsllm1a2b3c",
        },
        (
            f"{STORAGE_ID}/providers/Microsoft.Authorization/locks/lock-st",
            "lock-st",
            "Microsoft.Authorization/locks",
        ),
    ),
    (
        "azure-native:authorization:ManagementLockAtResourceLevel",
        {
            "lockName": "lock-c",
            "resourceGroupName": "rg-train",
            "resourceProviderNamespace": "Microsoft.MachineLearningServices",
            "parentResourcePath": "workspaces/ws-llm",
            "resourceType": "computes",
            "resourceName": "h100-x4",
        },
        (
            f"{WORKSPACE_ID}/computes/h100-x4/providers/Microsoft.Authorization/locks/lock-c",
            "lock-c",
            "Microsoft.Authorization/locks",
        ),
    ),
]


@pytest.mark.parametrize(
    ("typ", "inputs", "expected"), CASES, ids=[f"{c[0].rsplit(':', 1)[-1]}-{i}" for i, c in enumerate(CASES)]
)
def test_each_type_gets_its_documented_arm_id(typ: str, inputs: dict[str, Any], expected: tuple) -> None:
    assert arm_identity(SUB, typ, "pulumi-name", inputs) == expected


def test_the_azure_name_is_the_pulumi_name_when_no_name_input_is_given() -> None:
    arm_id, name, _ = arm_identity(
        SUB, "azure-native:storage:StorageAccount", "ws-llm-st", {"resourceGroupName": "rg-train"}
    )
    assert (arm_id, name) == (f"{RG}/providers/Microsoft.Storage/storageAccounts/ws-llm-st", "ws-llm-st")


def test_the_subscription_and_the_names_are_kept_as_given() -> None:
    """ARM compares ids without regard to case but returns them as created."""
    arm_id, _, _ = arm_identity(
        DEFAULT_SUBSCRIPTION_ID,
        "azure-native:resources:ResourceGroup",
        "x",
        {"resourceGroupName": "RG-Train"},
    )
    assert arm_id == "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/RG-Train"


@pytest.mark.parametrize(
    ("typ", "inputs"),
    [
        ("azure-native:resources:ResourceGroup", {"resourceGroupName": UNKNOWN}),
        ("azure-native:storage:StorageAccount", {"accountName": "st", "resourceGroupName": UNKNOWN}),
        ("azure-native:storage:StorageAccount", {"accountName": UNKNOWN, "resourceGroupName": "rg"}),
        ("azure-native:storage:StorageAccount", {"accountName": "st"}),  # no group
        ("azure-native:storage:StorageAccount", {"accountName": "st", "resourceGroupName": ""}),
        (
            "azure-native:machinelearningservices:Compute",
            {"computeName": "c", "resourceGroupName": "rg", "workspaceName": UNKNOWN},
        ),
        ("azure-native:authorization:RoleAssignment", {"roleAssignmentName": "g", "scope": UNKNOWN}),
        ("azure-native:monitor:DiagnosticSetting", {"name": "d"}),
        (
            "azure-native:network:PrivateDnsZoneGroup",
            {"resourceGroupName": "rg", "privateEndpointName": UNKNOWN},
        ),
        ("azure-native:authorization:ManagementLockByScope", {"lockName": "l", "scope": UNKNOWN}),
        ("azure-native:authorization:ManagementLockAtResourceGroupLevel", {"lockName": "l"}),  # no group
        (
            "azure-native:authorization:ManagementLockAtResourceGroupLevel",
            {"lockName": "l", "resourceGroupName": UNKNOWN},
        ),
        ("azure-native:authorization:ManagementLockAtSubscriptionLevel", {"lockName": UNKNOWN}),
        (
            "azure-native:authorization:ManagementLockAtResourceLevel",
            {
                "resourceGroupName": "rg",
                "resourceProviderNamespace": "Microsoft.Storage",
                "resourceType": "storageAccounts",
                "resourceName": UNKNOWN,
            },
        ),
    ],
)
def test_no_id_while_a_part_of_it_is_unknown(typ: str, inputs: dict[str, Any]) -> None:
    assert arm_identity(SUB, typ, "pulumi-name", inputs) is None


def test_a_type_without_a_template_is_refused_naming_the_fix() -> None:
    with pytest.raises(UnknownResourceType) as info:
        arm_identity(
            SUB, "azure-native:compute:VirtualMachine", "vm1", {"vmName": "vm1", "resourceGroupName": "rg"}
        )
    assert str(info.value) == (
        "the offline azure-native provider has no ARM id template for azure-native:compute:VirtualMachine "
        "(resource 'vm1'); add one to preflight/provider/armids.py ID_TEMPLATES"
    )


def test_every_resource_the_stacks_declare_gets_an_id() -> None:
    """`pulumi up` of a stack creates each of its resources: none may lack a template (prod's resources and
    the capacity stack's locks, as the engine checked them; and every type with a vendored spec)."""
    resources = [
        r for r in recorded.prod_resources() if r["custom"] and r["type"].startswith("azure-native:")
    ]
    resources.append(
        {
            "type": "azure-native:authorization:ManagementLockByScope",
            "inputs": recorded.inputs("azure-native:authorization:ManagementLockByScope"),
        }
    )
    for r in resources:
        found = arm_identity(SUB, r["type"], "pulumi-name", r["inputs"])
        assert found is not None, r["type"]
        arm_id, name, arm_type = found
        assert arm_id.startswith("/subscriptions/"), arm_id
        assert arm_id.endswith(f"/{name}") and f"/{arm_type.rsplit('/', 1)[-1]}/" in arm_id
    declared = {r["type"] for r in resources}
    assert set(schema.index()["resources"]) <= declared
