"""azure-ai-ml calls the e2e tests make in a subprocess (the environment points the SDK at localml).

    python tests/e2e/sdk_calls.py OUTPUTS_FILE cancel-when JOB PATH   # wait for PATH, then begin_cancel
    python tests/e2e/sdk_calls.py OUTPUTS_FILE status JOB
    python tests/e2e/sdk_calls.py OUTPUTS_FILE unimplemented           # a call localml does not serve
    python tests/e2e/sdk_calls.py OUTPUTS_FILE mpi CODE_DIR            # a job localml cannot run

Each prints one JSON object. The MLClient is the jobs package's own (`jobs.azure_client.ml_client`).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

TERMINAL = {"Completed", "Failed", "Canceled"}


def _report(exc: Exception) -> None:
    """The error as azure-ai-ml raised it: type, HTTP status, message."""
    print(json.dumps({"type": type(exc).__name__, "status_code": getattr(exc, "status_code", None),
                      "message": str(exc)}))


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

        job = command(code=rest[0], command="python -c pass", environment="azureml:localml-e2e:1",
                      instance_type="Standard_NC80adis_H100_v5", instance_count=1,
                      distribution=MpiDistribution(process_count_per_instance=2))
        try:
            ml.jobs.create_or_update(job)
        except HttpResponseError as exc:
            _report(exc)
            return 0
        print(json.dumps({"type": None}))
        return 1
    raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
