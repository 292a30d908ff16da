"""localml's data assets (doubles/localml/dataassets.py) and the inline-environment PUT (arm.py), in-process:
the answers azure-ai-ml 1.35 reads (a container's `latestVersion`, "the most recently created", and
`nextVersion`; a version's `dataUri`), and a job input naming a version resolved to the datastore path it was
registered with, or refused at submission by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from doubles.localml.controlplane import HandlersOnly
from doubles.localml.http import Request
from doubles.localml.runner import Runner

WS = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-unit/providers/"
    "Microsoft.MachineLearningServices/workspaces/ws-unit"
)
API = "2025-01-01-preview"
FOLDER = "azureml://datastores/workspaceblobstore/paths/LocalUpload/abc/data"


@pytest.fixture
def cp(tmp_path: Path) -> HandlersOnly:
    return HandlersOnly(tmp_path, implicit_workspaces=True)


def call(cp: HandlersOnly, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else b""
    resp = cp.router.dispatch(Request(method, WS + path, {"api-version": API}, {}, data))
    return resp.status, resp.body


def version(uri: str = FOLDER, kind: str = "uri_folder") -> dict[str, Any]:
    return {"properties": {"dataType": kind, "dataUri": uri, "isAnonymous": False}}


def test_an_unknown_asset_is_a_404_so_azure_ai_ml_creates_version_1(cp):
    assert call(cp, "GET", "/data/sample")[0] == 404
    assert call(cp, "GET", "/data/sample/versions/1")[0] == 404


def test_the_container_names_the_latest_and_next_versions(cp):
    status, body = call(cp, "PUT", "/data/sample/versions/1", version())
    assert status == 201 and body["properties"]["dataUri"] == FOLDER
    assert body["id"] == f"{WS}/data/sample/versions/1" and body["name"] == "1"
    status, body = call(cp, "GET", "/data/sample")
    assert status == 200 and body["properties"]["latestVersion"] == "1"
    assert body["properties"]["nextVersion"] == "2" and body["properties"]["dataType"] == "uri_folder"
    call(cp, "PUT", "/data/sample/versions/2", version(FOLDER + "2"))
    props = call(cp, "GET", "/data/sample")[1]["properties"]
    assert (props["latestVersion"], props["nextVersion"]) == ("2", "3")
    assert call(cp, "GET", "/data/sample/versions/1")[1]["properties"]["dataUri"] == FOLDER


def test_latest_is_the_most_recently_created_not_the_highest(cp):
    call(cp, "PUT", "/data/sample/versions/10", version())
    call(cp, "PUT", "/data/sample/versions/9", version())
    call(cp, "PUT", "/data/sample/versions/exp", version())  # a non-numeric version
    props = call(cp, "GET", "/data/sample")[1]["properties"]
    assert (props["latestVersion"], props["nextVersion"]) == ("exp", "11")


def test_a_version_is_immutable(cp):
    assert call(cp, "PUT", "/data/sample/versions/1", version())[0] == 201
    assert call(cp, "PUT", "/data/sample/versions/1", version())[0] == 200  # the same: accepted again
    status, body = call(cp, "PUT", "/data/sample/versions/1", version(FOLDER + "-other"))
    assert status == 409 and "exists with another dataUri" in body["error"]["message"]


def test_a_version_without_its_uri_is_refused_naming_it(cp):
    status, body = call(cp, "PUT", "/data/sample/versions/1", {"properties": {"dataType": "uri_file"}})
    assert status == 400 and "properties.dataUri" in body["error"]["message"]


def test_a_job_input_naming_a_version_reads_its_datastore_path(cp, tmp_path):
    call(cp, "PUT", "/data/sample/versions/3", version())
    asset = f"{WS}/data/sample/versions/3"
    assert cp.store.data_uri(asset) == (FOLDER, None)
    assert cp.store.data_uri("azureml:" + asset) == (FOLDER, None)  # azure-ai-ml's prefixed form
    assert cp.store.data_uri(FOLDER) == (None, None)  # not an asset: left as it is
    runner = Runner(cp.store, None)  # type: ignore[arg-type]  # check() reads no blobs
    job = {"jobType": "Command", "command": "ls ${{inputs.d}}"}
    ok = {**job, "inputs": {"d": {"jobInputType": "uri_folder", "uri": "azureml:" + asset}}}
    assert runner.check(ok) is None
    missing = {**job, "inputs": {"d": {"jobInputType": "uri_folder", "uri": f"{WS}/data/sample/versions/4"}}}
    assert runner.check(missing) == "inputs.d: data asset sample:4 not found in this workspace"


def test_an_asset_on_a_url_is_refused_as_a_url_input_is(cp):
    call(cp, "PUT", "/data/web/versions/1", version("https://example.org/iris.csv", "uri_file"))
    runner = Runner(cp.store, None)  # type: ignore[arg-type]
    spec = {"jobInputType": "uri_file", "uri": f"azureml:{WS}/data/web/versions/1"}
    problem = runner.check({"jobType": "Command", "command": "x", "inputs": {"f": spec}})
    assert problem is not None and "'https://example.org/iris.csv' is not a datastore path" in problem


def test_an_inline_environment_is_recorded_and_its_get_stays_unserved(cp):
    body = {"properties": {"image": "library/python:latest", "isAnonymous": True}}
    path = "/environments/CliV2AnonymousEnvironment/versions/65cb0b"
    status, answer = call(cp, "PUT", path, body)
    assert (
        status == 201
        and answer["id"] == WS + path
        and answer["properties"]["image"] == body["properties"]["image"]
    )
    assert call(cp, "PUT", path, body)[0] == 200
    assert call(cp, "GET", path)[0] == 501
