"""Pulumi mocks for the azml-gpu program: realistic ARM ids, inputs echoed as state.

This is the only test double of the offline gate, and it sits where Pulumi's documented test mode
puts it (`pulumi.runtime.set_mocks`): the resource monitor. The program itself runs unchanged.

- `AzureMocks.new_resource` answers every resource type the program declares with the ARM id Azure
  would give it (`/subscriptions/<sub>/resourceGroups/<rg>/providers/<namespace>/<type>/<name>`,
  nested for workspace computes, `<scope>/providers/Microsoft.Authorization/locks/<name>` for locks),
  and echoes the inputs as state plus `id` and `name`, as ARM's PUT response does. A type without an
  id template is an error (add it to ID_TEMPLATES), so a new resource cannot slip through with a
  made-up id.
- `AzureMocks.call` answers `azure-native:authorization:getClientConfig` (the subscription from the
  `azure-native:subscriptionId` config, a fixed fake tenant), `azure-native:resources:getResourceGroup` and
  `azure-native:managedidentity:getUserAssignedIdentity` (stable fake principal ids), and
  `azure-native:keyvault:getVault` from `existing`, the resources of the world outside the stack (records in
  the stand-in plugin's ARM store format, `preflight.provider.model.get_vault`: a vault not there is ARM's 404).
  Nothing outside the stack is known unless declared: a test seeds `existing`, the stand-in passes its store.
- `RecordingMonitor` is Pulumi's MockMonitor that also keeps each RegisterResourceRequest, because
  `MockResourceArgs` carries neither the resource options (replaceOnChanges, deleteBeforeReplace,
  protect, ignoreChanges) nor the parent and dependencies (pulumi/runtime/mocks.py), and the
  RegisterResourceOutputs request of the stack, which carries the exported outputs.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from pulumi.output import Unknown
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2

from preflight.engine import Deployment, Step
from preflight.provider import model as azure_native
from preflight.provider.model import FAKE_TENANT_ID, UNKNOWN

# Used when the stack config has no `azure-native:subscriptionId` (all-zero GUIDs are what Azure's
# own documentation examples use).
DEFAULT_SUBSCRIPTION_ID = "00000000-0000-0000-0000-000000000000"
FAKE_CLIENT_ID = "22222222-2222-2222-2222-222222222222"
FAKE_OBJECT_ID = "33333333-3333-3333-3333-333333333333"

# type token -> (ARM provider path after the resource group, input that holds the Azure name).
# Provider paths: the resource type ids of learn.microsoft.com/azure/templates (e.g.
# Microsoft.Storage/storageAccounts), and azure-native's REST paths for the same tokens.
ID_TEMPLATES: dict[str, tuple[str, str]] = {
    "azure-native:storage:StorageAccount": ("Microsoft.Storage/storageAccounts/{}", "accountName"),
    "azure-native:keyvault:Vault": ("Microsoft.KeyVault/vaults/{}", "vaultName"),
    "azure-native:operationalinsights:Workspace": (
        "Microsoft.OperationalInsights/workspaces/{}",
        "workspaceName",
    ),
    "azure-native:applicationinsights:Component": ("Microsoft.Insights/components/{}", "resourceName"),
    "azure-native:containerregistry:Registry": ("Microsoft.ContainerRegistry/registries/{}", "registryName"),
    "azure-native:machinelearningservices:Workspace": (
        "Microsoft.MachineLearningServices/workspaces/{}",
        "workspaceName",
    ),
    "azure-native:network:PrivateEndpoint": ("Microsoft.Network/privateEndpoints/{}", "privateEndpointName"),
}

# Extension resources: id = <scope input>/providers/<type>/<name input> (learn.microsoft.com/azure/
# azure-resource-manager/management/extension-resource-types: role assignments and diagnostic settings).
EXTENSION_TEMPLATES: dict[str, tuple[str, str, str]] = {
    "azure-native:authorization:RoleAssignment": (
        "scope",
        "Microsoft.Authorization/roleAssignments",
        "roleAssignmentName",
    ),
    "azure-native:monitor:DiagnosticSetting": (
        "resourceUri",
        "Microsoft.Insights/diagnosticSettings",
        "name",
    ),
}


class UnknownResourceType(Exception):
    """The program declared a type the mocks cannot give a realistic ARM id."""


def _rg_id(subscription_id: str, resource_group: str) -> str:
    return f"/subscriptions/{subscription_id}/resourceGroups/{resource_group}"


def _known(*values: Any) -> bool:
    return all(isinstance(v, str) and v and v != UNKNOWN for v in values)


@dataclass
class AzureMocks(pulumi_mocks.Mocks):
    """Realistic azure-native answers. `subscription_id`: the subscription ids are built in. `existing`: the
    resources outside the stack that invokes read (lower-case ARM id -> ARM store record)."""

    subscription_id: str = DEFAULT_SUBSCRIPTION_ID
    calls: list[tuple[str, dict]] = field(default_factory=list)
    existing: Mapping[str, dict[str, Any]] = field(default_factory=dict)

    def arm_identity(self, typ: str, name: str, inputs: dict[str, Any]) -> tuple[str, str, str] | None:
        """(ARM id, Azure name, ARM type) of a resource of type `typ` with these checked inputs; None while
        an input the id is made of is unknown (a preview before the resources it names exist)."""
        sub = self.subscription_id
        if typ == "azure-native:resources:ResourceGroup":
            azure_name = inputs.get("resourceGroupName") or name
            return (
                (_rg_id(sub, azure_name), azure_name, "Microsoft.Resources/resourceGroups")
                if _known(azure_name)
                else None
            )
        if typ == "azure-native:machinelearningservices:Compute":
            azure_name = inputs.get("computeName") or name
            rg, ws = inputs.get("resourceGroupName"), inputs.get("workspaceName")
            if not _known(azure_name, rg, ws):
                return None
            ws_id = _rg_id(sub, rg) + f"/providers/Microsoft.MachineLearningServices/workspaces/{ws}"
            return (
                f"{ws_id}/computes/{azure_name}",
                azure_name,
                "Microsoft.MachineLearningServices/workspaces/computes",
            )
        if typ in EXTENSION_TEMPLATES:
            scope_key, arm_type, name_key = EXTENSION_TEMPLATES[typ]
            azure_name, scope = inputs.get(name_key) or name, inputs.get(scope_key)
            if not _known(azure_name, scope):
                return None
            return f"{scope}/providers/{arm_type}/{azure_name}", azure_name, arm_type
        if typ == "azure-native:network:PrivateDnsZoneGroup":
            azure_name = inputs.get("privateDnsZoneGroupName") or name
            rg, endpoint = inputs.get("resourceGroupName"), inputs.get("privateEndpointName")
            if not _known(azure_name, rg, endpoint):
                return None
            arm_type = "Microsoft.Network/privateEndpoints/privateDnsZoneGroups"
            parent = f"{_rg_id(sub, rg)}/providers/Microsoft.Network/privateEndpoints/{endpoint}"
            return f"{parent}/privateDnsZoneGroups/{azure_name}", azure_name, arm_type
        lock_type = "Microsoft.Authorization/locks"
        if typ == "azure-native:authorization:ManagementLockByScope":
            azure_name, scope = inputs.get("lockName") or name, inputs.get("scope")
            if not _known(azure_name, scope):
                return None
            return f"{scope}/providers/Microsoft.Authorization/locks/{azure_name}", azure_name, lock_type
        if typ == "azure-native:authorization:ManagementLockAtResourceLevel":
            azure_name = inputs.get("lockName") or name
            parts = [
                inputs.get(k)
                for k in ("resourceProviderNamespace", "parentResourcePath", "resourceType", "resourceName")
            ]
            if not _known(azure_name, inputs.get("resourceGroupName"), *[p for p in parts if p]):
                return None
            scope = f"{_rg_id(sub, inputs['resourceGroupName'])}/providers/{'/'.join(p for p in parts if p)}"
            return f"{scope}/providers/Microsoft.Authorization/locks/{azure_name}", azure_name, lock_type
        if typ in ID_TEMPLATES:
            template, name_key = ID_TEMPLATES[typ]
            azure_name, rg = inputs.get(name_key) or name, inputs.get("resourceGroupName")
            if not _known(azure_name, rg):
                return None
            arm_type = template.rsplit("/", 1)[0]
            return f"{_rg_id(sub, rg)}/providers/{template.format(azure_name)}", azure_name, arm_type
        raise UnknownResourceType(
            f"preflight mocks: no ARM id template for {typ} (resource {name!r}); add one to "
            "preflight/mocks.py ID_TEMPLATES"
        )

    def new_resource(self, args: pulumi_mocks.MockResourceArgs) -> tuple[str | None, dict]:
        """Unused: RecordingMonitor.RegisterResource answers through the engine model (preflight.engine)."""
        raise NotImplementedError("RecordingMonitor answers registrations through preflight.engine")

    def call(self, args: pulumi_mocks.MockCallArgs) -> dict:  # type: ignore[override]
        # A plain dict: MockMonitor.Invoke reads a tuple's second item as a list of check failures.
        self.calls.append((args.token, dict(args.args)))
        if args.token == "azure-native:authorization:getClientConfig":
            return {
                "subscriptionId": self.subscription_id,
                "tenantId": FAKE_TENANT_ID,
                "clientId": FAKE_CLIENT_ID,
                "objectId": FAKE_OBJECT_ID,
            }
        if args.token == "azure-native:resources:getResourceGroup":
            name = args.args["resourceGroupName"]
            return {
                "id": _rg_id(self.subscription_id, name),
                "name": name,
                "type": "Microsoft.Resources/resourceGroups",
                "properties": {"provisioningState": "Succeeded"},
            }
        if args.token == "azure-native:managedidentity:getUserAssignedIdentity":
            # An existing user-assigned identity (GET Microsoft.ManagedIdentity/userAssignedIdentities):
            # its principal and client ids are stable fakes derived from its id.
            name, rg = args.args["resourceName"], args.args["resourceGroupName"]
            arm_type = "Microsoft.ManagedIdentity/userAssignedIdentities"
            arm_id = f"{_rg_id(self.subscription_id, rg)}/providers/{arm_type}/{name}"
            return {
                "id": arm_id,
                "name": name,
                "type": arm_type,
                "principalId": str(uuid.uuid5(uuid.NAMESPACE_URL, arm_id.lower())),
                "clientId": str(uuid.uuid5(uuid.NAMESPACE_URL, "client:" + arm_id.lower())),
                "tenantId": FAKE_TENANT_ID,
            }
        if args.token == azure_native.GET_VAULT:
            return azure_native.get_vault(self.subscription_id, args.args, self.existing)
        raise UnknownResourceType(f"preflight mocks: no answer for the invoke {args.token}")


@dataclass
class Registration:
    """One RegisterResourceRequest as the engine received it, and the engine's step for it.

    `inputs` are what the program sent (unknowns as the sentinel string, secrets as secret objects);
    `step.inputs` what Analyze receives (after the provider's Check), `step.outputs` what the program got
    back and AnalyzeStack receives (components: replaced by their registered outputs)."""

    type: str
    name: str
    urn: str
    custom: bool
    parent: str
    inputs: dict[str, Any]
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    provider: str
    options: dict[str, Any]
    step: Step


def _options(request) -> dict[str, Any]:
    """The resource options of a RegisterResourceRequest, by their wire (proto) names."""
    return {
        "protect": bool(request.protect) if request.HasField("protect") else False,
        "deleteBeforeReplace": bool(request.deleteBeforeReplace),
        "deleteBeforeReplaceDefined": bool(request.deleteBeforeReplaceDefined),
        "replaceOnChanges": list(request.replaceOnChanges),
        "ignoreChanges": list(request.ignoreChanges),
        "retainOnDelete": bool(request.retainOnDelete) if request.HasField("retainOnDelete") else False,
        "aliases": len(request.aliases) + len(request.aliasURNs),
        "version": request.version,
        "customTimeouts": {
            "create": request.customTimeouts.create,
            "update": request.customTimeouts.update,
            "delete": request.customTimeouts.delete,
        },
    }


def wire_values(value: Any) -> Any:
    """Deserialized properties with every unknown as the engine's sentinel string (the SDK deserializes
    the sentinel into `pulumi.output.Unknown` during a preview)."""
    if isinstance(value, Unknown):
        return UNKNOWN
    if isinstance(value, dict):
        return {k: wire_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [wire_values(v) for v in value]
    return value


class ExistingFileError(ValueError):
    """An unreadable `--existing` file: the message names the file and the fix."""


def read_existing(path: Path) -> dict[str, dict[str, Any]]:
    """`python -m preflight --existing FILE`: ARM GET bodies (one object or a list, as `az keyvault show --ids
    ID` prints one: id, name, type, location, properties) of resources outside the stack, as ARM store records
    by lower-case ARM id (what `AzureMocks.existing` and the stand-in's store hold)."""
    fix = "give the JSON `az keyvault show --ids <vault id>` prints (one object, or a list of them)"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ExistingFileError(f"--existing: cannot read {path}: {e}; {fix}") from None
    except json.JSONDecodeError as e:
        raise ExistingFileError(f"--existing: {path} is not JSON ({e}); {fix}") from None
    bodies = document if isinstance(document, list) else [document]
    records: dict[str, dict[str, Any]] = {}
    for n, body in enumerate(bodies):
        arm_id = body.get("id") if isinstance(body, dict) else None
        if not isinstance(arm_id, str) or not arm_id.startswith("/subscriptions/"):
            raise ExistingFileError(
                f"--existing: {path}: item {n} has no ARM id (`id: /subscriptions/...`); {fix}"
            )
        records[arm_id.lower()] = {"id": arm_id, "type": body.get("type", ""), "inputs": {}, "outputs": body}
    return records


class InvokeFailed(grpc.RpcError):
    """The engine's answer to an invoke the provider failed: a gRPC error whose details are "invocation of
    <tok> returned an error: <the provider's message>" (pulumi/pulumi pkg/resource/deploy/source_eval.go
    `(*resmon).Invoke`). The SDK turns it into `Exception("invoke of <tok> failed: <details>")` the program
    can catch (pulumi/runtime/invoke.py `do_invoke`: `grpc.RpcError` -> `grpc_error_to_exception`); any other
    exception would crash the program as an RPC-level failure."""

    def __init__(self, token: str, message: str) -> None:
        super().__init__(message)
        self._details = f"invocation of {token} returned an error: {message}"

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return self._details


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """Pulumi's MockMonitor answering each registration as the engine would in `deployment`'s evaluation,
    and keeping every registration and the stack's outputs."""

    def __init__(self, mocks: AzureMocks, deployment: Deployment) -> None:
        super().__init__(mocks)
        self.azure = mocks
        self.deployment = deployment
        self.registrations: list[Registration] = []
        self.stack_outputs: dict[str, Any] | None = None
        self.stack_urn: str | None = None
        self.registered_outputs: dict[str, dict[str, Any]] = {}

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The engine's URN: pulumi/pulumi sdk/go/common/resource/urn/urn.go `New` leaves the root stack's
        type out of a child's qualified type (`azml-gpu:components:GpuCluster::t4-dev`, not
        `pulumi:pulumi:Stack$azml-gpu:components:GpuCluster::t4-dev`, which Pulumi's MockMonitor writes).
        Found by the conformance suite (tests/engine): against a real `pulumi stack export` every component
        looked deleted and created again."""
        if parent and parent.split("::")[2].split("$")[-1] == "pulumi:pulumi:Stack":
            parent = ""
        return super().make_urn(parent, type_, name)

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == "pulumi:pulumi:Stack":
            self.stack_urn = urn
            return resource_pb2.RegisterResourceResponse(urn=urn)
        pulumi_mocks._ensure_event_loop()
        inputs = wire_values(rpc.deserialize_properties(request.object))
        custom = bool(request.custom)
        options = _options(request)
        step = self.deployment.register(
            urn,
            request.type,
            custom,
            inputs,
            options,
            lambda checked: self.azure.arm_identity(request.type, request.name, dict(checked)),
        )
        answer = step.outputs if custom else inputs
        obj_proto = pulumi_mocks._sync_await(rpc.serialize_properties(answer, {}))
        self.resources[urn] = pulumi_mocks.MockMonitor.ResourceRegistration(urn, step.id, answer)
        self.registrations.append(
            Registration(
                type=request.type,
                name=request.name,
                urn=urn,
                custom=custom,
                parent=request.parent,
                inputs=inputs,
                dependencies=list(request.dependencies),
                property_dependencies={k: list(v.urns) for k, v in request.propertyDependencies.items()},
                provider=request.provider,
                options=options,
                step=step,
            )
        )
        return resource_pb2.RegisterResourceResponse(urn=urn, id=step.id, object=obj_proto)

    def Invoke(self, request):  # noqa: N802 (gRPC method name)
        try:
            return super().Invoke(request)
        except azure_native.ResourceNotFound as e:  # the provider's GET answered 404
            raise InvokeFailed(request.tok, str(e)) from None

    def RegisterResourceOutputs(self, request):  # noqa: N802 (gRPC method name)
        pulumi_mocks._ensure_event_loop()
        outputs = wire_values(rpc.deserialize_properties(request.outputs))
        self.registered_outputs[request.urn] = outputs
        if request.urn == self.stack_urn:
            self.stack_outputs = outputs
        return super().RegisterResourceOutputs(request)


__all__ = ["AzureMocks", "RecordingMonitor", "Registration", "UnknownResourceType", "wire_values"]
