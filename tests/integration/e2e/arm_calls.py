"""ARM calls the teardown e2e tests make in a subprocess (the environment points the SDKs at localml): reads
of the stack's workspace and key vault, and requests azure-native sends for them (a workspace PUT with the
body it sent on `pulumi up`, kept from localml's store; the deletes of `pulumi destroy`).

    arm_calls.py OUTPUTS put-vault BODY.json       # PUT the vault body (Key Vault API 2024-11-01)
    arm_calls.py OUTPUTS put-workspace BODY.json   # PUT the workspace body (Azure ML API 2025-12-01)
    arm_calls.py OUTPUTS delete-workspace          # DELETE without forceToPurge, then poll
    arm_calls.py OUTPUTS delete-vault              # DELETE
    arm_calls.py OUTPUTS get-workspace | get-computes | get-vault | get-deleted-vault

The API versions are azure-native 3.x's ("Uses Azure REST API version ...", the installed resource classes);
its `machinelearningservices.Workspace` has no input for `forceToPurge`, so `pulumi destroy` soft-deletes.
azure-native's delete accepts 200/202/204, polls a long-running one and treats a 404 as already deleted
(pulumi-azure-native `provider/pkg/azure/client_azcore.go`, `Delete`). Each call prints one JSON object,
`{"status": N, "body": ...}`; an error answer is printed, not raised. The pipeline is the jobs package's
(`jobs.azure_client.arm_client`), so the same credential and cloud as `python -m jobs teardown`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

API = {"vault": "2024-11-01", "workspace": "2025-12-01"}


def main(argv: list[str]) -> int:
    from azure.core.polling import LROPoller
    from azure.core.rest import HttpRequest
    from azure.mgmt.core.polling.arm_polling import ARMPolling

    from jobs import outputs
    from jobs.azure_client import arm_client, ml_client

    outs = outputs.load(None, argv[0])
    assert outs.key_vault is not None
    arm = arm_client(ml_client(outs))
    cmd, rest = argv[1], argv[2:]
    rg = f"/subscriptions/{outs.subscription_id}/resourceGroups/{outs.resource_group}/providers"
    paths = {
        "workspace": f"{rg}/Microsoft.MachineLearningServices/workspaces/{outs.workspace_name}",
        "computes": f"{rg}/Microsoft.MachineLearningServices/workspaces/{outs.workspace_name}/computes",
        "vault": f"{rg}/Microsoft.KeyVault/vaults/{outs.key_vault.name}",
        "deleted-vault": f"/subscriptions/{outs.subscription_id}/providers/Microsoft.KeyVault/locations/"
        f"{outs.workspace_region}/deletedVaults/{outs.key_vault.name}",
    }
    verb, what = cmd.split("-", 1)
    api = API["vault" if "vault" in what else "workspace"]
    body = json.loads(Path(rest[0]).read_text()) if verb == "put" else None
    request = HttpRequest(verb.upper(), arm.format_url(paths[what]), params={"api-version": api}, json=body)
    answer = arm.send_request(request, _return_pipeline_response=True)
    status = answer.http_response.status_code
    if verb == "delete" and status == 202:
        LROPoller(arm, answer, lambda _: None, ARMPolling(10)).result()
    print(json.dumps({"status": status, "body": _body(answer.http_response)}))
    return 0


def _body(response: Any) -> Any:
    text = response.text()
    return json.loads(text) if text else None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
