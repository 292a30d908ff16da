"""What the pulumi-azure-native provider (v3) does with a resource during `pulumi preview`, modelled offline.

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
  `...Args` classes, in the program). Auto-naming is not modelled: this program names every resource.
- `detailed_diff` -> `Diff`: `Diff` -> `diff.go` `diff` / `objectDiff` / `valueDiff` /
  `calculateDetailedDiff` / `calculateChangesAndReplacements` (read at pulumi-azure-native v3-era
  `provider/pkg/provider/diff.go`, `provider.go (*azureNativeProvider).Diff`). Old inputs against new checked
  inputs; keys are dotted input paths down to the leaves (`properties.properties.vmSize`, `a[0]`); keys
  starting with `__` are ignored; a null is no value. **An unknown new value is a change** (pulumi sdk
  `PropertyValue.DeepEquals`: a computed value equals only a computed value), so a path parameter or
  force-new key that becomes unknown (its resource is replaced) is an `UPDATE_REPLACE`; a new key with an
  unknown value is an `ADD`. Arrays whose spec property carries `x-ms-identifiers` are diffed as keyed sets
  (`diffKeyedArrays`), others by index; top-level `resourceGroupName` compares ignoring case and `location`
  ignoring case and spaces (`applyAzureSpecificDiff`). Replace keys (`replacement_keys`): every path
  parameter of the PUT route, every top-level body input marked create-only (`x-ms-mutability` without
  `update`: gen/properties.go `forceNew`), and the manual `gen/replacement.go forceNewMap` entries (by name,
  at the top level and one level into object types); a child `UPDATE` under a replace key replaces too.
  `changes` skips a top-level `ADD` equal to the spec default; an `ADD_REPLACE` equal to the old output is an
  `ADD`. Delete-before-replace: replacements present, unless the old inputs carry `__createBeforeDelete`. The
  metadata comes from the vendored REST spec of the API version the inputs carry
  (`preflight.provider.schema.metadata`); with no vendored spec, the path parameters are the SDK's input-only
  properties (inputs that are not outputs). Nothing under a Compute's `properties` forces a replacement in
  the provider: the spec's create-only marks (`computeLocation`, `disableLocalAuth`) sit inside a union type,
  which `findForceNew` does not descend.
- `preview_outputs`: `Create`/`Update` with `preview=true` -> `PreviewOutputs(inputs, res.Response)`: the
  response shape (the SDK's output properties); each output whose name is an input is copied from the input,
  every other one is unknown; input-only (path) properties are absent. `Update` also keeps `name` and
  `location` from the old state (`stableOutputs`).
- `deployed_outputs`: the outputs a real create leaves in the state (`readAfterWrite` GET ->
  `ResponseBodyToSdkOutputs`, `checkpointObject` adds `azureApiVersion`; no `__inputs` in v3), for the
  update evaluation's `pulumi up` of the stack as declared.

Public API (the offline provider, preflight/provider/server.py, is its user): `shape(token) -> Shape | None`;
`check(token, news, olds, provider_location, group_location) -> dict`; `replacement_keys(token,
api_version=None) -> frozenset[str]` (the provider's replace-key set, `[]` for array elements);
`detailed_diff(token, olds, news, old_outputs=None) -> Diff` (`detailed`: path -> kind; `changes`: the
top-level keys that change, as the DiffResponse's `diffs`; `replaces`: the detailed keys that replace, as its
`replaces`; `changed_keys` / `replace_keys`: the same sorted and unique; `delete_before_replace`; `changed`:
any change, i.e. DIFF_SOME); `preview_outputs(token, inputs, old_outputs=None) -> dict`;
`deployed_outputs(token, inputs, azure_name, arm_type) -> dict`. `UNKNOWN`, `SIG_KEY`, `SECRET_SIG`,
`is_unknown` are `preflight.wire`'s.

Where this differs from the provider (docs/preflight.md lists it too): nested object types are echoed
verbatim in preview outputs (the provider recurses into `Ref` types and marks their read-only fields, e.g.
`identity.principalId`, unknown; unions such as Compute `properties` are echoed in both); the force-new flags
are derived from the vendored spec extracts, not from the provider's generated metadata file; a deployed
resource's read-only outputs are filled only where the policies or the program read them (name, type,
provisioning state, the AmlCompute node counts).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from preflight.provider import schema
from preflight.wire import SECRET_SIG, SIG_KEY, UNKNOWN, is_unknown
from vmsizes.regions import normalize_region

__all__ = [
    "SECRET_SIG",
    "SIG_KEY",
    "UNKNOWN",
    "Diff",
    "Shape",
    "check",
    "deployed_outputs",
    "detailed_diff",
    "is_unknown",
    "preview_outputs",
    "replacement_keys",
    "shape",
]

CREATE_BEFORE_DELETE = "__createBeforeDelete"
# The tenant of deployed managed identities (preflight.provider.invokes answers getClientConfig with the same
# one).
FAKE_TENANT_ID = "11111111-1111-1111-1111-111111111111"

# gen/replacement.go forceNewMap entries (module -> resource -> property names; matched by name at the top
# level and inside the resource's object types) for the resource types this project declares. No entry for
# the ML, lock, diagnostic-setting, DNS-zone-group, key-vault or registry types; Insights Component's entry is
# empty ("covered by x-ms-mutability"). noForceNewMap has nothing for these types.
FORCE_NEW: dict[str, frozenset[str]] = {
    "azure-native:authorization:RoleAssignment": frozenset({"principalId", "scope"}),
    "azure-native:network:PrivateEndpoint": frozenset({"subnet"}),
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


def _snake(name: str) -> str:
    """`PrivateDnsZoneGroup` -> `private_dns_zone_group`: the SDK's file for a resource class."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _getters(node: ast.ClassDef) -> list[str]:
    """The wire names of a generated class's properties: `@pulumi.getter(name="wire")`, else the method
    name."""
    names = []
    for item in node.body:
        if not isinstance(item, ast.FunctionDef):
            continue
        for deco in item.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            if not (isinstance(target, ast.Attribute) and target.attr == "getter"):
                continue
            wire = item.name
            if isinstance(deco, ast.Call):
                for kw in deco.keywords:
                    if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                        wire = str(kw.value.value)
            names.append(wire)
    return names


@cache
def shape(token: str) -> Shape | None:
    """The SDK's shape of an `azure-native:<module>:<Type>` token; None for anything else.

    Read from the generated source file of the installed SDK (`pulumi_azure_native/<module>/<type>.py`: the
    `<Type>Args` and `<Type>` classes' `@pulumi.getter` properties, and the class docstring's "Uses Azure REST
    API version ..."), parsed rather than imported: importing the SDK's modules to read the same facts took
    0.9 s of every provider start (docs/benchmarks.md); tests/preflight/provider/test_model.py checks the two
    agree for every type with a vendored spec."""
    parts = token.split(":")
    if len(parts) != 3 or parts[0] != "azure-native":
        return None
    found = importlib.util.find_spec("pulumi_azure_native")
    if found is None or not found.submodule_search_locations:
        return None
    folder = Path(list(found.submodule_search_locations)[0]) / parts[1].replace("/", os.sep)
    source = folder / f"{_snake(parts[2])}.py"
    if not source.is_file():
        return None
    text = source.read_text(encoding="utf-8")
    tree = ast.parse(text)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    cls, args = classes.get(parts[2]), classes.get(f"{parts[2]}Args")
    if cls is None or args is None:
        return None
    version = _API_VERSION.search(ast.get_source_segment(text, cls) or "")
    return Shape(
        token, version.group(1) if version else None, frozenset(_getters(args)), tuple(_getters(cls))
    )


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


@cache
def replacement_keys(token: str, api_version: str | None = None) -> frozenset[str]:
    """The provider's replace-key set for `token` (diff.go `calculateDetailedDiff` `replaceKeys`): dotted
    input names, `[]` for array elements (`privateLinkServiceConnections[].name`). `api_version`: the one the
    inputs carry (default: the SDK's)."""
    spec = shape(token)
    version = api_version or (spec.api_version if spec else None)
    meta = schema.metadata(token, version) if version else None
    manual = FORCE_NEW.get(token, frozenset())
    if meta is None:
        return (spec.path_params if spec else frozenset()) | manual
    keys = set(meta.path_params) | set(meta.create_only) | set(manual)
    for prefix, names in meta.nested.items():
        keys |= {prefix + n for n in names if n in manual}
    return frozenset(keys)


def _is_secret(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get(SIG_KEY) == SECRET_SIG


def _secret_value(value: Any) -> Any:
    return value.get("value", value.get("plaintext", value.get("ciphertext"))) if _is_secret(value) else value


def _has_value(value: Any) -> bool:
    return value is not None


class _Differ:
    """diff.go `objectDiff` / `valueDiff` (which kinds) and `calculateObjectDiff` / `calculateValueDiff`
    (the detailed keys and their REPLACE marks), in one walk."""

    def __init__(self, replace: frozenset[str], identifiers: Mapping[str, tuple[str, ...]]) -> None:
        self.replace = replace
        self.identifiers = identifiers
        self.out: dict[str, str] = {}

    def kind(self, base: str, replace_base: str, kind: str) -> None:
        self.out[base] = f"{kind}_REPLACE" if replace_base in self.replace else kind

    def object(
        self, olds: Mapping[str, Any], news: Mapping[str, Any], base: str, rbase: str, spath: str
    ) -> None:
        for key in sorted(set(olds) | set(news)):
            if key.startswith("__"):
                continue
            path, rpath, sp = f"{base}{key}", f"{rbase}{key}", f"{spath}{key}"
            if key in olds and key in news:
                old, new = olds[key], news[key]
                if not self.differs(old, new, sp):
                    continue
                if not _has_value(old):
                    self.kind(path, rpath, "ADD")
                elif not _has_value(new):
                    self.kind(path, rpath, "DELETE")
                else:
                    self.value(old, new, path, rpath, sp)
            elif key in olds:
                if _has_value(olds[key]):
                    self.kind(path, rpath, "DELETE")
            elif _has_value(news[key]):
                self.kind(path, rpath, "ADD")

    def differs(self, old: Any, new: Any, spath: str) -> bool:
        probe = _Differ(self.replace, self.identifiers)
        probe.value(old, new, "x", "x", spath)
        return bool(probe.out)

    def value(self, old: Any, new: Any, base: str, rbase: str, spath: str) -> None:
        if _is_secret(old) or _is_secret(new):
            if not (_is_secret(old) and _is_secret(new) and _secret_value(old) == _secret_value(new)):
                self.kind(base, rbase, "UPDATE")
            return
        if isinstance(old, list) and isinstance(new, list):
            keys = self.identifiers.get(spath)
            pairs = self.keyed(old, new, keys) if keys else self.indexed(old, new)
            for index, o, n in pairs:
                path = f"{base}[{index}]"
                if o is _MISSING:
                    self.out[path] = "ADD"
                elif n is _MISSING:
                    self.out[path] = "DELETE"
                else:
                    self.value(o, n, path, f"{rbase}[]", spath)
            return
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            before = set(self.out)
            self.object(old, new, f"{base}.", f"{rbase}.", f"{spath}.")
            if rbase in self.replace:
                # "If the parent property causes a replacement, all child properties cause a replacement."
                for key in set(self.out) - before:
                    if self.out[key] == "UPDATE":
                        self.out[key] = "UPDATE_REPLACE"
            return
        if old == new and type(old) is type(new):
            return
        numbers = isinstance(old, int | float) and isinstance(new, int | float)
        if numbers and not isinstance(old, bool) and not isinstance(new, bool) and float(old) == float(new):
            return  # every number is a double on the wire
        self.kind(base, rbase, "UPDATE")

    @staticmethod
    def indexed(old: list[Any], new: list[Any]) -> list[tuple[int, Any, Any]]:
        return [
            (i, old[i] if i < len(old) else _MISSING, new[i] if i < len(new) else _MISSING)
            for i in range(max(len(old), len(new)))
        ]

    @staticmethod
    def keyed(old: list[Any], new: list[Any], keys: tuple[str, ...]) -> list[tuple[int, Any, Any]]:
        """`diffKeyedArrays`: elements matched by their identifier values; adds and updates at the new index,
        deletes at the old one; non-objects are skipped."""

        def ident(item: Any) -> str | None:
            if not isinstance(item, Mapping):
                return None
            return json.dumps([item.get(k) for k in keys], sort_keys=True, default=str)

        olds = {ident(o): (i, o) for i, o in enumerate(old) if ident(o) is not None}
        seen: set[str] = set()
        pairs: list[tuple[int, Any, Any]] = []
        for i, n in enumerate(new):
            key = ident(n)
            if key is None:
                continue
            seen.add(key)
            pairs.append((i, olds[key][1], n) if key in olds else (i, _MISSING, n))
        pairs += [(i, o, _MISSING) for key, (i, o) in olds.items() if key not in seen]
        return pairs


_MISSING = object()


@dataclass(frozen=True)
class Diff:
    """The provider's DiffResponse. `detailed`: detailed diff (path -> kind, `*_REPLACE` for what it replaces
    itself); `changes`: the top-level keys that change (the response's `diffs`, order of `detailed`);
    `replaces`: the detailed keys that replace (the response's `replaces`); `changed_keys` / `replace_keys`:
    the same, sorted and unique; `delete_before_replace`: the provider's choice."""

    detailed: Mapping[str, str]
    changed_keys: tuple[str, ...]
    replace_keys: tuple[str, ...]
    delete_before_replace: bool
    changes: tuple[str, ...] = ()
    replaces: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """DIFF_SOME: at least one change (a default-valued ADD alone is none)."""
        return bool(self.changes)


def _same_top_level(key: str, old: Any, new: Any) -> bool:
    """`applyAzureSpecificDiff`, for top-level updates between two strings."""
    if isinstance(old, str) and isinstance(new, str) and not (is_unknown(old) or is_unknown(new)):
        if key == "resourceGroupName":
            return old.lower() == new.lower()
        if key == "location":
            return _normal_location(old) == _normal_location(new)
    return False


def detailed_diff(
    token: str,
    olds: Mapping[str, Any],
    news: Mapping[str, Any],
    old_outputs: Mapping[str, Any] | None = None,
) -> Diff:
    """`Diff` of the old inputs (state) against the new checked inputs (module docstring)."""
    version = news.get("azureApiVersion") if isinstance(news.get("azureApiVersion"), str) else None
    spec = shape(token)
    version = version or (spec.api_version if spec else None)
    meta = schema.metadata(token, version) if version else None
    differ = _Differ(replacement_keys(token, version), meta.identifiers if meta else {})
    kept_olds = {k: v for k, v in olds.items() if not (k in news and _same_top_level(k, v, news[k]))}
    kept_news = {k: v for k, v in news.items() if not (k in olds and _same_top_level(k, olds[k], v))}
    differ.object(kept_olds, kept_news, "", "", "")
    detailed = dict(sorted(differ.out.items()))
    defaults = meta.defaults if meta else {}
    changes: list[str] = []
    replaces: list[str] = []
    for key, kind in list(detailed.items()):
        if kind == "ADD_REPLACE":
            outputs = old_outputs or {}
            if key not in olds and key in news and key in outputs and outputs[key] == news[key]:
                detailed[key] = kind = "ADD"
            else:
                replaces.append(key)
        elif kind == "ADD" and key not in olds and key in news:
            if key in defaults and news[key] == defaults[key]:
                continue  # "a new property that is merely being initialized with its default value"
        elif kind in ("DELETE_REPLACE", "UPDATE_REPLACE"):
            replaces.append(key)
        changes.append(key.split(".", 1)[0])
    flag = olds.get(CREATE_BEFORE_DELETE)
    dbr = (not flag) if isinstance(flag, bool) else bool(replaces)
    return Diff(
        detailed,
        tuple(sorted(set(changes))),
        tuple(sorted(set(replaces))),
        dbr,
        tuple(changes),
        tuple(replaces),
    )


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


# -- resources the program reads but does not create (invokes) ---------------------------------------------
# Answered by the offline provider (`preflight/provider/invokes.py`, `server.py` `Invoke`). "Existing"
# resources
# are records {"id", "type", "inputs", "outputs"} keyed by the lower-case ARM id: what `python -m preflight
# --existing F` reads (`invokes.read_existing`), or, against a control plane, what ARM answers.

GET_VAULT = "azure-native:keyvault:getVault"
VAULT = "azure-native:keyvault:Vault"
VAULT_ARM_TYPE = "Microsoft.KeyVault/vaults"


class ResourceNotFound(LookupError):
    """ARM's answer to a GET of a resource that does not exist: HTTP 404, code ResourceNotFound, "The Resource
    '<type>/<name>' under resource group '<group>' was not found." (learn.microsoft.com/azure/azure-resource-
    manager/troubleshooting/error-not-found, "Symptom"); azure-native's invoke fails with it."""

    def __init__(self, arm_type: str, name: str, resource_group: str) -> None:
        self.code = "ResourceNotFound"
        super().__init__(
            f'Status=404 Code="ResourceNotFound" Message="The Resource \'{arm_type}/{name}\' under resource '
            f"group '{resource_group}' was not found.\""
        )


def vault_id(subscription_id: str, resource_group: str, name: str) -> str:
    """The ARM id of a key vault (the `Vaults_Get` path of azure-rest-api-specs keyvault.json 2024-11-01)."""
    group = f"/subscriptions/{subscription_id}/resourceGroups/{resource_group}"
    return f"{group}/providers/{VAULT_ARM_TYPE}/{name}"


@cache
def _vault_property_defaults() -> dict[str, Any]:
    """The `default`s of `VaultProperties` in the vendored spec (azure-rest-api-specs keyvault.json
    2024-11-01: enableSoftDelete true, enableRbacAuthorization false, softDeleteRetentionInDays 90, ...): Key
    Vault stores them at creation, so a GET returns them. `enablePurgeProtection` has none: never turned on,
    it is absent."""
    vault = shape(VAULT)
    version = vault.api_version if vault else None
    relative = schema.index()["resources"][VAULT][version or "2024-11-01"]["file"]
    props = schema._load(relative)["definitions"]["VaultProperties"]["properties"]
    return {k: v["default"] for k, v in props.items() if "default" in v}


def vault_get_answer(record: Mapping[str, Any]) -> dict[str, Any]:
    """The `azure-native:keyvault:getVault` answer for an existing vault `record`: the SDK's `GetVaultResult`
    shape (3.29 `keyvault/get_vault.py`: id, name, type, location, tags, systemData, properties,
    azureApiVersion; `properties` is `VaultPropertiesResponse`), the GET response of `Vaults_Get` with the
    spec's defaults filled where the record lacks them (what Key Vault stored at creation)."""
    outputs = dict(record.get("outputs") or {})
    properties = {**_vault_property_defaults(), **dict(outputs.get("properties") or {})}
    name = outputs.get("name") or str(record["id"]).rstrip("/").rsplit("/", 1)[-1]
    answer = {
        "id": record["id"],
        "name": name,
        "type": VAULT_ARM_TYPE,
        "location": outputs.get("location"),
        "tags": outputs.get("tags") or {},
        "properties": properties,
        "azureApiVersion": outputs.get("azureApiVersion") or getattr(shape(VAULT), "api_version", None),
    }
    return {k: v for k, v in answer.items() if v is not None}


def get_vault(
    subscription_id: str, args: Mapping[str, Any], existing: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """Answer `getVault(resourceGroupName, vaultName)` from `existing` (lower-case ARM id -> record); a vault
    not there is ARM's 404 (`ResourceNotFound`), as for a vault that does not exist."""
    rg, name = str(args["resourceGroupName"]), str(args["vaultName"])
    record = existing.get(vault_id(subscription_id, rg, name).lower())
    if record is None:
        raise ResourceNotFound(VAULT_ARM_TYPE, name, rg)
    return vault_get_answer(record)
