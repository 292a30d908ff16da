"""The stand-in `pulumi-resource-azure-native` plugin: azure-native's gRPC provider protocol, answered by the
project's one provider model (`preflight.provider.model`, `preflight.provider.schema`), so the real Pulumi
engine and the offline gate see the same Check, Diff and preview outputs.

Each RPC follows pulumi/pulumi-azure-native `provider/pkg/provider/provider.go` (`azureNativeProvider`):

- `GetPluginInfo`: the SDK's version (`pulumi_azure_native` 3.29.0, what the program asks for).
- `CheckConfig` returns the new config unchanged; `DiffConfig` answers DIFF_UNKNOWN with no replacements (both
  as the provider does).
- `Configure`: refuses an engine that does not send old inputs (the v3 provider's check,
  pulumi-azure-native#2686); answers `supportsPreview` and `supports_autonaming_configuration`, and no
  `acceptSecrets` (the engine then strips secrets before each call and re-marks the outputs).
- `Check` -> `applyDefaults` (`preflight.provider.model.check`: location from old inputs, provider config or
  the resource group; `azureApiVersion`) and `validateType` (`preflight.provider.schema.check_resource`
  against the vendored REST spec): failures are CheckFailures, which fail the preview as the provider's would.
  The resource group's location is a GET of the group with an ARM endpoint, else the `--existing` record.
- `Diff` -> `diff.go` (`preflight.provider.model.detailed_diff`): old inputs (the request's `old_inputs`, sent
  by engines since v3.74) against the new checked inputs; replacements and delete-before-replace.
- `Create`/`Update` with `preview` -> `PreviewOutputs` (`preflight.provider.model.preview_outputs`). Without
  it, offline (no ARM endpoint: the gate), the state is `deployed_outputs` (response shape, `azureApiVersion`)
  and nothing is kept; with an ARM endpoint (`ARM_CLOUD_METADATA_URL`, set by the local Azure ML control
  plane) every resource is made there as azure-native makes it (`preflight/provider/arm.py`: Create =
  `CanCreate` GET, PUT `<id>?api-version=` with `arm.request_body`, polled, then the `readAfterWrite` GET
  whose answer is the outputs; Update = PUT and GET). The provider keeps no store of its own: ARM is the one
  store.
- `Read` (refresh, `pulumi destroy --refresh`): with an ARM endpoint, a GET (404: an empty id, the resource
  was deleted), the outputs from the answer and the inputs refreshed as azure-native does
  (`arm.refreshed_inputs`); offline, the state as given (nothing changed since it was written).
- `Delete`: with an ARM endpoint, DELETE `<id>?api-version=` and nothing else, for every resource (provider.go
  `Delete` passes nil query parameters; `arm.ArmClient.delete`); offline, nothing.
- `Invoke`: `getClientConfig`, `getResourceGroup`, `getUserAssignedIdentity`, `getVault`
  (`preflight.provider.invokes`). `getResourceGroup` and `getVault` read ARM (a GET; a 404 fails the invoke
  with ARM's error, as azure-native's does) when an endpoint is configured, else the resources outside the
  stack from `AZML_GPU_EXISTING` (the gate's `--existing F`; a vault not there is ARM's 404 ResourceNotFound).
  Each call is appended to `AZML_GPU_PROVIDER_JOURNAL` when set (the gate's permission list reads what the
  program looked up).
- `Attach`: the engine attaches to a provider it did not start when
  `PULUMI_DEBUG_PROVIDERS=azure-native:<port>` names it (pulumi/pulumi
  sdk/go/common/resource/plugin/provider_plugin.go `GetProviderAttachPort`, `NewProvider`): the gate starts
  one provider for all its CLI runs (`preflight.provider.process`).

Where it differs from azure-native: docs/engine.md ("The offline azure-native provider").
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Mapping
from concurrent import futures
from typing import Any

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import plugin_pb2, provider_pb2, provider_pb2_grpc

from preflight.provider import EXISTING_ENV, JOURNAL_ENV, arm, invokes, schema
from preflight.provider import model as azure_native
from preflight.provider.armids import DEFAULT_SUBSCRIPTION_ID, arm_identity, group_id
from preflight.versions import azure_native_version

CONFIG_PREFIX = "azure-native:config:"


def _plain(message: struct_pb2.Struct | None) -> dict[str, Any]:
    return json_format.MessageToDict(message) if message is not None else {}


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(value)
    return out


def _token(urn: str) -> str:
    # urn:pulumi:<stack>::<project>::<parent type $>...<type>::<name>
    return urn.split("::")[2].split("$")[-1]


def _name(urn: str) -> str:
    return urn.split("::")[-1]


_KINDS = {
    "ADD": provider_pb2.PropertyDiff.ADD,
    "ADD_REPLACE": provider_pb2.PropertyDiff.ADD_REPLACE,
    "DELETE": provider_pb2.PropertyDiff.DELETE,
    "DELETE_REPLACE": provider_pb2.PropertyDiff.DELETE_REPLACE,
    "UPDATE": provider_pb2.PropertyDiff.UPDATE,
    "UPDATE_REPLACE": provider_pb2.PropertyDiff.UPDATE_REPLACE,
}


def _existing_from_env() -> dict[str, dict[str, Any]]:
    where = os.environ.get(EXISTING_ENV)
    return invokes.read_existing(__import__("pathlib").Path(where)) if where else {}


class AzureNativeStandIn(provider_pb2_grpc.ResourceProviderServicer):
    def __init__(self, existing: Mapping[str, dict[str, Any]] | None = None) -> None:
        self.config: dict[str, str] = {}
        self.existing = dict(existing) if existing is not None else _existing_from_env()
        self.journal = os.environ.get(JOURNAL_ENV)
        self._journal_lock = threading.Lock()
        self._arm: arm.ArmClient | None = None

    # -- configuration -------------------------------------------------------------------------------------
    @property
    def subscription_id(self) -> str:
        return self.config.get("subscriptionId") or DEFAULT_SUBSCRIPTION_ID

    @property
    def arm(self) -> arm.ArmClient:
        if self._arm is None:
            self._arm = arm.ArmClient.from_env()
        return self._arm

    @property
    def live(self) -> bool:
        """Whether an ARM endpoint is configured: then ARM is where every resource lives."""
        return arm.configured()

    def GetPluginInfo(self, request, context):  # noqa: N802 (gRPC names)
        return plugin_pb2.PluginInfo(version=azure_native_version())

    def GetSchema(self, request, context):  # noqa: N802
        # The engine asks only for codegen and `pulumi package`; previews and updates never do.
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "the stand-in azure-native provider serves no schema")

    def Attach(self, request, context):  # noqa: N802
        # The engine's address, for a provider it did not start; this provider calls the engine for nothing.
        return empty_pb2.Empty()

    def CheckConfig(self, request, context):  # noqa: N802
        return provider_pb2.CheckResponse(inputs=request.news)

    def DiffConfig(self, request, context):  # noqa: N802
        return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_UNKNOWN)

    def Configure(self, request, context):  # noqa: N802
        if not (request.sends_old_inputs and request.sends_old_inputs_to_delete):
            context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                "Azure Native provider requires Pulumi CLI v3.74.0 or later",
            )
        for key, value in request.variables.items():
            self.config[key.removeprefix(CONFIG_PREFIX)] = value
        return provider_pb2.ConfigureResponse(supportsPreview=True, supports_autonaming_configuration=True)

    # -- Check and Diff: the gate's model ------------------------------------------------------------------
    def _group_location(self, news: dict[str, Any]) -> str | None:
        """The location of the resource group the inputs name, as azure-native's `getDefaultLocation` reads
        it: a GET of the group with an ARM endpoint, else the `--existing` record; None when unknown."""
        rg = news.get("resourceGroupName")
        if not isinstance(rg, str) or azure_native.is_unknown(rg):
            return None
        arm_id = group_id(self.subscription_id, rg)
        if self.live:
            try:
                found = self.arm.get(arm_id, arm.api_version(arm.RESOURCE_GROUP))
            except arm.ArmError:
                return None
            return found.get("location") if found else None
        record = self.existing.get(arm_id.lower())
        return (record.get("outputs") or {}).get("location") if record else None

    def Check(self, request, context):  # noqa: N802
        token = _token(request.urn)
        news, olds = _plain(request.news), _plain(request.olds)
        checked = azure_native.check(
            token, news, olds or None, self.config.get("location"), self._group_location(news)
        )
        failures = [
            provider_pb2.CheckFailure(
                property=f.path, reason=f"{f.reason} [constraint {f.constraint} from {f.source}]"
            )
            for f in schema.check_resource(token, checked).failures
        ]
        return provider_pb2.CheckResponse(inputs=_struct(checked), failures=failures)

    def Diff(self, request, context):  # noqa: N802
        token = _token(request.urn)
        olds = _plain(request.old_inputs) if request.HasField("old_inputs") else {}
        diff = azure_native.detailed_diff(token, olds, _plain(request.news), _plain(request.olds))
        if not diff.changed:
            return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_NONE)
        return provider_pb2.DiffResponse(
            changes=provider_pb2.DiffResponse.DIFF_SOME,
            replaces=list(diff.replaces),
            deleteBeforeReplace=diff.delete_before_replace,
            diffs=list(diff.changes),
            detailedDiff={
                path: provider_pb2.PropertyDiff(kind=_KINDS[kind], inputDiff=True)
                for path, kind in diff.detailed.items()
            },
            hasDetailedDiff=True,
        )

    # -- Create, Read, Update, Delete ----------------------------------------------------------------------
    def _identity(self, token: str, urn: str, inputs: dict[str, Any]) -> tuple[str, str, str]:
        found = arm_identity(self.subscription_id, token, _name(urn), inputs)
        if found is None:  # the engine never creates with unknown inputs
            raise ValueError(f"{urn}: the inputs that make up the resource id are unknown")
        return found

    def _write(
        self, token: str, urn: str, inputs: dict[str, Any], create: bool
    ) -> tuple[str, dict[str, Any]]:
        arm_id, azure_name, arm_type = self._identity(token, urn, inputs)
        if not self.live:
            return arm_id, azure_native.deployed_outputs(token, inputs, azure_name, arm_type)
        version = arm.api_version(token, inputs)
        if create:
            self.arm.can_create(arm_id, version)
        self.arm.put(arm_id, version, arm.request_body(token, inputs))
        answer = self.arm.get(arm_id, version)  # readAfterWrite
        if answer is None:
            raise arm.ArmError(404, "ResourceNotFound", f"{arm_id} was not found right after its PUT")
        return str(answer.get("id") or arm_id), arm.response_outputs(token, answer, version)

    def Create(self, request, context):  # noqa: N802
        token, inputs = _token(request.urn), _plain(request.properties)
        if request.preview:
            return provider_pb2.CreateResponse(
                properties=_struct(azure_native.preview_outputs(token, inputs))
            )
        try:
            arm_id, outputs = self._write(token, request.urn, inputs, create=True)
        except arm.ArmError as e:
            context.abort(grpc.StatusCode.UNKNOWN, str(e))
        return provider_pb2.CreateResponse(id=arm_id, properties=_struct(outputs))

    def Update(self, request, context):  # noqa: N802
        token, news = _token(request.urn), _plain(request.news)
        if request.preview:
            outputs = azure_native.preview_outputs(token, news, _plain(request.olds))
            return provider_pb2.UpdateResponse(properties=_struct(outputs))
        try:
            _, outputs = self._write(token, request.urn, news, create=False)
        except arm.ArmError as e:
            context.abort(grpc.StatusCode.UNKNOWN, str(e))
        return provider_pb2.UpdateResponse(properties=_struct(outputs))

    def Read(self, request, context):  # noqa: N802
        token = _token(request.urn)
        if not self.live:
            # Offline: nothing has changed since the state was written.
            return provider_pb2.ReadResponse(
                id=request.id, properties=request.properties, inputs=request.inputs
            )
        olds, inputs = _plain(request.properties), _plain(request.inputs)
        version = str(olds.get("azureApiVersion") or arm.api_version(token, inputs))
        try:
            found = self.arm.get(request.id, version)
        except arm.ArmError as e:
            context.abort(grpc.StatusCode.UNKNOWN, str(e))
        if found is None:
            return provider_pb2.ReadResponse(id="")  # 404: the resource was deleted
        outputs = arm.response_outputs(token, found, version)
        if inputs:
            inputs = arm.refreshed_inputs(token, version, inputs, olds, outputs)
        return provider_pb2.ReadResponse(id=request.id, properties=_struct(outputs), inputs=_struct(inputs))

    def Delete(self, request, context):  # noqa: N802
        token = _token(request.urn)
        if not self.live:
            return empty_pb2.Empty()
        olds = _plain(request.old_inputs) if request.HasField("old_inputs") else {}
        version = str(_plain(request.properties).get("azureApiVersion") or arm.api_version(token, olds))
        try:
            self.arm.delete(request.id, version)
        except arm.ArmError as e:
            context.abort(grpc.StatusCode.UNKNOWN, str(e))
        return empty_pb2.Empty()

    # -- functions -----------------------------------------------------------------------------------------
    def _record(self, token: str, args: dict[str, Any]) -> None:
        if not self.journal:
            return
        with self._journal_lock, open(self.journal, "a", encoding="utf-8") as out:
            out.write(json.dumps({"token": token, "args": args}, sort_keys=True) + "\n")

    def _read_world(self, token: str, args: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The resources outside the stack a function reads, as `invokes.answer` takes them (lower-case id
        -> record): with an ARM endpoint, the one the function names, read by a GET (a 404 is ARM's error,
        which fails the invoke as azure-native's does); else the `--existing` records."""
        if not self.live:
            return self.existing
        if token == "azure-native:resources:getResourceGroup":
            arm_id = group_id(self.subscription_id, str(args["resourceGroupName"]))
            version = arm.api_version(arm.RESOURCE_GROUP)
        elif token == azure_native.GET_VAULT:
            rg, name = str(args["resourceGroupName"]), str(args["vaultName"])
            arm_id, version = (
                azure_native.vault_id(self.subscription_id, rg, name),
                arm.api_version(azure_native.VAULT),
            )
        else:
            return self.existing
        found = self.arm.get(arm_id, version, missing_ok=False) or {}
        return {
            arm_id.lower(): {"id": found.get("id", arm_id), "type": found.get("type", ""), "outputs": found}
        }

    def Invoke(self, request, context):  # noqa: N802
        args = _plain(request.args)
        self._record(request.tok, args)
        try:
            world = self._read_world(request.tok, args)
            answer = invokes.answer(request.tok, args, self.subscription_id, world)
        except arm.ArmError as e:  # the invoke's GET failed (a 404 included), as azure-native's does
            context.abort(grpc.StatusCode.UNKNOWN, str(e))
        except azure_native.ResourceNotFound as e:  # the invoke's GET answered 404
            context.abort(grpc.StatusCode.UNKNOWN, str(e))
        except (invokes.UnknownInvoke, KeyError) as e:  # the provider answers "Invoke type ... not found"
            context.abort(grpc.StatusCode.UNKNOWN, str(e))
        if request.tok == "azure-native:resources:getResourceGroup":
            found = world.get(str(answer["id"]).lower())
            if found is not None:
                answer = {**answer, **found["outputs"]}
        return provider_pb2.InvokeResponse(**{"return": _struct(answer)})

    def Cancel(self, request, context):  # noqa: N802
        return empty_pb2.Empty()


def warm() -> None:
    """Read the shape (`model.shape`: wire names and API version, parsed from the SDK's source file) and the
    vendored spec of every resource type with a spec, in the background at start, so that the first Check of
    a type does not wait for them (0.1 s for the 13 types, measured: docs/benchmarks.md)."""
    for token, versions in schema.index().get("resources", {}).items():
        azure_native.shape(token)
        for version in versions:
            schema.check_resource(token, {"azureApiVersion": version})


def serve() -> None:
    """Start on a free loopback port and print it on the first line of stdout, as every plugin does
    (pulumi/pulumi sdk/go/common/resource/plugin/plugin.go `newPlugin` reads the port from stdout).

    The engine ends a plugin it started with SIGINT to its process group, and waits up to 5 s for it
    (plugin.go `kill`); the provider keeps nothing to flush, so it exits at once (an interpreter's orderly
    shutdown with gRPC's threads took 0.3 to 0.5 s of every CLI run, measured)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: os._exit(0))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    provider_pb2_grpc.add_ResourceProviderServicer_to_server(AzureNativeStandIn(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    threading.Thread(target=warm, daemon=True).start()
    server.wait_for_termination()
    sys.exit(0)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    serve()
