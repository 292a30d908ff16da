"""Bring your own trainer: an Azure ML CLI v2 command job file (`--file JOB.yml`) plus the platform layer.

    python -m jobs render --file job.yml --outputs out.json --cluster gpu --run-name r1 --out built.yml
    python -m jobs run    --file job.yml --stack prod --cluster gpu --run-name r1

The file is read by azure-ai-ml's own loader (`azure.ai.ml.load_job`, the schema of
reference-yaml-job-command: code, command, environment, inputs, outputs, distribution, resources,
environment_variables, ...); only `type: command` jobs are taken. What the platform adds, as for its own
train job (jobs/builders.py `train`):
- the checkpoint output: `outputs.<--ckpt-output, default ckpt>` bound, rw_mount, to
  azureml://datastores/workspaceblobstore/paths/ckpt/<run name>/, so a resubmit with the same run name
  finds the checkpoints (the command must pass `${{outputs.ckpt}}` to the trainer as its checkpoint folder);
- the compute from --cluster or --serverless --size (the file's `compute` is replaced), the node count
  (--nodes, else the file's resources.instance_count, else 1) and process_count_per_instance = the size's
  GPUs unless the file or --processes-per-node sets it (when it is unset Azure ML starts one process per
  node: docs/reference/azure-notes.md section 4); the same shape checks (max_instances, GPUs per node, RDMA);
- the size's settings (jobs/settings.py: timeout, shm_size, NCCL/UCX environment) and NCCL_DEBUG=INFO, from
  which the transport is verified;
- one line per process before the trainer starts, `azml-gpu rank=R local_rank=L node_rank=N world_size=W
  host=H` (the format of smoke.py's per-rank line), from the variables Azure ML sets for each process, so the
  world size and processes per node are verified whatever the trainer prints;
- under `jobs run`, the quota check, managed restarts and the ledger (jobs/runs/).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from jobs import builders
from jobs.builders import CHECKPOINT_URI, BuiltJob
from jobs.errors import UsageError, error_detail

_OUTPUT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: The per-process line (shell variables Azure ML's PyTorch distribution sets: azure-notes.md section 4).
RANK_LINE = (
    'echo "azml-gpu rank=${RANK} local_rank=${LOCAL_RANK} node_rank=${NODE_RANK} '
    'world_size=${WORLD_SIZE} host=$(hostname)"'
)
_LAUNCHERS = ("torchrun", "python -m torch.distributed.run", "python3 -m torch.distributed.run")


def add_file_args(p: argparse.ArgumentParser) -> None:
    """--file and --ckpt-output, and KIND made optional (a job file replaces it)."""
    for action in p._actions:  # add_job_args' positional KIND
        if action.dest == "kind":
            action.nargs, action.default = "?", None
    g = p.add_argument_group("your own trainer")
    g.add_argument("--file", metavar="JOB.yml", help="an Azure ML CLI v2 command job file, instead of KIND")
    g.add_argument(
        "--ckpt-output",
        default="ckpt",
        metavar="NAME",
        help="--file: the output that is the trainer's checkpoint folder (default ckpt)",
    )


def build_any(args: argparse.Namespace) -> list[BuiltJob]:
    """The job(s) of KIND (jobs.jobargs.build) or of --file, validated, with their settings."""
    from jobs.jobargs import build
    from jobs.settings import attach

    if getattr(args, "file", None) is None:
        if args.kind is None:
            raise UsageError("pass a job KIND (smoke, train, scaling, health) or --file JOB.yml")
        if args.ckpt_output != "ckpt":
            raise UsageError("--ckpt-output is for --file jobs; drop it")
        return build(args)
    if args.kind is not None:
        raise UsageError(f"--file replaces KIND; drop {args.kind!r} or --file")
    for flag, value in (("--data", args.data), ("--steps", args.steps), ("--batch-size", args.batch_size)):
        if value is not None:
            raise UsageError(f"{flag} is for the platform's train.py; a --file job sets its own in the file")
    if args.log_every is not None or getattr(args, "health_mode", None) or args.script_args:
        raise UsageError("--log-every, --quick/--full and `-- SCRIPT_ARGS` are not for --file jobs")
    from jobs import outputs

    outs = outputs.load(args.stack, args.outputs) if (args.stack or args.outputs) else None
    target = builders.resolve_target(outs, args.cluster, args.serverless, args.size, args.spot)
    built = from_file(
        Path(args.file),
        target,
        run_name=args.run_name,
        ckpt_output=args.ckpt_output,
        nodes=args.nodes,
        processes=args.processes_per_node,
        environment=args.environment,
        allow_tcp=args.allow_tcp,
    )
    attach(built, getattr(args, "set", None) or ())
    return [built]


def load(path: Path) -> Any:
    """The file as azure-ai-ml loads it: for `type: command`, its `Command` node (azure-ai-ml 1.35 loads a
    command job file as the builder `command()` makes), or UsageError naming the problem."""
    from azure.ai.ml import load_job
    from azure.ai.ml.entities import Command

    from jobs.azure_client import quiet_sdk_logs

    if not path.is_file():
        raise UsageError(f"--file {path}: no such file; pass an Azure ML CLI v2 command job YAML")
    quiet_sdk_logs()
    try:
        job = load_job(source=path)
    except Exception as exc:  # azure-ai-ml's ValidationError / YAML errors name the field
        raise UsageError(
            f"--file {path}: azure-ai-ml cannot load it as a job: {_first_problem(exc)}"
        ) from None
    if not isinstance(job, Command):
        raise UsageError(
            f"--file {path}: a {getattr(job, 'type', type(job).__name__)} job; only command jobs "
            "(type: command) are taken: the trainer's command with its code, environment and distribution"
        )
    return job


def _first_problem(exc: Exception) -> str:
    """The first field and message of azure-ai-ml's schema ValidationError, JSON nested in JSON strings:
    `Validation for CommandSchema failed: {"errors": [{"message": "... {"code": [{"_schema": [..]}]}"}]}`."""
    import json

    def first_leaf(obj: Any) -> str | None:
        if isinstance(obj, str):
            return obj
        items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else []
        return next((leaf for v in items if (leaf := first_leaf(v)) is not None), None)

    text, field = str(exc), None
    for _ in range(4):  # each level is a schema's "failed:" over the next one's JSON
        start = text.find("{")
        try:
            obj = json.JSONDecoder().raw_decode(text[start:])[0] if start >= 0 else None
        except ValueError:
            break
        if isinstance(obj, dict) and obj.get("errors"):
            text = str(obj["errors"][0].get("message", ""))
            continue
        if isinstance(obj, dict) and obj:
            field = next(iter(obj))
            text = first_leaf(obj[field]) or text
            continue
        break
    line = text.strip().splitlines()[0] if text.strip() else error_detail(exc)
    return f"{field}: {line}" if field and field != "_schema" else line


def from_file(
    path: Path,
    target: builders.Target,
    *,
    run_name: str | None,
    ckpt_output: str = "ckpt",
    nodes: int | None = None,
    processes: int | None = None,
    environment: str | None = None,
    allow_tcp: bool = False,
) -> BuiltJob:
    from azure.ai.ml import Output, PyTorchDistribution

    if not run_name:
        raise UsageError("--file needs --run-name NAME: it fixes the checkpoint folder so a resubmit resumes")
    builders.check_run_name(run_name)
    if not _OUTPUT_NAME.match(ckpt_output):
        raise UsageError(f"--ckpt-output {ckpt_output!r}: an output name (letters, digits, '_'), e.g. ckpt")
    job = load(path)
    command = (job.command or "").strip()
    ref = f"${{{{outputs.{ckpt_output}}}}}"
    if ref not in command:
        raise UsageError(
            f"--file {path}: its command does not use {ref}, so the trainer would not checkpoint to the "
            f"run's folder; pass it as the checkpoint folder (torchtitan: --checkpoint.folder {ref}), or "
            "name the output it uses with --ckpt-output"
        )
    dist = job.distribution
    if dist is None and command.startswith(_LAUNCHERS):
        raise UsageError(
            f"--file {path}: the command starts its own launcher ({command.split()[0]}) and the file has no "
            "distribution; let Azure ML start one process per GPU instead (distribution: type: pytorch, "
            "command `python train.py ...`), or set distribution.process_count_per_instance: 1"
        )
    if dist is not None and not isinstance(dist, PyTorchDistribution):
        raise UsageError(
            f"--file {path}: distribution type {getattr(dist, 'type', dist)!r}; the platform verifies "
            "PyTorch jobs (distribution: type: pytorch), whose processes Azure ML gives RANK and WORLD_SIZE"
        )
    if processes is None and dist is not None:
        processes = dist.process_count_per_instance
    procs = builders.processes(target, processes)
    resources = job.resources
    if nodes is None:
        count = resources.get("instance_count") if isinstance(resources, dict) else None
        nodes = count or getattr(resources, "instance_count", None) or 1
    builders.check_shape(target, nodes, procs, allow_tcp)
    code = job.code
    if isinstance(code, str) and not code.startswith(("azureml:", "http://", "https://", "git+")):
        code = str((path.resolve().parent / code).resolve())  # load_job checked that it exists
    ckpt_uri = CHECKPOINT_URI.format(run_name=run_name)
    # The node's inputs and outputs wrap the Input / Output the file declared (`_data`): the new job's.
    outs = {k: getattr(v, "_data", v) for k, v in (job.outputs or {}).items()}
    outs[ckpt_output] = Output(type="uri_folder", mode="rw_mount", path=ckpt_uri)
    tags = {
        **(job.tags or {}),
        **builders.tags("train", target, nodes, procs),
        "azml-gpu.run-name": run_name,
        "azml-gpu.file": path.name,
    }
    built_job = builders.command_job(
        target,
        code=code,
        command=f"{RANK_LINE} && {command}",
        nodes=nodes,
        processes=procs,
        environment=environment or job.environment,
        display_name=job.display_name or f"{path.stem}-{run_name}",
        experiment=job.experiment_name or "azml-gpu-train",
        tags=tags,
        inputs={k: getattr(v, "_data", v) for k, v in (job.inputs or {}).items()},
        outputs=outs,
        env=dict(job.environment_variables or {}),
    )
    return BuiltJob(
        "train",
        "user-job",
        built_job,
        nodes,
        procs,
        target.size,
        {"checkpoint_uri": ckpt_uri, "checkpoint_output": ckpt_output, "file": str(path), "code": code},
    )
