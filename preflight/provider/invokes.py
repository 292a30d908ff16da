"""The provider functions (invokes) the stacks call, answered offline as azure-native answers them from ARM.

- `azure-native:authorization:getClientConfig`: the subscription from the provider config
  (`azure-native:subscriptionId`), a fixed fake tenant, client and object id;
- `azure-native:resources:getResourceGroup`: an existing group (GET Microsoft.Resources/resourceGroups);
- `azure-native:managedidentity:getUserAssignedIdentity`: an existing identity, with stable fake principal and
  client ids derived from its id;
- `azure-native:keyvault:getVault`: from `existing`, the resources outside the stack the gate was told about
  (`python -m preflight --existing F`); a vault not there is ARM's 404 (`model.get_vault`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from preflight.provider import model
from preflight.provider.armids import group_id
from preflight.provider.model import FAKE_TENANT_ID

FAKE_CLIENT_ID = "22222222-2222-2222-2222-222222222222"
FAKE_OBJECT_ID = "33333333-3333-3333-3333-333333333333"


class UnknownInvoke(LookupError):
    """A function the offline provider does not answer."""


def answer(
    token: str, args: Mapping[str, Any], subscription_id: str, existing: Mapping[str, dict[str, Any]]
) -> dict[str, Any]:
    """The function's result; `model.ResourceNotFound` for ARM's 404, `UnknownInvoke` for another token."""
    if token == "azure-native:authorization:getClientConfig":
        return {
            "subscriptionId": subscription_id,
            "tenantId": FAKE_TENANT_ID,
            "clientId": FAKE_CLIENT_ID,
            "objectId": FAKE_OBJECT_ID,
        }
    if token == "azure-native:resources:getResourceGroup":
        name = args["resourceGroupName"]
        return {
            "id": group_id(subscription_id, name),
            "name": name,
            "type": "Microsoft.Resources/resourceGroups",
            "properties": {"provisioningState": "Succeeded"},
        }
    if token == "azure-native:managedidentity:getUserAssignedIdentity":
        name, rg = args["resourceName"], args["resourceGroupName"]
        arm_type = "Microsoft.ManagedIdentity/userAssignedIdentities"
        arm_id = f"{group_id(subscription_id, rg)}/providers/{arm_type}/{name}"
        return {
            "id": arm_id,
            "name": name,
            "type": arm_type,
            "principalId": str(uuid.uuid5(uuid.NAMESPACE_URL, arm_id.lower())),
            "clientId": str(uuid.uuid5(uuid.NAMESPACE_URL, "client:" + arm_id.lower())),
            "tenantId": FAKE_TENANT_ID,
        }
    if token == model.GET_VAULT:
        return model.get_vault(subscription_id, args, existing)
    raise UnknownInvoke(f"Invoke type {token} not found (the offline azure-native provider answers none)")


class ExistingFileError(ValueError):
    """An unreadable `--existing` file: the message names the file and the fix."""


def read_existing(path: Path) -> dict[str, dict[str, Any]]:
    """`python -m preflight --existing FILE`: ARM GET bodies (one object or a list, as `az keyvault show --ids
    ID` prints one: id, name, type, location, properties) of resources outside the stack, as records
    ({"id", "type", "inputs", "outputs"}) by lower-case ARM id."""
    fix = "give the JSON `az keyvault show --ids <vault id>` prints (one object, or a list of them)"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ExistingFileError(f"--existing: cannot read {path}: {e}; {fix}") from None
    except json.JSONDecodeError as e:
        raise ExistingFileError(f"--existing: {path} is not JSON ({e}); {fix}") from None
    bodies = document if isinstance(document, list) else [document]
    records: dict[str, dict[str, Any]] = {}
    for n, body in enumerate(bodies):
        arm_id = body.get("id") if isinstance(body, dict) else None
        if not isinstance(arm_id, str) or not arm_id.startswith("/subscriptions/"):
            raise ExistingFileError(
                f"--existing: {path}: item {n} has no ARM id (`id: /subscriptions/...`); {fix}"
            )
        records[arm_id.lower()] = {"id": arm_id, "type": body.get("type", ""), "inputs": {}, "outputs": body}
    return records
