"""components/compute_delete.py: the clusters' before-delete hook deletes the compute with
`underlyingResourceAction=Delete` and waits until ARM answers 404.

Against localml's ARM handlers in-process (tests/preflight/provider/stand_in.py): the cluster made as the
stand-in provider makes it, then deleted by the hook; Compute_Delete 2025-12-01 requires the parameter
(azure-rest-api-specs machinelearningservices stable/2025-12-01 `UnderlyingResourceActionParameter`), which
localml enforces. The long-running answer follows ARM's asynchronous operations contract
(Azure/azure-resource-manager-rpc v1.0/async-api-reference.md: a 202 with `Azure-AsyncOperation`, whose
`status` is InProgress until Succeeded, Failed or Canceled).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest

from components import compute_delete
from components.compute_delete import ComputeDeleteError, ComputeDeleter
from tests.preflight.provider.stand_in import Context, _Answer, _Dispatch, configured, localml, struct
from tests.preflight.provider.test_server import (
    ARM_CLUSTER,
    COMPUTE_ID,
    GROUP,
    GROUP_INPUTS,
    WORKSPACE,
    WORKSPACE_INPUTS,
    WS_ID,
    _arm_compute,
)

URN = "urn:pulumi:dev::azml-gpu::azure-native:machinelearningservices:Compute::c"


@pytest.fixture
def plane(tmp_path: Path):
    return localml(tmp_path)


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch, plane):
    """A cluster made in localml as the stand-in provider makes it (the provider's own tests' inputs)."""
    from pulumi.runtime.proto import provider_pb2

    provider = configured(monkeypatch, plane)
    for urn, inputs in ((GROUP, GROUP_INPUTS), (WORKSPACE, WORKSPACE_INPUTS), (ARM_CLUSTER, _arm_compute())):
        provider.Create(provider_pb2.CreateRequest(urn=urn, properties=struct(inputs)), Context())
    assert plane.store.arm(COMPUTE_ID) is not None
    return plane


def test_the_hook_deletes_with_underlying_resource_action_delete_and_confirms_it_is_gone(cluster) -> None:
    client = _Dispatch(cluster)
    ComputeDeleter(client, cluster.base_url, sleep=lambda _s: None).delete(COMPUTE_ID, "2025-12-01")
    assert cluster.store.arm(COMPUTE_ID) is None
    assert [(m, path, q) for m, path, q, _ in client.sent] == [
        ("DELETE", COMPUTE_ID, {"api-version": "2025-12-01", "underlyingResourceAction": "Delete"}),
        ("GET", COMPUTE_ID, {"api-version": "2025-12-01"}),
    ]
    # Never Detach: a detached cluster's VM size came back on a re-create (Azure/azure-rest-api-specs#18889).
    assert cluster.store.detached == {}


def test_a_compute_already_gone_is_done(plane) -> None:
    client = _Dispatch(plane)
    ComputeDeleter(client, plane.base_url).delete(COMPUTE_ID, "2025-12-01")
    assert [m for m, *_ in client.sent] == ["DELETE", "GET"]


def test_a_refused_delete_fails_the_hook_with_arms_error(cluster) -> None:
    """A lock on the workspace refuses the delete (ScopeLocked): the hook fails, so the engine keeps the
    cluster in the state (pulumi step.go: a failed before hook fails the step)."""
    lock = f"{WS_ID}/providers/Microsoft.Authorization/locks/by-hand"
    from doubles.localml.http import Request

    body = json.dumps({"properties": {"level": "CanNotDelete"}}).encode()
    assert (
        cluster.router.dispatch(Request("PUT", lock, {"api-version": "2020-05-01"}, {}, body)).status == 201
    )
    with pytest.raises(ComputeDeleteError) as info:
        ComputeDeleter(_Dispatch(cluster), cluster.base_url).delete(COMPUTE_ID, "2025-12-01")
    assert str(info.value).startswith('Status=409 Code="ScopeLocked"')
    assert cluster.store.arm(COMPUTE_ID) is not None


class _Scripted:
    """ARM's answers in order (the asynchronous-operation pattern), recording what was sent."""

    def __init__(self, answers: list[_Answer]) -> None:
        self.answers, self.sent = answers, []

    def send_request(self, request: Any) -> _Answer:
        self.sent.append((request.method, request.url))
        return self.answers.pop(0)


OP = "https://arm.example/subscriptions/s/providers/Microsoft.MachineLearningServices/locations/eastus/op/1"


def test_a_202_is_polled_through_azure_async_operation_until_succeeded() -> None:
    waits: list[float] = []
    client = _Scripted(
        [
            _Answer(202, None, {"Azure-AsyncOperation": OP, "Retry-After": "1"}),
            _Answer(200, {"status": "InProgress"}, {"Retry-After": "7"}),
            _Answer(200, {"status": "Succeeded"}, {}),
            _Answer(404, {"error": {"code": "ResourceNotFound", "message": "gone"}}, {}),
        ]
    )
    ComputeDeleter(client, "https://arm.example", sleep=waits.append).delete(COMPUTE_ID, "2025-12-01")
    assert [m for m, _ in client.sent] == ["DELETE", "GET", "GET", "GET"]
    assert client.sent[0][1].startswith(f"https://arm.example{COMPUTE_ID}?")
    assert "underlyingResourceAction=Delete" in client.sent[0][1]
    assert client.sent[1][1] == OP and client.sent[2][1] == OP
    assert waits == [7.0]  # ARM's Retry-After between polls


def test_a_failed_operation_fails_the_hook() -> None:
    client = _Scripted(
        [
            _Answer(202, None, {"Azure-AsyncOperation": OP}),
            _Answer(200, {"status": "Failed", "error": {"code": "InternalError"}}, {}),
        ]
    )
    with pytest.raises(ComputeDeleteError) as info:
        ComputeDeleter(client, "https://arm.example", sleep=lambda _s: None).delete(COMPUTE_ID, "2025-12-01")
    assert str(info.value) == f"DELETE {COMPUTE_ID}: the operation ended Failed"


def test_a_compute_still_there_after_the_timeout_fails_the_hook() -> None:
    there = _Answer(200, {"id": COMPUTE_ID}, {"Retry-After": "1"})
    client = _Scripted([_Answer(200, None, {})] + [there] * 3)
    deleter = ComputeDeleter(client, "https://arm.example", sleep=lambda _s: None, timeout=-1)
    with pytest.raises(ComputeDeleteError) as info:
        deleter.delete(COMPUTE_ID, "2025-12-01")
    assert str(info.value) == f"{COMPUTE_ID}: still there -1 s after its DELETE"


def test_the_endpoint_is_the_configured_clouds_else_azure_public(tmp_path: Path) -> None:
    public = ("https://management.azure.com", "https://management.core.windows.net/")
    assert compute_delete.arm_endpoint({}) == public
    # A cloud metadata document (the shape of ARM's /metadata/endpoints, which localml serves).
    metadata = tmp_path / "endpoints.json"
    metadata.write_text(
        json.dumps(
            [{"resourceManager": "https://127.0.0.1:8443/", "authentication": {"audiences": ["https://x/"]}}]
        )
    )
    found = compute_delete.arm_endpoint({"ARM_CLOUD_METADATA_URL": metadata.as_uri()})
    assert found == ("https://127.0.0.1:8443", "https://x/")


def test_the_api_version_is_the_computes_own() -> None:
    assert compute_delete.api_version({"azureApiVersion": "2024-10-01"}) == "2024-10-01"
    assert compute_delete.api_version({}) == "2025-12-01"
    assert compute_delete.api_version(None) == "2025-12-01"


def test_the_hook_does_nothing_for_a_compute_never_created(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> ComputeDeleter:
        raise AssertionError("no ARM call for a resource without an id")

    monkeypatch.setattr(ComputeDeleter, "from_env", staticmethod(refuse))
    args = pulumi.ResourceHookArgs(urn=URN, id="", name="c", type="t")
    asyncio.run(compute_delete.delete_compute(args))


class _Text(_Answer):
    """An answer whose body is not JSON (a gateway's HTML page)."""

    def json(self) -> Any:
        raise ValueError("not JSON")

    def text(self) -> str:
        return str(self._body)


def _delete(answers: list[_Answer], **kw: Any) -> tuple[_Scripted, list[float]]:
    waits: list[float] = []
    client = _Scripted(answers)
    ComputeDeleter(client, "https://arm.example", sleep=waits.append, **kw).delete(COMPUTE_ID, "2025-12-01")
    return client, waits


GONE = _Answer(404, {"error": {"code": "ResourceNotFound", "message": "gone"}}, {})
COMPUTE_URL = f"https://arm.example{COMPUTE_ID}?api-version=2025-12-01"


def test_a_202_with_only_a_location_is_polled_there_and_a_202_poll_is_in_progress_whatever_its_body() -> None:
    loc = "https://arm.example/operationResults/9"
    client, waits = _delete(
        [
            _Answer(202, None, {"Location": loc}),
            _Answer(202, {"status": "Succeeded"}, {}),  # 202: still running (ARM async contract)
            _Answer(200, None, {}),  # 200 without a body: done
            GONE,
        ]
    )
    assert client.sent[1:] == [("GET", loc), ("GET", loc), ("GET", COMPUTE_URL)]
    assert waits == [5.0]  # no Retry-After: five seconds


def test_a_location_header_on_a_200_or_204_is_not_an_operation() -> None:
    for status in (200, 204):
        client, waits = _delete([_Answer(status, None, {"Location": "https://arm.example/x"}), GONE])
        assert client.sent[1:] == [("GET", COMPUTE_URL)]
        assert waits == []


def test_an_operation_without_a_status_succeeded_and_one_canceled_fails() -> None:
    client, _ = _delete([_Answer(202, None, {"Azure-AsyncOperation": OP}), _Answer(200, {}, {}), GONE])
    assert [m for m, _ in client.sent] == ["DELETE", "GET", "GET"]
    with pytest.raises(ComputeDeleteError, match="the operation ended Canceled"):
        _delete([_Answer(202, None, {"Azure-AsyncOperation": OP}), _Answer(200, {"status": "Canceled"}, {})])


def test_a_failed_poll_or_lookup_is_arms_error_in_full() -> None:
    denied = _Answer(400, {"error": {"code": "BadRequest", "message": "no such operation"}}, {})
    with pytest.raises(ComputeDeleteError) as info:
        _delete([_Answer(202, None, {"Azure-AsyncOperation": OP}), denied])
    assert str(info.value) == 'Status=400 Code="BadRequest" Message="no such operation"'
    with pytest.raises(ComputeDeleteError) as info:
        _delete([_Answer(204, None, {}), _Text(502, "<html>Bad Gateway</html>", {})])
    assert str(info.value) == 'Status=502 Message="<html>Bad Gateway</html>"'
    with pytest.raises(ComputeDeleteError) as info:
        _delete([_Answer(500, {"error": {}}, {})])
    assert str(info.value) == 'Status=500 Code="" Message=""'


def test_a_compute_still_there_is_asked_again_after_five_seconds_or_arms_retry_after() -> None:
    there = _Answer(200, {"id": COMPUTE_ID}, {})
    client, waits = _delete([_Answer(204, None, {}), there, _Answer(200, {}, {"Retry-After": "2"}), GONE])
    assert waits == [5.0, 2.0]
    assert [m for m, _ in client.sent] == ["DELETE", "GET", "GET", "GET"]


def test_the_hour_is_measured_from_the_delete_and_the_deadline_itself_still_waits(monkeypatch) -> None:
    clock = iter([1000.0, 1000.0 + 3600.0, 1000.0 + 3600.0, 1000.0 + 3600.5])
    monkeypatch.setattr(compute_delete.time, "monotonic", lambda: next(clock))
    there = _Answer(200, {"id": COMPUTE_ID}, {})
    # At the deadline: asked once more (polled, then looked up); past it: refused.
    client = _Scripted(
        [_Answer(202, None, {"Azure-AsyncOperation": OP}), _Answer(200, {"status": "InProgress"}, {})]
    )
    client.answers += [_Answer(200, {"status": "Succeeded"}, {}), there]
    with pytest.raises(ComputeDeleteError) as info:
        ComputeDeleter(client, "https://arm.example", sleep=lambda _s: None).delete(COMPUTE_ID, "2025-12-01")
    assert str(info.value) == f"{COMPUTE_ID}: still there 3600 s after its DELETE"
    assert [m for m, _ in client.sent] == ["DELETE", "GET", "GET", "GET"]


def test_an_operation_past_the_deadline_is_refused(monkeypatch) -> None:
    clock = iter([0.0, 3600.0, 3600.1])
    monkeypatch.setattr(compute_delete.time, "monotonic", lambda: next(clock))
    client = _Scripted(
        [_Answer(202, None, {"Azure-AsyncOperation": OP}), _Answer(200, {"status": "InProgress"}, {})]
    )
    with pytest.raises(ComputeDeleteError) as info:
        ComputeDeleter(client, "https://arm.example", sleep=lambda _s: None).delete(COMPUTE_ID, "2025-12-01")
    assert str(info.value) == f"{COMPUTE_ID}: not deleted after 3600 s"


def test_the_endpoint_comes_from_the_process_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ARM_CLOUD_METADATA_URL", raising=False)
    assert compute_delete.arm_endpoint() == (
        "https://management.azure.com",
        "https://management.core.windows.net/",
    )
    metadata = tmp_path / "endpoints.json"
    metadata.write_text(
        json.dumps(
            {"resourceManager": "https://127.0.0.1:9/", "authentication": {"audiences": ["https://y/"]}}
        )
    )
    monkeypatch.setenv("ARM_CLOUD_METADATA_URL", metadata.as_uri())
    deleter = ComputeDeleter.from_env()
    assert deleter.endpoint == "https://127.0.0.1:9"
    from azure.core.pipeline.policies import BearerTokenCredentialPolicy

    policies = deleter.client._pipeline._impl_policies
    bearer = next(p for p in policies if isinstance(p, BearerTokenCredentialPolicy))
    assert bearer._scopes == ("https://y/.default",)  # the audience's scope, as azure-native asks for it


def test_an_empty_or_odd_api_version_output_falls_back_to_azure_natives() -> None:
    assert compute_delete.api_version({"azureApiVersion": ""}) == "2025-12-01"
    assert compute_delete.api_version({"azureApiVersion": 20251201}) == "2025-12-01"


def test_the_hook_is_one_per_program_run(monkeypatch) -> None:
    import contextvars

    made: list[tuple[str, Any]] = []

    class Hook:  # pulumi.ResourceHook registers itself with the engine, which a unit test has not
        def __init__(self, name: str, func: Any) -> None:
            made.append((name, func))

    monkeypatch.setattr(compute_delete.pulumi, "ResourceHook", Hook)

    def run() -> tuple[Any, Any]:
        return compute_delete.compute_delete_hook(), compute_delete.compute_delete_hook()

    first, again = contextvars.Context().run(run)
    assert isinstance(first, Hook) and first is again
    other, _ = contextvars.Context().run(run)
    assert other is not first  # another run registers its own
    assert made == [("azml-gpu-compute-delete", compute_delete.delete_compute)] * 2


def test_a_compute_found_at_the_deadline_itself_is_asked_once_more(monkeypatch) -> None:
    clock = iter([0.0, 3600.0])
    monkeypatch.setattr(compute_delete.time, "monotonic", lambda: next(clock))
    client, waits = _delete([_Answer(204, None, {}), _Answer(200, {"id": COMPUTE_ID}, {}), GONE])
    assert [m for m, _ in client.sent] == ["DELETE", "GET", "GET"]
    assert waits == [5.0]
