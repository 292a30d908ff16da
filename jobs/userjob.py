"""Bring your own trainer: an Azure ML CLI v2 command job file (`--file JOB.yml`) plus the platform layer.

    python -m jobs render --file job.yml --outputs out.json --cluster gpu --run-name r1 --out built.yml
    python -m jobs run    --file job.yml --stack prod --cluster gpu --run-name r1

The job is azure-ai-ml's own reading of the file: `azure.ai.ml.load_job` (the schema of
reference-yaml-job-command), as the `CommandJob` entity `ml_client.jobs.create_or_update` sends
(`Command._to_job()`, entities/_builders/command.py). Only `type: command` jobs are taken. Every field the
file sets stays as azure-ai-ml read it (identity, limits, services, resources.docker_args/shm_size,
queue_settings, description, properties, tags, inputs, outputs, environment variables, ...), except what the
platform must set or a field it cannot honour, which is refused by name (`jobs/userjobcheck.py`). What the
platform changes:
- relative local paths (code, inputs) are made absolute against the file's folder, as azure-ai-ml resolves
  them (`JobOperations._resolve_job_input`: `Path(base_path, entry.path)` with the job's `_base_path`, the
  YAML's folder); render writes them back relative to the YAML it writes;
- the compute from --cluster, or --serverless --size (resources.instance_type, and queue_settings.job_tier
  Spot for --spot); the node count (--nodes, else the file's resources.instance_count, else 1) and
  process_count_per_instance = the size's GPUs unless the file or --processes-per-node sets it (unset, Azure
  ML starts one process per node: docs/reference/azure-notes.md section 4); the shape checks of
  jobs/builders.py, and the pre-submit checks of jobs/userjobcheck.py;
- the checkpoint output, unless --no-checkpoint: `outputs.<--ckpt-output, default ckpt>` bound, rw_mount, to
  azureml://datastores/workspaceblobstore/paths/ckpt/<run name>/, so a resubmit with the same run name finds
  the checkpoints (the command passes `${{outputs.ckpt}}` to the trainer as its checkpoint folder);
- one line per process before the trainer starts, `azml-gpu rank=R local_rank=L node_rank=N world_size=W
  host=H` (the format of smoke.py's per-rank line), so verify counts the processes whatever the trainer
  prints;
- tags (azml-gpu.*) over the file's; NCCL_DEBUG=INFO (the transport is verified from it) unless the file sets
  it; and, where the file is silent, the size's settings (jobs/settings.py) and
  DATASET_UNMOUNT_TIMEOUT_SECONDS sized from the checkpoint (jobs/unmount.py; --ckpt-gib, else the node's GPU
  memory, the most one node's ranks hold and write).
`built.extra["platform"]` and `["kept"]` list each, and render prints them.
"""

from __future__ import annotations

import argparse
import copy
import os
import re
from pathlib import Path
from typing import Any

from jobs import builders, unmount
from jobs.builders import CHECKPOINT_URI, BuiltJob
from jobs.errors import UsageError, error_detail

_OUTPUT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: The per-process line (shell variables Azure ML's PyTorch distribution sets: azure-notes.md section 4).
RANK_LINE = (
    'echo "azml-gpu rank=${RANK} local_rank=${LOCAL_RANK} node_rank=${NODE_RANK} '
    'world_size=${WORLD_SIZE} host=$(hostname)"'
)
#: The fields a file may set that the platform reads, with the key a user sees.
KEPT_FIELDS = (
    ("description", "description"),
    ("display_name", "display_name"),
    ("experiment_name", "experiment_name"),
    ("identity", "identity"),
    ("services", "services"),
    ("properties", "properties"),
    ("queue_settings", "queue_settings"),
    ("tags", "tags"),
    ("environment_variables", "environment_variables"),
)


def add_file_args(p: argparse.ArgumentParser) -> None:
    """--file and its flags, and KIND made optional (a job file replaces it)."""
    for action in p._actions:  # add_job_args' positional KIND
        if action.dest == "kind":
            action.nargs, action.default = "?", None
    g = p.add_argument_group("your own trainer")
    g.add_argument("--file", metavar="JOB.yml", help="an Azure ML CLI v2 command job file, instead of KIND")
    g.add_argument(
        "--ckpt-output",
        default=None,
        metavar="NAME",
        help="--file: the output that is the trainer's checkpoint folder (default ckpt)",
    )
    g.add_argument(
        "--no-checkpoint",
        action="store_true",
        help="--file: bind no checkpoint output (a preempted or resubmitted job then starts over)",
    )
    g.add_argument(
        "--allow-idle-gpus",
        action="store_true",
        help="--file: accept fewer processes per node than the size has GPUs",
    )
    g.add_argument(
        "--ckpt-gib",
        type=float,
        metavar="GIB",
        help="--file: one checkpoint's size, to size DATASET_UNMOUNT_TIMEOUT_SECONDS "
        "(default: the node's GPU memory)",
    )


def build_any(args: argparse.Namespace) -> list[BuiltJob]:
    """The job(s) of KIND (jobs.jobargs.build) or of --file, validated, with their settings."""
    from jobs.jobargs import build
    from jobs.settings import attach

    file_flags = [
        f
        for f, v in (
            ("--ckpt-output", getattr(args, "ckpt_output", None)),
            ("--no-checkpoint", getattr(args, "no_checkpoint", False)),
            ("--allow-idle-gpus", getattr(args, "allow_idle_gpus", False)),
            ("--ckpt-gib", getattr(args, "ckpt_gib", None)),
        )
        if v not in (None, False)
    ]
    if getattr(args, "file", None) is None:
        if args.kind is None:
            raise UsageError("pass a job KIND (smoke, train, scaling, health) or --file JOB.yml")
        if file_flags:
            raise UsageError(
                f"{', '.join(file_flags)}: for --file jobs only (a KIND job has no job file); drop it"
            )
        return build(args)
    if args.kind is not None:
        raise UsageError(f"--file replaces KIND; drop {args.kind!r} or --file")
    for flag, value in (("--data", args.data), ("--steps", args.steps), ("--batch-size", args.batch_size)):
        if value is not None:
            raise UsageError(f"{flag} is for the platform's train.py; a --file job sets its own in the file")
    if args.log_every is not None or getattr(args, "health_mode", None) or args.script_args:
        raise UsageError("--log-every, --quick/--full and `-- SCRIPT_ARGS` are not for --file jobs")
    if args.no_checkpoint and args.ckpt_output is not None:
        raise UsageError("--ckpt-output names the checkpoint output that --no-checkpoint drops; pass one")
    from jobs import outputs

    outs = outputs.load(args.stack, args.outputs) if (args.stack or args.outputs) else None
    target = builders.resolve_target(outs, args.cluster, args.serverless, args.size, args.spot)
    built = from_file(
        Path(args.file),
        target,
        run_name=args.run_name,
        ckpt_output=None if args.no_checkpoint else (args.ckpt_output or "ckpt"),
        nodes=args.nodes,
        processes=args.processes_per_node,
        environment=args.environment,
        allow_tcp=args.allow_tcp,
        allow_idle_gpus=args.allow_idle_gpus,
        ckpt_gib=args.ckpt_gib,
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


def is_local_path(value: Any) -> bool:
    """A path azure-ai-ml uploads from the local disk: not a literal, an ARM id, a URL, a binding or an
    `azureml:` asset (`JobOperations._resolve_job_input`, and `is_url`'s scheme+netloc test)."""
    from azure.ai.ml._utils._arm_id_utils import is_ARM_id_for_resource
    from azure.ai.ml._utils.utils import is_url

    if not isinstance(value, (str, os.PathLike)):
        return False
    text = str(value)
    return not (
        not text
        or is_ARM_id_for_resource(text)
        or is_url(text)
        or "${{" in text
        or (not os.path.isabs(text) and (":" in text or "@" in text))
        or text.startswith("git+")
    )


def _resources(job: Any) -> Any:
    from azure.ai.ml.entities import JobResourceConfiguration

    if job.resources is None:
        job.resources = JobResourceConfiguration()
    elif isinstance(job.resources, dict):
        job.resources = JobResourceConfiguration(**job.resources)
    return job.resources


def from_file(
    path: Path,
    target: builders.Target,
    *,
    run_name: str | None,
    ckpt_output: str | None = "ckpt",
    nodes: int | None = None,
    processes: int | None = None,
    environment: str | None = None,
    allow_tcp: bool = False,
    allow_idle_gpus: bool = False,
    ckpt_gib: float | None = None,
) -> BuiltJob:
    """The loaded job with the platform layer (module docstring); every refusal at once (UsageError)."""
    from azure.ai.ml import Output, PyTorchDistribution

    from jobs import userjobcheck

    problems: list[str] = []
    if not run_name:
        problems.append(
            "--run-name: --file needs --run-name NAME; it fixes the checkpoint folder so a resubmit resumes"
        )
    else:
        try:
            builders.check_run_name(run_name)
        except UsageError as exc:
            problems.append(str(exc))
    if ckpt_output is not None and not _OUTPUT_NAME.match(ckpt_output):
        problems.append(f"--ckpt-output {ckpt_output!r}: an output name (letters, digits, '_'), e.g. ckpt")
    if ckpt_gib is not None and not ckpt_gib > 0:
        problems.append(f"--ckpt-gib {ckpt_gib}: a size above 0 in GiB, e.g. 96")
    node = load(path)
    base = Path(node._base_path).resolve()  # the YAML's folder: where load_job resolves relative paths
    job = copy.deepcopy(node._to_job())  # the CommandJob create_or_update sends for this node
    kept = [key for attr, key in KEPT_FIELDS if getattr(job, attr, None) not in (None, {}, "")]
    kept += [f"code: {job.code}"] if job.code else []
    kept += [f"environment: {job.environment}"] if job.environment and not environment else []
    kept += [f"inputs.{k}" for k in job.inputs or {}]
    kept += [f"outputs.{k}" for k in job.outputs or {} if k != ckpt_output]
    user_res = job.resources if job.resources is not None else {}
    res_get = user_res.get if isinstance(user_res, dict) else lambda k, d=None: getattr(user_res, k, d)
    for k in ("docker_args", "shm_size", "locations", "properties"):
        if res_get(k) not in (None, {}, [], ""):
            kept.append(f"resources.{k}")
    limits = job.limits
    if limits is not None and getattr(limits, "timeout", None):
        kept.append("limits.timeout")
    if isinstance(job.distribution, PyTorchDistribution) and job.distribution.process_count_per_instance:
        kept.append("distribution.process_count_per_instance")
    file_procs = getattr(job.distribution, "process_count_per_instance", None)
    procs_key = (
        "--processes-per-node"
        if processes is not None
        else "distribution.process_count_per_instance"
        if file_procs is not None
        else "process_count_per_instance (unset in the file: the platform's default, the size's GPUs)"
    )
    if processes is None:
        processes = file_procs
    procs = builders.processes(target, processes)
    count = res_get("instance_count")
    if nodes is None:
        nodes = count or 1
    problems += userjobcheck.problems(
        job,
        path=path,
        target=target,
        ckpt_output=ckpt_output,
        processes=procs,
        processes_key=procs_key,
        instance_type=res_get("instance_type"),
        allow_idle_gpus=allow_idle_gpus,
    )
    try:
        builders.check_shape(target, nodes, procs, allow_tcp)
    except UsageError as exc:
        problems.append(str(exc))
    if problems:
        raise UsageError("\n".join(problems))

    platform: list[str] = []
    local_inputs: dict[str, str] = {}
    for name, inp in (job.inputs or {}).items():
        if is_local_path(getattr(inp, "path", None)) and not os.path.isabs(inp.path):
            inp.path = str((base / inp.path).resolve())
        if is_local_path(getattr(inp, "path", None)):
            local_inputs[name] = inp.path
    build = getattr(getattr(job.environment, "build", None), "path", None)
    if is_local_path(build):  # environment.build.path: a Docker build context folder, relative to the file
        job.environment.build.path = str((base / str(build)).resolve())
    code = job.code
    if is_local_path(code):
        code = job.code = str((base / str(code)).resolve())
    if target.compute:
        job.compute = target.compute
        platform.append(f"compute: {target.compute} (--cluster)")
    else:
        job.compute = None
        _resources(job).instance_type = target.size
        platform.append(f"resources.instance_type: {target.size} (--serverless --size)")
        if target.tier == "spot" and job.queue_settings is None:
            from azure.ai.ml.entities import QueueSettings

            job.queue_settings = QueueSettings(job_tier="Spot")
            platform.append("queue_settings.job_tier: Spot (--spot)")
    _resources(job).instance_count = nodes
    if count != nodes:
        platform.append(f"resources.instance_count: {nodes}")
    if isinstance(job.distribution, PyTorchDistribution):
        job.distribution.process_count_per_instance = procs
    else:
        job.distribution = PyTorchDistribution(process_count_per_instance=procs)
    if file_procs != procs:
        platform.append(f"distribution.process_count_per_instance: {procs}")
    if environment:
        job.environment = environment
        platform.append(f"environment: {environment} (--environment)")
    ckpt_uri = CHECKPOINT_URI.format(run_name=run_name)
    if ckpt_output is not None:
        job.outputs = dict(job.outputs or {})
        job.outputs[ckpt_output] = Output(type="uri_folder", mode="rw_mount", path=ckpt_uri)
        platform.append(f"outputs.{ckpt_output}: {ckpt_uri} (rw_mount, the run's checkpoint folder)")
    job.command = f"{RANK_LINE} && {(job.command or '').strip()}"
    platform.append("command: the azml-gpu rank line before the file's command")
    job.tags = {
        **(job.tags or {}),
        **builders.tags("train", target, nodes, procs),
        "azml-gpu.run-name": str(run_name),
        "azml-gpu.file": path.name,
    }
    platform.append("tags: azml-gpu.*")
    if not job.display_name:
        job.display_name = f"{path.stem}-{run_name}"
        platform.append(f"display_name: {job.display_name}")
    if not job.experiment_name:
        job.experiment_name = "azml-gpu-train"
        platform.append("experiment_name: azml-gpu-train")
    env = dict(job.environment_variables or {})
    file_env = sorted(env)
    for name, value in {"NCCL_DEBUG": "INFO", **_unmount_env(target, ckpt_output, ckpt_gib)}.items():
        if name not in env:
            env[name] = value
            platform.append(f"environment_variables.{name}: {value}")
    job.environment_variables = env
    notes = []
    warnings = []
    if ckpt_output is None:
        warnings.append(
            "--no-checkpoint: no checkpoint output is bound; a preempted, failed or resubmitted job "
            "starts over from step 0 (no resume)"
        )
    return BuiltJob(
        "train",
        "user-job",
        job,
        nodes,
        procs,
        target.size,
        {
            "checkpoint_uri": ckpt_uri if ckpt_output else None,
            "checkpoint_output": ckpt_output,
            "file": str(path),
            "code": code,
            "local_inputs": local_inputs,
            "file_settings": {
                "timeout": "limits.timeout" in kept,
                "shm_size": "resources.shm_size" in kept,
                "env": file_env,
            },
            "platform": platform,
            "kept": kept,
            "notes": notes,
            "warnings": warnings,
        },
    )


def _unmount_env(target: builders.Target, ckpt_output: str | None, ckpt_gib: float | None) -> dict[str, str]:
    """DATASET_UNMOUNT_TIMEOUT_SECONDS for the checkpoint output (jobs/unmount.py): --ckpt-gib, else the
    node's GPU memory (vmsizes gpu_memory_gb, the most state one node's ranks hold and so write)."""
    if ckpt_output is None:
        return {}
    if ckpt_gib is not None:
        nbytes = int(ckpt_gib * 2**30)
    else:
        from vmsizes import describe

        try:
            gb = describe(target.size).gpu_memory_gb or 0
        except ValueError:
            gb = 0
        nbytes = int(gb * 10**9)
    return {unmount.ENV: str(unmount.timeout_s(nbytes))}


def to_node(job: Any) -> Any:
    """The `Command` node `ml_client.jobs.create_or_update` takes for a `CommandJob` (it refuses the job
    entity: "Non supported job type", operations/_job_operations.py). `CommandJob._to_node` (command_job.py)
    moves code, command, environment, resources and distribution into an anonymous component and leaves the
    node's environment, experiment name, resources and distribution unset; they are set back here, so the
    node's `_to_job()` is `job` (tests/jobs/test_userjob.py compares their REST bodies)."""
    node = job._to_node()
    node.environment = job.environment
    node.experiment_name = job.experiment_name
    node.resources = job.resources
    node.distribution = job.distribution
    node.name = job.name
    return node
