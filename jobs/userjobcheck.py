"""What a `--file` job would fail at after submit, found before it (jobs/userjob.py): each problem names the
file's key or the flag and the fix; `problems` returns them all, so one run lists every one.

- A launcher inside a PyTorch distribution: Azure ML starts process_count_per_instance processes per node
  and gives each RANK, WORLD_SIZE, MASTER_ADDR (azure-notes.md section 4; learn.microsoft.com
  how-to-train-distributed-gpu "PyTorch": "Azure Machine Learning sets the MASTER_ADDR, MASTER_PORT,
  WORLD_SIZE, and NODE_RANK environment variables on each node, in addition to setting the process-level
  RANK and LOCAL_RANK"), so a `torchrun` / `python -m torch.distributed.run` (or .launch) in the command
  starts its own --nproc-per-node processes (torchrun's default 1) from each of them.
- `${{inputs.X}}` / `${{outputs.X}}` in the command with no such input or output: Azure ML refuses the job
  at creation.
- Fewer processes per node than the size has GPUs: the rest sit idle (a `process_count_per_instance: 1` on an
  8-GPU size); refused unless --allow-idle-gpus.
- A checkpoint output the command never uses: the trainer would not write where a resubmit resumes.
- Fields the platform sets that the file sets otherwise: resources.instance_type (the platform's compute),
  a checkpoint output the file binds itself, a non-PyTorch distribution (verify reads PyTorch ranks), a
  queue_settings.job_tier other than Spot with --spot (azure-ai-ml QueueSettings job_tier: Spot, Basic,
  Standard, Premium).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from jobs.builders import Target

#: A launcher that starts processes itself, anywhere a shell command starts.
LAUNCHER = re.compile(r"(?:^|[\s;&|(`])(torchrun|python3?\s+-m\s+torch\.distributed\.(?:run|launch))(?=\s|$)")
_NPROC = re.compile(r"--nproc[-_]per[-_]node(?:=|\s+)(\S+)")
BINDING = re.compile(r"\$\{\{\s*(inputs|outputs)\.([A-Za-z0-9_]+)\s*\}\}")


def launcher(command: str) -> tuple[str, str] | None:
    """(the launcher as written, its --nproc-per-node value or "1", torchrun's default) or None."""
    m = LAUNCHER.search(command)
    if not m:
        return None
    n = _NPROC.search(command, m.end())
    return " ".join(m.group(1).split()), (n.group(1) if n else "1")


def problems(
    job: Any,
    *,
    path: Path,
    target: Target,
    ckpt_output: str | None,
    processes: int,
    processes_key: str,
    instance_type: Any,
    allow_idle_gpus: bool,
) -> list[str]:
    from azure.ai.ml import PyTorchDistribution

    out: list[str] = []
    command = (job.command or "").strip()
    dist = job.distribution
    if dist is not None and not isinstance(dist, PyTorchDistribution):
        out.append(
            f"--file {path}: distribution.type {getattr(dist, 'type', dist)!r}; the platform verifies "
            "PyTorch jobs (distribution: type: pytorch), whose processes Azure ML gives RANK and WORLD_SIZE"
        )
    gpus = target.gpus_per_node
    per_node = processes
    if launched := launcher(command):
        name, nproc = launched
        if processes > 1:
            each = f"{nproc} ({name}'s --nproc-per-node)" if nproc != "1" else f"1 ({name}'s default)"
            total = f"{processes * int(nproc)}" if nproc.isdigit() else f"{processes} x {nproc}"
            out.append(
                f"--file {path}: command: runs {name} inside distribution: pytorch with {processes_key} "
                f"{processes}: Azure ML starts {processes} processes per node and each starts {each}, "
                f"{total} per node (double launch); run the trainer directly (`python train.py ...`: Azure "
                "ML gives each process RANK, LOCAL_RANK, WORLD_SIZE), or set "
                f"distribution.process_count_per_instance: 1 so one {name} per node starts the GPUs' "
                "processes"
            )
        else:
            per_node = int(nproc) if nproc.isdigit() else gpus  # gpu / auto: one per GPU
    if gpus > 0 and per_node < gpus and not allow_idle_gpus:
        out.append(
            f"{processes_key} {processes}: {target.size} has {gpus} GPUs per node, so {gpus - per_node} "
            f"of them would sit idle; use {gpus} (one process per GPU), or pass --allow-idle-gpus"
        )
    declared = {"inputs": set(job.inputs or {}), "outputs": set(job.outputs or {})}
    if ckpt_output is not None:
        declared["outputs"].add(ckpt_output)
    for kind, name in dict.fromkeys(BINDING.findall(command)):
        if name not in declared[kind]:
            have = ", ".join(sorted(declared[kind])) or "none"
            out.append(
                f"--file {path}: command uses ${{{{{kind}.{name}}}}} but the file declares no {kind}.{name} "
                f"({kind} declared: {have}); add it under {kind}: or fix the name"
            )
    if ckpt_output is not None:
        ref = f"${{{{outputs.{ckpt_output}}}}}"
        if ref not in command:
            out.append(
                f"--file {path}: its command does not use {ref}, so the trainer would not checkpoint to the "
                f"run's folder; pass it as the checkpoint folder (torchtitan: --job.dump_folder {ref}), name "
                "the output it uses with --ckpt-output, or pass --no-checkpoint (no resume after a "
                "preemption)"
            )
        own = (job.outputs or {}).get(ckpt_output)
        for attr in ("path", "mode"):
            if own is not None and getattr(own, attr, None) not in (
                None,
                "rw_mount" if attr == "mode" else None,
            ):
                out.append(
                    f"--file {path}: outputs.{ckpt_output}.{attr} {getattr(own, attr)!r}: the platform binds "
                    f"the checkpoint output (rw_mount, ckpt/<run name>/); drop {attr}, or pass "
                    "--no-checkpoint to keep yours"
                )
    tier = str(getattr(job.queue_settings, "job_tier", None) or "")
    if target.tier == "spot" and not target.compute and tier and tier.lower() != "spot":
        out.append(
            f"--file {path}: queue_settings.job_tier {tier!r} and --spot (job_tier Spot) disagree; drop "
            "--spot to keep the file's tier, or set job_tier: spot"
        )
    if instance_type:
        where = f"--cluster {target.compute} ({target.size})" if target.compute else f"--size {target.size}"
        if target.compute or str(instance_type).lower() != target.size.lower():
            out.append(
                f"--file {path}: resources.instance_type {instance_type!r}: the job runs on {where}; drop "
                "the key" + ("" if target.compute else f", or pass --size {instance_type}")
            )
    return out
