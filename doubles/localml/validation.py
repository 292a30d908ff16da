"""Request bodies checked against the published Azure REST spec before localml acts on them.

Every PUT localml accepts is checked by `preflight.provider.schema` against the spec of the `api-version` the
client sent, with the same vendored spec data and rules the gate uses (`preflight/provider/azure_specs/`,
docs/preflight.md):
- the jobs flow's own calls (jobs, code versions, computes: `checked`, by operationId, index.json
  `operations`; azure-ai-ml 1.35.2 sends 2025-12-01: `azure/ai/ml/_restclient/arm_ml_service/
  _configuration.py`);
- every ARM resource type a stack declares (`check_resource_put`, by azure-native type token, index.json
  `resources`: the operation that serves the type at that API version, the one azure-native sends).
A body the spec rejects gets what Azure answers to a request it cannot accept: 400 with the ARM error
envelope of the spec's `default` response (common-types v3 `ErrorResponse`: `error.code`, `message`,
`target`, `details[]`); for the Azure ML calls code `UserError` and the message Azure ML gives such a job
body, "Request is invalid and/or missing fields." (Azure/azure-sdk-for-js#29328); for the other resource
types code `BadRequest` (each resource provider picks its own codes, none documented for these bodies); one
`details` entry per failure, with the property as `target` (localml's detail codes are its own). azure-core
raises it as `HttpResponseError` with every detail in its message.

An api-version with no vendored spec is not refused (the service would know it): the request goes on and
`ValidationLog.not_checked` records it, so a test or `server.log` reader sees what was not checked.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from doubles.localml.http import Handler, Request, Response, error
from preflight.provider import schema

log = logging.getLogger("localml")

#: Azure ML's top-level answer to a body it rejects (Azure/azure-sdk-for-js#29328).
MESSAGE = "Request is invalid and/or missing fields."


@dataclass
class ValidationLog:
    """What was checked and what was not, for the session (thread-safe)."""

    rejected: list[tuple[str, str, list[str]]] = field(default_factory=list)  # operation, path, reasons
    not_checked: list[tuple[str, str, str]] = field(default_factory=list)  # operation, path, why
    lock: threading.Lock = field(default_factory=threading.Lock)


def answer(result: schema.Result, code: str = "UserError", message: str = MESSAGE) -> Response:
    """The 400 for a body the spec rejects."""
    reply = error(400, code, message)
    reply.body["error"]["details"] = [
        {"code": code, "message": f"{f.reason} (constraint {f.constraint})", "target": f.path}
        for f in result.failures
    ]
    if len(result.failures) == 1:
        reply.body["error"]["target"] = result.failures[0].path
    return reply


def checked(
    operation: str, handler: Handler, record: Callable[[], ValidationLog], params: Mapping[str, str]
) -> Handler:
    """`handler`, behind the spec check of `operation` (an operationId). `record`: the session's log (read
    when a request comes); `params`: route parameter -> spec path parameter (`{"name": "id"}` for a job)."""

    def run(req: Request) -> Response:
        try:
            body = req.json()
        except ValueError:
            return error(400, "UserError", f"{MESSAGE} The body is not JSON.")
        values = {spec: req.params[route] for route, spec in params.items() if route in req.params}
        result = schema.check_request(operation, req.query.get("api-version"), values, body)
        return refused(req, operation, result, record()) or handler(req)

    return run


def refused(
    req: Request, operation: str, result: schema.Result, log_: ValidationLog, code: str = "UserError"
) -> Response | None:
    """Record what the check found; the 400 when the spec rejects the body, else None (go on). A request
    with no vendored spec for its api-version goes on, recorded as not checked."""
    if not result.checked:
        log.warning("%s %s: not checked against a spec: %s", req.method, req.path, result.why)
        with log_.lock:
            log_.not_checked.append((operation, req.path, result.why))
        return None
    if result.failures:
        reasons = [f.reason for f in result.failures]
        log.info("%s %s: 400, the spec rejects the body: %s", req.method, req.path, "; ".join(reasons))
        with log_.lock:
            log_.rejected.append((operation, req.path, reasons))
        if code == "UserError":
            return answer(result)
        return answer(result, code, f"The request body is invalid: {'; '.join(reasons)}")
    return None


def check_resource_put(
    token: str, api_version: str | None, params: Mapping[str, str], body: Any
) -> schema.Result:
    """The PUT body of an ARM resource of azure-native type `token` (wire shape) against the operation that
    serves the type at `api_version` (index.json `resources`); `params`: the route's path parameters by
    their spec names. Not checked (`result.checked` false) when nothing is vendored for that version."""
    versions = schema.index().get("resources", {}).get(token, {})
    entry = versions.get(api_version) if isinstance(api_version, str) else None
    if entry is None:
        vendored = ", ".join(sorted(versions)) or "none"
        return schema.Result(
            None, f"no spec vendored for {token} API version {api_version} (vendored: {vendored})"
        )
    if not isinstance(body, Mapping):
        result = schema.Result(f"{entry['file']}#{entry['operationId']}")
        result.failures.append(
            schema.Failure("(body)", "type object", "the request body is not a JSON object", entry["file"])
        )
        return result
    return schema.check_operation(entry["file"], entry["operationId"], params, body, sdk_shape=False)
