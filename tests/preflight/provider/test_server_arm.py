"""The offline azure-native provider's create, read, update, delete and invokes
(preflight/provider/server.py), called as the engine calls them, without the CLI: offline (the gate: nothing
leaves the provider; its other RPCs: test_server.py) and with an ARM endpoint (localml's ARM handlers
in-process), where every resource's create, read, update and delete goes to ARM as azure-native sends it
(pulumi-azure-native `provider/pkg/provider/crud/crud.go`, `provider/pkg/azure/client_azcore.go`) and the
provider keeps no store of its own."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from pulumi.runtime.proto import provider_pb2

from doubles.localml.http import Request
from preflight.provider import arm
from preflight.provider.server import AzureNativeStandIn

from .stand_in import SUB, Aborted, Context, configured, localml, plain, struct

RG_ID = f"/subscriptions/{SUB}/resourceGroups/rg-train-dev"
WS_ID = f"{RG_ID}/providers/Microsoft.MachineLearningServices/workspaces/ws-llm-dev"
COMPUTE_ID = f"{WS_ID}/computes/t4-dev"
SA_ID = f"{RG_ID}/providers/Microsoft.Storage/storageAccounts/stdev"
CLUSTER = (
    "urn:pulumi:dev::azml-gpu::azml-gpu:components:GpuCluster$azure-native:machinelearningservices:Compute::c"
)
GROUP = "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:resources:ResourceGroup::rg"
ACCOUNT = "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:storage:StorageAccount::st"
WORKSPACE = (
    "urn:pulumi:dev::azml-gpu::azml-gpu:components:Workspace$azure-native:machinelearningservices:"
    "Workspace::w"
)


def _compute(**props) -> dict:
    return {
        "computeName": "t4-dev",
        "resourceGroupName": "rg-train-dev",
        "workspaceName": "ws-llm-dev",
        "location": "eastus",
        "azureApiVersion": "2025-12-01",
        "properties": {
            "computeType": "AmlCompute",
            "properties": {
                "vmSize": "Standard_NC4as_T4_v3",
                "scaleSettings": {"maxNodeCount": 1, "minNodeCount": 0},
                **props,
            },
        },
    }


GROUP_INPUTS = {"resourceGroupName": "rg-train-dev", "location": "eastus", "azureApiVersion": "2024-03-01"}
ACCOUNT_INPUTS = {
    "accountName": "stdev",
    "resourceGroupName": "rg-train-dev",
    "location": "eastus",
    "azureApiVersion": "2024-01-01",
    "kind": "StorageV2",
    "sku": {"name": "Standard_LRS"},
    "minimumTlsVersion": "TLS1_2",
}
WORKSPACE_INPUTS = {
    "workspaceName": "ws-llm-dev",
    "resourceGroupName": "rg-train-dev",
    "location": "eastus",
    "azureApiVersion": "2025-12-01",
    "identity": {"type": "SystemAssigned"},
}


def create(provider: AzureNativeStandIn, urn: str, inputs: dict) -> provider_pb2.CreateResponse:
    return provider.Create(provider_pb2.CreateRequest(urn=urn, properties=struct(inputs)), Context())


# -- offline (the gate) -------------------------------------------------------------------------------------


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> AzureNativeStandIn:
    return configured(monkeypatch)


def test_offline_create_gives_the_arm_id_and_read_answers_the_state_as_given(offline) -> None:
    r = create(offline, CLUSTER, _compute())
    assert r.id == COMPUTE_ID
    outputs = plain(r.properties)
    assert outputs["name"] == "t4-dev"
    assert outputs["properties"]["provisioningState"] == "Succeeded"
    found = offline.Read(
        provider_pb2.ReadRequest(
            id=COMPUTE_ID, urn=CLUSTER, properties=r.properties, inputs=struct(_compute())
        ),
        Context(),
    )
    assert found.id == COMPUTE_ID and plain(found.properties) == outputs
    offline.Delete(provider_pb2.DeleteRequest(id=COMPUTE_ID, urn=CLUSTER), Context())  # nothing to reach


def test_offline_the_group_location_is_the_existing_record(monkeypatch: pytest.MonkeyPatch) -> None:
    existing = {RG_ID.lower(): {"id": RG_ID, "type": "", "inputs": {}, "outputs": {"location": "westus3"}}}
    p = AzureNativeStandIn(existing=existing)
    p.Configure(
        provider_pb2.ConfigureRequest(sends_old_inputs=True, sends_old_inputs_to_delete=True), Context()
    )
    monkeypatch.delenv(arm.METADATA_ENV, raising=False)
    news = {"accountName": "stdev", "resourceGroupName": "rg-train-dev"}
    r = p.Check(provider_pb2.CheckRequest(urn=ACCOUNT, news=struct(news)), Context())
    assert dict(r.inputs)["location"] == "westus3"


# -- with an ARM endpoint -----------------------------------------------------------------------------------


@pytest.fixture
def plane(tmp_path: Path):
    return localml(tmp_path)


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch, plane) -> AzureNativeStandIn:
    return configured(monkeypatch, plane)


def sent(live: AzureNativeStandIn) -> list[tuple[str, str, str]]:
    return [(m, path, q.get("api-version", "")) for m, path, q, _ in live.arm.client.sent]


def test_create_is_can_create_then_put_then_read_after_write(live, plane) -> None:
    create(live, GROUP, GROUP_INPUTS)
    live.arm.client.sent.clear()
    r = create(live, ACCOUNT, ACCOUNT_INPUTS)
    assert r.id == SA_ID
    assert sent(live) == [
        ("GET", SA_ID, "2024-01-01"),
        ("PUT", SA_ID, "2024-01-01"),
        ("GET", SA_ID, "2024-01-01"),
    ]
    # localml holds what azure-native sends, and the outputs are its answer in the SDK shape.
    stored = plane.store.arm(SA_ID)
    assert stored is not None and stored.sent == arm.request_body(
        "azure-native:storage:StorageAccount", ACCOUNT_INPUTS
    )
    outputs = plain(r.properties)
    assert outputs["minimumTlsVersion"] == "TLS1_2" and outputs["provisioningState"] == "Succeeded"
    assert outputs["azureApiVersion"] == "2024-01-01" and outputs["name"] == "stdev"


def test_create_of_an_existing_resource_fails_as_azure_natives_can_create(live) -> None:
    create(live, GROUP, GROUP_INPUTS)
    with pytest.raises(Aborted) as info:
        create(live, GROUP, GROUP_INPUTS)
    assert info.value.args == (
        grpc.StatusCode.UNKNOWN,
        f"Status=409 Message=\"cannot create already existing resource '{RG_ID}'\"",
    )


def test_a_refused_put_fails_the_create_with_arms_error(live) -> None:
    with pytest.raises(Aborted) as info:
        create(live, ACCOUNT, ACCOUNT_INPUTS)  # no resource group yet
    assert info.value.args[1] == (
        'Status=404 Code="ResourceGroupNotFound" '
        "Message=\"Resource group 'rg-train-dev' could not be found.\""
    )


def test_the_workspace_identity_is_the_one_arm_answers(live, plane) -> None:
    create(live, GROUP, GROUP_INPUTS)
    r = create(live, WORKSPACE, WORKSPACE_INPUTS)
    principal = plain(r.properties)["identity"]["principalId"]
    assert principal == plane.store.arm(WS_ID).resource["identity"]["principalId"]


def test_update_puts_without_can_create_and_read_refreshes_from_arm(live, plane) -> None:
    create(live, GROUP, GROUP_INPUTS)
    created = create(live, ACCOUNT, ACCOUNT_INPUTS)
    changed = {**ACCOUNT_INPUTS, "minimumTlsVersion": "TLS1_1"}
    live.arm.client.sent.clear()
    live.Update(
        provider_pb2.UpdateRequest(urn=ACCOUNT, id=SA_ID, olds=created.properties, news=struct(changed)),
        Context(),
    )
    assert [m for m, *_ in sent(live)] == ["PUT", "GET"]
    # Someone changes it outside Pulumi: a refresh shows it in the outputs and in the inputs.
    body = json.loads(json.dumps(plane.store.arm(SA_ID).sent))
    body["properties"]["minimumTlsVersion"] = "TLS1_2"
    body["tags"] = {"owner": "portal"}
    plane.router.dispatch(Request("PUT", SA_ID, {"api-version": "2024-01-01"}, {}, json.dumps(body).encode()))
    olds = arm.response_outputs(
        "azure-native:storage:StorageAccount", plane.store.arm(SA_ID).resource, "2024-01-01"
    )
    olds["minimumTlsVersion"] = "TLS1_1"
    olds.pop("tags", None)
    r = live.Read(
        provider_pb2.ReadRequest(id=SA_ID, urn=ACCOUNT, properties=struct(olds), inputs=struct(changed)),
        Context(),
    )
    assert r.id == SA_ID
    assert plain(r.properties)["minimumTlsVersion"] == "TLS1_2"
    inputs = plain(r.inputs)
    assert inputs["minimumTlsVersion"] == "TLS1_2" and inputs["tags"] == {"owner": "portal"}
    assert inputs["accountName"] == "stdev"


def test_read_of_a_deleted_resource_is_an_empty_id_and_delete_deletes(live, plane) -> None:
    create(live, GROUP, GROUP_INPUTS)
    create(live, WORKSPACE, WORKSPACE_INPUTS)
    r = create(live, CLUSTER, _compute())
    assert plane.store.arm(COMPUTE_ID) is not None
    live.Delete(provider_pb2.DeleteRequest(id=COMPUTE_ID, urn=CLUSTER, properties=r.properties), Context())
    (delete,) = [(path, q) for m, path, q, _ in live.arm.client.sent if m == "DELETE"]
    assert delete == (COMPUTE_ID, {"api-version": "2025-12-01", "underlyingResourceAction": "Delete"})
    assert plane.store.arm(COMPUTE_ID) is None
    gone = live.Read(provider_pb2.ReadRequest(id=COMPUTE_ID, urn=CLUSTER, properties=r.properties), Context())
    assert gone.id == ""
    # Deleting what is already gone succeeds (a 204, or a 404 taken as done).
    live.Delete(provider_pb2.DeleteRequest(id=COMPUTE_ID, urn=CLUSTER), Context())


def test_deleting_a_group_polls_until_arm_is_done(live, plane) -> None:
    create(live, GROUP, GROUP_INPUTS)
    create(live, ACCOUNT, ACCOUNT_INPUTS)
    live.Delete(provider_pb2.DeleteRequest(id=RG_ID, urn=GROUP), Context())
    assert plane.store.resources == {}
    assert [m for m, path, *_ in live.arm.client.sent if "/operationResults/" in path] == ["GET"]


def test_the_group_location_and_get_resource_group_read_arm(live) -> None:
    invoke = provider_pb2.InvokeRequest(
        tok="azure-native:resources:getResourceGroup", args=struct({"resourceGroupName": "rg-train-dev"})
    )
    with pytest.raises(Aborted) as info:
        live.Invoke(invoke, Context())
    assert "ResourceGroupNotFound" in info.value.args[1]
    create(live, GROUP, {**GROUP_INPUTS, "location": "westus3"})
    answer = plain(getattr(live.Invoke(invoke, Context()), "return"))
    assert (answer["id"], answer["location"]) == (RG_ID, "westus3")
    news = {"accountName": "stdev", "resourceGroupName": "rg-train-dev"}
    live.config.pop("location")
    r = live.Check(provider_pb2.CheckRequest(urn=ACCOUNT, news=struct(news)), Context())
    assert dict(r.inputs)["location"] == "westus3"
