"""The ARM REST calls the stand-in provider makes for the resources the local Azure ML control plane serves:
the workspace and its computes, so that `jobs check-deploy` and `jobs submit` find what `pulumi up` made.

azure-native makes the same calls (pulumi/pulumi-azure-native `provider/pkg/resources/crud`:
`CreateOrUpdate` = PUT `<id>?api-version=<resource API version>` with the request body, polled to a terminal
state; `readAfterWrite` = GET; Delete = DELETE, for a compute with the query `underlyingResourceAction`,
required by the spec's `Compute_Delete`). The body is the SDK inputs in the REST shape
(`convert/sdkInputsToRequestBody.go`): path parameters and `azureApiVersion` left out, the workspace's
flattened properties (`x-ms-client-flatten`) put back under `properties`, and a managed identity's
`userAssignedIdentities` list turned into the map ARM takes (`{id: {}}`).

The endpoint and credentials come from the environment `localml` sets for every SDK
(`ARM_CLOUD_METADATA_URL`: its `resourceManager` and audience; `DefaultAzureCredential` -> the managed
identity of `IDENTITY_ENDPOINT`; `SSL_CERT_FILE` for its TLS), as azure-native takes its cloud from the
environment and its token from a managed identity (`useMsi`).
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections.abc import Mapping
from typing import Any

from azure.core import PipelineClient
from azure.core.pipeline.policies import BearerTokenCredentialPolicy, RetryPolicy
from azure.core.rest import HttpRequest

from preflight.provider.model import shape
from preflight.wire import plain_numbers

COMPUTE = "azure-native:machinelearningservices:Compute"
WORKSPACE = "azure-native:machinelearningservices:Workspace"
#: The types the control plane serves; every other one lives in the plugin's store.
SERVED = frozenset({COMPUTE, WORKSPACE})
METADATA_ENV = "ARM_CLOUD_METADATA_URL"
#: Top-level keys of an ARM resource body (azure-resource-manager resource envelope); the rest of a
#: flattened SDK type goes under `properties`.
ENVELOPE = ("location", "identity", "sku", "tags", "kind", "properties")
TERMINAL = {"succeeded", "failed", "canceled"}


def live(token: str) -> bool:
    """Whether a resource of this type goes to the control plane: only when one is running (`engine up` sets
    its cloud); a preview-only workspace (the conformance suite) keeps everything in the store."""
    return token in SERVED and bool(os.environ.get(METADATA_ENV))


class ArmError(RuntimeError):
    """An ARM call that failed: the message is what azure-native would show (status, code, message)."""


def request_body(token: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    spec = shape(token)
    path_params = spec.path_params if spec else frozenset()
    body: dict[str, Any] = {}
    flattened: dict[str, Any] = {}
    for key, value in inputs.items():
        if key in path_params or key.startswith("__") or key == "azureApiVersion":
            continue
        (body if key in ENVELOPE else flattened)[key] = value
    if flattened:
        body["properties"] = {**flattened, **(body.get("properties") or {})}
    identity = body.get("identity")
    if isinstance(identity, Mapping) and isinstance(identity.get("userAssignedIdentities"), list):
        body["identity"] = {
            **identity,
            "userAssignedIdentities": {i: {} for i in identity["userAssignedIdentities"]},
        }
    # Every number crossed the engine's wire as a double; ARM's integer properties go out as integers.
    return plain_numbers(body)


class ArmClient:
    def __init__(self, endpoint: str, audience: str) -> None:
        from azure.identity import DefaultAzureCredential

        self.endpoint = endpoint.rstrip("/")
        scope = audience.rstrip("/") + "/.default"
        self.client = PipelineClient(
            self.endpoint,
            policies=[
                RetryPolicy(retry_total=3),
                BearerTokenCredentialPolicy(DefaultAzureCredential(), scope),
            ],
        )

    @classmethod
    def from_env(cls) -> ArmClient:
        url = os.environ.get(METADATA_ENV)
        if not url:
            raise ArmError(
                "the stand-in azure-native provider has no ARM endpoint: ARM_CLOUD_METADATA_URL is not set "
                "(run it under `python -m engine up`, which starts the local control plane)"
            )
        with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 (the session's own endpoint)
            cloud = json.load(answer)
        cloud = cloud[0] if isinstance(cloud, list) else cloud
        return cls(cloud["resourceManager"], cloud["authentication"]["audiences"][0])

    def _send(self, method: str, arm_id: str, api_version: str, body: Any = None, **query: str) -> Any:
        params = {"api-version": api_version, **query}
        req = HttpRequest(method, self.endpoint + arm_id, params=params, json=body)
        res = self.client.send_request(req)
        if res.status_code >= 400:
            raise ArmError(f"{method} {arm_id}: {res.status_code} {res.text()}")
        poll = res.headers.get("Azure-AsyncOperation") or (
            res.status_code == 202 and res.headers.get("Location")
        )
        deadline = time.monotonic() + 600
        while poll and time.monotonic() < deadline:
            state = self.client.send_request(HttpRequest("GET", poll))
            status = (state.json() or {}).get("status", "Succeeded") if state.text() else "Succeeded"
            if status.lower() in TERMINAL:
                if status.lower() != "succeeded":
                    raise ArmError(f"{method} {arm_id}: operation {status}: {state.text()}")
                break
            time.sleep(float(state.headers.get("Retry-After", "1")))
        return res.json() if res.text() else None

    def put(
        self, token: str, arm_id: str, inputs: Mapping[str, Any], outputs: dict[str, Any]
    ) -> dict[str, Any]:
        api = str(inputs.get("azureApiVersion"))
        self._send("PUT", arm_id, api, request_body(token, inputs))
        live = self._send("GET", arm_id, api)  # readAfterWrite
        if token == COMPUTE and isinstance(live, Mapping) and isinstance(live.get("properties"), Mapping):
            outputs = {**outputs, "properties": live["properties"]}
        return outputs

    def exists(self, token: str, arm_id: str) -> bool:
        try:
            self._send("GET", arm_id, _api(token))
        except ArmError as e:
            if " 404 " in str(e):
                return False
            raise
        return True

    def delete(self, token: str, arm_id: str) -> None:
        query = {"underlyingResourceAction": "Delete"} if token == COMPUTE else {}
        self._send("DELETE", arm_id, _api(token), **query)


def _api(token: str) -> str:
    spec = shape(token)
    return (spec.api_version if spec else None) or "2025-12-01"
