"""The offline azure-native provider configured as the engine configures it (preflight/provider/server.py
`Configure`), called as the engine calls its RPCs, without the CLI; with an ARM endpoint, that endpoint is
localml's ARM handlers in-process (`doubles.localml.controlplane.HandlersOnly`), reached through the
provider's own ARM client (`preflight.provider.arm.ArmClient`, its HTTP transport replaced by a dispatch)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import grpc
import pytest
from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import provider_pb2

from doubles.localml.controlplane import HandlersOnly
from doubles.localml.http import Request
from preflight.provider import arm
from preflight.provider.server import AzureNativeStandIn

SUB = "00000000-0000-0000-0000-000000000000"


class Aborted(Exception):
    """What `context.abort` raises: the engine sees the call fail with this status and text."""


class Context:
    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise Aborted(code, details)


def struct(value: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(value)
    return s


def plain(message: Any) -> dict:
    return json_format.MessageToDict(message)


class _Answer:
    def __init__(self, status: int, body: Any, headers: dict[str, str]) -> None:
        self.status_code, self._body, self.headers = status, body, headers

    def json(self) -> Any:
        return self._body

    def text(self) -> str:
        return "" if self._body is None else json.dumps(self._body)


class _Dispatch:
    """azure-core's `send_request`, answered by localml's router."""

    def __init__(self, plane: HandlersOnly) -> None:
        self.plane = plane
        self.sent: list[tuple[str, str, dict[str, str], Any]] = []

    def send_request(self, request: Any) -> _Answer:
        split = urlsplit(request.url)
        query = dict(parse_qsl(split.query))
        body = request.content
        data = body.encode() if isinstance(body, str) else (body or b"")
        self.sent.append((request.method, split.path, query, json.loads(data) if data else None))
        resp = self.plane.router.dispatch(Request(request.method, split.path, query, {}, data))
        return _Answer(resp.status, resp.body, resp.headers)


def arm_client(plane: HandlersOnly) -> arm.ArmClient:
    client = arm.ArmClient.__new__(arm.ArmClient)
    client.endpoint = plane.base_url
    client.client = _Dispatch(plane)  # type: ignore[assignment]
    return client


def configured(
    monkeypatch: pytest.MonkeyPatch, plane: HandlersOnly | None = None, existing: dict | None = None
) -> AzureNativeStandIn:
    """A provider with subscription SUB in eastus and the engine's old-inputs flags; with `plane`, ARM is
    configured and answered by it, else the provider is offline (the gate)."""
    if plane is None:
        monkeypatch.delenv(arm.METADATA_ENV, raising=False)
    else:
        monkeypatch.setenv(arm.METADATA_ENV, f"{plane.base_url}/metadata/endpoints")
    p = AzureNativeStandIn(existing=existing or {})
    if plane is not None:
        p._arm = arm_client(plane)
    p.Configure(
        provider_pb2.ConfigureRequest(
            variables={"azure-native:config:subscriptionId": SUB, "azure-native:config:location": "eastus"},
            sends_old_inputs=True,
            sends_old_inputs_to_delete=True,
        ),
        Context(),
    )
    return p


def localml(tmp_path: Path) -> HandlersOnly:
    return HandlersOnly(tmp_path / "localml")
