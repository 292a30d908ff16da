"""Data assets: the versions `az ml data create` / `ml.data.create_or_update` register, and what a job input
naming one (`azureml:NAME:VERSION`, `azureml:NAME@latest`) reads.

The calls azure-ai-ml 1.35 makes, and the shapes it reads, from its source:
- `ml.data.create_or_update(Data(name=...))` without a version: GET the container (`DataContainers_Get`) for
  `properties.nextVersion`, "1" on a 404 (`_asset_utils._create_or_update_autoincrement`), after uploading a
  local `path` to the default datastore (`_check_and_upload_path`); then PUT the version
  (`DataVersions_CreateOrUpdate`) with `properties.dataType` and `properties.dataUri`.
- A job input `azureml:NAME@latest`: the label is resolved on the client, GET the container for
  `properties.latestVersion` ("the most recently created, not the most recently updated":
  `DataOperations._get_latest_version`), then GET that version (`DataOperations.get`); a 404 on the container
  is azure-ai-ml's own ValidationException "Asset NAME does not exist in workspace WS."
  (`_asset_utils._get_latest_version_from_container`). `azureml:NAME:VERSION` is not looked up by the client.
  Either way the job's input `uri` is the version's ARM id (`VERSIONED_RESOURCE_ID_FORMAT`,
  `OperationOrchestrator.get_asset_arm_id`), and the service reads the version's `dataUri`
  (`Store.data_uri`, which the runner reads).
Shapes: the Azure ML REST spec (mfe.json `DataContainer`: `dataType`, `latestVersion` and `nextVersion`
read-only; `DataVersionBase`: `dataType`, `dataUri`). A version is created with its container (no container
PUT in the flows). Each version is one record of the session's ARM store.

Different from Azure: `nextVersion` is the largest numeric version plus one (the service's rule is not
documented); a version's body is not checked against the spec (none vendored); an unknown version named by a
job is a 400 at submission in localml's words; a data asset whose `dataUri` is not a datastore path of this
workspace (an https or wasbs URL) is refused at submission as any such input is (doubles/localml/runner.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from doubles.localml.http import Request, Response, Router, error
from doubles.localml.store import ArmResource, now_iso, workspace_id
from doubles.localml.validation import checked

if TYPE_CHECKING:
    from doubles.localml.plane import Plane
    from doubles.localml.store import Store

CONTAINER_TYPE = "Microsoft.MachineLearningServices/workspaces/data"
VERSION_TYPE = "Microsoft.MachineLearningServices/workspaces/data/versions"
PARAMS = {"rg": "resourceGroupName", "ws": "workspaceName", "name": "name", "version": "version"}


def register(router: Router, cp: Plane, ws: str) -> None:
    a = router.add
    a("GET", ws + "/data/{name}", lambda r: _container_get(cp, r), "data container GET")
    a("GET", ws + "/data/{name}/versions/{version}", lambda r: _version_get(cp, r), "data version GET")
    a(
        "PUT",
        ws + "/data/{name}/versions/{version}",
        checked("DataVersions_CreateOrUpdate", lambda r: _version_put(cp, r), lambda: cp.validation, PARAMS),
        "data version PUT",
    )


def _ws_id(req: Request) -> str:
    return workspace_id(req.params["sub"], req.params["rg"], req.params["ws"])


def versions(store: Store, ws_id: str, name: str) -> list[dict[str, Any]]:
    """The versions of data asset `name`, oldest first (by creation)."""
    container = f"{ws_id}/data/{name}".lower()
    found = [r.resource for r in store.arm_of_type(VERSION_TYPE) if r.id.lower().startswith(container + "/")]
    return sorted(found, key=lambda r: r["systemData"]["createdAt"])


def _container_get(cp: Plane, req: Request) -> Response:
    ws_id, name = _ws_id(req), req.params["name"]
    found = versions(cp.store, ws_id, name)
    if not found:
        return error(404, "UserError", f"data asset {name!r} not found in this workspace")
    numeric = [int(v["name"]) for v in found if str(v["name"]).isdigit()]
    latest = found[-1]
    return Response(
        200,
        {
            "id": f"{ws_id}/data/{name}",
            "name": name,
            "type": CONTAINER_TYPE,
            "properties": {
                "dataType": latest["properties"].get("dataType"),
                "isArchived": False,
                "latestVersion": latest["name"],
                "nextVersion": str(max(numeric, default=0) + 1),
            },
            "systemData": {"createdAt": found[0]["systemData"]["createdAt"], "createdBy": "localml"},
        },
    )


def _version_get(cp: Plane, req: Request) -> Response:
    name, version = req.params["name"], req.params["version"]
    found = cp.store.arm(f"{_ws_id(req)}/data/{name}/versions/{version}")
    if found is None:
        return error(404, "UserError", f"data asset {name}:{version} not found in this workspace")
    return Response(200, found.resource)


def _version_put(cp: Plane, req: Request) -> Response:
    ws_id, name, version = _ws_id(req), req.params["name"], req.params["version"]
    body = req.json()
    props = dict(body.get("properties") or {})
    if not props.get("dataUri") or not props.get("dataType"):
        return error(400, "UserError", "a data version needs properties.dataType and properties.dataUri")
    resource = {
        "id": f"{ws_id}/data/{name}/versions/{version}",
        "name": version,
        "type": VERSION_TYPE,
        "properties": {**props, "provisioningState": "Succeeded"},
        "systemData": {"createdAt": now_iso(), "createdBy": "localml", "createdByType": "User"},
    }
    existing = cp.store.arm(resource["id"])
    if existing is not None:  # versions are immutable once created (azure-ai-ml retries on a 409)
        if existing.resource["properties"].get("dataUri") != props["dataUri"]:
            return error(409, "UserError", f"data asset {name}:{version} exists with another dataUri")
        return Response(200, existing.resource)
    cp.store.arm_put(ArmResource(resource, body, req.query.get("api-version")))
    return Response(201, resource)
