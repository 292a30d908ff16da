"""ARM resources of every type the stacks declare, in the session's one store: PUT, GET and DELETE as ARM and
its resource providers answer them.

The types are read from the vendored REST specs (`preflight/provider/azure_specs/index.json` `resources`: the
azure-native type token, its API versions, the spec file and the PUT operation; the route is that operation's
path), so a type vendored for the gate is served here with the same route azure-native sends to. The ML
workspace, its computes and key vaults have their own modules (`workspaces.py`, `computes.py`,
`keyvault.py`: soft delete, Detach, global vault names); they keep their resources in the same store and use
the checks below. Every other type (resource groups, storage accounts, registries, Log Analytics, Application
Insights, role assignments, locks, private endpoints and their DNS zone groups, diagnostic settings) is served
by the generic handler here.

The contract followed (Azure/azure-resource-manager-rpc `v1.0/resource-api-reference.md`, "Put Resource",
"Delete Resource", "Get Resource"; `v1.0/common-api-details.md`, "Error Response Content"):
- names match case-insensitively and the casing of the most recent PUT is what GET returns ("The resource
  group names and resource names should be matched case insensitively ... we should return back the most
  recently specified casing to the client");
- PUT answers 201 (Created) for a new resource and 200 (OK) for a replaced one, with the resource; "If the
  subscription or the resource group does not exist, 404 (NotFound) should be returned": ResourceGroupNotFound
  "Resource group '<name>' could not be found." (learn.microsoft.com azure-resource-manager/troubleshooting/
  error-not-found); a child resource whose parent is missing: ParentResourceNotFound "Can not perform
  requested operation on nested resource. Parent resource '<name>' not found." (troubleshooting/
  error-parent-resource);
- the body is checked against the spec of the API version sent (`validation.check_resource_put`): a rejected
  body is a 400 with one `details` entry per failure;
- GET answers 200 with the resource, or 404 ResourceNotFound "The Resource '<type>/<name>' under resource
  group '<group>' was not found." (error-not-found);
- DELETE answers 200 when the resource existed and 204 when it did not ("a 204 (NoContent) should be used if
  the resource does not exist and the request is well formed"); "If the resource group does not exist, 404
  (NotFound) will be returned by the proxy layer". Deleting a resource deletes what lies under its id (child
  resources and the extension resources at its scope). A resource group's DELETE is long-running
  (azure-rest-api-specs resources.json `ResourceGroups_Delete`: 200, 202, `x-ms-long-running-operation`):
  202 with a Location (`operations.py`); when done, every resource in the group is deleted, each as its own
  DELETE would (a key vault soft-deleted, a workspace soft-deleted);
- management locks (learn.microsoft.com azure-resource-manager/management/lock-resources): "CanNotDelete
  means authorized users can read and modify a resource, but they can't delete it. ReadOnly means authorized
  users can read a resource, but they can't delete or update it", and a lock on a scope applies to everything
  under it; a refused operation is 409 ScopeLocked "The scope '<id>' cannot perform delete operation because
  following scope(s) are locked: '<lock scope>'. Please remove the lock and try again." (the message as the
  Azure CLI prints it). Deleting a resource group with a locked resource in it is refused the same way.

What a GET adds to the body a PUT sent: `id`, `name`, `type`; `properties.provisioningState: Succeeded`
where the type's spec declares one; a system-assigned identity's `principalId` and `tenantId`, and each
user-assigned identity's `principalId` and `clientId` (common-types `ManagedServiceIdentity`, read-only).
Where localml differs from Azure (docs/localml.md, "ARM resources"): every PUT and DELETE but a resource
group's answers at once (Azure: many are long-running); references inside a body (a subnet, a workspace's
storage account, a role definition) are stored, not checked; no read-only property but those above is
computed (no endpoints, keys or creation times); a PUT replaces the whole resource (no property kept from the
previous one: the contract's PUT, though some resource providers merge); a missing extension resource scope is
answered ResourceNotFound (localml's choice: the code Azure gives for a role assignment or lock on a missing
resource is not documented); role assignments are not checked for duplicates (Azure: 409
RoleAssignmentExists).
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from doubles.localml import operations
from doubles.localml.http import Request, Response, Router, error
from doubles.localml.store import PURGED, SOFT_DELETED, ArmResource
from doubles.localml.validation import check_resource_put, refused
from preflight.provider import schema

if TYPE_CHECKING:
    from doubles.localml.plane import Plane

RG_TYPE = "Microsoft.Resources/resourceGroups"
LOCK_TYPE = "Microsoft.Authorization/locks"
WORKSPACE_TYPE = "Microsoft.MachineLearningServices/workspaces"
#: The types with a module of their own (registered before the generic routes).
OWN_MODULE = frozenset(
    {
        "azure-native:machinelearningservices:Workspace",
        "azure-native:machinelearningservices:Compute",
        "azure-native:keyvault:Vault",
    }
)
#: The storage account's PUT body (`StorageAccountCreateParameters`) declares no provisioningState; the
#: resource it answers does (storage.json 2024-01-01 `StorageAccountProperties.provisioningState`).
PROVISIONING_STATE_IN_RESPONSE = frozenset({"azure-native:storage:StorageAccount"})
#: A tenant id for the identities localml makes (the same fake one the workspace and compute modules use).
TENANT_ID = str(uuid.UUID(int=2))
_GROUP = re.compile(r"^/subscriptions/(?P<sub>[^/]+)/resourceGroups/(?P<rg>[^/]+)", re.IGNORECASE)

#: What deleting a resource of a type does besides dropping it from the store, by lower-case ARM type: a key
#: vault becomes a deleted vault, a workspace is soft-deleted (registered by keyvault.py, workspaces.py).
ON_DELETE: dict[str, Callable[[Plane, ArmResource], None]] = {}


@dataclass(frozen=True)
class ResourceType:
    """One vendored resource type: its azure-native token, ARM type, the PUT route of its spec, the API
    versions vendored, the scope parameter of an extension resource, whether it reports a provisioning
    state."""

    token: str
    arm_type: str
    route: str
    versions: tuple[str, ...]
    scope_param: str | None
    provisioning_state: bool

    @property
    def pattern(self) -> str:
        """The route as localml's router takes it: a scope parameter spans segments (`{scope*}`)."""
        if self.scope_param is None:
            return self.route
        return self.route.replace("{" + self.scope_param + "}", "{" + self.scope_param + "*}", 1)

    @property
    def nested(self) -> bool:
        """A child type (`.../privateEndpoints/{x}/privateDnsZoneGroups/{y}`): its parent must exist."""
        return self.arm_type.count("/") > 1


def _arm_type(route: str) -> str:
    if "/providers/" not in route:
        return RG_TYPE
    parts = route.rsplit("/providers/", 1)[1].split("/")
    return "/".join([parts[0], *parts[1::2]])


def _spec(relative: str) -> dict[str, Any]:
    return json.loads((schema.SPECS / relative).read_text(encoding="utf-8"))


def _local(doc: Mapping[str, Any], node: Any) -> Any:
    """`node` with its same-file `$ref`s resolved (None for a reference to another file)."""
    for _ in range(32):
        if not isinstance(node, Mapping) or "$ref" not in node:
            return node
        target, _, pointer = str(node["$ref"]).partition("#")
        if target:
            return None
        node = doc
        for key in pointer.strip("/").split("/"):
            node = node.get(key) if isinstance(node, Mapping) else None
    return None


def _properties(doc: Mapping[str, Any], node: Any) -> dict[str, Any]:
    node = _local(doc, node)
    if not isinstance(node, Mapping):
        return {}
    out: dict[str, Any] = {}
    for parent in node.get("allOf", []) or []:
        out.update(_properties(doc, parent))
    out.update(node.get("properties") or {})
    return out


def _put_operation(doc: Mapping[str, Any], operation_id: str) -> tuple[str, Mapping[str, Any]]:
    for route, methods in doc.get("paths", {}).items():
        for method, op in methods.items():
            if method == "put" and isinstance(op, Mapping) and op.get("operationId") == operation_id:
                return route, op
    raise LookupError(f"no PUT operation {operation_id}")


def _declares_provisioning_state(doc: Mapping[str, Any], op: Mapping[str, Any]) -> bool:
    for param in op.get("parameters", []) or []:
        param = _local(doc, param)
        if isinstance(param, Mapping) and param.get("in") == "body":
            top = _properties(doc, param.get("schema"))
            return "provisioningState" in _properties(doc, top.get("properties"))
    return False


@cache
def types() -> tuple[ResourceType, ...]:
    """Every resource type vendored in index.json, served by the generic handler or a module of its own."""
    found = []
    for token, versions in sorted(schema.index().get("resources", {}).items()):
        first = versions[sorted(versions)[0]]
        doc = _spec(first["file"])
        route, op = _put_operation(doc, first["operationId"])
        params = re.findall(r"{([^}]+)}", route)
        scope = params[0] if route.startswith("/{") else None
        state = token in PROVISIONING_STATE_IN_RESPONSE or _declares_provisioning_state(doc, op)
        found.append(ResourceType(token, _arm_type(route), route, tuple(sorted(versions)), scope, state))
    return tuple(found)


def type_named(token: str) -> ResourceType:
    return next(t for t in types() if t.token == token)


def register(router: Router, cp: Plane) -> None:
    """The generic routes, one PUT, GET and DELETE per vendored type without a module of its own. Registered
    last: the routes of the modules come first."""
    for rt in types():
        if rt.token in OWN_MODULE:
            continue
        what = rt.arm_type
        router.add("PUT", rt.pattern, lambda r, rt=rt: _put(cp, rt, r), f"{what} PUT (create or replace)")
        router.add("GET", rt.pattern, lambda r, rt=rt: _get(cp, rt, r), f"{what} GET")
        router.add("DELETE", rt.pattern, lambda r, rt=rt: _delete(cp, rt, r), f"{what} DELETE")


# -- ids, existence, parents ---------------------------------------------------------------------------------


def resource_id(req: Request) -> str:
    """The resource's ARM id: the request path, in the casing the client sent."""
    return req.path.rstrip("/")


def group_of(arm_id: str) -> tuple[str, str, str] | None:
    """(subscription, resource group, group id) of an id in a resource group; None for a subscription-level
    id."""
    m = _GROUP.match(arm_id)
    if m is None:
        return None
    return m["sub"], m["rg"], f"/subscriptions/{m['sub']}/resourceGroups/{m['rg']}"


def exists(cp: Plane, arm_id: str) -> bool:
    """Whether `arm_id` names something this session holds: a subscription (any), a stored resource, or a
    workspace that exists implicitly (`Plane.implicit_workspaces`)."""
    arm_id = arm_id.rstrip("/")
    if re.fullmatch(r"/subscriptions/[^/]+", arm_id, re.IGNORECASE):
        return True
    if cp.store.arm(arm_id) is not None:
        return True
    return bool(
        cp.implicit_workspaces
        and re.fullmatch(
            r"/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
            r"Microsoft\.MachineLearningServices/workspaces/[^/]+",
            arm_id,
            re.IGNORECASE,
        )
        and cp.store.workspace_state.get(arm_id.lower()) not in (SOFT_DELETED, PURGED)
    )


def group_not_found(rg: str) -> Response:
    return error(404, "ResourceGroupNotFound", f"Resource group '{rg}' could not be found.")


def not_found(arm_id: str, arm_type: str) -> Response:
    """ARM's 404 for a resource that does not exist (error-not-found, "Symptom")."""
    name = arm_id.rstrip("/").rsplit("/", 1)[-1]
    group = group_of(arm_id)
    where = f" under resource group '{group[1]}'" if group else ""
    return error(404, "ResourceNotFound", f"The Resource '{arm_type}/{name}'{where} was not found.")


def missing_group(cp: Plane, arm_id: str) -> Response | None:
    """404 ResourceGroupNotFound when `arm_id` lies in a resource group that does not exist (the proxy
    layer's answer, before the resource provider sees the request)."""
    group = group_of(arm_id)
    if group is None or group[2].lower() == arm_id.lower():
        return None
    return None if exists(cp, group[2]) else group_not_found(group[1])


def missing_parent(cp: Plane, rt: ResourceType, arm_id: str, scope: str | None) -> Response | None:
    """Why a PUT of `arm_id` cannot create it where it is: its group, its parent or its scope is missing."""
    if rt.arm_type == RG_TYPE:
        return None
    if scope is not None:
        group = group_of(scope)
        if group is not None and not exists(cp, group[2]):
            return group_not_found(group[1])
        return None if exists(cp, scope) else not_found(scope, _type_of(scope))
    if missing := missing_group(cp, arm_id):
        return missing
    if rt.nested:
        parent = arm_id.rsplit("/", 2)[0]
        if not exists(cp, parent):
            name = parent.rsplit("/", 1)[-1]
            return error(
                404,
                "ParentResourceNotFound",
                "Can not perform requested operation on nested resource. "
                f"Parent resource '{name}' not found.",
            )
    return None


def _type_of(arm_id: str) -> str:
    """The ARM type an id names (`Microsoft.Storage/storageAccounts`), from its last `providers` segment."""
    if "/providers/" not in arm_id:
        return RG_TYPE if group_of(arm_id) else "Microsoft.Resources/subscriptions"
    parts = arm_id.rsplit("/providers/", 1)[1].split("/")
    return "/".join([parts[0], *parts[1::2]])


# -- locks ---------------------------------------------------------------------------------------------------


def _lock_scope(lock: ArmResource) -> str:
    return lock.id.rsplit(f"/providers/{LOCK_TYPE}/", 1)[0] if f"/providers/{LOCK_TYPE}/" in lock.id else ""


def _under(arm_id: str, scope: str) -> bool:
    a, s = arm_id.lower().rstrip("/"), scope.lower().rstrip("/")
    return a == s or a.startswith(s + "/")


def scope_locked(cp: Plane, arm_id: str, operation: str) -> Response | None:
    """409 ScopeLocked when a lock forbids `operation` ("write" or "delete") on `arm_id` (module docstring):
    a ReadOnly lock on it or above it for a write; any lock on it or above it, or on anything under it, for a
    delete. A lock itself is never locked (lock-resources: removing a lock is how a locked resource is
    unlocked)."""
    if _type_of(arm_id).lower() == LOCK_TYPE.lower():
        return None
    scopes = []
    for lock in cp.store.arm_of_type(LOCK_TYPE):
        scope = _lock_scope(lock)
        level = str(((lock.sent.get("properties") or {}).get("level")) or "")
        above = bool(scope) and _under(arm_id, scope)
        below = bool(scope) and operation == "delete" and _under(scope, arm_id)
        if (above and (level == "ReadOnly" or operation == "delete")) or below:
            scopes.append(scope)
    if not scopes:
        return None
    listed = ", ".join(f"'{s}'" for s in sorted(set(scopes), key=str.lower))
    return error(
        409,
        "ScopeLocked",
        f"The scope '{arm_id}' cannot perform {operation} operation because following scope(s) are locked: "
        f"{listed}. Please remove the lock and try again.",
    )


# -- the resource as GET answers it --------------------------------------------------------------------------


def with_identity_ids(arm_id: str, identity: Any) -> Any:
    """A `ManagedServiceIdentity` as ARM returns it: a system-assigned identity's `principalId` and
    `tenantId`, each user-assigned identity's `principalId` and `clientId` (read-only, stable fakes derived
    from the ids, the same derivation the offline provider's getUserAssignedIdentity uses)."""
    if not isinstance(identity, Mapping):
        return identity
    out = copy.deepcopy(dict(identity))
    if "SystemAssigned" in str(out.get("type", "")):
        out["principalId"] = str(uuid.uuid5(uuid.NAMESPACE_URL, arm_id.lower()))
        out["tenantId"] = TENANT_ID
    assigned = out.get("userAssignedIdentities")
    if isinstance(assigned, Mapping):
        out["userAssignedIdentities"] = {
            i: {
                "principalId": str(uuid.uuid5(uuid.NAMESPACE_URL, i.lower())),
                "clientId": str(uuid.uuid5(uuid.NAMESPACE_URL, "client:" + i.lower())),
            }
            for i in assigned
        }
    return out


def answered(rt: ResourceType, arm_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The resource a GET answers for a PUT `body` (module docstring)."""
    out: dict[str, Any] = {"id": arm_id, "name": arm_id.rsplit("/", 1)[-1], "type": rt.arm_type}
    for key, value in body.items():
        if key not in ("id", "name", "type"):  # read-only: ARM's come from the URL
            out[key] = copy.deepcopy(value)
    if "identity" in out:
        out["identity"] = with_identity_ids(arm_id, out["identity"])
    if rt.provisioning_state:
        out["properties"] = {**(out.get("properties") or {}), "provisioningState": "Succeeded"}
    return out


# -- handlers ------------------------------------------------------------------------------------------------


def _put(cp: Plane, rt: ResourceType, req: Request) -> Response:
    arm_id = resource_id(req)
    try:
        body = req.json()
    except ValueError:
        return error(
            400, "InvalidRequestContent", "The request content was invalid and could not be deserialized."
        )
    scope = "/" + req.params[rt.scope_param].strip("/") if rt.scope_param else None
    params = {k: (v.strip("/") if k == rt.scope_param else v) for k, v in req.params.items()}
    result = check_resource_put(rt.token, req.query.get("api-version"), params, body)
    if problem := refused(req, f"{rt.arm_type} PUT", result, cp.validation, code="BadRequest"):
        return problem
    if problem := missing_parent(cp, rt, arm_id, scope) or scope_locked(cp, arm_id, "write"):
        return problem
    record = ArmResource(answered(rt, arm_id, body), copy.deepcopy(body), req.query.get("api-version"))
    created = cp.store.arm_put(record)
    return Response(201 if created else 200, record.resource)


def _get(cp: Plane, rt: ResourceType, req: Request) -> Response:
    arm_id = resource_id(req)
    found = cp.store.arm(arm_id)
    if found is not None:
        return Response(200, found.resource)
    if rt.arm_type == RG_TYPE:
        return group_not_found(arm_id.rsplit("/", 1)[-1])
    return missing_group(cp, arm_id) or not_found(arm_id, rt.arm_type)


def _delete(cp: Plane, rt: ResourceType, req: Request) -> Response:
    arm_id = resource_id(req)
    if rt.arm_type == RG_TYPE:
        return _delete_group(cp, req, arm_id)
    if missing := missing_group(cp, arm_id):
        return missing
    if cp.store.arm(arm_id) is None:
        return Response(204, None)
    if problem := scope_locked(cp, arm_id, "delete"):
        return problem
    remove(cp, arm_id)
    return Response(200, None)


def _delete_group(cp: Plane, req: Request, arm_id: str) -> Response:
    if cp.store.arm(arm_id) is None:
        return group_not_found(arm_id.rsplit("/", 1)[-1])
    if problem := scope_locked(cp, arm_id, "delete"):
        return problem
    sub = str(group_of(arm_id)[0]) if group_of(arm_id) else ""  # type: ignore[index]
    return operations.start(cp, sub, "Microsoft.Resources", cp.region, lambda: remove(cp, arm_id))


def remove(cp: Plane, arm_id: str) -> list[ArmResource]:
    """Delete `arm_id` and everything under it, deepest first, each through its type's `ON_DELETE` hook;
    returns what was deleted."""
    with cp.store.lock:
        own = cp.store.arm(arm_id)
        victims = [*cp.store.arm_under(arm_id), *([own] if own is not None else [])]
        victims.sort(key=lambda r: r.id.count("/"), reverse=True)
        for record in victims:
            hook = ON_DELETE.get(record.type.lower())
            if hook is not None:
                hook(cp, record)
            cp.store.arm_delete(record.id)
    return victims
