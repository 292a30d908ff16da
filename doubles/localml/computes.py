"""Compute clusters (AmlCompute) of a workspace: PUT, GET, list and DELETE, shaped as Azure answers them.

The shapes come from the Azure ML REST spec, Azure/azure-rest-api-specs
specification/machinelearningservices/resource-manager/Microsoft.MachineLearningServices/
stable/2025-12-01/machineLearningServices.json (SPEC below): operations `Compute_CreateOrUpdate`,
`Compute_Get`, `Compute_List`, `Compute_Delete`, `Compute_ListNodes`; definitions `ComputeResource`,
`Compute`, `AmlComputeProperties`, `ScaleSettings`, `UserAccountCredentials`; examples `examples/Compute/get/
AmlCompute.json`, `createOrUpdate/BasicAmlCompute.json`, `list.json`, `delete.json`. azure-native 3.29's
`machinelearningservices.Compute` uses 2025-12-01 ("Uses Azure REST API version 2025-12-01", its
docstring); azure-ai-ml 1.35.2 sends `api-version=2023-08-01-preview` for compute calls (`_ml_client.py`:
`ServiceClient082023Preview` is the client `ComputeOperations` gets) with models generated from
2025-12-01. The `Compute` and `AmlComputeProperties` definitions are the same in
preview/2023-08-01-preview/machineLearningServices.json, so one shape serves both.

Who sends the PUT: azure-native's `machinelearningservices:Compute` (the stack's `GpuCluster`: its wire
inputs `location`, `identity`, `tags`, `properties` are the ARM body) and azure-ai-ml's
`compute.begin_create_or_update` / `begin_update` (both PUT the whole resource, `_compute_operations.py`).
Who reads: azure-ai-ml `compute.get` / `compute.list` -> `AmlCompute._load_from_rest`
(`entities/_compute/aml_compute.py`), which `python -m jobs check-deploy` compares with the stack.

Where localml differs from Azure (also in docs/localml.md):
- Every answer is final: PUT answers 201/200 with `provisioningState: Succeeded` and no
  `Azure-AsyncOperation` header (Azure: `Creating`, then polled); DELETE answers 200 at once (Azure: 202
  and polling). `currentNodeCount` stays 0 and `allocationState` Steady; `listNodes` (see `_list_nodes`) lists
  the nodes of the jobs the cluster runs.
- Only `computeType: AmlCompute` is served; other compute types are a 400.
- A PUT on an existing name overwrites it ("This call will overwrite a compute if it exists",
  `Compute_CreateOrUpdate` description); whether Azure refuses a change of a create-time setting in place
  is not documented, so localml does not guess.
- Detach (see `_delete`): reproduces the reported outcome of Azure/azure-rest-api-specs#18889, not a
  documented contract.
"""

from __future__ import annotations

import copy
import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any

from doubles.localml import resources
from doubles.localml.http import Request, Response, Router, error
from doubles.localml.store import ArmResource, workspace_id
from doubles.localml.validation import checked

if TYPE_CHECKING:
    from doubles.localml.plane import Plane

COMPUTE_TYPE = "Microsoft.MachineLearningServices/workspaces/computes"
#: `underlyingResourceAction` values (SPEC parameters.UnderlyingResourceActionParameter: required, enum).
UNDERLYING_ACTIONS = ("Delete", "Detach")


def register(router: Router, cp: Plane, ws: str) -> None:
    a = router.add
    a("GET", ws + "/computes", lambda r: _list(cp, r), "computes list")
    a(
        "PUT",
        ws + "/computes/{compute}",
        checked(
            "Compute_CreateOrUpdate",
            lambda r: _put(cp, r),
            lambda: cp.validation,
            {"rg": "resourceGroupName", "ws": "workspaceName", "compute": "computeName"},
        ),
        "compute PUT (create or overwrite)",
    )
    a("GET", ws + "/computes/{compute}", lambda r: _get(cp, r), "compute GET")
    a("DELETE", ws + "/computes/{compute}", lambda r: _delete(cp, r), "compute DELETE (Delete or Detach)")
    a("POST", ws + "/computes/{compute}/listNodes", lambda r: _list_nodes(cp, r), "compute listNodes")
    resources.ON_DELETE[COMPUTE_TYPE.lower()] = lambda cp, record: cp.store.detached.pop(
        record.id.lower(), None
    )


def _now() -> str:
    # SPEC examples: "createdOn": "2021-04-01T22:00:00.0000000+00:00".
    return dt.datetime.now(dt.UTC).isoformat()


def _ws_id(req: Request) -> str:
    return workspace_id(req.params["sub"], req.params["rg"], req.params["ws"])


def _key(req: Request) -> str:
    """The compute's ARM id as the request names it (the store compares ids without regard to case)."""
    return f"{_ws_id(req)}/computes/{req.params['compute']}"


def _not_found(name: str) -> Response:
    # azure-core maps any 404 to ResourceNotFoundError (azure-ai-ml's error_map); the code is ARM's.
    return error(404, "ResourceNotFound", f"compute {name!r} not found in this workspace")


def _remote_login(props: dict[str, Any]) -> str:
    """SPEC AmlComputeProperties.remoteLoginPortPublicAccess: "NotSpecified - ... closed on all nodes of the
    cluster if VNet is defined, else is open ... after creation it will be either enabled or disabled"."""
    value = props.get("remoteLoginPortPublicAccess") or "NotSpecified"
    if value == "NotSpecified":
        return "Disabled" if props.get("subnet") else "Enabled"
    return str(value)


def _aml_properties(sent: dict[str, Any], transition: str) -> dict[str, Any]:
    """`properties.properties` as GET answers it: what was sent, defaults filled, secrets dropped, and the
    read-only state of a cluster with no nodes (SPEC AmlComputeProperties, example get/AmlCompute.json)."""
    scale = dict(sent.get("scaleSettings") or {})
    scale.setdefault("minNodeCount", 0)  # SPEC ScaleSettings.minNodeCount "default": 0
    creds = sent.get("userAccountCredentials")
    return {
        "osType": sent.get("osType", "Linux"),  # SPEC default "Linux"
        "vmSize": sent.get("vmSize"),
        "vmPriority": sent.get("vmPriority", "Dedicated"),
        "virtualMachineImage": sent.get("virtualMachineImage"),
        "isolatedNetwork": bool(sent.get("isolatedNetwork", False)),
        "subnet": sent.get("subnet"),
        "scaleSettings": scale,
        # adminUserSshPublicKey and adminUserPassword are "x-ms-secret": Compute_Get "Any secrets ... are
        # not returned"; only the user name comes back.
        "userAccountCredentials": {"adminUserName": creds["adminUserName"]} if creds else None,
        "remoteLoginPortPublicAccess": _remote_login(sent),
        "allocationState": "Steady",
        "allocationStateTransitionTime": transition,
        "errors": None,
        "currentNodeCount": 0,
        "targetNodeCount": scale["minNodeCount"],
        "nodeStateCounts": {
            "preparingNodeCount": 0,
            "runningNodeCount": 0,
            "idleNodeCount": 0,
            "unusableNodeCount": 0,
            "leavingNodeCount": 0,
            "preemptedNodeCount": 0,
        },
        "enableNodePublicIp": sent.get("enableNodePublicIp", True),  # SPEC default true
        "propertyBag": sent.get("propertyBag"),
    }


def _check(body: Any) -> str | None:
    """Why localml refuses this PUT body, or None."""
    if not isinstance(body, dict) or not isinstance(body.get("properties"), dict):
        return "compute PUT needs a JSON body with `properties` (SPEC ComputeResource)"
    props = body["properties"]
    if props.get("computeType") != "AmlCompute":
        return (
            f"localml serves computeType AmlCompute only, not {props.get('computeType')!r} "
            "(see doubles/localml/README.md)"
        )
    aml = props.get("properties")
    if not isinstance(aml, dict) or not isinstance(aml.get("scaleSettings"), dict):
        return "AmlCompute needs properties.properties.scaleSettings (SPEC AmlComputeProperties)"
    if "maxNodeCount" not in aml["scaleSettings"]:
        return "scaleSettings.maxNodeCount is required (SPEC ScaleSettings `required`)"
    if not aml.get("vmSize"):
        return "AmlCompute needs properties.properties.vmSize"
    return None


def _resource(cp: Plane, ws_id: str, name: str, body: dict[str, Any], created: str | None) -> dict[str, Any]:
    """The ARM resource GET answers for a PUT body (SPEC ComputeResource: Resource + identity, location,
    tags, sku; `properties` a Compute with computeType discriminator)."""
    now = _now()
    props = body["properties"]
    identity = body.get("identity")
    if identity and identity.get("type") in ("SystemAssigned", "SystemAssigned,UserAssigned"):
        # ManagedServiceIdentity (common-types v3): principalId and tenantId are read-only, set by Azure.
        identity = dict(identity) | {
            # One principal per cluster, whatever casing its id is written in (ARM ids are case-insensitive).
            "principalId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{ws_id}/{name}".lower())),
            "tenantId": str(uuid.UUID(int=2)),
        }
    compute: dict[str, Any] = {
        "computeType": "AmlCompute",
        "description": props.get("description"),
        "createdOn": created or now,
        "modifiedOn": now,
        "provisioningState": "Succeeded",
        "provisioningErrors": None,
        "isAttachedCompute": False,
        "resourceId": None,
        "disableLocalAuth": props.get("disableLocalAuth"),
        "properties": _aml_properties(props["properties"], now),
    }
    if props.get("computeLocation"):
        # SPEC Compute.computeLocation: "Location for the underlying compute", mutability read+create.
        compute["computeLocation"] = props["computeLocation"]
    return {
        "id": f"{ws_id}/computes/{name}",
        "name": name,
        "type": COMPUTE_TYPE,
        "location": body.get("location") or cp.region,
        "tags": body.get("tags"),
        "identity": identity,
        "properties": compute,
    }


def _put(cp: Plane, req: Request) -> Response:
    arm_id = _key(req)
    name = req.params["compute"]
    try:
        body = req.json()
    except ValueError:
        return error(400, "UserError", "compute PUT body is not JSON")
    problem = _check(body)
    if problem:
        return error(400, "UserError", problem)
    if problem := resources.scope_locked(cp, arm_id, "write"):
        return problem
    with cp.store.lock:
        existing = cp.store.arm(arm_id)
        body = _keep_create_only(body, existing)
        resource = _resource(
            cp,
            _ws_id(req),
            name,
            body,
            existing.resource["properties"]["createdOn"] if existing else None,
        )
        answer = resource
        old = cp.store.detached.pop(arm_id.lower(), None)
        if existing is None and old is not None:
            # Azure/azure-rest-api-specs#18889: after the cluster was deleted (azurerm then deleted with
            # underlyingResourceAction=Detach; hashicorp/terraform-provider-azurerm#15825, fixed by
            # #16640 "switch delete mode to Delete instead of Detach"), a PUT of the same name with a
            # new vmSize "accepts the request and acknowledges the new vmSize", and "the cluster is
            # created with the previous vmSize". So: the answer echoes the request, the stored cluster
            # (every later GET) has the old vmSize. Only vmSize, the property the issue reports.
            resource = copy.deepcopy(resource)
            resource["properties"]["properties"]["vmSize"] = old["vmSize"]
        cp.store.arm_put(ArmResource(resource, copy.deepcopy(body), req.query.get("api-version")))
    return Response(200 if existing else 201, answer)


#: SPEC Compute properties with `x-ms-mutability: [read, create]`: set when the cluster is created.
CREATE_ONLY = ("computeLocation", "disableLocalAuth")


def _keep_create_only(body: dict[str, Any], existing: ArmResource | None) -> dict[str, Any]:
    """A PUT over an existing cluster that leaves out a create-only property keeps the value it was created
    with (`CREATE_ONLY`: the property cannot change after creation, so leaving it out changes nothing).
    azure-ai-ml's `compute.begin_update` sends no `computeLocation` (what `az ml compute update` PUTs); were
    it dropped, a `pulumi refresh` would record the cluster as moved and the next `pulumi up` would replace
    it."""
    if existing is None:
        return body
    before = existing.resource["properties"]
    props = dict(body["properties"])
    for key in CREATE_ONLY:
        if key not in props and before.get(key) is not None:
            props[key] = before[key]
    return {**body, "properties": props}


def _get(cp: Plane, req: Request) -> Response:
    found = cp.store.arm(_key(req))
    return Response(200, found.resource) if found is not None else _not_found(req.params["compute"])


def _list(cp: Plane, req: Request) -> Response:
    # SPEC PaginatedComputeResourcesList: {value, nextLink}; one page, no nextLink (`$skip` ignored).
    return Response(200, {"value": cp.store.computes_in(_ws_id(req))})


def _delete(cp: Plane, req: Request) -> Response:
    """SPEC Compute_Delete: `underlyingResourceAction` is required, "Delete the underlying compute if
    'Delete', or detach the underlying compute from workspace if 'Detach'"; 204 "The target compute does
    not exist". Detach keeps the cluster's vmSize for a later PUT of the same name (see `_put`)."""
    arm_id = _key(req)
    action = req.query.get("underlyingResourceAction")
    if action not in UNDERLYING_ACTIONS:
        return error(
            400,
            "UserError",
            f"underlyingResourceAction must be one of {', '.join(UNDERLYING_ACTIONS)} (got "
            f"{action!r}); it is a required query parameter of Compute_Delete",
        )
    with cp.store.lock:
        gone = cp.store.arm(arm_id)
        if gone is None:
            return Response(204, None)
        if problem := resources.scope_locked(cp, arm_id, "delete"):
            return problem
        resources.remove(cp, arm_id)
        if action == "Detach":
            cp.store.detached[arm_id.lower()] = {
                "vmSize": gone.resource["properties"]["properties"]["vmSize"]
            }
    return Response(200, None)


_LIVE = ("Queued", "Preparing", "Starting", "Provisioning", "Running", "Finalizing")


def node_id(compute: str, job: str, node: int) -> str:
    """localml's id for node `node` of `job` on `compute` (Azure's ids are opaque strings; these are not
    Azure's format, only unique and stable)."""
    return f"{compute}-{job}-n{node}"


def _list_nodes(cp: Plane, req: Request) -> Response:
    """SPEC Compute_ListNodes: POST .../computes/{computeName}/listNodes, 200 `AmlComputeNodesInformation`
    {nodes: [AmlComputeNodeInformation {nodeId, privateIpAddress, publicIpAddress, port, nodeState, runId}],
    nextLink}; nodeState one of idle, running, preparing, unusable, leaving, preempted (SPEC enum, and
    azure-ai-ml's generated `AmlComputeNodeInformation`, _restclient/arm_ml_service/models/_models.py).

    localml runs every node of a job on this machine, so each node's private IP is 127.0.0.1 (which is why
    `jobs.health` cannot tell localml's nodes apart by IP, and says so). A job's nodes are listed `running`
    with its runId while it runs; after it ends they stay `idle` (no runId), as AmlCompute keeps nodes until
    its scale-down idle time passes (localml never scales down; only the last ended job's nodes are kept).
    One page, no nextLink.
    """
    ws_key, key = _ws_id(req).lower(), req.params["compute"].lower()
    name = req.params["compute"]
    with cp.store.lock:
        if cp.store.arm(_key(req)) is None:
            return _not_found(name)
        jobs = [
            j
            for (w, _), j in cp.store.jobs.items()
            if w == ws_key
            and str(j.properties.get("computeId", "")).rsplit("/", 1)[-1].removeprefix("azureml:").lower()
            == key
        ]
        jobs.sort(key=lambda j: j.created)
        live = [j for j in jobs if j.status in _LIVE]
        nodes = []
        for j in live or jobs[-1:]:
            count = int((j.properties.get("resources") or {}).get("instanceCount") or 1)
            running = j.status in _LIVE
            for n in range(count):
                nodes.append(
                    {
                        "nodeId": node_id(name, j.name, n),
                        "privateIpAddress": "127.0.0.1",
                        "publicIpAddress": "127.0.0.1",
                        "port": 50000 + n,
                        "nodeState": "running" if running else "idle",
                        "runId": j.name if running else None,
                    }
                )
    return Response(200, {"nodes": nodes, "nextLink": None})
