"""Values checked against the Azure REST API specs (azure-rest-api-specs OpenAPI), as Azure checks them.

One checker for two doubles: the gate checks each resource's inputs as the azure-native provider's Check does
(`preflight.resource_check`), and localml checks the request bodies it accepts (`doubles.localml.validation`).

The spec data is vendored, trimmed, under `preflight/provider/azure_specs/` in the repository's own layout
(`specification/...` without the prefix), with the upstream commit in each file's `x-vendored`; which
operation serves which resource type and API version is `preflight/provider/azure_specs/index.json`. Only the
operations, parameters and definitions this project sends are vendored: a `$ref` to anything else (for example
common-types) is reported as a path that was **not checked**, never passed silently.

The rules follow pulumi/pulumi-azure-native `provider/pkg/provider/provider.go` `(*azureNativeProvider).Check`
-> `validateType` / `validateProperty` (read for this module; the messages are the provider's): a missing
required property, a value of the wrong JSON type, a non-integral number for an `integer`, `minLength` /
`maxLength` / `pattern` on strings (empty strings included; the pattern is searched, as Go's
`regexp.MatchString` does), `minimum` / `maximum` on numbers; unknown values (the engine's sentinel) are
skipped. Where this is stricter than the provider, because the service checks it anyway:
- the provider never enters a union (`oneOf`, e.g. a Compute's `properties`); here a `discriminator` picks the
  vendored subtype by its `x-ms-discriminator-value` and that subtype is checked;
- a pattern Go cannot compile (ECMA lookaheads, pulumi-azure-native#164) is skipped by the provider; here
  Python evaluates it;
- a closed enum (`x-ms-enum.modelAsString: false`) and a discriminator value that names no known subtype are
  failures (the provider does not check enums; ARM cannot deserialize such a body).
Not checked: `format` (duration, uuid, date-time, arm-id), extensible enums (`modelAsString: true`),
`readOnly` properties sent anyway, `additionalProperties: false` (unknown properties are listed as not
checked).

Two shapes: `sdk_shape=True` is azure-native's input shape (`x-ms-client-flatten` containers merged into their
parent, names per `x-ms-client-name`, lower camel case), `False` is the REST body on the wire.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

from preflight.wire import SECRET_SIG, SIG_KEY, is_unknown

SPECS = Path(__file__).resolve().parent / "azure_specs"


@dataclass(frozen=True)
class Failure:
    """One value the spec rejects: its path (`properties.properties.scaleSettings.maxNodeCount`), the
    constraint (`maxLength 24`), the provider-style reason and where the constraint is written."""

    path: str
    constraint: str
    reason: str
    source: str


@dataclass
class Result:
    """What checking one value against one operation found. `spec`: the vendored file and operation, or None
    when nothing is vendored for that resource type or API version (`why` says which)."""

    spec: str | None
    why: str = ""
    note: str = ""  # index.json's note on the entry (e.g. the spec was read at a neighbouring API version)
    failures: list[Failure] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)

    @property
    def checked(self) -> bool:
        return self.spec is not None


class SpecError(ValueError):
    """A vendored spec file that cannot be read or resolved (a bug in the vendored data)."""


@cache
def _load(relative: str) -> dict[str, Any]:
    path = SPECS / relative
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise SpecError(f"vendored spec {relative}: {e}") from None


@cache
def index() -> dict[str, Any]:
    """`preflight/provider/azure_specs/index.json`: resource type -> API version -> {file, operationId}, and
    REST
    operations (localml) -> API version -> {file, operationId}."""
    return _load("index.json")


def source_of(relative: str) -> str:
    """`<upstream path>@<commit>` of a vendored file."""
    vendored = _load(relative).get("x-vendored", {})
    return f"azure-rest-api-specs {vendored.get('path', relative)}@{str(vendored.get('commit', '?'))[:10]}"


@dataclass(frozen=True)
class _Node:
    """A schema and the vendored file its `$ref`s resolve against."""

    schema: Mapping[str, Any]
    file: str
    pointer: str


def _resolve(ref: str, file: str) -> _Node | None:
    """A `$ref` within the vendored tree; None when it points outside what is vendored."""
    target, _, pointer = ref.partition("#")
    rel = file if not target else str(PurePosixPath(file).parent / target)
    parts = []
    for part in PurePosixPath(rel).parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    rel = "/".join(parts)
    if not (SPECS / rel).is_file():
        return None
    node: Any = _load(rel)
    for key in pointer.strip("/").split("/"):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return _Node(node, rel, f"{rel}#{pointer}") if isinstance(node, Mapping) else None


def _deref(node: _Node) -> _Node | None:
    seen = 0
    while "$ref" in node.schema:
        resolved = _resolve(str(node.schema["$ref"]), node.file)
        if resolved is None:
            return None
        node, seen = resolved, seen + 1
        if seen > 32:
            raise SpecError(f"$ref loop at {node.pointer}")
    return node


def _sdk_name(name: str, schema: Mapping[str, Any]) -> str:
    """azure-native's SdkName: `x-ms-client-name` (else the name) in lower camel case, `_` dropped
    (`Application_Type` -> `applicationType`, `EnableHttpsTrafficOnly` -> `enableHttpsTrafficOnly`)."""
    raw = str(schema.get("x-ms-client-name") or name)
    parts = [p for p in raw.split("_") if p]
    if not parts:
        return raw
    joined = parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    return joined[:1].lower() + joined[1:]


@dataclass
class _Object:
    """An object schema with its `allOf` parents merged: properties (wire name -> node), required names."""

    properties: dict[str, _Node] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    additional: _Node | None = None
    discriminator: str | None = None
    missing: list[str] = field(default_factory=list)  # $refs that are not vendored


def _object(node: _Node) -> _Object:
    out = _Object()
    for parent in node.schema.get("allOf", []) or []:
        resolved = _deref(_Node(parent, node.file, node.pointer))
        if resolved is None:
            out.missing.append(str(parent.get("$ref", "?")))
            continue
        merged = _object(resolved)
        out.properties.update(merged.properties)
        out.required += [r for r in merged.required if r not in out.required]
        out.missing += merged.missing
        out.discriminator = out.discriminator or merged.discriminator
        out.additional = out.additional or merged.additional
    for name, prop in (node.schema.get("properties") or {}).items():
        out.properties[name] = _Node(prop, node.file, f"{node.pointer}/properties/{name}")
    out.required += [r for r in node.schema.get("required", []) or [] if r not in out.required]
    if isinstance(node.schema.get("additionalProperties"), Mapping):
        out.additional = _Node(
            node.schema["additionalProperties"], node.file, f"{node.pointer}/additionalProperties"
        )
    out.discriminator = node.schema.get("discriminator") or out.discriminator
    return out


def _subtype(base: _Node, value: str) -> _Node | None:
    """The definition in `base`'s file whose `x-ms-discriminator-value` (else its name) is `value` and that
    derives from `base` (allOf)."""
    definitions = _load(base.file).get("definitions", {})
    base_name = base.pointer.rsplit("/", 1)[-1]
    for name, schema in definitions.items():
        parents = [p.get("$ref", "") for p in schema.get("allOf", []) or []]
        if not any(str(p).endswith(f"/definitions/{base_name}") for p in parents):
            continue
        if schema.get("x-ms-discriminator-value", name) == value:
            return _Node(schema, base.file, f"{base.file}#/definitions/{name}")
    return None


def _unwrap_secret(value: Any) -> Any:
    if isinstance(value, Mapping) and value.get(SIG_KEY) == SECRET_SIG:
        return value.get("value")
    return value


class _Checker:
    def __init__(self, sdk_shape: bool) -> None:
        self.sdk_shape = sdk_shape
        self.failures: list[Failure] = []
        self.unchecked: list[str] = []

    def fail(self, path: str, constraint: str, reason: str, node: _Node) -> None:
        self.failures.append(Failure(path, constraint, reason, node.pointer))

    def fields(self, node: _Node, path: str) -> tuple[dict[str, tuple[_Node, str]], list[tuple[str, str]]]:
        """Input name -> (schema node, path) of an object (flattened containers merged in the SDK shape),
        and the required (input name, path) pairs."""
        obj = _object(node)
        for ref in obj.missing:
            self.unchecked.append(f"{path or '(body)'}: inherited {_short(ref)}")
        names: dict[str, tuple[_Node, str]] = {}
        required: list[tuple[str, str]] = []
        for wire, prop in obj.properties.items():
            if prop.schema.get("readOnly"):
                continue
            if self.sdk_shape and prop.schema.get("x-ms-client-flatten"):
                inner = _deref(prop)
                if inner is None:
                    self.unchecked.append(f"{_join(path, wire)}: flattened {_short(prop.schema.get('$ref'))}")
                    continue
                sub, sub_required = self.fields(inner, path)
                names.update(sub)
                if wire in obj.required:
                    required += sub_required
                continue
            name = _sdk_name(wire, prop.schema) if self.sdk_shape else wire
            names[name] = (prop, _join(path, name))
            if wire in obj.required:
                required.append((name, _join(path, name)))
        return names, required

    def object(self, node: _Node, value: Mapping[str, Any], path: str) -> None:
        obj = _object(node)
        if obj.discriminator:
            disc_name = _sdk_name(obj.discriminator, {}) if self.sdk_shape else obj.discriminator
            kind = value.get(disc_name)
            if isinstance(kind, str) and not is_unknown(kind):
                sub = _subtype(node, kind)
                if sub is not None:
                    node = sub
                else:
                    disc_prop = obj.properties.get(obj.discriminator)
                    enum = _enum_of(disc_prop, discriminator=True)
                    if enum is not None and kind not in enum:
                        self.fail(
                            _join(path, disc_name),
                            f"one of {', '.join(enum)}",
                            f"'{_join(path, disc_name)}' is '{kind}', not one of the values the spec "
                            f"defines: {', '.join(enum)}",
                            disc_prop or node,
                        )
                    else:
                        self.unchecked.append(
                            f"{path or '(body)'}: {disc_name} '{kind}' (subtype not vendored)"
                        )
        names, required = self.fields(node, path)
        for name, full in required:
            if name not in value or value[name] is None:
                self.fail(full, "required", f"missing required property '{full}'", node)
        for key, item in value.items():
            if key.startswith("__") or item is None:
                continue
            if key in names:
                prop, full = names[key]
                self.value(prop, item, full)
            elif obj.additional is not None and not names:
                self.value(obj.additional, item, _join(path, key))
            else:
                self.unchecked.append(f"{_join(path, key)}: not in the vendored spec")

    def value(self, node: _Node, value: Any, path: str) -> None:
        value = _unwrap_secret(value)
        if is_unknown(value) or value is None:
            return
        resolved = _deref(node)
        if resolved is None:
            self.unchecked.append(f"{path}: {_short(node.schema.get('$ref'))}")
            return
        schema = resolved.schema
        kind = schema.get("type")
        if isinstance(value, Mapping):
            if kind not in (None, "object"):
                self.fail(
                    path, f"type {kind}", f"'{path}' should be of type '{kind}' but got an object", resolved
                )
            elif schema.get("properties") or schema.get("allOf") or schema.get("discriminator"):
                self.object(resolved, value, path)
            elif isinstance(schema.get("additionalProperties"), Mapping):
                extra = _Node(
                    schema["additionalProperties"], resolved.file, f"{resolved.pointer}/additionalProperties"
                )
                for key, item in value.items():
                    self.value(extra, item, _join(path, key))
            return
        if isinstance(value, list):
            if self.sdk_shape and kind == "object" and path.split(".")[-1] == "userAssignedIdentities":
                # azure-native takes `identity.userAssignedIdentities` as a list of identity ids and sends
                # ARM the map id -> {} the spec types (azure-native 3.29 `ManagedServiceIdentityArgs.
                # user_assigned_identities: Sequence[str]`; preflight.provider.model._identity_map): in the
                # SDK shape a list of strings is that map's keys.
                for i, item in enumerate(value):
                    if not isinstance(item, str) and not is_unknown(item):
                        self.fail(
                            f"{path}[{i}]",
                            "type string",
                            f"'{path}[{i}]' should be of type 'string' (an identity's ARM id)",
                            resolved,
                        )
                return
            if kind != "array":
                self.fail(
                    path, f"type {kind}", f"'{path}' should be of type '{kind}' but got an array", resolved
                )
                return
            items = schema.get("items")
            if isinstance(items, Mapping):
                for i, item in enumerate(value):
                    self.value(_Node(items, resolved.file, f"{resolved.pointer}/items"), item, f"{path}[{i}]")
            return
        if isinstance(value, bool):
            if kind not in (None, "boolean"):
                self.fail(
                    path, f"type {kind}", f"'{path}' should be of type '{kind}' but got a boolean", resolved
                )
            return
        if isinstance(value, int | float):
            self.number(resolved, float(value), path)
            return
        if isinstance(value, str):
            self.string(resolved, value, path)

    def number(self, node: _Node, value: float, path: str) -> None:
        schema, kind = node.schema, node.schema.get("type")
        if kind not in (None, "number", "integer"):
            self.fail(path, f"type {kind}", f"'{path}' should be of type '{kind}' but got a number", node)
            return
        if kind == "integer" and not float(value).is_integer():
            self.fail(path, "integer", f"'{path}' must be an integer but got {value:f}", node)
        if "minimum" in schema and value < float(schema["minimum"]):
            self.fail(
                path,
                f"minimum {schema['minimum']}",
                f"'{path}' is too low ({value:f} < {float(schema['minimum']):f})",
                node,
            )
        if "maximum" in schema and value > float(schema["maximum"]):
            self.fail(
                path,
                f"maximum {schema['maximum']}",
                f"'{path}' is too high ({value:f} > {float(schema['maximum']):f})",
                node,
            )
        self.enum(node, value, path)

    def string(self, node: _Node, value: str, path: str) -> None:
        schema, kind = node.schema, node.schema.get("type")
        if kind not in (None, "string"):
            self.fail(path, f"type {kind}", f"'{path}' should be of type '{kind}' but got a string", node)
            return
        if "minLength" in schema and len(value) < int(schema["minLength"]):
            self.fail(
                path,
                f"minLength {schema['minLength']}",
                f"'{path}' is too short ({len(value)}): at least {schema['minLength']} characters required",
                node,
            )
        if "maxLength" in schema and len(value) > int(schema["maxLength"]):
            self.fail(
                path,
                f"maxLength {schema['maxLength']}",
                f"'{path}' is too long ({len(value)}): at most {schema['maxLength']} characters allowed",
                node,
            )
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and not _compiled(pattern).search(value):
            self.fail(path, f"pattern {pattern}", f"'{path}' does not match expression '{pattern}'", node)
        self.enum(node, value, path)

    def enum(self, node: _Node, value: Any, path: str) -> None:
        closed = _enum_of(node)
        if closed is not None and value not in closed:
            self.fail(
                path,
                f"one of {', '.join(map(str, closed))}",
                f"'{path}' is {value!r}, not one of {', '.join(map(str, closed))}",
                node,
            )


def _enum_of(node: _Node | None, *, discriminator: bool = False) -> list[Any] | None:
    """A closed enum's values: `enum` without `x-ms-enum`, or with `modelAsString: false`. A discriminator's
    enum counts whatever `modelAsString` says: a value with no subtype cannot be deserialized."""
    if node is None:
        return None
    resolved = _deref(node)
    if resolved is None or "enum" not in resolved.schema:
        return None
    meta = resolved.schema.get("x-ms-enum")
    if not discriminator and isinstance(meta, Mapping) and meta.get("modelAsString", False):
        return None
    return list(resolved.schema["enum"])


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _short(ref: object) -> str:
    """A `$ref` without its leading `../` hops (`common-types/resource-management/v3/types.json#/...`)."""
    return re.sub(r"^(\.\./)+", "", str(ref))


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _operation(relative: str, operation_id: str) -> tuple[_Node, list[str]]:
    """The operation and the path parameter names of its route (`{resourceGroupName}`, ...)."""
    for route, methods in _load(relative).get("paths", {}).items():
        for method, op in methods.items():
            if isinstance(op, Mapping) and op.get("operationId") == operation_id:
                return _Node(op, relative, f"{relative}#/paths/{route}/{method}"), re.findall(
                    r"{([^}]+)}", route
                )
    raise SpecError(f"vendored spec {relative} has no operation {operation_id}")


# Parameters the client supplies itself (azure-native's Check skips them by name too).
_CLIENT_PARAMS = ("subscriptionId", "api-version")
_CLIENT_PARAM_REFS = ("/SubscriptionIdParameter", "/ApiVersionParameter")


def _lookup(section: str, key: str, api_version: str | None) -> tuple[str, str, str] | str:
    """(vendored file, operationId, note) for `key` at `api_version`, or why there is none."""
    versions = index().get(section, {}).get(key)
    if not versions:
        return f"no spec vendored for {key} (preflight/provider/azure_specs/index.json)"
    if api_version not in versions:
        return (
            f"no spec vendored for {key} API version {api_version} (vendored: {', '.join(sorted(versions))})"
        )
    entry = versions[api_version]
    return entry["file"], entry["operationId"], str(entry.get("note", ""))


def check_operation(
    relative: str,
    operation_id: str,
    params: Mapping[str, Any],
    body: Mapping[str, Any] | None,
    *,
    sdk_shape: bool,
) -> Result:
    """Check path parameters and the body of one vendored operation. In the SDK shape, `params` and the
    body's inputs are the same mapping (azure-native inputs)."""
    op, route_params = _operation(relative, operation_id)
    checker = _Checker(sdk_shape)
    body_node: _Node | None = None
    used = {p for p in route_params if p not in _CLIENT_PARAMS}
    for raw in op.schema.get("parameters", []) or []:
        param = _deref(_Node(raw, op.file, op.pointer))
        if param is None:
            ref = str(raw.get("$ref", "?"))
            if not ref.endswith(_CLIENT_PARAM_REFS):
                checker.unchecked.append(f"path parameter {_short(ref)}")
            continue
        where, name = param.schema.get("in"), str(param.schema.get("name"))
        if where == "body":
            schema = param.schema.get("schema")
            body_node = (
                _Node(schema, param.file, f"{param.pointer}/schema") if isinstance(schema, Mapping) else None
            )
            continue
        if where != "path" or name in _CLIENT_PARAMS:
            continue
        sdk = _sdk_name(name, param.schema) if sdk_shape else name
        used.add(sdk)
        if sdk in params and params[sdk] is not None:
            checker.value(param, params[sdk], sdk)
        elif param.schema.get("required"):
            checker.fail(sdk, "required", f"missing required property '{sdk}'", param)
    for naming in _naming_rules(relative, operation_id):
        value = params.get(naming["parameter"])
        if isinstance(value, str) and not is_unknown(value):
            rule = _Node(naming, "naming-rules.json", f"{naming['source']}")
            checker.string(rule, value, str(naming["parameter"]))
    if body_node is not None:
        values = {k: v for k, v in params.items() if k not in used} if sdk_shape else (body or {})
        resolved = _deref(body_node)
        if resolved is None:
            checker.unchecked.append(f"(body): {_short(body_node.schema.get('$ref'))}")
        else:
            checker.object(resolved, values, "")
    return Result(
        f"{relative}#{operation_id}", failures=checker.failures, unchecked=sorted(set(checker.unchecked))
    )


def _naming_rules(relative: str, operation_id: str) -> list[Mapping[str, Any]]:
    """Naming rules that live outside the specs (Microsoft Learn), from `azure_specs/naming-rules.json`."""
    rules = _load("naming-rules.json").get("rules", [])
    return [r for r in rules if r.get("file") == relative and r.get("operationId") == operation_id]


def check_resource(token: str, inputs: Mapping[str, Any]) -> Result:
    """Check azure-native checked inputs (wire names, after Check's defaults) of a resource type against the
    spec of the API version they carry (`azureApiVersion`)."""
    api_version = inputs.get("azureApiVersion")
    found = _lookup("resources", token, api_version if isinstance(api_version, str) else None)
    if isinstance(found, str):
        return Result(None, found)
    # azureApiVersion is azure-native's own input (it picks the API version), not part of the request.
    values = {k: v for k, v in inputs.items() if k != "azureApiVersion"}
    result = check_operation(found[0], found[1], values, None, sdk_shape=True)
    result.note = found[2]
    return result


def check_request(operation: str, api_version: str | None, params: Mapping[str, Any], body: Any) -> Result:
    """Check a REST request body (wire shape) of `operation` (an operationId) at `api_version`."""
    found = _lookup("operations", operation, api_version)
    if isinstance(found, str):
        return Result(None, found)
    if not isinstance(body, Mapping):
        result = Result(f"{found[0]}#{found[1]}", note=found[2])
        result.failures.append(
            Failure("(body)", "type object", "the request body is not a JSON object", found[0])
        )
        return result
    result = check_operation(found[0], found[1], params, body, sdk_shape=False)
    result.note = found[2]
    return result


@dataclass(frozen=True)
class Metadata:
    """What azure-native's generator derives from a resource's PUT operation for Diff (provider/pkg/gen:
    `resources.AzureAPIResource.PutParameters`, `AzureAPIProperty.ForceNew` / `ArrayIdentifiers` / `Default`),
    read from the vendored spec in the SDK shape (flattened containers merged, SDK names).

    - `path_params`: the route's path parameters (`Location == "path"`: every one forces a replacement);
    - `create_only`: top-level body inputs whose `x-ms-mutability` has `create` and not `update`
      (gen/properties.go `propChangeForcesRecreate`; on a nested type the flag is
      `ForceNewSetOnReferencedType`, which does not force a replacement of the resource);
    - `nested`: each top-level input whose type is an object `Ref` (not a union: the provider does not enter
      `oneOf`) -> the names of that type's inputs, with `.` or, for arrays of objects, `[].` (diff.go
      `calculateDetailedDiff` looks for force-new names there);
    - `identifiers`: dotted input path of each array with `x-ms-identifiers` -> those keys (diff.go
      `diffKeyedArrays`);
    - `defaults`: top-level input -> the spec's `default` (an ADD equal to it is no change:
      `calculateChangesAndReplacements`)."""

    source: str
    path_params: frozenset[str]
    create_only: frozenset[str]
    nested: Mapping[str, frozenset[str]]
    identifiers: Mapping[str, tuple[str, ...]]
    defaults: Mapping[str, Any]


def _walk_identifiers(
    checker: _Checker, node: _Node, path: str, out: dict[str, tuple[str, ...]], depth: int
) -> None:
    if depth > 8:
        return
    resolved = _deref(node)
    if resolved is None or _object(resolved).discriminator:
        return
    names, _ = checker.fields(resolved, path)
    for _name, (prop, full) in names.items():
        target = _deref(prop)
        if target is None:
            continue
        ids = prop.schema.get("x-ms-identifiers", target.schema.get("x-ms-identifiers"))
        if target.schema.get("type") == "array":
            if isinstance(ids, list) and ids:
                out[full] = tuple(sorted(str(i) for i in ids))
            items = target.schema.get("items")
            if isinstance(items, Mapping):
                _walk_identifiers(
                    checker, _Node(items, target.file, f"{target.pointer}/items"), full, out, depth + 1
                )
        elif target.schema.get("properties") or target.schema.get("allOf"):
            _walk_identifiers(checker, target, full, out, depth + 1)


@cache
def metadata(token: str, api_version: str | None) -> Metadata | None:
    """The Diff metadata of `token` at `api_version` from the vendored spec; None when none is vendored."""
    found = _lookup("resources", token, api_version)
    if isinstance(found, str):
        return None
    relative, operation_id, _ = found
    op, route_params = _operation(relative, operation_id)
    checker = _Checker(sdk_shape=True)
    path_params: set[str] = set()
    body: _Node | None = None
    for raw in op.schema.get("parameters", []) or []:
        param = _deref(_Node(raw, op.file, op.pointer))
        if param is None:
            continue
        if param.schema.get("in") == "path" and param.schema.get("name") not in _CLIENT_PARAMS:
            path_params.add(_sdk_name(str(param.schema.get("name")), param.schema))
        elif param.schema.get("in") == "body" and isinstance(param.schema.get("schema"), Mapping):
            body = _deref(_Node(param.schema["schema"], param.file, f"{param.pointer}/schema"))
    # A route parameter the vendored extract does not declare (an unresolved common-types $ref) is still one.
    path_params |= {p for p in route_params if p not in _CLIENT_PARAMS}
    create_only: set[str] = set()
    nested: dict[str, frozenset[str]] = {}
    defaults: dict[str, Any] = {}
    identifiers: dict[str, tuple[str, ...]] = {}
    if body is not None:
        names, _ = checker.fields(body, "")
        for name, (prop, _full) in names.items():
            mutability = prop.schema.get("x-ms-mutability")
            if isinstance(mutability, list) and "create" in mutability and "update" not in mutability:
                create_only.add(name)
            if "default" in prop.schema:
                defaults[name] = prop.schema["default"]
            target = _deref(prop)
            if target is None:
                continue
            item = target
            suffix = "."
            if target.schema.get("type") == "array" and isinstance(target.schema.get("items"), Mapping):
                item = _deref(_Node(target.schema["items"], target.file, f"{target.pointer}/items")) or target
                suffix = "[]."
            if item is not target or target.schema.get("properties") or target.schema.get("allOf"):
                obj = _object(item)
                if not obj.discriminator and (obj.properties or obj.missing):
                    inner, _ = _Checker(sdk_shape=True).fields(item, "")
                    nested[name + suffix] = frozenset(inner)
        _walk_identifiers(checker, body, "", identifiers, 0)
    return Metadata(
        f"{relative}#{operation_id}",
        frozenset(path_params),
        frozenset(create_only),
        nested,
        identifiers,
        defaults,
    )
