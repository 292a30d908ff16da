"""azure-ai-ml calls the e2e tests make in a subprocess (the environment points the SDK at localml).

    python sdk_calls.py OUTPUTS_FILE cancel-when JOB PATH     # wait for PATH, then begin_cancel
    python sdk_calls.py OUTPUTS_FILE status JOB
    python sdk_calls.py OUTPUTS_FILE unimplemented             # a call localml does not serve
    python sdk_calls.py OUTPUTS_FILE mpi CODE_DIR              # a job localml cannot run
    python sdk_calls.py OUTPUTS_FILE spec-rejected CODE_DIR    # bodies the Azure REST spec rejects
    python sdk_calls.py OUTPUTS_FILE compute-update NAME max_instances=N   # what `az ml compute update` does
    python sdk_calls.py OUTPUTS_FILE compute-delete NAME Delete|Detach     # azure-ai-ml compute.begin_delete
    python sdk_calls.py OUTPUTS_FILE compute-create NAME SIZE              # azure-ai-ml AmlCompute create

Each prints one JSON object. The MLClient is the jobs package's own (`jobs.azure_client.ml_client`). The
compute calls are what someone does to a deployed stack's clusters outside Pulumi (the portal, the Azure CLI,
a script): `compute.get` then `begin_update` (a PUT of the whole resource, `_compute_operations.py`),
`begin_delete(name, action=...)` (`underlyingResourceAction`), `begin_create_or_update(AmlCompute(...))`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

TERMINAL = {"Completed", "Failed", "Canceled"}


def _report(exc: Exception) -> None:
    """The error as azure-ai-ml raised it: type, HTTP status, message."""
    print(
        json.dumps(
            {
                "type": type(exc).__name__,
                "status_code": getattr(exc, "status_code", None),
                "message": str(exc),
            }
        )
    )


def main(argv: list[str]) -> int:
    from azure.core.exceptions import HttpResponseError

    from jobs import outputs
    from jobs.azure_client import ml_client

    ml = ml_client(outputs.load(None, argv[0]))
    cmd, rest = argv[1], argv[2:]
    if cmd == "status":
        print(json.dumps({"status": ml.jobs.get(rest[0]).status}))
        return 0
    if cmd == "cancel-when":
        name, trigger = rest[0], Path(rest[1])
        deadline = time.monotonic() + 240
        while not trigger.exists():
            if time.monotonic() > deadline:
                print(json.dumps({"error": f"{trigger} never appeared"}))
                return 1
            time.sleep(0.05)
        before = ml.jobs.get(name).status
        ml.jobs.begin_cancel(name).result()
        status = ml.jobs.get(name).status
        while status not in TERMINAL and time.monotonic() < deadline:
            time.sleep(0.5)
            status = ml.jobs.get(name).status
        print(json.dumps({"status_at_cancel": before, "status": status}))
        return 0
    if cmd == "unimplemented":
        try:
            ml.environments.get("localml-e2e-env", version="1")
        except HttpResponseError as exc:
            _report(exc)
            return 0
        print(json.dumps({"type": None}))
        return 1
    if cmd == "mpi":
        from azure.ai.ml import MpiDistribution, command

        job = command(
            code=rest[0],
            command="python -c pass",
            environment="azureml:localml-e2e:1",
            instance_type="Standard_NC80adis_H100_v5",
            instance_count=1,
            distribution=MpiDistribution(process_count_per_instance=2),
        )
        try:
            ml.jobs.create_or_update(job)
        except HttpResponseError as exc:
            _report(exc)
            return 0
        print(json.dumps({"type": None}))
        return 1
    if cmd == "compute-update":
        compute = ml.compute.get(rest[0])
        for pair in rest[1:]:
            key, value = pair.split("=", 1)
            setattr(compute, key, int(value))
        updated = ml.compute.begin_update(compute).result()
        print(json.dumps({"name": updated.name, "max_instances": updated.max_instances}))
        return 0
    if cmd == "compute-delete":
        ml.compute.begin_delete(rest[0], action=rest[1]).result()
        print(json.dumps({"deleted": rest[0], "action": rest[1]}))
        return 0
    if cmd == "compute-create":
        from azure.ai.ml.entities import AmlCompute

        made = ml.compute.begin_create_or_update(
            AmlCompute(name=rest[0], size=rest[1], min_instances=0, max_instances=1)
        ).result()
        print(json.dumps({"name": made.name, "size": made.size}))
        return 0
    if cmd == "spec-rejected":
        print(json.dumps(_spec_rejected(ml, rest[0])))
        return 0
    raise SystemExit(f"unknown command {cmd}")


def _compute(scale: dict) -> dict:
    aml = {"vmSize": "Standard_NC24ads_A100_v4", "scaleSettings": scale}
    return {"location": "eastus", "properties": {"computeType": "AmlCompute", "properties": aml}}


def _spec_rejected(ml: object, code_dir: str) -> dict:
    """Bodies the published spec rejects, each answered 400: a command job through azure-ai-ml itself
    (`jobs.create_or_update`), and raw PUTs on azure-ai-ml's ARM pipeline at the api-versions the SDK uses
    (jobs 2025-01-01-preview, code versions 2023-04-01; computes at azure-native's 2025-12-01), each error
    parsed as azure-mgmt-core parses ARM errors (`ARMErrorFormat`)."""
    from azure.ai.ml import command
    from azure.core.exceptions import HttpResponseError
    from azure.core.rest import HttpRequest
    from azure.mgmt.core.exceptions import ARMErrorFormat

    from jobs.azure_client import arm_client

    out: dict = {}
    job = command(
        code=code_dir,
        command="!!",
        environment="azureml:localml-e2e:1",
        instance_type="Standard_NC80adis_H100_v5",
        instance_count=1,
    )
    try:
        ml.jobs.create_or_update(job)  # type: ignore[attr-defined]
        out["sdk-job"] = {"type": None}
    except HttpResponseError as exc:
        out["sdk-job"] = {"type": type(exc).__name__, "status_code": exc.status_code, "message": str(exc)}
    arm = arm_client(ml)  # type: ignore[arg-type]
    ws = (
        f"/subscriptions/{ml.subscription_id}/resourceGroups/{ml.resource_group_name}/providers/"  # type: ignore[attr-defined]
        f"Microsoft.MachineLearningServices/workspaces/{ml.workspace_name}"
    )  # type: ignore[attr-defined]
    env_id = f"{ws}/environments/localml-e2e/versions/1"
    puts = {
        "job-missing-environment": (
            f"{ws}/jobs/e2e-spec-1",
            "2025-01-01-preview",
            {"properties": {"jobType": "Command", "command": "python a.py"}},
        ),
        "job-unknown-type": (
            f"{ws}/jobs/e2e-spec-2",
            "2025-01-01-preview",
            {"properties": {"jobType": "Batch", "command": "x", "environmentId": env_id}},
        ),
        "code-without-properties": (f"{ws}/codes/e2e-spec/versions/1", "2023-04-01", {"name": "1"}),
        "compute-without-max-nodes": (f"{ws}/computes/e2e-spec", "2025-12-01", _compute({"minNodeCount": 0})),
        "compute-name": (f"{ws}/computes/cpu-cluster-1", "2025-12-01", _compute({"maxNodeCount": 1})),
    }
    for key, (path, api, body) in puts.items():
        request = HttpRequest("PUT", arm.format_url(path), params={"api-version": api}, json=body)
        response = arm.send_request(request)
        entry: dict = {"status_code": response.status_code}
        if response.status_code >= 400:
            exc = HttpResponseError(response=response, error_format=ARMErrorFormat)
            entry |= {
                "code": exc.error.code if exc.error else None,
                "message": str(exc),
                "targets": [d.target for d in (exc.error.details if exc.error else [])],
            }
        out[key] = entry
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
