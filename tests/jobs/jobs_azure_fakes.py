"""Test doubles at the HTTP boundary: an azure-core transport that answers with recorded-shape JSON, a
credential that hands out a token, and Azure ML's job service as a smoke job's submit sees it (`JobService`).
The MLClient and everything above the transport is real."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import requests
from azure.core.credentials import AccessToken, AccessTokenInfo
from azure.core.pipeline.transport import HttpTransport
from azure.core.rest._requests_basic import RestRequestsTransportResponse


class StaticCredential:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("test-token", 4_102_444_800)

    def get_token_info(self, *scopes: str, **kwargs: Any) -> AccessTokenInfo:
        return AccessTokenInfo("test-token", 4_102_444_800)


class RoutedTransport(HttpTransport):
    """Answers each request with `route(method, url) -> (status, json body)` or `(status, json body,
    headers)`; a body of None is an empty answer. Records every request."""

    def __init__(self, route: Callable[[str, str], tuple[Any, ...]]) -> None:
        self.route = route
        self.requests: list[Any] = []

    def __enter__(self) -> RoutedTransport:
        return self

    def __exit__(self, *args: Any) -> None:
        pass

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def send(self, request: Any, **kwargs: Any) -> Any:
        self.requests.append(request)
        status, body, *more = self.route(request.method, request.url)
        raw = requests.Response()
        raw.status_code = status
        raw.headers["Content-Type"] = "application/json"
        raw.headers.update(more[0] if more else {})
        raw._content = b"" if body is None else json.dumps(body).encode()
        raw.raw = io.BytesIO(raw._content)
        raw.url = request.url
        return RestRequestsTransportResponse(request=request, internal_response=raw)


def ml_client(transport: RoutedTransport, **kwargs: Any) -> Any:
    """A real MLClient over `transport`; kwargs go to azure-core's pipeline (e.g. `retry_total=0`)."""
    from azure.ai.ml import MLClient

    return MLClient(
        StaticCredential(),
        "00000000-0000-0000-0000-000000000000",
        "rg-train",
        "ws-llm",
        transport=transport,
        **kwargs,
    )


WS = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-train/providers/"
    "Microsoft.MachineLearningServices/workspaces/ws-llm"
)


class JobService:
    """The calls `ml.jobs.create_or_update` and `ml.jobs.get` make for a smoke job: the code asset is found
    by its content hash (so nothing is uploaded), the PUT answers Queued, and each job GET answers the next
    of `answers` (a status, or an HTTP error code); the last answer repeats."""

    def __init__(self, *answers: str | int) -> None:
        self.answers = list(answers)
        self.code: dict = {}
        self.transport = RoutedTransport(self.route)

    def job(self, name: str, status: str) -> dict:
        return {
            "id": f"{WS}/jobs/{name}",
            "name": name,
            "type": "Microsoft.MachineLearningServices/workspaces/jobs",
            "properties": {
                "jobType": "Command",
                "status": status,
                "command": "python smoke.py",
                "environmentId": "azureml://registries/azureml/environments/acpt/labels/latest",
                "computeId": f"{WS}/computes/h100-x4",
                "services": {"Studio": {"endpoint": f"https://ml.azure.com/runs/{name}"}},
            },
        }

    def route(self, method: str, url: str) -> tuple[int, dict]:
        path = url.split("?")[0]
        if method == "GET" and re.search(r"/codes/[^/]+/versions$", path):
            digest = re.search(r"hash=(\w+)", url).group(1)
            self.code = {
                "id": f"{WS}/codes/src/versions/1",
                "name": "1",
                "properties": {"codeUri": "https://st.blob.core.windows.net/code/src", "hash": digest},
            }
            return 200, {"value": [self.code]}
        if method == "GET" and re.search(r"/codes/[^/]+/versions/[^/]+$", path):
            return 200, self.code
        if "/jobs/" in path and method in ("PUT", "GET"):
            name = path.rsplit("/", 1)[1]
            if method == "PUT":
                return 201, self.job(name, "Queued")
            answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
            if isinstance(answer, int):
                return answer, {"error": {"code": "InternalServerError", "message": "try again later"}}
            return 200, self.job(name, answer)
        return 404, {"error": {"code": "NotFound", "message": f"no such resource: {method} {path}"}}

    def job_gets(self) -> int:
        return sum(
            r.method == "GET" and re.search(r"/jobs/[^/?]+(\?|$)", r.url) is not None
            for r in self.transport.requests
        )
