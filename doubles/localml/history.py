"""Workspace discovery and the run-history calls ``jobs.stream`` / ``jobs.download`` poll.

The discovery document (the workspace's ``discoveryUrl``) names this server as the ``api`` and
``history`` endpoints; run details carry SAS URLs of the job's log files in Azurite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from doubles.localml.blobs import ARTIFACT_CONTAINER
from doubles.localml.http import Request, Response, Router, error
from doubles.localml.store import Job, workspace_id

if TYPE_CHECKING:
    from doubles.localml.plane import Plane

HWS = (
    "/history/v1.0/subscriptions/{sub}/resourceGroups/{rg}"
    "/providers/Microsoft.MachineLearningServices/workspaces/{ws}"
)


def register(router: Router, cp: Plane) -> None:
    a = router.add
    a(
        "GET",
        "/discovery",
        lambda r: Response(200, _discovery(cp)),
        "workspace discovery document",
        public=True,
    )
    a("GET", HWS + "/runs/{run}/details", lambda r: _details(cp, r), "run history: run details")
    a("POST", HWS + "/rundata", lambda r: _run_data(cp, r), "run history: run data")


def _discovery(cp: Plane) -> dict[str, str]:
    base = cp.base_url
    return {
        "api": base,
        "catalog": base,
        "experimentation": base,
        "gallery": base,
        "history": base,
        "hyperdrive": base,
        "labeling": base,
        "modelmanagement": base,
        "pipelines": base,
        "studiocoreservices": base,
    }


def _job(cp: Plane, req: Request, run_id: str) -> Job | None:
    ws_id = workspace_id(req.params["sub"], req.params["rg"], req.params["ws"])
    return cp.store.job(ws_id, run_id)


def _not_found(run_id: str) -> Response:
    return error(404, "UserError", f"run {run_id!r} not found")


def _run_body(job: Job) -> dict[str, Any]:
    props = job.properties
    body: dict[str, Any] = {
        "runId": job.name,
        "runUuid": job.name,
        "status": job.status,
        "target": props.get("computeId", "").rsplit("/", 1)[-1] or None,
        "createdTimeUtc": job.created,
        "startTimeUtc": job.start_time,
        "endTimeUtc": job.end_time,
        "experimentId": props.get("experimentName"),
        "displayName": props.get("displayName"),
        "tags": props.get("tags") or {},
        "properties": {},
        "warnings": [],
    }
    if job.error:
        body["error"] = {"error": {"code": "UserError", "message": job.error}}
    return body


def _details(cp: Plane, req: Request) -> Response:
    run_id = req.params["run"]
    job = _job(cp, req, run_id)
    if job is None:
        return _not_found(run_id)
    body = _run_body(job)
    prefix = f"{job.artifact_prefix}/"
    names = cp.blobs.list_names(ARTIFACT_CONTAINER, prefix)
    body["logFiles"] = {n[len(prefix) :]: cp.blobs.read_url(ARTIFACT_CONTAINER, n) for n in names}
    return Response(200, body)


def _run_data(cp: Plane, req: Request) -> Response:
    run_id = str(req.json().get("runId", ""))
    job = _job(cp, req, run_id)
    if job is None:
        return _not_found(run_id)
    # Named outputs are not registered as data assets here: only the artifact store is downloadable.
    return Response(200, {"runMetadata": _run_body(job) | {"outputs": {}}})
