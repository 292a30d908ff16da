"""Free a disposable stack's names before `pulumi destroy`, so `pulumi up` can create them again the same day.

A plain `pulumi destroy` soft-deletes the two resources whose names then stay taken (docs/azure-behaviour.md,
section 12): the Azure ML workspace for 14 days ("You can't reuse the name of a workspace that has been soft
deleted until the retention period has passed or the workspace is permanently deleted", MicrosoftDocs/
azure-ai-docs `articles/machine-learning/concept-soft-delete.md`) and the key vault for its soft-delete
retention, 7-90 days (MicrosoftDocs/azure-docs `articles/key-vault/general/soft-delete-overview.md`). This
module does, in order:

1. reads the key vault (`Vaults_Get`; if it is gone, `Vaults_GetDeleted`) and refuses a vault with purge
   protection, which cannot be purged before its retention ends, before anything is deleted;
2. permanently deletes the workspace with azure-ai-ml: `workspaces.begin_delete(name,
   delete_dependent_resources=False, permanently_delete=True)`, the call the soft-delete article gives; it
   GETs the workspace, DELETEs it with `forceToPurge=true` and polls (`_workspace_operations_base.py`);
3. deletes the key vault (`Vaults_Delete`, a soft delete) and purges it (`Vaults_PurgeDeleted`, `POST
   /subscriptions/{sub}/providers/Microsoft.KeyVault/locations/{location}/deletedVaults/{name}/purge`,
   long-running) over ARM (`jobs.azure_client.arm_client`), Key Vault REST API 2024-11-01
   (azure-rest-api-specs `specification/keyvault/resource-manager/Microsoft.KeyVault/KeyVault/stable/
   2024-11-01/keyvault.json`, the version azure-native's `keyvault.Vault` uses).

Each step is idempotent: a workspace that is already gone, a vault already deleted (then only purged) or
already purged is reported, not an error, so a teardown that stopped half-way can be run again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from jobs.errors import UsageError

if TYPE_CHECKING:
    from azure.ai.ml import MLClient
    from azure.mgmt.core import ARMPipelineClient

    from stackconfig.outputs import StackOutputs

KEYVAULT_API = "2024-11-01"
PROVIDER = "Microsoft.KeyVault"
#: Seconds between progress lines while Azure works; and ARMPolling's wait when Azure sends no Retry-After.
PROGRESS_EVERY_S = 5.0
POLL_DEFAULT_S = 10.0
WORKSPACE_RETENTION_DAYS = 14  # concept-soft-delete.md, "Soft delete retention period"
EXIT_OK, EXIT_USAGE, EXIT_AZURE = 0, 2, 4

Progress = Callable[[str], None]


@dataclass
class Step:
    """What one resource's step did. `state`: workspace `deleted_permanently` | `not_found`; key vault
    `deleted_and_purged` | `purged` (it was already soft-deleted) | `not_found`; `pending` before it ran."""

    resource: str
    name: str
    state: str = "pending"
    detail: str = ""
    elapsed_s: float = 0.0


@dataclass
class Report:
    stack: str
    workspace: Step
    key_vault: Step
    location: str
    next_steps: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "exit_code": EXIT_OK,
            "stack": self.stack,
            "workspace": asdict(self.workspace),
            "key_vault": asdict(self.key_vault) | {"location": self.location},
            "next_steps": self.next_steps,
        }


def refuse(outs: StackOutputs, origin: str, yes: bool) -> None:
    """Raise a UsageError (exit 2, nothing touched) for outputs teardown must not act on, or without --yes."""
    kv = outs.key_vault
    if kv is None:
        raise UsageError(
            f"{origin}: the outputs carry no key_vault (exported by an older version of the stack program); "
            "run `pulumi up` once to export it, then `pulumi stack output --json` again"
        )
    if kv.purge_protection:
        raise UsageError(
            f"{origin}: key vault {kv.name} has purge protection, so its name stays taken for "
            f"{kv.soft_delete_days} days after a delete whatever teardown does; teardown is for disposable "
            "stacks (key_vault_purge_protection: false, like dev). Destroy this stack with `pulumi destroy` "
            "only if a new workspace and vault name is acceptable (docs/azure-behaviour.md, section 12)"
        )
    if not yes:
        raise UsageError(
            f"teardown permanently deletes workspace {outs.workspace_name} (resource group "
            f"{outs.resource_group}; its runs, models and data assets cannot be recovered) and deletes and "
            f"purges key vault {kv.name} (its secrets cannot be recovered); pass --yes to do it"
        )


def _location(value: str) -> str:
    """ARM locations compare without spaces and case (`East US` = `eastus`: vmsizes.regions)."""
    from vmsizes.regions import normalize_region

    return normalize_region(value)


def _error(response: Any) -> Exception:
    from azure.core.exceptions import HttpResponseError
    from azure.mgmt.core.exceptions import ARMErrorFormat

    return HttpResponseError(response=response, error_format=ARMErrorFormat)


class KeyVaultArm:
    """The four Key Vault management calls teardown makes, on one ARM pipeline."""

    def __init__(self, client: ARMPipelineClient, subscription: str, resource_group: str, name: str) -> None:
        self.client, self.name = client, name
        self.sub, self.rg = subscription, resource_group

    def _send(self, method: str, path: str, pipeline_response: bool = False) -> Any:
        from azure.core.rest import HttpRequest

        request = HttpRequest(method, self.client.format_url(path), params={"api-version": KEYVAULT_API})
        return self.client.send_request(request, _return_pipeline_response=pipeline_response)

    @property
    def _vault_path(self) -> str:
        return f"/subscriptions/{self.sub}/resourceGroups/{self.rg}/providers/{PROVIDER}/vaults/{self.name}"

    def _deleted_path(self, location: str) -> str:
        where = f"/subscriptions/{self.sub}/providers/{PROVIDER}/locations/{location}"
        return f"{where}/deletedVaults/{self.name}"

    def get(self) -> dict[str, Any] | None:
        """`Vaults_Get`: the vault, or None when there is none in this resource group."""
        response = self._send("GET", self._vault_path)
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise _error(response)
        return response.json()

    def get_deleted(self, location: str) -> dict[str, Any] | None:
        """`Vaults_GetDeleted`: the soft-deleted vault, or None."""
        response = self._send("GET", self._deleted_path(location))
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise _error(response)
        return response.json()

    def delete(self) -> None:
        """`Vaults_Delete`: 200 deleted (soft), 204 nothing to delete."""
        response = self._send("DELETE", self._vault_path)
        if response.status_code not in (200, 204):
            raise _error(response)

    def begin_purge(self, location: str) -> Any:
        """`Vaults_PurgeDeleted`: an LROPoller over ARMPolling (200 purged at once, 202 + Location)."""
        from azure.core.polling import LROPoller
        from azure.mgmt.core.polling.arm_polling import ARMPolling

        initial = self._send("POST", self._deleted_path(location) + "/purge", pipeline_response=True)
        if initial.http_response.status_code not in (200, 202):
            raise _error(initial.http_response)
        return LROPoller(self.client, initial, lambda _: None, ARMPolling(POLL_DEFAULT_S))


def _wait(poller: Any, what: str, progress: Progress) -> float:
    """Wait for an LROPoller, one progress line every PROGRESS_EVERY_S; raise what the operation raised."""
    start = time.monotonic()
    while not poller.done():
        poller.wait(PROGRESS_EVERY_S)
        if not poller.done():
            progress(f"{what}: still running after {int(time.monotonic() - start)} s")
    poller.result()
    return time.monotonic() - start


def _refuse_protected(name: str, state: str) -> None:
    raise UsageError(
        f"key vault {name} ({state}) has purge protection on in Azure, though the stack outputs say it is "
        "off: once on, purge protection cannot be turned off (docs/azure-behaviour.md, section 8), so this "
        "vault's name cannot be freed before its retention ends; nothing was deleted. Give the stack a new "
        "vault name (another workspace name or resource group) or wait for the retention to pass"
    )


def run(
    outs: StackOutputs, stack: str, ml: MLClient, arm: ARMPipelineClient, progress: Progress, report: Report
) -> Report:
    """Steps 1-3 of the module docstring; fills `report` as it goes (so a failure shows what was done).
    Raises UsageError for a purge-protected live vault (nothing deleted) and Azure's errors as they come."""
    from azure.core.exceptions import ResourceNotFoundError

    name = report.key_vault.name  # from outs.key_vault, which refuse() checked
    vaults = KeyVaultArm(arm, outs.subscription_id, outs.resource_group, name)

    progress(f"reading key vault {name} in resource group {outs.resource_group}")
    live = vaults.get()
    deleted = None
    if live is not None:
        report.location = _location(live.get("location") or report.location)
        if (live.get("properties") or {}).get("enablePurgeProtection"):
            _refuse_protected(name, "live")
    else:
        deleted = vaults.get_deleted(report.location)
        if deleted is not None and (deleted.get("properties") or {}).get("purgeProtectionEnabled"):
            _refuse_protected(name, "soft-deleted")

    ws = report.workspace
    progress(f"deleting workspace {ws.name} permanently (forceToPurge=true); waiting for Azure")
    try:
        poller = ml.workspaces.begin_delete(
            ws.name, delete_dependent_resources=False, permanently_delete=True
        )
    except ResourceNotFoundError:
        ws.state = "not_found"
        ws.detail = (
            f"workspace {ws.name} was not found: already permanently deleted, or soft-deleted by an earlier "
            f"delete. A soft-deleted workspace keeps its name for up to {WORKSPACE_RETENTION_DAYS} days and "
            "cannot be read, so it cannot be purged from here: purge it in the Azure portal (Azure Machine "
            "Learning, Recently deleted, Delete permanently)"
        )
    else:
        ws.elapsed_s = round(_wait(poller, f"workspace {ws.name}", progress), 1)
        ws.state = "deleted_permanently"
        ws.detail = f"workspace {ws.name} permanently deleted; its name is free now"
    progress(ws.detail)

    kv = report.key_vault
    if live is not None:
        progress(f"deleting key vault {kv.name}")
        vaults.delete()
    if live is not None or deleted is not None:
        progress(f"purging key vault {kv.name} in {report.location}; waiting for Azure")
        kv.elapsed_s = round(_wait(vaults.begin_purge(report.location), f"key vault {kv.name}", progress), 1)
        kv.state = "deleted_and_purged" if live is not None else "purged"
        kv.detail = (
            f"key vault {kv.name} "
            + ("deleted and purged" if live is not None else "was soft-deleted already; purged")
            + "; its name is free now"
        )
    else:
        kv.state = "not_found"
        kv.detail = (
            f"key vault {kv.name} was found neither in resource group {outs.resource_group} nor "
            f"soft-deleted in {report.location}: its name is not held by this subscription"
        )
    progress(kv.detail)
    report.next_steps = next_steps(stack)
    return report


def next_steps(stack: str) -> list[str]:
    return [
        f"pulumi destroy --stack {stack} --run-program --refresh --yes: the refresh reads every resource "
        "first, finds the workspace, its clusters and the key vault gone and drops them from the state; the "
        "destroy deletes the rest (--run-program: the clusters' delete hook is in the program, and the CLI "
        "refuses a destroy without it)",
        f"pulumi up --stack {stack}: creates the workspace and the key vault again under the same names. "
        "The Log Analytics workspace the destroy soft-deleted comes back with its data, because the up "
        "creates it again with the same name, subscription, resource group and region",
    ]


def new_report(outs: StackOutputs, stack: str) -> Report:
    kv = outs.key_vault
    return Report(
        stack,
        Step("workspace", outs.workspace_name),
        Step("key_vault", kv.name if kv else ""),
        _location(outs.workspace_region),
    )


def render_text(report: Report) -> str:
    lines = [f"teardown: {report.workspace.detail}", f"teardown: {report.key_vault.detail}", "Next:"]
    lines += [f"  {i}. {step}" for i, step in enumerate(report.next_steps, 1)]
    return "\n".join(lines)
