"""Long-running operations: a 202 with a `Location` to poll, as ARM's asynchronous operations answer.

ARM's contract (Azure/azure-resource-manager-rpc `v1.0/Addendum.md`, "202 Accepted and Location Headers"):
the first answer is 202 with `Location` (and optionally `Retry-After`, seconds); a GET of the Location
answers 202 while the operation runs and, once it is done, the final status (200/204). The specs of the two
operations served this way say the same:

- `Workspaces_Delete` (azure-rest-api-specs machinelearningservices stable/2025-12-01 `workspaceRP.json`):
  responses 200, 202 with `Location` and `Retry-After`, 204 "does not exist"; `x-ms-long-running-operation`
  with `final-state-via: location`.
- `Vaults_PurgeDeleted` (keyvault stable/2024-11-01 `keyvault.json`, and TypeSpec `DeletedVault.tsp`
  `purgeDeleted is ArmResourceActionAsyncBase<..., ArmAcceptedLroResponse<LroHeaders = ArmLroLocationHeader
  & RetryAfterHeader>>`): 200 "The vault is purged", 202 "Vault is being purged".

The clients poll with azure-core's `LocationPolling` (`azure/core/polling/base_polling.py`): 202 is
"InProgress", anything else 2xx is done, and `Retry-After` sets the wait (`_extract_delay`).

Where localml differs: the Location URL is localml's own choice, in the usual ARM shape
`/subscriptions/{sub}/providers/{provider}/locations/{location}/operationResults/{id}` (Azure's URLs are
opaque to the client, which polls them as given), and an operation finishes after a fixed number of polls
(`Plane.lro_polls`) instead of after Azure's own work. `Retry-After` is 1 s, the smallest whole value
(azure-core treats 0 as absent and falls back to its 30 s default).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from doubles.localml.http import Request, Response, Router, error

if TYPE_CHECKING:
    from doubles.localml.plane import Plane

POLL = "/subscriptions/{sub}/providers/{provider}/locations/{location}/operationResults/{op}"
RETRY_AFTER_S = "1"


@dataclass
class Operation:
    """One running operation: `finish` runs once, on the poll that finds it done."""

    polls_left: int
    finish: Callable[[], None]
    done: bool = False


def register(router: Router, cp: Plane) -> None:
    router.add("GET", POLL, lambda r: _poll(cp, r), "long-running operation status (Location)")


def start(cp: Plane, sub: str, provider: str, location: str, finish: Callable[[], None]) -> Response:
    """Register an operation and answer the 202 that starts it."""
    op_id = str(uuid.uuid4())
    with cp.store.lock:
        cp.store.operations[op_id] = Operation(cp.lro_polls, finish)
    url = f"{cp.base_url}/subscriptions/{sub}/providers/{provider}/locations/{location}/operationResults/"
    url += op_id
    return Response(202, None, {"Location": url, "Retry-After": RETRY_AFTER_S})


def _poll(cp: Plane, req: Request) -> Response:
    with cp.store.lock:
        op = cp.store.operations.get(req.params["op"])
        if op is None:
            return error(404, "ResourceNotFound", f"operation {req.params['op']} not found")
        if op.polls_left > 0:
            op.polls_left -= 1
            return Response(202, None, {"Location": f"{cp.base_url}{req.path}", "Retry-After": RETRY_AFTER_S})
        if not op.done:
            op.done = True
            op.finish()
    return Response(200, None)
