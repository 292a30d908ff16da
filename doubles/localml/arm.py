"""ARM / Azure ML management-plane calls: what azure-ai-ml makes for the project's flows and what azure-native
makes for every resource a stack declares. Registered here from their own modules: the workspace resource
(`doubles/localml/workspaces.py`), compute clusters (`doubles/localml/computes.py`), key vaults
(`doubles/localml/keyvault.py`), long-running operations (`doubles/localml/operations.py`) and, last, every
other ARM resource type with a vendored spec (`doubles/localml/resources.py`), all in the session's one store.

Paths are relative to the cloud's resourceManager endpoint (this server). Each handler answers the
shape the azure-ai-ml 1.35 REST models deserialise; see doubles/localml/README.md for the list.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from doubles.localml import computes, dataassets, keyvault, operations, resources, workspaces
from doubles.localml.azurite import ACCOUNT_KEY, ACCOUNT_NAME
from doubles.localml.blobs import DATASTORES
from doubles.localml.http import Request, Response, Router, error
from doubles.localml.store import TERMINAL, ArmResource, CodeVersion, Job, now_iso, workspace_id
from doubles.localml.validation import checked

if TYPE_CHECKING:
    from doubles.localml.plane import Plane

WS = "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.MachineLearningServices/workspaces/{ws}"
#: Route parameters -> the spec's path parameters, for the body check (doubles/localml/validation.py).
JOB_PARAMS = {"rg": "resourceGroupName", "ws": "workspaceName", "name": "id"}
CODE_PARAMS = {"rg": "resourceGroupName", "ws": "workspaceName", "name": "name", "version": "version"}
ENV_TYPE = "Microsoft.MachineLearningServices/workspaces/environments/versions"


def _ws_id(req: Request) -> str:
    return workspace_id(req.params["sub"], req.params["rg"], req.params["ws"])


def register(router: Router, cp: Plane) -> None:
    a = router.add
    a(
        "GET",
        "/metadata/endpoints",
        lambda r: Response(200, cp.cloud_metadata()),
        "cloud metadata document",
        public=True,
    )
    workspaces.register(router, cp, WS)  # GET, PUT, DELETE; 404 under a deleted workspace
    a("GET", WS + "/codes/{name}/versions", lambda r: _code_list(cp, r), "code versions list (by hash)")
    a("GET", WS + "/codes/{name}/versions/{version}", lambda r: _code_get(cp, r), "code version GET")
    a(
        "PUT",
        WS + "/codes/{name}/versions/{version}",
        checked(
            "CodeVersions_CreateOrUpdate", lambda r: _code_put(cp, r), lambda: cp.validation, CODE_PARAMS
        ),
        "code version PUT",
    )
    a(
        "POST",
        WS + "/codes/{name}/versions/{version}/startPendingUpload",
        lambda r: _pending_upload(cp, r),
        "code version startPendingUpload",
    )
    a(
        "PUT",
        WS + "/environments/{name}/versions/{version}",
        checked(
            "EnvironmentVersions_CreateOrUpdate",
            lambda r: _env_put(cp, r),
            lambda: cp.validation,
            CODE_PARAMS,
        ),
        "environment version PUT",
    )
    dataassets.register(router, cp, WS)  # data containers and versions: doubles/localml/dataassets.py
    a("GET", WS + "/jobs", lambda r: _job_list(cp, r), "jobs list")
    a(
        "PUT",
        WS + "/jobs/{name}",
        checked("Jobs_CreateOrUpdate", lambda r: _job_put(cp, r), lambda: cp.validation, JOB_PARAMS),
        "job PUT (create)",
    )
    a("GET", WS + "/jobs/{name}", lambda r: _job_get(cp, r), "job GET")
    a("POST", WS + "/jobs/{name}/cancel", lambda r: _job_cancel(cp, r), "job cancel")
    a("GET", WS + "/datastores", lambda r: _datastore_list(cp, r), "datastores list")
    a("GET", WS + "/datastores/{name}", lambda r: _datastore_get(cp, r), "datastore GET")
    a("POST", WS + "/datastores/{name}/listSecrets", lambda r: _datastore_secrets(r), "datastore listSecrets")
    computes.register(router, cp, WS)  # compute clusters: doubles/localml/computes.py
    keyvault.register(router, cp)
    operations.register(router, cp)
    resources.register(router, cp)  # last: every other vendored ARM type, doubles/localml/resources.py


# --- code versions -------------------------------------------------------------------------------


def _code_list(cp: Plane, req: Request) -> Response:
    """With ``hash``: every code version of the workspace with that content hash, whatever its name
    (azure-ai-ml gives each anonymous upload a fresh name and reuses what this returns); else the
    versions of ``name``."""
    ws_id, name = _ws_id(req), req.params["name"]
    wanted = req.query.get("hash")
    with cp.store.lock:
        found = [
            c.body
            for (w, n, _), c in cp.store.codes.items()
            if w == ws_id.lower() and (_code_hash(c.body) == wanted if wanted is not None else n == name)
        ]
    return Response(200, {"value": found})


def _code_hash(body: dict[str, Any]) -> str | None:
    props = body.get("properties", {})
    return props.get("properties", {}).get("hash_sha256") or props.get("hash")


def _code_get(cp: Plane, req: Request) -> Response:
    code = cp.store.codes.get((_ws_id(req).lower(), req.params["name"], req.params["version"]))
    if code is None:
        return error(404, "UserError", f"code {req.params['name']}:{req.params['version']} not found")
    return Response(200, code.body)


def _code_put(cp: Plane, req: Request) -> Response:
    ws_id, name, version = _ws_id(req), req.params["name"], req.params["version"]
    body = req.json()
    props = body.get("properties", {})
    if not props.get("codeUri"):
        return error(400, "UserError", "code version needs properties.codeUri")
    resource = {
        "id": f"{ws_id}/codes/{name}/versions/{version}",
        "name": version,
        "type": "Microsoft.MachineLearningServices/workspaces/codes/versions",
        "properties": props,
        "systemData": {"createdAt": now_iso(), "createdBy": "localml"},
    }
    key = (ws_id.lower(), name, version)
    with cp.store.lock:
        existing = cp.store.codes.get(key)
        if existing is not None and existing.body["properties"].get("codeUri") != props["codeUri"]:
            return error(409, "UserError", f"code {name}:{version} exists with another codeUri")
        cp.store.codes[key] = CodeVersion(name, version, resource)
    return Response(201 if existing is None else 200, resource)


def _pending_upload(cp: Plane, req: Request) -> Response:
    container_url, sas_url = cp.blobs.new_upload_container()
    return Response(
        200,
        {
            "pendingUploadId": str(uuid.uuid4()),
            "pendingUploadType": "TemporaryBlobReference",
            "blobReferenceForConsumption": {
                "blobUri": container_url,
                "storageAccountArmId": None,
                "credential": {"credentialType": "SAS", "sasUri": sas_url},
            },
        },
    )


# --- environment versions ------------------------------------------------------------------------


def _env_put(cp: Plane, req: Request) -> Response:
    """Register an environment version, as azure-ai-ml does for a job's inline environment (`image:` or
    `build:`): `EnvironmentOperations.create_or_update` PUTs `CliV2AnonymousEnvironment/versions/<hash>`
    (operations/_environment_operations.py) and uses the id answered. Recorded only: no image is pulled or
    built, the job runs in this interpreter (docs/localml.md "What is left out"); a GET of it stays a 501, as
    every other `ml.environments` call. The answer is the EnvironmentVersion resource (mfe.json
    `EnvironmentVersions_CreateOrUpdate`: 200/201, the resource)."""
    ws_id, name, version = _ws_id(req), req.params["name"], req.params["version"]
    body = req.json()
    arm_id = f"{ws_id}/environments/{name}/versions/{version}"
    props = {**(body.get("properties") or {}), "provisioningState": "Succeeded"}
    resource = {
        "id": arm_id,
        "name": version,
        "type": ENV_TYPE,
        "properties": props,
        "systemData": {"createdAt": now_iso(), "createdBy": "localml", "createdByType": "User"},
    }
    created = cp.store.arm_put(ArmResource(resource, body, req.query.get("api-version")))
    return Response(201 if created else 200, resource)


# --- jobs --------------------------------------------------------------------------------------


def _job_put(cp: Plane, req: Request) -> Response:
    ws_id, name = _ws_id(req), req.params["name"]
    props = req.json().get("properties", {})
    with cp.store.lock:
        if cp.store.job(ws_id, name) is not None:
            return error(
                409,
                "UserError",
                f"a job named {name!r} already exists in this workspace; "
                "job names are unique, submit with another name",
            )
        problem = cp.runner.check(props)
        if problem:
            return error(400, "UserError", problem)
        props = cp.runner.complete(ws_id, name, props)
        job = Job(name, ws_id, props, status="Queued")
        cp.store.jobs[(ws_id.lower(), name)] = job
    cp.runner.start(job)
    return Response(201, job.resource())


def _job_get(cp: Plane, req: Request) -> Response:
    job = cp.store.job(_ws_id(req), req.params["name"])
    if job is None:
        return error(404, "UserError", f"job {req.params['name']!r} not found")
    return Response(200, job.resource())


def _job_list(cp: Plane, req: Request) -> Response:
    return Response(200, {"value": [j.resource() for j in cp.store.jobs_in(_ws_id(req))]})


def _job_cancel(cp: Plane, req: Request) -> Response:
    job = cp.store.job(_ws_id(req), req.params["name"])
    if job is None:
        return error(404, "UserError", f"job {req.params['name']!r} not found")
    if job.status not in TERMINAL:
        job.status = "CancelRequested"
        job.stop_event.set()
    return Response(200, None)


# --- datastores --------------------------------------------------------------------------------


def _datastore(cp: Plane, ws_id: str, name: str) -> dict[str, Any]:
    return {
        "id": f"{ws_id}/datastores/{name}",
        "name": name,
        "type": "Microsoft.MachineLearningServices/workspaces/datastores",
        "properties": {
            "datastoreType": "AzureBlob",
            "accountName": ACCOUNT_NAME,
            "containerName": DATASTORES[name],
            "endpoint": cp.storage_suffix,
            "protocol": "https",
            "isDefault": name == "workspaceblobstore",
            "credentials": {"credentialsType": "AccountKey"},
        },
    }


def _datastore_get(cp: Plane, req: Request) -> Response:
    name = req.params["name"]
    if name not in DATASTORES:
        return error(404, "UserError", f"datastore {name!r} not found (localml has {sorted(DATASTORES)})")
    return Response(200, _datastore(cp, _ws_id(req), name))


def _datastore_list(cp: Plane, req: Request) -> Response:
    names = list(DATASTORES)
    if req.query.get("isDefault", "").lower() == "true":
        names = ["workspaceblobstore"]
    return Response(200, {"value": [_datastore(cp, _ws_id(req), n) for n in names]})


def _datastore_secrets(req: Request) -> Response:
    if req.params["name"] not in DATASTORES:
        return error(404, "UserError", f"datastore {req.params['name']!r} not found")
    return Response(200, {"secretsType": "AccountKey", "key": ACCOUNT_KEY})
