"""localml's ARM resources (doubles/localml/resources.py and the workspace, compute and key vault modules that
share its one store), called in-process as a client's requests reach them (no server, no Azurite, no CLI):
the answers of the ARM resource provider contract (Azure/azure-resource-manager-rpc `v1.0/
resource-api-reference.md`), ARM's error bodies (learn.microsoft.com azure-resource-manager/troubleshooting
error-not-found, error-parent-resource; lock-resources for ScopeLocked) and the REST spec check of a body."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from doubles.localml import arm, history, resources
from doubles.localml.controlplane import HandlersOnly
from doubles.localml.http import Request, Router

ROOT = Path(__file__).resolve().parents[3]
SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"
RG = f"{SUB}/resourceGroups/rg-unit"
SA = f"{RG}/providers/Microsoft.Storage/storageAccounts/stunit"
PE = f"{RG}/providers/Microsoft.Network/privateEndpoints/pe-unit"
KV = f"{RG}/providers/Microsoft.KeyVault/vaults/kv-unit"
WS = f"{RG}/providers/Microsoft.MachineLearningServices/workspaces/ws-unit"
LOCK = "/providers/Microsoft.Authorization/locks/"
API = {
    "rg": "2024-03-01",
    "sa": "2024-01-01",
    "pe": "2024-05-01",
    "lock": "2020-05-01",
    "role": "2022-04-01",
    "kv": "2024-11-01",
    "ws": "2025-12-01",
}
STORAGE = {"location": "eastus", "sku": {"name": "Standard_LRS"}, "kind": "StorageV2"}
VAULT = {
    "location": "eastus",
    "properties": {
        "tenantId": "11111111-1111-1111-1111-111111111111",
        "sku": {"family": "A", "name": "standard"},
    },
}


@pytest.fixture
def cp(tmp_path: Path) -> HandlersOnly:
    return HandlersOnly(tmp_path)


def call(
    cp: HandlersOnly, method: str, path: str, body: Any = None, api: str = "", **query: str
) -> tuple[int, Any]:
    if api:
        query["api-version"] = api
    data = json.dumps(body).encode() if body is not None else b""
    resp = cp.router.dispatch(Request(method, path, query, {}, data))
    return resp.status, resp.body


def group(cp: HandlersOnly, rg: str = RG) -> None:
    assert call(cp, "PUT", rg, {"location": "eastus"}, API["rg"])[0] == 201


def test_put_creates_with_201_replaces_with_200_and_get_answers_the_resource(cp) -> None:
    assert call(cp, "PUT", RG, {"location": "eastus", "tags": {"env": "unit"}}, API["rg"]) == (
        201,
        {
            "id": RG,
            "name": "rg-unit",
            "type": "Microsoft.Resources/resourceGroups",
            "location": "eastus",
            "tags": {"env": "unit"},
            "properties": {"provisioningState": "Succeeded"},
        },
    )
    body = {**STORAGE, "properties": {"minimumTlsVersion": "TLS1_2", "allowBlobPublicAccess": False}}
    created = call(cp, "PUT", SA, body, API["sa"])
    assert created == (
        201,
        {
            "id": SA,
            "name": "stunit",
            "type": "Microsoft.Storage/storageAccounts",
            **STORAGE,
            "properties": {
                "minimumTlsVersion": "TLS1_2",
                "allowBlobPublicAccess": False,
                "provisioningState": "Succeeded",
            },
        },
    )
    assert call(cp, "GET", SA, api=API["sa"]) == (200, created[1])
    # A PUT replaces the whole resource: what the new body leaves out is gone.
    status, replaced = call(
        cp, "PUT", SA, {**STORAGE, "properties": {"minimumTlsVersion": "TLS1_2"}}, API["sa"]
    )
    assert status == 200 and replaced["properties"] == {
        "minimumTlsVersion": "TLS1_2",
        "provisioningState": "Succeeded",
    }
    stored = cp.store.arm(SA)
    assert stored is not None and stored.sent == {**STORAGE, "properties": {"minimumTlsVersion": "TLS1_2"}}
    assert stored.api_version == API["sa"]


def test_a_missing_resource_or_group_is_arms_404(cp) -> None:
    assert call(cp, "GET", RG, api=API["rg"]) == (
        404,
        {
            "error": {
                "code": "ResourceGroupNotFound",
                "message": "Resource group 'rg-unit' could not be found.",
            }
        },
    )
    # "If the subscription or the resource group does not exist, 404 (NotFound) should be returned."
    assert call(cp, "PUT", SA, STORAGE, API["sa"])[1]["error"]["code"] == "ResourceGroupNotFound"
    assert call(cp, "DELETE", SA, api=API["sa"])[1]["error"]["code"] == "ResourceGroupNotFound"
    group(cp)
    assert call(cp, "GET", SA, api=API["sa"]) == (
        404,
        {
            "error": {
                "code": "ResourceNotFound",
                "message": "The Resource 'Microsoft.Storage/storageAccounts/stunit' under resource group "
                "'rg-unit' was not found.",
            }
        },
    )


def test_delete_answers_200_then_204_when_there_is_nothing_to_delete(cp) -> None:
    group(cp)
    call(cp, "PUT", SA, STORAGE, API["sa"])
    assert call(cp, "DELETE", SA, api=API["sa"]) == (200, None)
    assert call(cp, "DELETE", SA, api=API["sa"]) == (204, None)
    assert call(cp, "GET", SA, api=API["sa"])[0] == 404


def test_ids_match_without_regard_to_case_and_keep_the_latest_casing(cp) -> None:
    group(cp)
    call(cp, "PUT", SA, STORAGE, API["sa"])
    assert (
        call(cp, "GET", SA.upper().replace("/SUBSCRIPTIONS/", "/subscriptions/"), api=API["sa"])[1]["id"]
        == SA
    )
    other = SA.replace("rg-unit", "RG-Unit")
    status, answer = call(cp, "PUT", other, STORAGE, API["sa"])
    assert status == 200 and answer["id"] == other
    assert len(cp.store.resources) == 2


@pytest.mark.parametrize(
    ("path", "body", "failures"),
    [
        (SA, {"location": "eastus", "kind": "StorageV2"}, [("sku", "missing required property 'sku'")]),
        (
            SA.replace("stunit", "St_Unit"),
            STORAGE,
            [("accountName", "'accountName' does not match expression '^[a-z0-9]+$'")],
        ),
        (
            f"{SA}{LOCK}l",
            {"properties": {"notes": "no level"}},
            [("properties.level", "missing required property 'properties.level'")],
        ),
    ],
)
def test_a_body_the_rest_spec_rejects_is_a_400_and_nothing_is_stored(cp, path, body, failures) -> None:
    group(cp)
    if LOCK in path:
        call(cp, "PUT", SA, STORAGE, API["sa"])
    before = set(cp.store.resources)
    api = API["lock"] if LOCK in path else API["sa"]
    status, answer = call(cp, "PUT", path, body, api)
    assert status == 400 and answer["error"]["code"] == "BadRequest"
    details = [(d["target"], d["message"].rsplit(" (constraint", 1)[0]) for d in answer["error"]["details"]]
    assert details == failures
    assert set(cp.store.resources) == before
    assert [r[1] for r in cp.validation.rejected] == [path]


def test_an_api_version_with_no_vendored_spec_is_served_and_recorded_as_not_checked(cp) -> None:
    group(cp)
    assert call(cp, "PUT", SA, STORAGE, "2019-06-01")[0] == 201
    (entry,) = cp.validation.not_checked
    assert entry[1] == SA and "2019-06-01" in entry[2]


def test_a_child_needs_its_parent_and_an_extension_resource_its_scope(cp) -> None:
    group(cp)
    zones = {
        "properties": {"privateDnsZoneConfigs": [{"name": "z", "properties": {"privateDnsZoneId": "/x"}}]}
    }
    assert call(cp, "PUT", f"{PE}/privateDnsZoneGroups/default", zones, API["pe"]) == (
        404,
        {
            "error": {
                "code": "ParentResourceNotFound",
                "message": "Can not perform requested operation on nested resource. "
                "Parent resource 'pe-unit' not found.",
            }
        },
    )
    status, answer = call(cp, "PUT", f"{SA}{LOCK}l", {"properties": {"level": "CanNotDelete"}}, API["lock"])
    assert status == 404 and answer["error"]["code"] == "ResourceNotFound"
    # At a resource group, a subscription or an existing resource it is made.
    assert call(cp, "PUT", f"{RG}{LOCK}l", {"properties": {"level": "CanNotDelete"}}, API["lock"])[0] == 201
    assert call(cp, "PUT", f"{SUB}{LOCK}l", {"properties": {"level": "CanNotDelete"}}, API["lock"])[0] == 201


def scope_locked(scope: str, operation: str, *locked: str) -> tuple[int, Any]:
    listed = ", ".join(f"'{s}'" for s in locked)
    return (
        409,
        {
            "error": {
                "code": "ScopeLocked",
                "message": f"The scope '{scope}' cannot perform {operation} operation because following "
                f"scope(s) are locked: {listed}. Please remove the lock and try again.",
            }
        },
    )


def test_locks_refuse_what_their_level_forbids_on_their_scope_and_below(cp) -> None:
    group(cp)
    call(cp, "PUT", SA, STORAGE, API["sa"])
    call(cp, "PUT", f"{SA}{LOCK}no-delete", {"properties": {"level": "CanNotDelete"}}, API["lock"])
    assert call(cp, "DELETE", SA, api=API["sa"]) == scope_locked(SA, "delete", SA)
    # Deleting the group would delete the locked account.
    assert call(cp, "DELETE", RG, api=API["rg"]) == scope_locked(RG, "delete", SA)
    assert call(cp, "PUT", SA, STORAGE, API["sa"])[0] == 200  # CanNotDelete: "can read and modify"
    call(cp, "PUT", f"{RG}{LOCK}read-only", {"properties": {"level": "ReadOnly"}}, API["lock"])
    assert call(cp, "PUT", SA, STORAGE, API["sa"]) == scope_locked(SA, "write", RG)
    # Removing the locks unlocks.
    assert call(cp, "DELETE", f"{RG}{LOCK}read-only", api=API["lock"]) == (200, None)
    assert call(cp, "DELETE", f"{SA}{LOCK}no-delete", api=API["lock"]) == (200, None)
    assert call(cp, "DELETE", SA, api=API["sa"]) == (200, None)


def test_deleting_a_resource_deletes_what_lies_under_it(cp) -> None:
    group(cp)
    call(cp, "PUT", SA, STORAGE, API["sa"])
    role = f"{SA}/providers/Microsoft.Authorization/roleAssignments/00000000-0000-0000-0000-000000000001"
    grant = {
        "properties": {
            "roleDefinitionId": f"{SUB}/providers/Microsoft.Authorization/roleDefinitions/"
            "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
            "principalId": "33333333-3333-3333-3333-333333333333",
            "principalType": "ServicePrincipal",
        }
    }
    assert call(cp, "PUT", role, grant, API["role"])[0] == 201
    call(cp, "DELETE", SA, api=API["sa"])
    assert call(cp, "GET", role, api=API["role"])[0] == 404


def test_deleting_a_group_is_long_running_and_deletes_everything_in_it_as_its_own_delete_would(cp) -> None:
    group(cp)
    call(cp, "PUT", SA, STORAGE, API["sa"])
    assert call(cp, "PUT", KV, VAULT, API["kv"])[0] == 201
    status, _ = call(cp, "DELETE", RG, api=API["rg"])
    assert status == 202
    # The operation's Location, as azure-core polls it.
    (op_id,) = cp.store.operations
    poll = f"{SUB}/providers/Microsoft.Resources/locations/eastus/operationResults/{op_id}"
    assert call(cp, "GET", poll) == (200, None)
    assert cp.store.resources == {}
    assert call(cp, "GET", RG, api=API["rg"])[0] == 404
    # The vault was soft-deleted, as its own DELETE does: its name stays held.
    group(cp)
    status, answer = call(cp, "PUT", KV, VAULT, API["kv"])
    assert (status, answer["error"]["code"]) == (409, "ConflictError")


def test_a_system_assigned_identity_gets_its_read_only_ids(cp) -> None:
    group(cp)
    _, answer = call(cp, "PUT", SA, {**STORAGE, "identity": {"type": "SystemAssigned"}}, API["sa"])
    identity = answer["identity"]
    assert identity["type"] == "SystemAssigned"
    assert re.fullmatch(r"[0-9a-f-]{36}", identity["principalId"]) and identity["tenantId"]
    assert cp.store.arm(SA).sent["identity"] == {"type": "SystemAssigned"}  # as sent, read-only ids not added


def test_workspace_and_vault_puts_are_checked_and_need_their_group(cp) -> None:
    status, answer = call(cp, "PUT", KV, VAULT, API["kv"])
    assert (status, answer["error"]["code"]) == (404, "ResourceGroupNotFound")
    group(cp)
    bad = {"location": "eastus", "properties": {"sku": {"family": "A", "name": "standard"}}}
    status, answer = call(cp, "PUT", KV, bad, API["kv"])
    assert status == 400 and [d["target"] for d in answer["error"]["details"]] == ["properties.tenantId"]
    assert (
        call(cp, "PUT", WS, {"location": "eastus", "identity": {"type": "SystemAssigned"}}, API["ws"])[0]
        == 200
    )
    assert cp.store.arm(WS) is not None


def test_without_implicit_workspaces_a_workspace_no_one_made_does_not_exist(tmp_path: Path) -> None:
    cp = HandlersOnly(tmp_path, implicit_workspaces=False)
    group(cp)
    assert call(cp, "GET", WS, api=API["ws"])[0] == 404
    compute = {
        "properties": {
            "computeType": "AmlCompute",
            "properties": {"vmSize": "x", "scaleSettings": {"maxNodeCount": 1}},
        }
    }
    assert call(cp, "PUT", f"{WS}/computes/c", compute, API["ws"])[0] == 404
    implicit = HandlersOnly(tmp_path / "implicit", implicit_workspaces=True)
    assert call(implicit, "GET", WS, api=API["ws"])[0] == 200


def test_compute_delete_needs_underlying_resource_action(cp) -> None:
    """Compute_Delete's `underlyingResourceAction` is required (REST spec); a missing compute is a 204."""
    group(cp)
    call(cp, "PUT", WS, {"location": "eastus"}, API["ws"])
    status, answer = call(cp, "DELETE", f"{WS}/computes/nothing", api=API["ws"])
    assert status == 400
    assert answer["error"]["message"].startswith("underlyingResourceAction must be one of Delete, Detach")
    assert call(cp, "DELETE", f"{WS}/computes/nothing", api=API["ws"], underlyingResourceAction="Delete") == (
        204,
        None,
    )


def test_every_type_a_shipped_stack_declares_is_served() -> None:
    tokens = {t.token for t in resources.types()}
    declared = {
        "azure-native:resources:ResourceGroup",
        "azure-native:storage:StorageAccount",
        "azure-native:keyvault:Vault",
        "azure-native:containerregistry:Registry",
        "azure-native:operationalinsights:Workspace",
        "azure-native:applicationinsights:Component",
        "azure-native:machinelearningservices:Workspace",
        "azure-native:machinelearningservices:Compute",
        "azure-native:authorization:RoleAssignment",
        "azure-native:authorization:ManagementLockByScope",
        "azure-native:network:PrivateEndpoint",
        "azure-native:network:PrivateDnsZoneGroup",
        "azure-native:monitor:DiagnosticSetting",
    }
    assert declared <= tokens
    router = Router()
    arm.register(router, None)  # type: ignore[arg-type]  # handlers are not called here
    served = {(m, p.lower()) for m, p, _ in router.routes()}
    for t in resources.types():
        if t.token not in resources.OWN_MODULE:
            for method in ("PUT", "GET", "DELETE"):
                assert (method, t.pattern.lower()) in served, (method, t.pattern)


def test_readme_lists_every_implemented_call() -> None:
    """doubles/localml/README.md's table is the list of calls: it must name every route, and only those."""
    router = Router()
    arm.register(router, None)  # type: ignore[arg-type]  # handlers are not called here
    history.register(router, None)  # type: ignore[arg-type]
    readme = (ROOT / "doubles" / "localml" / "README.md").read_text()
    rows = set(re.findall(r"^\| `(GET|PUT|POST|DELETE|PATCH)` \| `([^`]+)` \|", readme, re.MULTILINE))
    assert rows == {(m, p.replace(arm.WS, "{WS}")) for m, p, _ in router.routes()}
