"""The ARM REST calls the offline azure-native provider makes when an ARM endpoint is configured (the local
Azure ML control plane, `doubles/localml`, sets one for `make smoke` and the integration tests): every
resource's create, read, update and delete, as azure-native makes them.

azure-native's calls (pulumi/pulumi-azure-native `provider/pkg/provider/crud/crud.go` and
`provider/pkg/azure/client_azcore.go`):
- Create: `CanCreate` first, a GET of the id: a 200 with a body fails the create ("cannot create already
  existing resource '<id>'"), a 404 lets it go on; then `CreateOrUpdate` = PUT `<id>?api-version=<the
  resource's API version>` with the request body, which accepts 200, 201 and 202 and polls a 202 (or a
  long-running operation) to its end; then `readAfterWrite`, a GET, whose answer becomes the outputs.
- Update: the PUT and the GET, no CanCreate.
- Read: a GET; a 404 is "the resource was deleted" (an empty id).
- Delete: DELETE `<id>?api-version=<the resource's API version>` and no other query parameter, for every
  resource a compute included (provider.go `Delete`: `k.azureClient.Delete(ctx, id, apiVersion,
  res.DeleteAsyncStyle, nil)`, the query parameters nil; azure-native has no custom resource for
  machinelearningservices computes, provider/pkg/resources/customresources), which accepts 200, 202 and 204,
  polls a 202, and takes a 404 as already deleted (client_azcore.go `Delete`: "If the resource is already
  deleted, we don't want to return an error"). Compute_Delete's required `underlyingResourceAction` is
  therefore never sent by azure-native; the stack's clusters are deleted by their before-delete hook
  (components/compute_delete.py), which sends it.
- A failed call is `Status=<status> Code="<code>" Message="<message>"` (`PulumiAzcoreResponseError`).

The request body is the SDK inputs in the REST shape (`convert/sdkInputsToRequestBody.go`
`SdkInputsToRequestBody`), built here from the vendored REST spec of the resource's API version (the metadata
azure-native generates from the same specs): every body property by its wire name (an `x-ms-client-name` such
as Application Insights' `Application_Type`, SDK `applicationType`, goes back to its wire name), each
`x-ms-client-flatten` container (`properties`, and nested ones such as a private endpoint connection's) put
back, a union (a compute's `properties`) by its discriminator, read-only properties and path parameters left
out, and a managed identity's `userAssignedIdentities` list turned into the map ARM takes (`{id: {}}`, the
provider's `IsStringSet`). The outputs are the answer in the SDK shape
(`convert/responseBodyToSdkOutputs.go`): the same walk backwards, flattened containers merged, plus
`azureApiVersion` (v3's `checkpointObject`). Read's inputs follow provider.go `Read`: the old and the new
outputs are each projected onto the input shape, and their difference is applied to the old inputs (so a
change made outside Pulumi shows in a refresh).

The endpoint and credentials come from the environment `localml` sets for every SDK
(`ARM_CLOUD_METADATA_URL`: its `resourceManager` and audience; `DefaultAzureCredential` -> the managed
identity of `IDENTITY_ENDPOINT`; `SSL_CERT_FILE` for its TLS), as azure-native takes its cloud from the
environment and its token from a managed identity (`useMsi`).

Where this differs from azure-native: the vendored spec extracts are trimmed to what the stacks send, so a
response property missing from them is kept under its wire name (azure-native knows every property); an SDK
input the extract does not know is sent where the envelope rule puts it (`location`, `tags`, ... at the top,
the rest under a flattened `properties`); polling follows a `Location` or `Azure-AsyncOperation` header, not
the spec's `final-state-via`.
"""

from __future__ import annotations

import copy
import json
import os
import time
import urllib.request
from collections.abc import Mapping
from typing import Any

from azure.core import PipelineClient
from azure.core.pipeline.policies import BearerTokenCredentialPolicy, RetryPolicy
from azure.core.rest import HttpRequest

from preflight.provider import schema
from preflight.provider.model import shape
from preflight.wire import plain_numbers

COMPUTE = "azure-native:machinelearningservices:Compute"
WORKSPACE = "azure-native:machinelearningservices:Workspace"
RESOURCE_GROUP = "azure-native:resources:ResourceGroup"
METADATA_ENV = "ARM_CLOUD_METADATA_URL"
#: Top-level keys of an ARM resource body (the resource envelope of azure-resource-manager-rpc
#: resource-api-reference.md "Put Resource"); an input the spec extract does not know goes here or under a
#: flattened `properties`.
ENVELOPE = ("location", "identity", "sku", "tags", "kind", "properties", "extendedLocation", "zones", "plan")
TERMINAL = {"succeeded", "failed", "canceled"}


def configured() -> bool:
    """Whether an ARM endpoint is configured (localml's `ARM_CLOUD_METADATA_URL`): then every resource's
    create, read, update and delete goes to it; else (the offline gate) nothing leaves the provider."""
    return bool(os.environ.get(METADATA_ENV))


class ArmError(RuntimeError):
    """An ARM call that failed, shown as azure-native shows it: `Status=404 Code="..." Message="..."`."""

    def __init__(self, status: int, code: str, message: str) -> None:
        self.status, self.code, self.message = status, code, message
        shown = (
            f'Status={status} Code="{code}" Message="{message}"'
            if code
            else f'Status={status} Message="{message}"'
        )
        super().__init__(shown)


def api_version(token: str, inputs: Mapping[str, Any] | None = None) -> str:
    """The API version azure-native sends for `token`: the inputs' `azureApiVersion` (Check adds it), else
    the SDK's."""
    given = (inputs or {}).get("azureApiVersion")
    if isinstance(given, str) and given:
        return given
    spec = shape(token)
    return (spec.api_version if spec else None) or "2025-12-01"


# -- the spec walk: SDK shape <-> wire shape --------------------------------------------------------------


def _body_node(token: str, version: str) -> Any:
    """The vendored body schema of the PUT that serves `token` at `version`; None when none is vendored."""
    found = schema._lookup("resources", token, version)
    if isinstance(found, str):
        return None
    op, _ = schema._operation(found[0], found[1])
    for raw in op.schema.get("parameters", []) or []:
        param = schema._deref(schema._Node(raw, op.file, op.pointer))
        if (
            param is not None
            and param.schema.get("in") == "body"
            and isinstance(param.schema.get("schema"), Mapping)
        ):
            return schema._deref(schema._Node(param.schema["schema"], param.file, f"{param.pointer}/schema"))
    return None


def _object_of(node: Any, value: Mapping[str, Any]) -> Any:
    """`node`'s object, or the subtype its discriminator value names (a union such as a compute's
    `properties`: `computeType: AmlCompute`)."""
    obj = schema._object(node)
    if obj.discriminator and isinstance(value.get(obj.discriminator), str):
        sub = schema._subtype(node, value[obj.discriminator])
        if sub is not None:
            return schema._object(sub)
    return obj


def _items(node: Any) -> Any:
    items = node.schema.get("items")
    return schema._Node(items, node.file, f"{node.pointer}/items") if isinstance(items, Mapping) else None


def _to_wire(node: Any, value: Any) -> Any:
    resolved = schema._deref(node) if node is not None else None
    if resolved is None:
        return copy.deepcopy(value)
    if isinstance(value, Mapping):
        obj = _object_of(resolved, value)
        if obj.properties:
            out, used = _object_to_wire(obj, value)
            if obj.missing:  # parents not vendored: what they would place is kept as given
                out.update({k: copy.deepcopy(v) for k, v in value.items() if k not in used and v is not None})
            return out
        if obj.additional is not None:
            return {k: _to_wire(obj.additional, v) for k, v in value.items()}
        return copy.deepcopy(dict(value))
    if isinstance(value, list):
        return [_to_wire(_items(resolved), v) for v in value]
    return value


def _object_to_wire(obj: Any, values: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    out: dict[str, Any] = {}
    used: set[str] = set()
    for wire, prop in obj.properties.items():
        if prop.schema.get("readOnly"):
            continue
        if prop.schema.get("x-ms-client-flatten"):
            inner = schema._deref(prop)
            if inner is None:
                continue
            sub, sub_used = _object_to_wire(schema._object(inner), values)
            if sub:
                out[wire] = sub
            used |= sub_used
            continue
        name = schema._sdk_name(wire, prop.schema)
        if values.get(name) is not None:
            out[wire] = _to_wire(prop, values[name])
            used.add(name)
    return out, used


def _from_wire(node: Any, value: Any) -> Any:
    resolved = schema._deref(node) if node is not None else None
    if resolved is None:
        return copy.deepcopy(value)
    if isinstance(value, Mapping):
        obj = _object_of(resolved, value)
        if obj.properties:
            return _object_from_wire(obj, value)
        if obj.additional is not None:
            return {k: _from_wire(obj.additional, v) for k, v in value.items()}
        return copy.deepcopy(dict(value))
    if isinstance(value, list):
        return [_from_wire(_items(resolved), v) for v in value]
    return value


def _object_from_wire(obj: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    used: set[str] = set()
    for wire, prop in obj.properties.items():
        if wire not in values:
            continue
        used.add(wire)
        inner = schema._deref(prop) if prop.schema.get("x-ms-client-flatten") else None
        if inner is not None and isinstance(values[wire], Mapping):
            out.update(_object_from_wire(schema._object(inner), values[wire]))
        else:
            out[schema._sdk_name(wire, prop.schema)] = _from_wire(prop, values[wire])
    # What the trimmed extract does not declare, as ARM answered it.
    out.update({k: copy.deepcopy(v) for k, v in values.items() if k not in used and k not in out})
    return out


def _path_params(token: str, version: str) -> frozenset[str]:
    meta = schema.metadata(token, version)
    if meta is not None:
        return meta.path_params
    spec = shape(token)
    return spec.path_params if spec else frozenset()


def request_body(token: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The PUT body azure-native sends for these (checked) inputs (module docstring)."""
    version = api_version(token, inputs)
    skip = _path_params(token, version)
    values = {
        k: v for k, v in inputs.items() if k not in skip and not k.startswith("__") and k != "azureApiVersion"
    }
    node = _body_node(token, version)
    body: dict[str, Any] = {}
    used: set[str] = set()
    if node is not None:
        obj = schema._object(node)
        body, used = _object_to_wire(obj, values)
    flattened: dict[str, Any] = {}
    for key, value in values.items():
        if key in used or value is None:
            continue
        (body if key in ENVELOPE else flattened)[key] = copy.deepcopy(value)
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


def response_outputs(token: str, response: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The SDK outputs of an ARM answer (module docstring), with `azureApiVersion`."""
    node = _body_node(token, version)
    out = (
        _object_from_wire(schema._object(node), response)
        if node is not None
        else copy.deepcopy(dict(response))
    )
    out["azureApiVersion"] = version
    return out


def _projection(token: str, version: str, outputs: Mapping[str, Any]) -> dict[str, Any]:
    """Outputs projected onto the input shape (`SDKOutputsToSDKInputs`): what could be an input, read-only
    values left out."""
    spec = shape(token)
    inputs = spec.inputs if spec else frozenset(outputs)
    node = _body_node(token, version)
    values = {k: v for k, v in outputs.items() if k in inputs}
    if node is None:
        return values
    wire, _ = _object_to_wire(schema._object(node), values)
    back = _object_from_wire(schema._object(node), wire)
    return {k: v for k, v in back.items() if k in inputs}


_MISSING = object()


def _apply(inputs: Mapping[str, Any], old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(inputs))
    for key in set(old) | set(new):
        before, after = old.get(key, _MISSING), new.get(key, _MISSING)
        if before == after:
            continue
        if isinstance(before, Mapping) and isinstance(after, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _apply(out[key], before, after)
        elif after is _MISSING:
            out.pop(key, None)
        else:
            out[key] = copy.deepcopy(after)
    return out


def refreshed_inputs(
    token: str,
    version: str,
    inputs: Mapping[str, Any],
    old_outputs: Mapping[str, Any],
    new_outputs: Mapping[str, Any],
) -> dict[str, Any]:
    """Read's inputs: the old inputs with the difference between the old and the new outputs' projections
    applied (provider.go `Read`: "Calculate the difference between two projections ... Apply this difference
    to the actual inputs")."""
    old = _projection(token, version, old_outputs)
    new = _projection(token, version, new_outputs)
    return _apply(inputs, old, new)


# -- the client -------------------------------------------------------------------------------------------


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
            raise ArmError(0, "", "no ARM endpoint: ARM_CLOUD_METADATA_URL is not set")
        with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 (the session's own endpoint)
            cloud = json.load(answer)
        cloud = cloud[0] if isinstance(cloud, list) else cloud
        return cls(cloud["resourceManager"], cloud["authentication"]["audiences"][0])

    @staticmethod
    def _error(res: Any) -> ArmError:
        try:
            payload = res.json()
        except ValueError:
            payload = None
        err = payload.get("error") if isinstance(payload, Mapping) else None
        if isinstance(err, Mapping):
            return ArmError(res.status_code, str(err.get("code") or ""), str(err.get("message") or ""))
        return ArmError(res.status_code, "", res.text())

    def _send(self, method: str, arm_id: str, version: str, body: Any = None, **query: str) -> Any:
        req = HttpRequest(method, self.endpoint + arm_id, params={"api-version": version, **query}, json=body)
        return self.client.send_request(req)

    def _poll(self, res: Any, what: str) -> None:
        """Follow a long-running operation (`Azure-AsyncOperation`, else a 202's `Location`) to its end."""
        url = res.headers.get("Azure-AsyncOperation") or (
            res.status_code == 202 and res.headers.get("Location")
        )
        deadline = time.monotonic() + 600
        while url and time.monotonic() < deadline:
            state = self.client.send_request(HttpRequest("GET", url))
            if state.status_code >= 400:
                raise self._error(state)
            if state.status_code == 202:
                time.sleep(float(state.headers.get("Retry-After", "1")))
                continue
            status = (state.json() or {}).get("status", "Succeeded") if state.text() else "Succeeded"
            if status.lower() in TERMINAL:
                if status.lower() != "succeeded":
                    raise ArmError(state.status_code, status, f"{what}: the operation ended {status}")
                return
            time.sleep(float(state.headers.get("Retry-After", "1")))

    def get(self, arm_id: str, version: str, missing_ok: bool = True) -> dict[str, Any] | None:
        """The resource; for a 404, None (`missing_ok`) or ARM's error (what an invoke reports)."""
        res = self._send("GET", arm_id, version)
        if res.status_code == 404 and missing_ok:
            return None
        if res.status_code != 200:
            raise self._error(res)
        return res.json()

    def can_create(self, arm_id: str, version: str) -> None:
        found = self.get(arm_id, version)
        if found:
            raise ArmError(409, "", f"cannot create already existing resource '{arm_id}'")

    def put(self, arm_id: str, version: str, body: Mapping[str, Any]) -> None:
        res = self._send("PUT", arm_id, version, dict(body))
        if res.status_code not in (200, 201, 202):
            raise self._error(res)
        self._poll(res, f"PUT {arm_id}")

    def delete(self, arm_id: str, version: str) -> None:
        """azure-native's DELETE: `api-version` is its one query parameter (module docstring)."""
        res = self._send("DELETE", arm_id, version)
        if res.status_code == 404:
            return  # already deleted
        if res.status_code not in (200, 202, 204):
            raise self._error(res)
        self._poll(res, f"DELETE {arm_id}")
