"""Request bodies checked against the published Azure REST spec before localml acts on them.

Every PUT localml accepts for the jobs flow (jobs, code versions, computes) is checked by
`preflight.provider.schema.check_request` against the spec of the `api-version` the client sent (azure-ai-ml 1.35.2
sends 2025-12-01: `azure/ai/ml/_restclient/arm_ml_service/_configuration.py`), the same vendored spec data
and rules the gate uses (`preflight/provider/azure_specs/`, docs/preflight.md). A body the spec rejects gets what
Azure answers to a request it cannot accept: 400 with the ARM error envelope of the spec's `default`
response (common-types v3 `ErrorResponse`: `error.code`, `message`, `target`, `details[]`), code `UserError`
and the message Azure ML gives such a job body, "Request is invalid and/or missing fields."
(Azure/azure-sdk-for-js#29328); one `details` entry per failure, with the property as `target` (localml's
detail codes are its own: Azure's are not documented). azure-core raises it as `HttpResponseError` with
every detail in its message.

An api-version with no vendored spec is not refused (the service would know it): the request goes on and
`ValidationLog.not_checked` records it, so a test or `server.log` reader sees what was not checked.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

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


def answer(result: schema.Result) -> Response:
    """The 400 for a body the spec rejects."""
    reply = error(400, "UserError", MESSAGE)
    reply.body["error"]["details"] = [
        {"code": "UserError", "message": f"{f.reason} (constraint {f.constraint})", "target": f.path}
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
        if not result.checked:
            log.warning("%s %s: not checked against a spec: %s", req.method, req.path, result.why)
            log_ = record()
            with log_.lock:
                log_.not_checked.append((operation, req.path, result.why))
        elif result.failures:
            reasons = [f.reason for f in result.failures]
            log.info("%s %s: 400, the spec rejects the body: %s", req.method, req.path, "; ".join(reasons))
            log_ = record()
            with log_.lock:
                log_.rejected.append((operation, req.path, reasons))
            return answer(result)
        return handler(req)

    return run
