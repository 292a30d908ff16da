"""Compute calls the check-deploy e2e tests make in a subprocess (the environment points the SDKs at localml).

    deploy_computes.py OUTPUTS put BODIES.json             # PUT each {name: ARM body}, as azure-native does
    deploy_computes.py OUTPUTS update NAME max_instances=N  # what `az ml compute update` does
    deploy_computes.py OUTPUTS delete NAME Delete|Detach    # azure-ai-ml compute.begin_delete
    deploy_computes.py OUTPUTS create NAME SIZE             # azure-ai-ml AmlCompute create

Each prints one JSON object. The MLClient is the jobs package's own (`jobs.azure_client.ml_client`). `put`
sends the ARM body unchanged through azure-ai-ml's generated REST operation (`Compute_CreateOrUpdate`
accepts a JSON body), the request azure-native makes for a `machinelearningservices:Compute`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path


def main(argv: list[str]) -> int:
    from jobs import outputs
    from jobs.azure_client import ml_client

    outs = outputs.load(None, argv[0])
    ml = ml_client(outs)
    cmd, rest = argv[1], argv[2:]
    if cmd == "put":
        bodies = json.loads(Path(rest[0]).read_text())
        answers = {}
        for name, body in bodies.items():
            poller = ml.compute._operation.begin_create_or_update(
                outs.resource_group, outs.workspace_name, name, body
            )
            answers[name] = poller.result()
        # The generated REST models are Mappings, nested too.
        print(json.dumps(answers, default=lambda o: dict(o) if isinstance(o, Mapping) else str(o)))
        return 0
    if cmd == "update":
        compute = ml.compute.get(rest[0])
        for pair in rest[1:]:
            key, value = pair.split("=", 1)
            setattr(compute, key, int(value))
        updated = ml.compute.begin_update(compute).result()
        print(json.dumps({"name": updated.name, "max_instances": updated.max_instances}))
        return 0
    if cmd == "delete":
        ml.compute.begin_delete(rest[0], action=rest[1]).result()
        print(json.dumps({"deleted": rest[0], "action": rest[1]}))
        return 0
    if cmd == "create":
        from azure.ai.ml.entities import AmlCompute

        made = ml.compute.begin_create_or_update(
            AmlCompute(name=rest[0], size=rest[1], min_instances=0, max_instances=1)
        ).result()
        print(json.dumps({"name": made.name, "size": made.size}))
        return 0
    raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
