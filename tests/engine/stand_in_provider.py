"""The stand-in azure-native plugin configured as the engine configures it (preflight/provider/server.py
`Configure`), for tests that call its RPCs directly, and the gRPC context those calls take. A unique module
name, as the other test folders' helpers have (tests import it by name, never from `conftest`)."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from google.protobuf import struct_pb2
from pulumi.runtime.proto import provider_pb2

from preflight.provider import arm, store
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


def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AzureNativeStandIn:
    """A plugin with its own ARM store under tmp_path, no control plane, subscription SUB in eastus, and the
    engine's old-inputs flags (sent by every CLI the plugin accepts)."""
    monkeypatch.setenv(store.ENV, str(tmp_path / "arm.json"))
    monkeypatch.delenv(arm.METADATA_ENV, raising=False)
    p = AzureNativeStandIn()
    p.Configure(
        provider_pb2.ConfigureRequest(
            variables={"azure-native:config:subscriptionId": SUB, "azure-native:config:location": "eastus"},
            sends_old_inputs=True,
            sends_old_inputs_to_delete=True,
        ),
        Context(),
    )
    return p
