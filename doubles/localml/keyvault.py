"""Key vaults (management plane): PUT, GET, DELETE (always a soft delete), the deleted vault's GET and its
purge.

Paths, parameters and status codes from the Key Vault REST spec, Azure/azure-rest-api-specs
specification/keyvault/resource-manager/Microsoft.KeyVault/KeyVault/stable/2024-11-01/keyvault.json (SPEC;
2024-11-01 is the version azure-native 3.x's `keyvault.Vault` uses, "Uses Azure REST API version
2024-11-01"): `Vaults_CreateOrUpdate` (200/201), `Vaults_Get` (200), `Vaults_Delete` (200, 204 "No Content";
synchronous), `Vaults_GetDeleted` (`GET /subscriptions/{sub}/providers/Microsoft.KeyVault/locations/
{location}/deletedVaults/{vaultName}`, definition `DeletedVault`/`DeletedVaultProperties`: vaultId, location,
deletionDate, scheduledPurgeDate, tags, purgeProtectionEnabled) and `Vaults_PurgeDeleted`
(`POST .../deletedVaults/{vaultName}/purge`, long-running: 200 "The vault is purged", 202 "Vault is being
purged" with Location; doubles/localml/operations.py).

Soft delete (MicrosoftDocs/azure-docs `articles/key-vault/general/soft-delete-overview.md`): a deleted vault
stays recoverable for its retention period, 7 to 90 days ("Once set, the retention policy interval cannot be
changed"); "You cannot reuse the name of a key vault that has been soft-deleted until the retention period
has passed"; with purge protection on, "a vault or an object in the deleted state cannot be purged until the
retention period has passed". Soft delete can no longer be turned off, and purge protection, once on, stays
on (azure-native `keyvault.VaultPropertiesArgs` docstrings). What Azure answers:

- a PUT of a name that is soft-deleted in the subscription: 409 `ConflictError` "A vault with the same name
  already exists in deleted state. You need to either recover or purge existing key vault. Follow this link
  https://go.microsoft.com/fwlink/?linkid=2149745 for more information on soft delete." (azure-native's own
  error text in alan-turing-institute/data-safe-haven#2523: `Status=409 Code="ConflictError"`);
- a PUT of a name some other vault holds: `VaultAlreadyExists` (learn.microsoft.com/azure/key-vault/general/
  common-error-codes: "... the name is already in use. If you recently deleted a key vault with this name,
  it may still be in the soft deleted state");
- a purge of a purge-protected vault: `MethodNotAllowed` "Operation 'DeletedVaultPurge' is not allowed."
  (microsoft/AzureTRE#1446, `az keyvault purge`).

Vaults live in the session's one ARM store (`Store.resources`, by id); vault names are global, so a PUT
looks for the name among every vault of the store. A PUT is checked as every ARM PUT is (the REST spec of its
api-version, its resource group, locks: doubles/localml/resources.py).

Where localml differs (also docs/localml.md): no retention clock (a deleted vault stays for the session
unless purged); `createMode: recover` is refused with a 400 (not served); no access policies, network rules
or data plane; the 405 status of the purge refusal is inferred from its code (the reports show the code and
message only).
"""

from __future__ import annotations

import copy
import datetime as dt
from typing import TYPE_CHECKING, Any

from doubles.localml import operations, resources
from doubles.localml.http import Request, Response, Router, error
from doubles.localml.store import ArmResource
from doubles.localml.validation import check_resource_put, refused
from vmsizes.regions import normalize_region

if TYPE_CHECKING:
    from doubles.localml.plane import Plane

PROVIDER = "Microsoft.KeyVault"
TOKEN = "azure-native:keyvault:Vault"
VAULT = "/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.KeyVault/vaults/{vault}"
DELETED = "/subscriptions/{sub}/providers/Microsoft.KeyVault/locations/{location}/deletedVaults/{vault}"
IN_DELETED_STATE = (
    "A vault with the same name already exists in deleted state. You need to either recover or purge "
    "existing key vault. Follow this link https://go.microsoft.com/fwlink/?linkid=2149745 for more "
    "information on soft delete."
)
#: SPEC VaultProperties.softDeleteRetentionInDays "default": 90.
DEFAULT_RETENTION_DAYS = 90


def register(router: Router, cp: Plane) -> None:
    a = router.add
    a("PUT", VAULT, lambda r: _put(cp, r), "key vault PUT (create or update)")
    a("GET", VAULT, lambda r: _get(cp, r), "key vault GET")
    a("DELETE", VAULT, lambda r: _delete(cp, r), "key vault DELETE (soft delete)")
    a("GET", DELETED, lambda r: _get_deleted(cp, r), "deleted key vault GET")
    a("POST", DELETED + "/purge", lambda r: _purge(cp, r), "deleted key vault purge (long-running)")
    resources.ON_DELETE[f"{PROVIDER}/vaults".lower()] = _soft_delete


def _norm(location: str) -> str:
    """`East US` and `eastus` are the same ARM location (vmsizes.regions: the Azure SDKs' rule)."""
    return normalize_region(location)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _not_found(req: Request) -> Response:
    return error(
        404,
        "ResourceNotFound",
        f"The Resource '{PROVIDER}/vaults/{req.params['vault']}' under resource group "
        f"'{req.params['rg']}' was not found.",
    )


def _check(body: Any) -> str | None:
    if not isinstance(body, dict) or not body.get("location"):
        return "key vault PUT needs a JSON body with `location` (SPEC VaultCreateOrUpdateParameters)"
    props = body.get("properties")
    if not isinstance(props, dict) or not props.get("tenantId") or not props.get("sku"):
        return "key vault PUT needs properties.tenantId and properties.sku (SPEC VaultProperties `required`)"
    if props.get("createMode") == "recover":
        return "localml does not serve createMode `recover` (see doubles/localml/README.md)"
    days = props.get("softDeleteRetentionInDays", DEFAULT_RETENTION_DAYS)
    if not isinstance(days, int) or not 7 <= days <= 90:
        return f"softDeleteRetentionInDays must be 7 to 90 (got {days!r}; soft-delete-overview.md)"
    return None


def _named(cp: Plane, name: str) -> ArmResource | None:
    """The vault holding `name`, wherever it is (vault names are global)."""
    found = [
        r for r in cp.store.arm_of_type(f"{PROVIDER}/vaults") if r.resource["name"].lower() == name.lower()
    ]
    return found[0] if found else None


def _put(cp: Plane, req: Request) -> Response:
    name = req.params["vault"].lower()
    try:
        body = req.json()
    except ValueError:
        return error(400, "BadRequest", "key vault PUT body is not JSON")
    api = req.query.get("api-version")
    params = {"resourceGroupName": req.params["rg"], "vaultName": req.params["vault"]}
    if problem := refused(
        req,
        "Vaults_CreateOrUpdate",
        check_resource_put(TOKEN, api, params, body),
        cp.validation,
        "BadRequest",
    ):
        return problem
    problem = _check(body)
    if problem:
        return error(400, "BadRequest", problem)
    vault_id = resources.resource_id(req)
    if problem := resources.missing_group(cp, vault_id) or resources.scope_locked(cp, vault_id, "write"):
        return problem
    with cp.store.lock:
        deleted = cp.store.deleted_vaults.get(name)
        if deleted is not None:
            if deleted["subscription"] == req.params["sub"]:
                return error(409, "ConflictError", IN_DELETED_STATE)
            return _taken(req)
        existing = _named(cp, name)
        if existing is not None and existing.id.lower() != vault_id.lower():
            return _taken(req)
        props = copy.deepcopy(body["properties"])
        props.pop("createMode", None)
        props.setdefault("enableSoftDelete", True)
        props.setdefault("softDeleteRetentionInDays", DEFAULT_RETENTION_DAYS)
        if existing is not None and existing.resource["properties"].get("enablePurgeProtection"):
            props["enablePurgeProtection"] = True  # once on, it stays on
        props["vaultUri"] = f"https://{req.params['vault']}.vault.localml.test/"
        props["provisioningState"] = "Succeeded"
        resource = {
            "id": vault_id,
            "name": req.params["vault"],
            "type": f"{PROVIDER}/vaults",
            "location": body["location"],
            "tags": body.get("tags") or {},
            "properties": props,
        }
        cp.store.arm_put(ArmResource(resource, copy.deepcopy(body), api))
    return Response(200 if existing else 201, resource)


def _taken(req: Request) -> Response:
    return error(
        409,
        "VaultAlreadyExists",
        f"The vault name '{req.params['vault']}' is already in use. Vault names are globally "
        "unique; if you recently deleted a key vault with this name, it may still be in the soft "
        "deleted state.",
    )


def _owned(cp: Plane, req: Request) -> ArmResource | None:
    return cp.store.arm(resources.resource_id(req))


def _get(cp: Plane, req: Request) -> Response:
    found = _owned(cp, req)
    if found is not None:
        return Response(200, found.resource)
    return resources.missing_group(cp, resources.resource_id(req)) or _not_found(req)


def _delete(cp: Plane, req: Request) -> Response:
    """SPEC Vaults_Delete: 200, or 204 when there is nothing to delete. Always a soft delete: the vault
    becomes a `DeletedVault` in its location until purged (`_soft_delete`)."""
    vault_id = resources.resource_id(req)
    if missing := resources.missing_group(cp, vault_id):
        return missing
    with cp.store.lock:
        if _owned(cp, req) is None:
            return Response(204, None)
        if problem := resources.scope_locked(cp, vault_id, "delete"):
            return problem
        resources.remove(cp, vault_id)
    return Response(200, None)


def _soft_delete(cp: Plane, found: ArmResource) -> None:
    """A deleted vault (its own DELETE, or its resource group's) holds its name as a `DeletedVault` in its
    location until purged."""
    resource = found.resource
    props = resource["properties"]
    deleted_at = _now()
    location = _norm(resource["location"])
    purge_at = deleted_at + dt.timedelta(days=props["softDeleteRetentionInDays"])
    sub = found.id.split("/")[2]
    cp.store.deleted_vaults[resource["name"].lower()] = {
        "subscription": sub,
        "resource": {
            "id": f"/subscriptions/{sub}/providers/{PROVIDER}/locations/{location}/deletedVaults/"
            + resource["name"],
            "name": resource["name"],
            "type": f"{PROVIDER}/deletedVaults",
            "properties": {
                "vaultId": found.id,
                "location": location,
                "deletionDate": _iso(deleted_at),
                "scheduledPurgeDate": _iso(purge_at),
                "tags": resource.get("tags") or {},
                "purgeProtectionEnabled": bool(props.get("enablePurgeProtection")),
            },
        },
    }


def _deleted(cp: Plane, req: Request) -> dict[str, Any] | None:
    found = cp.store.deleted_vaults.get(req.params["vault"].lower())
    if found is None or found["subscription"] != req.params["sub"]:
        return None
    if found["resource"]["properties"]["location"] != _norm(req.params["location"]):
        return None
    return found


def _deleted_not_found(req: Request) -> Response:
    return error(
        404,
        "ResourceNotFound",
        f"The deleted vault '{req.params['vault']}' was not found in location '{req.params['location']}'.",
    )


def _get_deleted(cp: Plane, req: Request) -> Response:
    with cp.store.lock:
        found = _deleted(cp, req)
    return Response(200, found["resource"]) if found is not None else _deleted_not_found(req)


def _purge(cp: Plane, req: Request) -> Response:
    name = req.params["vault"].lower()
    with cp.store.lock:
        found = _deleted(cp, req)
        if found is None:
            return _deleted_not_found(req)
        if found["resource"]["properties"]["purgeProtectionEnabled"]:
            return error(405, "MethodNotAllowed", "Operation 'DeletedVaultPurge' is not allowed.")

    def finish() -> None:
        with cp.store.lock:
            cp.store.deleted_vaults.pop(name, None)

    return operations.start(cp, req.params["sub"], PROVIDER, _norm(req.params["location"]), finish)
