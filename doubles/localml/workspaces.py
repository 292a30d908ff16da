"""The Azure ML workspace resource: GET, PUT, DELETE (soft or permanent), and 404 under a deleted workspace.

Shapes and status codes from the Azure ML REST spec, Azure/azure-rest-api-specs
specification/machinelearningservices/resource-manager/Microsoft.MachineLearningServices/stable/2025-12-01/
workspaceRP.json (SPEC below): `Workspaces_Get`, `Workspaces_CreateOrUpdate` (200, or 202 + Location),
`Workspaces_Delete` (200; 202 with `Location` and `Retry-After`; 204 "The machine learning workspace does
not exist in the subscription"; `final-state-via: location`) with the query parameter `forceToPurge`
(`WorkspaceForceToPurgeParameter`, boolean, default false: "Flag to indicate delete is a purge request", the
wording azure-ai-ml's generated `build_workspaces_delete_request` carries). azure-ai-ml 1.35.2 always sends
it: `workspaces.begin_delete(name, delete_dependent_resources=..., permanently_delete=...)`
(`operations/_workspace_operations_base.py`) GETs the workspace, then DELETEs with
`forceToPurge=<permanently_delete>` and polls the Location
(`_restclient/arm_ml_service/operations/_operations.py`, `begin_delete`, `ARMPolling`).

Soft delete (MicrosoftDocs/azure-ai-docs `articles/machine-learning/concept-soft-delete.md`): a deleted
workspace is soft-deleted for 14 days unless permanently deleted; "You can't reuse the name of a workspace
that has been soft deleted until the retention period has passed or the workspace is permanently deleted";
compute clusters are hard-deleted either way (its table). What Azure answers:

- a PUT of a soft-deleted name: "Soft-deleted workspace exists. Please purge or recover it.
  https://aka.ms/wsoftdelete" with code BadRequest (Azure/ResourceModules#3596, Azure/CanadaPubSecALZ#380:
  ARM deployments of such a name);
- a GET of a soft-deleted workspace finds nothing, so `az ml workspace delete --permanently-delete` (the
  same GET-then-DELETE as azure-ai-ml) fails "Unable to find workspace" (Azure/azure-cli#33756).

The session's workspaces live in its one ARM store (`Store.resources`, doubles/localml/resources.py). A PUT is
checked as every ARM PUT is (the REST spec of its api-version, its resource group, locks) and stores its body;
a DELETE runs as an operation (`doubles/localml/operations.py`) during which the workspace reads `Deleting`,
and at its end the name is either gone (`forceToPurge=true`: GET 404, a PUT creates it anew) or soft-deleted
for the rest of the session (GET 404, PUT 400 as above), and what lies under it (its computes, diagnostic
settings, role assignments at its scope) is deleted. Under a deleted workspace every other call answers 404
(`gate`). A name no one has PUT: with `Plane.implicit_workspaces` (the default of `LocalAzureML`, which lets
jobs be submitted to whatever workspace an outputs file names) it exists implicitly, as a workspace with
defaults; without it (where `pulumi up` made the workspace: `make smoke`, `serve --deploy`, the e2e tests)
it does not, as on Azure: GET 404, and every call under it 404.

Where localml differs (also in docs/localml.md): no retention clock (a soft-deleted name stays held for the
session); no recover; a PUT answers at once with `Succeeded` (Azure: 202 and polling); a PUT while a delete
runs is refused with 409 (localml's choice; Azure's answer is not documented); a DELETE of a soft-deleted
name answers 204 and leaves it held (whether Azure purges a soft-deleted workspace on a bare `DELETE
?forceToPurge=true` is not documented; the portal's "Recently deleted" view does).
"""

from __future__ import annotations

import copy
import uuid
from typing import TYPE_CHECKING, Any

from doubles.localml import operations, resources
from doubles.localml.azurite import ACCOUNT_NAME
from doubles.localml.http import Request, Response, Router, error
from doubles.localml.store import DELETING, PURGED, SOFT_DELETED, TERMINAL, ArmResource, workspace_id
from doubles.localml.validation import check_resource_put, refused

if TYPE_CHECKING:
    from doubles.localml.plane import Plane

PROVIDER = "Microsoft.MachineLearningServices"
TOKEN = "azure-native:machinelearningservices:Workspace"
SOFT_DELETED_MESSAGE = "Soft-deleted workspace exists. Please purge or recover it. https://aka.ms/wsoftdelete"
__all__ = ["DELETING", "PURGED", "SOFT_DELETED", "register"]


def register(router: Router, cp: Plane, ws: str) -> None:
    a = router.add
    a("GET", ws, lambda r: _get(cp, r), "workspace GET")
    a("PUT", ws, lambda r: _put(cp, r), "workspace PUT (create or update)")
    a("DELETE", ws, lambda r: _delete(cp, r), "workspace DELETE (forceToPurge: permanent)")
    resources.ON_DELETE[resources.WORKSPACE_TYPE.lower()] = _deleted
    workspace_pattern = ws

    def gate(req: Request, pattern: str) -> Response | None:
        """404 for any call under a workspace that is soft-deleted, purged, or (without implicit workspaces)
        was never created (the workspace resource itself answers for itself). Other routes (no `{ws}`)
        pass."""
        if "ws" not in req.params or pattern == workspace_pattern:
            return None
        key = _key(req)
        state = cp.store.workspace_state.get(key)
        if state in (SOFT_DELETED, PURGED):
            return _not_found(req)
        if not cp.implicit_workspaces and cp.store.arm(key) is None:
            return _not_found(req)
        return None

    router.gate = gate


def _key(req: Request) -> str:
    return workspace_id(req.params["sub"], req.params["rg"], req.params["ws"]).lower()


def _not_found(req: Request) -> Response:
    return error(
        404,
        "ResourceNotFound",
        f"The Resource '{PROVIDER}/workspaces/{req.params['ws']}' under resource group "
        f"'{req.params['rg']}' was not found.",
    )


def _resource(cp: Plane, req: Request, sent: dict[str, Any] | None, state: str) -> dict[str, Any]:
    """The workspace as GET answers it (SPEC `Workspace`): what a PUT sent, with the read-only properties the
    service sets (`workspaceId`, `discoveryUrl`, `provisioningState`, the identity's ids)."""
    ws_id = resources.resource_id(req) if sent is not None else _default_id(req)
    sent = sent or {}
    identity = copy.deepcopy(sent.get("identity") or {"type": "SystemAssigned"})
    if "SystemAssigned" in str(identity.get("type")):
        identity |= {
            "principalId": str(uuid.uuid5(uuid.NAMESPACE_URL, ws_id.lower())),
            "tenantId": resources.TENANT_ID,
        }
    properties = {
        "friendlyName": req.params["ws"],
        "storageAccount": f"/subscriptions/{req.params['sub']}/resourceGroups/{req.params['rg']}"
        f"/providers/Microsoft.Storage/storageAccounts/{ACCOUNT_NAME}",
        "publicNetworkAccess": "Enabled",
        "hbiWorkspace": False,
        **copy.deepcopy(sent.get("properties") or {}),
        "workspaceId": str(uuid.uuid5(uuid.NAMESPACE_URL, ws_id.lower())),
        "discoveryUrl": f"{cp.base_url}/discovery",
        "provisioningState": state,
    }
    return {
        "id": ws_id,
        "name": ws_id.rsplit("/", 1)[-1],
        "type": f"{PROVIDER}/workspaces",
        "location": sent.get("location") or cp.region,
        "kind": sent.get("kind") or "Default",
        "sku": sent.get("sku") or {"name": "Basic", "tier": "Basic"},
        "tags": sent.get("tags"),
        "identity": identity,
        "properties": properties,
    }


def _default_id(req: Request) -> str:
    return workspace_id(req.params["sub"], req.params["rg"], req.params["ws"])


def _get(cp: Plane, req: Request) -> Response:
    key = _key(req)
    with cp.store.lock:
        state = cp.store.workspace_state.get(key)
        found = cp.store.arm(key)
    if state in (SOFT_DELETED, PURGED):
        return _not_found(req)
    if found is not None:
        resource = copy.deepcopy(found.resource)
        resource["properties"]["provisioningState"] = state or "Succeeded"
        return Response(200, resource)
    if not cp.implicit_workspaces:
        return resources.missing_group(cp, _default_id(req)) or _not_found(req)
    return Response(200, _resource(cp, req, None, state or "Succeeded"))


def _put(cp: Plane, req: Request) -> Response:
    key = _key(req)
    try:
        body = req.json()
    except ValueError:
        return error(400, "UserError", "workspace PUT body is not JSON")
    if not isinstance(body, dict) or not body.get("location"):
        return error(400, "UserError", "workspace PUT needs a JSON body with `location` (SPEC Workspace)")
    api = req.query.get("api-version")
    params = {"resourceGroupName": req.params["rg"], "workspaceName": req.params["ws"]}
    result = check_resource_put(TOKEN, api, params, body)
    if problem := refused(req, "Workspaces_CreateOrUpdate", result, cp.validation):
        return problem
    arm_id = resources.resource_id(req)
    if problem := resources.missing_group(cp, arm_id) or resources.scope_locked(cp, arm_id, "write"):
        return problem
    with cp.store.lock:
        state = cp.store.workspace_state.get(key)
        if state == SOFT_DELETED:
            return error(400, "BadRequest", SOFT_DELETED_MESSAGE)
        if state == DELETING:
            return error(
                409,
                "Conflict",
                f"workspace {req.params['ws']!r} is being deleted; create it again "
                "when the delete has finished (localml's answer)",
            )
        cp.store.workspace_state.pop(key, None)
        resource = _resource(cp, req, body, "Succeeded")
        cp.store.arm_put(ArmResource(resource, copy.deepcopy(body), api))
    # SPEC Workspaces_CreateOrUpdate answers 200 (or 202 and polling); there is no 201.
    return Response(200, resource)


def _deleted(cp: Plane, record: ArmResource) -> None:
    """A workspace deleted (its own DELETE's end, or its resource group's): soft-deleted, and its queued or
    running jobs stopped (concept-soft-delete.md: compute clusters and jobs are hard-deleted)."""
    key = record.id.lower()
    cp.store.workspace_state[key] = SOFT_DELETED
    for job in cp.store.jobs_in(record.id):
        if job.status not in TERMINAL:
            job.stop_event.set()


def _delete(cp: Plane, req: Request) -> Response:
    key = _key(req)
    purge = req.query.get("forceToPurge", "false").lower() == "true"
    with cp.store.lock:
        state = cp.store.workspace_state.get(key)
        if state in (SOFT_DELETED, PURGED):
            return Response(204, None)  # SPEC: "does not exist in the subscription"
        if state == DELETING:
            return error(409, "Conflict", f"workspace {req.params['ws']!r} is already being deleted")
        if cp.store.arm(key) is None and not cp.implicit_workspaces:
            return resources.missing_group(cp, _default_id(req)) or Response(204, None)
        if problem := resources.scope_locked(cp, resources.resource_id(req), "delete"):
            return problem
        cp.store.workspace_state[key] = DELETING

    def finish() -> None:
        with cp.store.lock:
            removed = resources.remove(cp, key)  # the workspace and what lies under it (its computes, ...)
            cp.store.workspace_state[key] = PURGED if purge else SOFT_DELETED
        if not any(r.id.lower() == key for r in removed):  # an implicit workspace: no hook stopped its jobs
            _deleted(cp, ArmResource({"id": _default_id(req)}, {}))
            cp.store.workspace_state[key] = PURGED if purge else SOFT_DELETED

    return operations.start(cp, req.params["sub"], PROVIDER, cp.region, finish)
