"""What the pulumi-azure-native provider (v3) does with a resource during `pulumi preview`, replayed offline.

Each behaviour follows the provider's source (pulumi/pulumi-azure-native, v3-era `provider/pkg/provider/
provider.go` and `diff.go`, `provider/pkg/convert/previewOutputs.go`, `provider/pkg/gen/replacement.go`; read
from the search index's stored copies: the repository is too large to fetch whole, so they are v3-era
versions, not pinned to the 3.29.0 tag). The per-resource facts (input and output names, the Azure API
version) are read from the installed SDK, `pulumi_azure_native` 3.29.0, which is generated from the same
schema as the provider binary of that version, so they cannot drift from the pinned package.

- `check`: `(*azureNativeProvider).Check` -> `applyDefaults`. Nulls are dropped (inputs unmarshalled with
  `SkipNulls`); `location`, when the resource takes one and the program gives none, comes from the old
  inputs, else the provider config `azure-native:location`, else is unknown while `resourceGroupName` is
  unknown, else the resource group's location (`getDefaultLocation`); v3 adds `azureApiVersion` (the
  resource's API version) when absent. Schema defaults are NOT added by Check (they come from the SDK's
  `...Args` classes, in the program). Auto-naming is not replayed: this program names every resource.
- `detailed_diff`: `Diff` -> `diff.go calculateDetailedDiff`. Old inputs against new checked inputs; keys
  are dotted input paths down to the leaves (`properties.properties.vmSize`, `a[0]`); keys starting with
  `__` are ignored; an unknown new value counts as unchanged; top-level `resourceGroupName` compares
  ignoring case and `location` ignoring case and spaces (`applyAzureSpecificDiff`). Replacements the
  provider decides itself: every path parameter (the SDK's input-only properties: `computeName`,
  `workspaceName`, `resourceGroupName`, a lock's `scope` and `lockName`) and the manual force-new list
  (`gen/replacement.go forceNewMap`: ResourceGroup `location`; StorageAccount `location`, `isHnsEnabled`).
  Nothing under a Compute's `properties` forces a replacement in the provider: the spec's create-only marks
  (`computeLocation`, `disableLocalAuth`) sit inside a union type, which `findForceNew` does not descend.
  Provider delete-before-replace: replacements present and no `__createBeforeDelete` flag.
- `preview_outputs`: `Create`/`Update` with `preview=true` -> `PreviewOutputs(inputs, res.Response)`: the
  response shape (the SDK's output properties); each output whose name is an input is copied from the input,
  every other one is unknown; input-only (path) properties are absent. `Update` also keeps `name` and
  `location` from the old state (`stableOutputs`).
- `deployed_outputs`: the outputs a real create leaves in the state (`readAfterWrite` GET ->
  `ResponseBodyToSdkOutputs`, `checkpointObject` adds `azureApiVersion`; no `__inputs` in v3), for the
  synthetic state of the update evaluation.

Where this differs from the provider (docs/preflight.md lists it too): nested object types are echoed
verbatim in preview outputs (the provider recurses into `Ref` types and marks their read-only fields, e.g.
`identity.principalId`, unknown; unions such as Compute `properties` are echoed in both); arrays with
`x-ms-identifiers` are diffed by index, not as keyed sets; a deployed resource's read-only outputs are
filled only where the policies or the program read them (name, type, provisioning state, the AmlCompute
node counts).
"""

from __future__ import annotations

import importlib
import inspect
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from vmsizes.regions import normalize_region

# pulumi/pulumi sdk/go/common/resource/plugin/rpc.go UnknownStringValue; since pulumi v3.249 every unknown
# reaches an analyzer as this string (pkg/resource/plugin/analyzer_plugin.go, property.Map round trip).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
# pulumi sdk/go/common/resource/properties.go SigKey / SecretSig: a secret on the wire.
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
CREATE_BEFORE_DELETE = "__createBeforeDelete"
# The tenant of deployed managed identities (preflight.mocks answers getClientConfig with the same one).
FAKE_TENANT_ID = "11111111-1111-1111-1111-111111111111"

# gen/replacement.go forceNewMap entries for the resource types this project declares (no ML or lock entry).
FORCE_NEW: dict[str, frozenset[str]] = {
    "azure-native:resources:ResourceGroup": frozenset({"location"}),
    "azure-native:storage:StorageAccount": frozenset({"location", "isHnsEnabled"}),
}

_API_VERSION = re.compile(r"Uses Azure REST API version (\S+?)\.\s")


@dataclass(frozen=True)
class Shape:
    """A resource type as the 3.29 SDK declares it (wire names)."""

    token: str
    api_version: str | None
    inputs: frozenset[str]
    outputs: tuple[str, ...]

    @property
    def path_params(self) -> frozenset[str]:
        """Inputs that are not outputs: the URL path parameters (computeName, workspaceName, scope, ...)."""
        return frozenset(i for i in self.inputs if i not in self.outputs)

    @property
    def takes_location(self) -> bool:
        return "location" in self.inputs


def _wire_names(cls: type) -> list[str]:
    """The wire (camelCase) names of a generated class's `@pulumi.getter` properties."""
    return [
        getattr(v.fget, "_pulumi_name", None) or n for n, v in vars(cls).items() if isinstance(v, property)
    ]


@cache
def shape(token: str) -> Shape | None:
    """The SDK's shape of an `azure-native:<module>:<Type>` token; None for anything else."""
    parts = token.split(":")
    if len(parts) != 3 or parts[0] != "azure-native":
        return None
    try:
        module = importlib.import_module(f"pulumi_azure_native.{parts[1].replace('/', '.')}")
        cls, args = getattr(module, parts[2]), getattr(module, f"{parts[2]}Args")
    except (ImportError, AttributeError):
        return None
    found = _API_VERSION.search(inspect.getsource(cls))
    return Shape(
        token, found.group(1) if found else None, frozenset(_wire_names(args)), tuple(_wire_names(cls))
    )


def is_unknown(value: Any) -> bool:
    return isinstance(value, str) and value == UNKNOWN


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def check(
    token: str,
    news: Mapping[str, Any],
    olds: Mapping[str, Any] | None,
    provider_location: str | None,
    group_location: str | None,
) -> dict[str, Any]:
    """The inputs Check returns (what Analyze sees). `group_location`: the location of the resource group
    `news["resourceGroupName"]` names, when the run knows it (the provider would GET it)."""
    checked = _drop_nulls(dict(news))
    spec = shape(token)
    if spec is None:
        return checked
    if spec.takes_location and "location" not in checked:
        location: Any = None
        if olds and olds.get("location") is not None:
            location = olds["location"]
        elif provider_location:
            location = provider_location
        elif "resourceGroupName" in checked:
            location = UNKNOWN if is_unknown(checked["resourceGroupName"]) else group_location
        if location is not None:
            checked["location"] = location
    if spec.api_version and "azureApiVersion" not in checked:
        checked["azureApiVersion"] = spec.api_version
    return checked


def _normal_location(value: Any) -> Any:
    # The same rule as the Azure SDKs' (vmsizes.regions): spaces dropped, lower case.
    return normalize_region(value) if isinstance(value, str) else value


def _same_top_level(key: str, old: Any, new: Any) -> bool:
    if key == "resourceGroupName" and isinstance(old, str) and isinstance(new, str):
        return old.lower() == new.lower()
    if key == "location":
        return _normal_location(old) == _normal_location(new)
    return old == new


def _value_diff(base: str, old: Any, new: Any, out: dict[str, str]) -> None:
    if is_unknown(new) or old == new:
        return
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new)):
            path = f"{base}.{key}"
            if key not in new:
                out[path] = "DELETE"
            elif key not in old:
                out[path] = "ADD"
            else:
                _value_diff(path, old[key], new[key], out)
    elif isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            path = f"{base}[{i}]"
            if i >= len(new):
                out[path] = "DELETE"
            elif i >= len(old):
                out[path] = "ADD"
            else:
                _value_diff(path, old[i], new[i], out)
    else:
        out[base] = "UPDATE"


@dataclass(frozen=True)
class Diff:
    """The provider's DiffResponse: detailed diff (path -> kind, `*_REPLACE` for what it replaces itself),
    the top-level changed keys, the keys it replaces on, and its delete-before-replace choice."""

    detailed: Mapping[str, str]
    changed_keys: tuple[str, ...]
    replace_keys: tuple[str, ...]
    delete_before_replace: bool

    @property
    def changed(self) -> bool:
        return bool(self.detailed)


def detailed_diff(token: str, olds: Mapping[str, Any], news: Mapping[str, Any]) -> Diff:
    """`Diff` of the old inputs (state) against the new checked inputs."""
    spec = shape(token)
    replace_on = (spec.path_params if spec else frozenset()) | FORCE_NEW.get(token, frozenset())
    detailed: dict[str, str] = {}
    for key in sorted(set(olds) | set(news)):
        if key.startswith("__"):
            continue
        if key not in news:
            detailed[key] = "DELETE"
        elif key not in olds:
            if not is_unknown(news[key]):
                detailed[key] = "ADD"
        elif not is_unknown(news[key]) and not _same_top_level(key, olds[key], news[key]):
            _value_diff(key, olds[key], news[key], detailed)
    for path, kind in list(detailed.items()):
        top = re.split(r"[.\[]", path, maxsplit=1)[0]
        if top in replace_on:
            detailed[path] = f"{kind}_REPLACE"
    changed = tuple(sorted({re.split(r"[.\[]", p, maxsplit=1)[0] for p in detailed}))
    replaces = tuple(k for k in changed if k in replace_on)
    flag = olds.get(CREATE_BEFORE_DELETE)
    dbr = bool(replaces) and not (isinstance(flag, bool) and flag)
    return Diff(detailed, changed, replaces, dbr)


def preview_outputs(
    token: str, inputs: Mapping[str, Any], old_outputs: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Outputs of `Create(preview)` (old_outputs None) or `Update(preview)`."""
    spec = shape(token)
    if spec is None:
        return dict(inputs)
    out = {name: inputs.get(name, UNKNOWN) for name in spec.outputs}
    if old_outputs is not None:
        for name in ("name", "location"):
            if name in old_outputs:
                out[name] = old_outputs[name]
    if _system_assigned(out.get("identity")):
        # The provider marks a managed identity's read-only fields unknown in a preview (PreviewOutputs
        # recurses into the `ManagedServiceIdentity` Ref): the principal a role assignment names is unknown
        # until the resource exists.
        out["identity"] = {**out["identity"], "principalId": UNKNOWN, "tenantId": UNKNOWN}
    _identity_map(out, lambda _id: {"principalId": UNKNOWN, "clientId": UNKNOWN})
    return out


def _system_assigned(identity: Any) -> bool:
    return isinstance(identity, Mapping) and "SystemAssigned" in str(identity.get("type", ""))


def _identity_map(out: dict[str, Any], details: Any) -> None:
    """`identity.userAssignedIdentities`: a list of identity ids as the SDK takes it, a map id ->
    {principalId, clientId} as ARM returns it and the SDK reads it (azure-native 3.29
    `ManagedServiceIdentityArgs.
    user_assigned_identities: Sequence[str]` vs `ManagedServiceIdentityResponse.user_assigned_identities:
    Mapping[str, UserAssignedIdentityResponse]`; the provider converts between them)."""
    identity = out.get("identity")
    if isinstance(identity, Mapping) and isinstance(identity.get("userAssignedIdentities"), list):
        ids = identity["userAssignedIdentities"]
        mapped = {i: details(i) for i in ids if isinstance(i, str)}
        out["identity"] = {**identity, "userAssignedIdentities": mapped}


def _deployed_compute_properties(props: Mapping[str, Any]) -> dict[str, Any]:
    """An AmlCompute `properties` as the Compute GET returns it (azure-rest-api-specs
    machineLearningServices.json 2025-12-01 `AmlCompute`, `AmlComputeProperties`): the read-only state
    added, secrets not returned ("Any secrets ... are not returned", Compute_Get), and a NotSpecified SSH
    port resolved ("after creation it will be either enabled or disabled": closed with a VNet, else open)."""
    out = dict(props)
    out.update(provisioningState="Succeeded", isAttachedCompute=False, provisioningErrors=[])
    inner = dict(out.get("properties") or {})
    inner.update(
        allocationState="Steady",
        currentNodeCount=0,
        targetNodeCount=0,
        nodeStateCounts={
            k: 0
            for k in (
                "idleNodeCount",
                "leavingNodeCount",
                "preemptedNodeCount",
                "preparingNodeCount",
                "runningNodeCount",
                "unusableNodeCount",
            )
        },
    )
    credentials = inner.get("userAccountCredentials")
    if isinstance(credentials, Mapping):
        inner["userAccountCredentials"] = {
            k: v for k, v in credentials.items() if k not in ("adminUserPassword", "adminUserSshPublicKey")
        }
    if inner.get("remoteLoginPortPublicAccess", "NotSpecified") == "NotSpecified":
        inner["remoteLoginPortPublicAccess"] = "Disabled" if inner.get("subnet") else "Enabled"
    out["properties"] = inner
    return out


def deployed_outputs(token: str, inputs: Mapping[str, Any], azure_name: str, arm_type: str) -> dict[str, Any]:
    """Outputs a real create leaves in the state: the response shape, inputs echoed, name, type, API
    version and provisioning state filled."""
    spec = shape(token)
    if spec is None:
        return dict(inputs)
    out = {name: inputs[name] for name in spec.outputs if name in inputs}
    out["name"] = azure_name
    if "type" in spec.outputs:
        out["type"] = arm_type
    if "provisioningState" in spec.outputs:
        out["provisioningState"] = "Succeeded"
    if spec.api_version:
        out["azureApiVersion"] = spec.api_version
    if token == "azure-native:machinelearningservices:Compute" and isinstance(out.get("properties"), Mapping):
        out["properties"] = _deployed_compute_properties(out["properties"])
    if _system_assigned(out.get("identity")):
        # ARM returns the identity's principal (an Entra object id) once the resource exists: a stable fake
        # one per resource.
        principal = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{arm_type}/{azure_name}"))
        out["identity"] = {**out["identity"], "principalId": principal, "tenantId": FAKE_TENANT_ID}
    _identity_map(
        out,
        lambda i: {
            "principalId": str(uuid.uuid5(uuid.NAMESPACE_URL, i.lower())),
            "clientId": str(uuid.uuid5(uuid.NAMESPACE_URL, "client:" + i.lower())),
        },
    )
    return out
