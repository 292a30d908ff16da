"""Job builders: azure-ai-ml `command(...)` jobs for the smoke test, the training run and the scaling pair.

Each builder refuses what the SDK lets through but Azure ML would run wrongly or reject late
(platform-notes "Offline validation misses things": instance_count=0, a missing compute and a
process count above the node's GPUs all pass `command()` and would be sent):
instance_count < 1 or above the cluster's max_instances, a process count above the GPUs per node,
a compute that is not in the stack outputs, and a multi-node job on a size without usable RDMA
(NCCL would fall back to TCP; seed "InfiniBand: confirm it, do not assume it") unless allow_tcp.

`process_count_per_instance` is always set, to the GPUs per node from the size catalog: when it is
left out "Azure Machine Learning will by default launch one process per node"
(azure-notes.md section 4, how-to-train-distributed-gpu.md).
"""

from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobs import unmount
from jobs.errors import UsageError

if TYPE_CHECKING:
    from azure.ai.ml.entities import Command

    from stackconfig.outputs import StackOutputs

#: What Azure ML uploads as the job's code: jobs/payload only (architecture.md "jobs").
SRC_DIR = Path(__file__).resolve().parent / "payload"

#: The job environment, pinned to one version of a curated environment of the `azureml` registry (Azure
#: Container for PyTorch, ACPT), so every job runs in the image it was tested with, not in whatever a
#: `labels/latest` points at on the day. Named here once; `--environment` overrides it.
#: Source: Azure/azureml-assets. Each published version is a git tag `environment/<name>/<version>`
#: (scripts/azureml-assets/azureml/assets/tag_released_assets.py tags released assets with
#: `AssetConfig.full_name`); tag `environment/acpt-pytorch-2.2-cuda12.1/55` (2026-07-20, the newest when
#: pinned) holds latest/environment/acpt-pytorch-2.2-cuda12.1/spec.yaml with `version: "55"`, and its
#: environment.yaml publishes the image mcr.microsoft.com/azureml/curated/acpt-pytorch-2.2-cuda12.1.
#: What version 55 is (its context/Dockerfile at that tag): FROM
#: mcr.microsoft.com/aifx/acpt/stable-ubuntu2204-cu126-py310-torch280:biweekly.202607.1, then torch
#: upgraded to 2.10.0+cu126; the "2.2" and "cuda12.1" of the name no longer describe the contents, which
#: is why a label is not a pin. (acpt-pytorch-2.8-cuda12.6 version 15 is built on the same base image;
#: both spec.yaml files carry a "Preview" tag.) To move the pin: read a newer tag's Dockerfile, change
#: ENVIRONMENT_VERSION, and run the smoke job on a cluster.
ENVIRONMENT_NAME = "acpt-pytorch-2.2-cuda12.1"
ENVIRONMENT_VERSION = "55"
DEFAULT_ENVIRONMENT = (
    f"azureml://registries/azureml/environments/{ENVIRONMENT_NAME}/versions/{ENVIRONMENT_VERSION}"
)

#: Where a training run's checkpoints live, fixed by run name so a resubmit finds them
#: (seed "Low-priority and Spot capacity": bind the checkpoint output to a fixed datastore path).
CHECKPOINT_URI = "azureml://datastores/workspaceblobstore/paths/ckpt/{run_name}/"

_RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class Target:
    """Where a job runs: a cluster from the stack outputs, or serverless compute of one size."""

    size: str
    gpus_per_node: int
    rdma_usable: bool
    compute: str | None = None  # cluster name; None = serverless
    max_instances: int | None = None  # None = serverless (no cluster cap)
    tier: str = "dedicated"  # cluster tier, or "spot" for a serverless Spot job

    @property
    def label(self) -> str:
        return f"cluster {self.compute}" if self.compute else f"serverless {self.size}"


@dataclass
class BuiltJob:
    """A job ready to render or submit, with what verify needs to know about it."""

    kind: str  # smoke | train | scaling
    label: str  # e.g. "smoke", "scaling-1node"
    job: Command
    nodes: int
    processes_per_node: int
    size: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def world_size(self) -> int:
        return self.nodes * self.processes_per_node


def cluster_target(outputs: StackOutputs, name: str) -> Target:
    from jobs.outputs import cluster

    c = cluster(outputs, name)
    return Target(
        size=c.size,
        gpus_per_node=c.gpus_per_node,
        rdma_usable=c.rdma_usable,
        compute=c.name,
        max_instances=c.max_instances,
        tier=c.tier,
    )


def serverless_target(size: str, spot: bool) -> Target:
    """A serverless job's size: the same rule as a cluster's (stackconfig.sizes): a catalog GPU size."""
    from stackconfig.sizes import canonical_size
    from vmsizes import describe

    try:
        vm = describe(canonical_size(size))
    except ValueError as exc:
        raise UsageError(f"--size {exc}") from None
    return Target(
        size=vm.name, gpus_per_node=vm.gpus, rdma_usable=vm.rdma_usable, tier="spot" if spot else "dedicated"
    )


def resolve_target(
    outputs: StackOutputs | None, cluster_name: str | None, serverless: bool, size: str | None, spot: bool
) -> Target:
    """The flags --cluster / --serverless --size / --spot, checked together."""
    if serverless:
        if cluster_name:
            raise UsageError("--serverless and --cluster exclude each other; drop one")
        if not size:
            raise UsageError("--serverless needs --size (the VM size, e.g. --size Standard_ND96isr_H100_v5)")
        return serverless_target(size, spot)
    if spot:
        raise UsageError(
            "--spot is the serverless job tier (queue_settings job_tier Spot); add --serverless "
            "--size SIZE, or use a cluster whose tier is low_priority in the stack config"
        )
    if size:
        raise UsageError("--size is for --serverless jobs; a cluster's size comes from the stack outputs")
    if not cluster_name:
        raise UsageError(
            "no compute: pass --cluster NAME (a cluster in the stack outputs) or --serverless --size SIZE"
        )
    if outputs is None:
        raise UsageError("--cluster needs the stack outputs: pass --stack NAME or --outputs FILE")
    return cluster_target(outputs, cluster_name)


def check_shape(
    target: Target,
    nodes: int,
    processes: int,
    allow_tcp: bool,
    subject: str | None = None,
    fixed_nodes: bool = False,
) -> None:
    """Refuse the job shapes the SDK accepts but Azure ML would run wrongly.

    `fixed_nodes`: the node count is not the user's (scaling always runs 1 and 2 nodes, and refuses
    --nodes), so the fix never says "use --nodes".
    """
    nodes_flag = "--nodes"
    subject = subject or f"--nodes {nodes}"
    if nodes < 1:
        raise UsageError(f"{subject}: a job needs at least 1 node; use {nodes_flag} 1 or more")
    if target.max_instances is not None and nodes > target.max_instances:
        fix = (
            f"pick a cluster with max_instances {nodes} or more"
            if fixed_nodes
            else f"use {nodes_flag} {target.max_instances} or less"
        ) + ", or raise max_instances in the stack config"
        raise UsageError(f"{subject}: {target.label} has max_instances {target.max_instances}; {fix}")
    if processes < 1:
        raise UsageError(f"--processes-per-node {processes}: use at least 1")
    gpus = max(target.gpus_per_node, 1)
    if processes > gpus:
        raise UsageError(
            f"--processes-per-node {processes}: {target.size} has {target.gpus_per_node} GPU(s) "
            f"per node; use at most {gpus} (one process per GPU)"
        )
    if nodes > 1 and not target.rdma_usable and not allow_tcp:
        raise UsageError(
            f"{subject} on {target.size}: the size has no RDMA usable by NCCL, so "
            "multi-node traffic would fall back to TCP sockets and scale poorly; use an RDMA size "
            "('r' in the name, e.g. Standard_ND96isr_H100_v5), "
            + ("or pass --allow-tcp" if fixed_nodes else "one node, or pass --allow-tcp")
        )


def processes(target: Target, requested: int | None) -> int:
    # Never unset: default to the GPUs per node (catalog); a GPU-partition or CPU size gets 1.
    return requested if requested is not None else max(target.gpus_per_node, 1)


_processes = processes


def check_run_name(run_name: str) -> None:
    if not run_name or not _RUN_NAME.match(run_name):
        raise UsageError(
            f"--run-name {run_name!r}: use 1-100 letters, digits, '.', '_' or '-', starting with a "
            "letter or digit; the same name resumes from the same checkpoint folder"
        )


def command_job(
    target: Target,
    *,
    command: str,
    nodes: int,
    processes: int,
    environment: str | None,
    display_name: str,
    experiment: str,
    tags: dict[str, str],
    inputs: dict | None = None,
    outputs: dict | None = None,
    env: dict[str, str] | None = None,
    code: str | Path = SRC_DIR,
) -> Command:
    """An azure-ai-ml `command(...)` job on `target`: compute or serverless size and tier, PyTorch
    distribution with `processes` per node, NCCL_DEBUG=INFO under the caller's environment variables."""
    from azure.ai.ml import command as ml_command
    from azure.ai.ml.entities import QueueSettings

    kwargs: dict[str, Any] = {}
    if target.compute:
        kwargs["compute"] = target.compute
    else:
        # Serverless: no compute; resources.instance_type is the VM size and the Spot tier is
        # queue_settings.job_tier "Spot"
        # (learn.microsoft.com/azure/machine-learning/how-to-use-serverless-compute;
        # azure-ai-ml QueueSettings: job_tier "Spot" | "Basic" | "Standard" | "Premium").
        kwargs["instance_type"] = target.size
        if target.tier == "spot":
            kwargs["queue_settings"] = QueueSettings(job_tier="Spot")
    return ml_command(
        code=str(code),
        command=command,
        environment=environment or DEFAULT_ENVIRONMENT,
        instance_count=nodes,
        # REST: distribution {distributionType: PyTorch, processCountPerInstance: N} (platform-notes).
        distribution={"type": "PyTorch", "process_count_per_instance": processes},
        environment_variables={"NCCL_DEBUG": "INFO", **(env or {})},
        inputs=inputs or {},
        outputs=outputs or {},
        display_name=display_name,
        experiment_name=experiment,
        tags=tags,
        **kwargs,
    )


_command = command_job


def tags(kind: str, target: Target, nodes: int, processes: int) -> dict[str, str]:
    return {
        "azml-gpu.kind": kind,
        "azml-gpu.size": target.size,
        "azml-gpu.nodes": str(nodes),
        "azml-gpu.processes-per-node": str(processes),
        "azml-gpu.expect-world-size": str(nodes * processes),
    }


_tags = tags


def smoke(
    target: Target,
    *,
    nodes: int | None = None,
    processes: int | None = None,
    environment: str | None = None,
    allow_tcp: bool = False,
    script_args: tuple[str, ...] = (),
) -> BuiltJob:
    """Two-node (capped by the cluster's max) NCCL smoke test: world size, per-rank lines, busbw sweep."""
    _check_script_args(script_args, owned=_SMOKE_OWNED)
    if nodes is None:
        nodes = 2 if target.max_instances is None else max(1, min(2, target.max_instances))
        if nodes > 1 and not target.rdma_usable and not allow_tcp:
            nodes = 1
    procs = _processes(target, processes)
    check_shape(target, nodes, procs, allow_tcp)
    world = nodes * procs
    command = f"python smoke.py --expect-world-size {world}"
    from vmsizes import health

    levels = health.levels(target.size)
    if levels is not None and levels.allreduce_bytes != 1 << 30:
        # Sweep on GPUs up to the message size the size's health levels are stated at (CPU runs stay small).
        command += f" --gpu-max-bytes {levels.allreduce_bytes}"
    job = _command(
        target,
        command=_with_script_args(command, script_args),
        nodes=nodes,
        processes=procs,
        environment=environment,
        display_name=f"smoke-{nodes}x{procs}",
        experiment="azml-gpu-smoke",
        tags=_tags("smoke", target, nodes, procs),
    )
    return BuiltJob("smoke", "smoke", job, nodes, procs, target.size)


# Script flags the builders set themselves, and the jobs flag that sets each: a script argument after
# `--` may not override them (a second --ckpt would break resume; a second --expect-world-size the check).
_TRAIN_OWNED = {
    "--ckpt": "--run-name",
    "--data": "--data",
    "--steps": "--steps",
    "--batch-size": "--batch-size",
    "--log-every": "--log-every",
}
_SMOKE_OWNED = {"--expect-world-size": "--nodes and --processes-per-node"}


def _owned_flag(flag: str, owned: dict[str, str]) -> str | None:
    """The owned flag `flag` names: itself, or one it abbreviates (`--ck` for `--ckpt`). The scripts'
    parsers are meant to refuse abbreviations (allow_abbrev=False), but an abbreviation that argparse
    would expand must not slip past this check."""
    if flag in owned:
        return flag
    if not flag.startswith("--") or len(flag) <= 2:
        return None
    matches = [o for o in owned if o.startswith(flag)]
    return matches[0] if len(matches) == 1 else None


def _check_script_args(script_args: tuple[str, ...], owned: dict[str, str]) -> None:
    for arg in script_args:
        flag = _owned_flag(arg.split("=", 1)[0], owned)
        if flag is not None:
            shown = "" if arg.split("=", 1)[0] == flag else f" (an abbreviation of {flag})"
            raise UsageError(
                f"script argument {arg!r}{shown}: the job sets {flag} itself; "
                f"use {owned[flag]} (before `--`) instead"
            )


def _with_script_args(command: str, script_args: tuple[str, ...]) -> str:
    return f"{command} {shlex.join(script_args)}" if script_args else command


def _train_command(
    steps: int | None, batch_size: int | None, log_every: int | None, data: bool, script_args: tuple[str, ...]
) -> str:
    _check_script_args(script_args, owned=_TRAIN_OWNED)
    parts = ["python train.py", "--ckpt ${{outputs.ckpt}}"]
    if data:
        parts.append("--data ${{inputs.data}}")
    if steps is not None:
        parts.append(f"--steps {steps}")
    if batch_size is not None:
        parts.append(f"--batch-size {batch_size}")
    if log_every is not None:
        parts.append(f"--log-every {log_every}")
    return _with_script_args(" ".join(parts), script_args)


def _positive(flag: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise UsageError(f"{flag} {value}: must be at least 1")


# Path forms a uri_folder input accepts (Azure ML docs, how-to-read-write-data-v2.md "Supported paths"):
# a data asset `azureml:NAME:VERSION` / `azureml:NAME@latest`, a datastore or workspace URI `azureml://...`,
# storage URIs (https, wasbs, abfss, adl), or a local folder that the SDK uploads.
_DATA_ASSET = re.compile(r"^azureml:[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+|@[A-Za-z0-9_.-]+)$")
_DATA_SCHEMES = ("azureml://", "https://", "http://", "wasbs://", "wasb://", "abfss://", "abfs://", "adl://")


def check_folder_input(data: str | None, flag: str = "--data") -> None:
    """A uri_folder input flag (`--data`, prepare-data's `--text` and `--tokenizer`) is optional here, but
    given it must name something Azure ML can mount: not empty, not a typo."""
    if data is None:
        return
    forms = "a data asset (azureml:NAME:VERSION), an azureml:// or storage URI, or an existing local folder"
    if not data.strip():
        raise UsageError(f"{flag}: empty; pass {forms}")
    if data.startswith(_DATA_SCHEMES) or _DATA_ASSET.match(data):
        return
    if data.startswith("azureml:"):
        raise UsageError(
            f"{flag} {data}: not a data asset reference; use azureml:NAME:VERSION or azureml:NAME@latest"
        )
    if not Path(data).is_dir():
        raise UsageError(f"{flag} {data}: no such local folder to upload; pass {forms}")


_check_data = check_folder_input


def _train_inputs(data: str | None, steps: int | None, batch_size: int | None, log_every: int | None) -> dict:
    """Check the flags train.py shares between train and scaling jobs; the job's `inputs` (data, if any)."""
    for flag, value in (("--steps", steps), ("--batch-size", batch_size), ("--log-every", log_every)):
        _positive(flag, value)
    _check_data(data)
    from azure.ai.ml import Input

    return {"data": Input(type="uri_folder", path=data)} if data is not None else {}


def train(
    target: Target,
    *,
    run_name: str,
    data: str | None = None,
    nodes: int = 1,
    processes: int | None = None,
    steps: int | None = None,
    batch_size: int | None = None,
    log_every: int | None = None,
    environment: str | None = None,
    allow_tcp: bool = False,
    script_args: tuple[str, ...] = (),
) -> BuiltJob:
    """The training job. Its checkpoint output is fixed by run name (rw_mount), so a resubmit resumes."""
    check_run_name(run_name)
    inputs = _train_inputs(data, steps, batch_size, log_every)
    from azure.ai.ml import Output

    procs = _processes(target, processes)
    check_shape(target, nodes, procs, allow_tcp)
    ckpt_uri = CHECKPOINT_URI.format(run_name=run_name)
    outputs = {"ckpt": Output(type="uri_folder", mode="rw_mount", path=ckpt_uri)}
    tags = _tags("train", target, nodes, procs) | {"azml-gpu.run-name": run_name}
    job = _command(
        target,
        command=_train_command(steps, batch_size, log_every, data is not None, script_args),
        nodes=nodes,
        processes=procs,
        environment=environment,
        display_name=f"train-{run_name}",
        experiment="azml-gpu-train",
        tags=tags,
        inputs=inputs,
        outputs=outputs,
        # Time for the last checkpoint's upload when the job ends (jobs/unmount.py).
        env=unmount.train_env(script_args),
    )
    return BuiltJob("train", "train", job, nodes, procs, target.size, {"checkpoint_uri": ckpt_uri})


def scaling(
    target: Target,
    *,
    data: str | None = None,
    processes: int | None = None,
    steps: int | None = None,
    batch_size: int | None = None,
    log_every: int | None = None,
    environment: str | None = None,
    allow_tcp: bool = False,
    script_args: tuple[str, ...] = (),
) -> list[BuiltJob]:
    """The training benchmark at 1 and at 2 nodes, same per-GPU batch (seed: "run the same job on one node
    and on two with identical per-GPU batch size, and compare samples per second")."""
    inputs = _train_inputs(data, steps, batch_size, log_every)
    from azure.ai.ml import Output

    procs = _processes(target, processes)
    check_shape(
        target, 2, procs, allow_tcp, subject="scaling (its second job runs 2 nodes)", fixed_nodes=True
    )
    built = []
    for nodes in (1, 2):
        # Job-scoped checkpoint folder: a benchmark must not resume from another run.
        outputs = {"ckpt": Output(type="uri_folder", mode="rw_mount")}
        job = _command(
            target,
            command=_train_command(steps, batch_size, log_every, data is not None, script_args),
            nodes=nodes,
            processes=procs,
            environment=environment,
            display_name=f"scaling-{nodes}node",
            experiment="azml-gpu-scaling",
            tags=_tags("scaling", target, nodes, procs),
            inputs=copy.deepcopy(inputs),  # each job owns its Input objects
            outputs=outputs,
        )
        built.append(BuiltJob("scaling", f"scaling-{nodes}node", job, nodes, procs, target.size))
    return built
