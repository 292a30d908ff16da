"""What `pulumi up`, the portal and the CLI do to a workspace's computes, replayed against the local control
plane (run in a subprocess whose environment points the SDKs at localml): `make smoke` deploys the dev
stack's clusters with it before check-deploy, and the check-deploy end-to-end tests stage live clusters.

    python -m doubles.localml.deploy OUTPUTS put BODIES.json             # PUT each {name: ARM body} (azure-native)
    python -m doubles.localml.deploy OUTPUTS update NAME max_instances=N  # what `az ml compute update` does
    python -m doubles.localml.deploy OUTPUTS delete NAME Delete|Detach    # azure-ai-ml compute.begin_delete
    python -m doubles.localml.deploy OUTPUTS create NAME SIZE             # azure-ai-ml AmlCompute create

`declared_bodies(run)` gives the ARM body of every AmlCompute the stack program declares (its inputs as
`preflight.program.run_program` records them, the request body azure-native sends). Each command prints one
JSON object. The MLClient is the jobs package's own (`jobs.azure_client.ml_client`). `put`
sends the ARM body unchanged through azure-ai-ml's generated REST operation (`Compute_CreateOrUpdate`
accepts a JSON body), the request azure-native makes for a `machinelearningservices:Compute`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

ARM_BODY_KEYS = ("location", "identity", "tags", "properties")  # the Compute PUT body (ComputeResource)


def declared_bodies(result: Any) -> dict[str, dict[str, Any]]:
    """{compute name: ARM body} of every AmlCompute a run of the stack program declares
    (`preflight.program.run_program`'s result)."""
    from preflight.program import plain_numbers

    bodies = {}
    for r in result.of_type("azure-native:machinelearningservices:Compute"):
        inputs = r.program_inputs
        bodies[inputs["computeName"]] = {k: inputs[k] for k in ARM_BODY_KEYS if k in inputs}
    # Every number crossed the engine's wire as a double; azure-native sends the REST schema's integer-typed
    # properties (ScaleSettings.maxNodeCount: int32) as JSON integers.
    return plain_numbers(bodies)


def deploy_stack(stack: str, env: dict[str, str], work: Path, say: Callable[[str], None]) -> Path:
    """What `pulumi up` of `stack` leaves behind, on the control plane `env` points at: its outputs written
    as `<work>/<stack>.json` (`python -m preflight STACK --outputs-file F`: the program under Pulumi mocks)
    and each AmlCompute it declares PUT (`put` below). Returns the outputs file; raises RuntimeError naming
    the step that failed. Used by `make smoke` (dev) and `python -m doubles.localml serve --deploy STACK`."""
    from preflight.program import run_program

    work.mkdir(parents=True, exist_ok=True)
    outputs_file, bodies_file = work / f"{stack}.json", work / f"{stack}-computes.json"

    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        say("$ python " + " ".join(argv))
        return subprocess.run(
            [sys.executable, *argv], cwd=ROOT, env=env, timeout=300, stdout=subprocess.PIPE, text=True
        )

    r = run(["-m", "preflight", stack, "--outputs-file", str(outputs_file)])
    if r.returncode != 0 or not outputs_file.exists():
        raise RuntimeError(
            f"could not write the {stack} stack outputs (python -m preflight exit {r.returncode})"
        )
    bodies_file.write_text(json.dumps(declared_bodies(run_program(stack))))
    say(f"deploying the {stack} stack's clusters as `pulumi up` would (one PUT per declared AmlCompute)")
    r = run(["-m", "doubles.localml.deploy", str(outputs_file), "put", str(bodies_file)])
    if r.returncode != 0:
        raise RuntimeError(
            f"could not create the {stack} clusters (python -m doubles.localml.deploy exit {r.returncode})"
        )
    return outputs_file


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
