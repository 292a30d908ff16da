"""The stack's clusters are deleted by a before-delete resource hook, with `underlyingResourceAction=Delete`.

Why: azure-native 3.x deletes every resource with a plain DELETE `<id>?api-version=<version>` and no other
query parameter (pulumi/pulumi-azure-native provider/pkg/provider/provider.go `Delete`: `k.azureClient.Delete(
ctx, id, apiVersion, res.DeleteAsyncStyle, nil)`; provider/pkg/azure/client_azcore.go `Delete`; no custom
resource for machinelearningservices computes in provider/pkg/resources/customresources). Compute_Delete of
2025-12-01 takes `underlyingResourceAction` ("Delete the underlying compute if 'Delete', or detach the
underlying compute from workspace if 'Detach'"; required: azure-rest-api-specs specification/
machinelearningservices/resource-manager/Microsoft.MachineLearningServices/stable/2025-12-01
`UnderlyingResourceActionParameter`, examples/Compute/delete.json; azure-ai-ml's generated
`build_compute_delete_request` makes it a required argument). What the live service answers to a DELETE
without it is unverified (a 400, or a default that may detach: a cluster re-created after a detach came back
with its old VM size, Azure/azure-rest-api-specs#18889; docs/azure-behaviour.md "Cluster deletes").

How: the Compute is declared `retain_on_delete=True` with this hook bound `before_delete`. The engine runs the
hook first and then, for a retained resource, does not call the provider's Delete at all (pulumi/pulumi
pkg/resource/deploy/step.go `DeleteStep.Apply`: `RunHooks(... BeforeDelete ...)`, then `else if
s.old.RetainOnDelete { ... no-op }`), so the compute is deleted once, by the hook, with the parameter, on a
replace (delete-before-replace: the name is fixed), on a cluster removed from the config and on `pulumi
destroy`. A hook that fails fails the step (step.go: "before hook ... failed"), so nothing is dropped from the
state while it still exists in Azure.

The hook runs in the program: `pulumi destroy` must be run with `--run-program` (the SDK's
`ResourceHookBinding`: "delete hooks require that destroy operations are run with `--run-program`");
without it the engine stops at the cluster with `hook "azml-gpu-compute-delete" was not registered` (pulumi
deployment.go `RunHooks`) and deletes nothing of it. It does not run in previews (`on_dry_run` False).

The ARM endpoint: the cloud `ARM_CLOUD_METADATA_URL` names (its `resourceManager` and first audience; the
local Azure ML control plane `doubles/localml` sets it for every SDK, and the stand-in provider reads the same
variable: preflight/provider/arm.py), else Azure public cloud (`https://management.azure.com`, audience
`https://management.core.windows.net/`: azure-sdk-for-go azcore/cloud `AzurePublic`, which azure-native uses
by default, provider/pkg/azure/cloud/cloud.go). Credentials: `DefaultAzureCredential` (the deploy workflow's
OIDC login, a managed identity, or `az login`), as the provider's.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.request
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

import pulumi

HOOK_NAME = "azml-gpu-compute-delete"
METADATA_ENV = "ARM_CLOUD_METADATA_URL"
PUBLIC_CLOUD = ("https://management.azure.com", "https://management.core.windows.net/")
#: The API version of the Compute resource azure-native 3.x sends (the SDK's `azureApiVersion` output).
DEFAULT_API_VERSION = "2025-12-01"
#: The query the hook adds to the DELETE (Compute_Delete's `underlyingResourceAction`).
DELETE_QUERY = {"underlyingResourceAction": "Delete"}
TERMINAL = {"succeeded", "failed", "canceled"}
#: How long the hook waits for the compute to be gone (azure-native's own default for an operation is two
#: hours, provider.go `azureContext`; a cluster's nodes are released in minutes).
TIMEOUT_SECONDS = 3600.0


class ComputeDeleteError(RuntimeError):
    """The compute could not be deleted: ARM's answer, as azure-native shows one."""


def arm_endpoint(environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(resource manager URL, token audience) of the cloud to delete in (module docstring)."""
    env = os.environ if environ is None else environ
    url = env.get(METADATA_ENV)
    if not url:
        return PUBLIC_CLOUD
    with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 (the configured cloud's metadata)
        cloud = json.load(answer)
    cloud = cloud[0] if isinstance(cloud, list) else cloud
    return str(cloud["resourceManager"]).rstrip("/"), str(cloud["authentication"]["audiences"][0])


def _error(res: Any) -> ComputeDeleteError:
    try:
        payload = res.json()
    except ValueError:
        payload = None
    err = payload.get("error") if isinstance(payload, Mapping) else None
    if isinstance(err, Mapping):
        return ComputeDeleteError(
            f'Status={res.status_code} Code="{err.get("code") or ""}" Message="{err.get("message") or ""}"'
        )
    return ComputeDeleteError(f'Status={res.status_code} Message="{res.text()}"')


class ComputeDeleter:
    """DELETE `<compute id>?api-version=<v>&underlyingResourceAction=Delete`, the long-running operation
    followed to its end (`Azure-AsyncOperation`, else a 202's `Location`, as ARM's async pattern and
    azure-core's poller do), then GETs until ARM answers 404."""

    def __init__(
        self, client: Any, endpoint: str, sleep: Any = time.sleep, timeout: float = TIMEOUT_SECONDS
    ) -> None:
        self.client, self.endpoint = client, endpoint.rstrip("/")
        self.sleep, self.timeout = sleep, timeout

    @classmethod
    def from_env(cls) -> ComputeDeleter:
        from azure.core import PipelineClient
        from azure.core.pipeline.policies import BearerTokenCredentialPolicy, RetryPolicy
        from azure.identity import DefaultAzureCredential

        endpoint, audience = arm_endpoint()
        client = PipelineClient(
            endpoint,
            policies=[
                RetryPolicy(retry_total=3),
                BearerTokenCredentialPolicy(DefaultAzureCredential(), audience.rstrip("/") + "/.default"),
            ],
        )
        return cls(client, endpoint)

    def _send(self, method: str, url: str, params: Mapping[str, str] | None = None) -> Any:
        from azure.core.rest import HttpRequest

        return self.client.send_request(HttpRequest(method, url, params=dict(params or {})))

    def delete(self, compute_id: str, api_version: str) -> None:
        deadline = time.monotonic() + self.timeout
        url = self.endpoint + compute_id
        res = self._send("DELETE", url, {"api-version": api_version, **DELETE_QUERY})
        if res.status_code not in (200, 202, 204, 404):
            raise _error(res)
        poll = res.headers.get("Azure-AsyncOperation") or (
            res.status_code == 202 and res.headers.get("Location")
        )
        while poll:
            if time.monotonic() > deadline:
                raise ComputeDeleteError(f"{compute_id}: not deleted after {self.timeout:.0f} s")
            state = self._send("GET", poll)
            if state.status_code >= 400:
                raise _error(state)
            status = "InProgress" if state.status_code == 202 else "Succeeded"
            if state.status_code != 202 and state.text():
                status = str((state.json() or {}).get("status") or "Succeeded")
            if status.lower() in TERMINAL:
                if status.lower() != "succeeded":
                    raise ComputeDeleteError(f"DELETE {compute_id}: the operation ended {status}")
                break
            self.sleep(float(state.headers.get("Retry-After", "5")))
        while True:
            found = self._send("GET", url, {"api-version": api_version})
            if found.status_code == 404:
                return
            if found.status_code != 200:
                raise _error(found)
            if time.monotonic() > deadline:
                raise ComputeDeleteError(f"{compute_id}: still there {self.timeout:.0f} s after its DELETE")
            self.sleep(float(found.headers.get("Retry-After", "5")))


def api_version(outputs: Mapping[str, Any] | None) -> str:
    """The API version the compute was made with (its `azureApiVersion` output), else azure-native's."""
    given = (outputs or {}).get("azureApiVersion")
    return given if isinstance(given, str) and given else DEFAULT_API_VERSION


async def delete_compute(args: pulumi.ResourceHookArgs) -> None:
    """The hook: delete the compute the engine is about to delete, and wait until it is gone."""
    if not args.id:
        return  # never created (a failed create leaves no id): nothing in Azure
    version = api_version(args.old_outputs)
    await asyncio.to_thread(lambda: ComputeDeleter.from_env().delete(str(args.id), version))


_HOOK: ContextVar[pulumi.ResourceHook | None] = ContextVar("azml_gpu_compute_delete_hook", default=None)


def compute_delete_hook() -> pulumi.ResourceHook:
    """The hook, registered once per program run (each run is its own context; a name registered twice in
    one run is refused by the engine, pulumi resource_hooks.go `RegisterResourceHook`)."""
    hook = _HOOK.get()
    if hook is None:
        hook = pulumi.ResourceHook(HOOK_NAME, delete_compute)
        _HOOK.set(hook)
    return hook
