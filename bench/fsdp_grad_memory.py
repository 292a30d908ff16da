"""Gradient memory between micro-steps under FSDP2 with --grad-accum, on CPU (gloo): train.py's micro_step
with --fsdp-grad-sync every (reduce-scatter after every micro-step, the default since issue 34) against last
(one reduce-scatter per step: what train.py did before).

Method. WORLD ranks (processes, gloo on CPU) build model.py's Llama at --model's shape, shard it with
parallel.py (train.py's FSDP2 units) under train.py's GPU policy (MixedPrecisionPolicy: bf16 compute, fp32
gradient reduction), and run --grad-accum micro-steps of one optimizer step through train.micro_step. After
each micro-step's backward every rank sums the bytes of the gradients it holds: unsharded (FSDP2's
FSDPParam keeps them on the unsharded parameter, or upcast to the reduce dtype in
`unsharded_accumulated_grad`) and sharded (each parameter's DTensor .grad, its local shard). The peak over
the micro-steps before the last (the memory held between micro-steps) is printed for rank 0, in bytes and
bytes per parameter.

    .venv/bin/python bench/fsdp_grad_memory.py --model small --grad-accum 4 [--world 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from jobs.builders import SRC_DIR  # noqa: E402  (the job scripts' folder, what Azure ML uploads)

sys.path.insert(0, str(SRC_DIR))

import train  # noqa: E402
from model import PRESETS, Llama  # noqa: E402
from parallel import shard  # noqa: E402
from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy  # noqa: E402


def held_bytes(model: torch.nn.Module) -> tuple[int, int]:
    """(unsharded, sharded) gradient bytes this rank holds now."""
    unsharded = 0
    for m in model.modules():
        if isinstance(m, FSDPModule):
            group = m._get_fsdp_state()._fsdp_param_group
            for fp in group.fsdp_params if group else []:
                acc = fp.unsharded_accumulated_grad
                grad = fp._unsharded_param.grad if hasattr(fp, "_unsharded_param") else None
                unsharded += sum(t.numel() * t.element_size() for t in (acc, grad) if t is not None)
    sharded = sum(
        p.grad.to_local().numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None
    )
    return unsharded, sharded


def rank_main(rank: int, world: int, store: str, model_name: str, accum: int, seq: int, sync: str, q) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    cfg = PRESETS[model_name]
    torch.manual_seed(0)
    model = Llama(cfg)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    shard(model, mesh=dist.device_mesh.init_device_mesh("cpu", (world,)), mp_policy=policy)
    g = torch.Generator().manual_seed(rank)
    held = []
    for micro in range(accum):
        x = torch.randint(0, cfg.vocab_size, (1, seq), generator=g)
        with train.micro_step(model, micro, accum, "fsdp", sync):
            (model(x, x) / accum).backward()
        held.append(held_bytes(model))
    if rank == 0:
        q.put({"params": sum(p.numel() for p in model.parameters()), "held": held})
    dist.barrier()
    dist.destroy_process_group()


def measure(model_name: str, accum: int, world: int, seq: int, sync: str) -> dict:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(rank_main, (world, f"{tmp}/store", model_name, accum, seq, sync, q), nprocs=world)
    got = q.get()
    between = got["held"][:-1]
    peak_unsharded = max(u for u, _ in between)
    peak_sharded = max(s for _, s in between)
    return {
        "fsdp_grad_sync": sync,
        "params": got["params"],
        "between_micro_steps_peak_unsharded_bytes": peak_unsharded,
        "between_micro_steps_peak_sharded_bytes": peak_sharded,
        "between_micro_steps_bytes_per_param": (peak_unsharded + peak_sharded) / got["params"],
        "per_micro_step": got["held"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="tiny", choices=sorted(PRESETS))
    p.add_argument("--grad-accum", type=int, default=4)
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    if a.grad_accum < 2 or a.world < 1 or a.seq < 1:
        p.error("--grad-accum must be at least 2 (memory between micro-steps), --world and --seq at least 1")
    results = [measure(a.model, a.grad_accum, a.world, a.seq, s) for s in train.GRAD_SYNC]
    if a.json:
        print(json.dumps({"model": a.model, "grad_accum": a.grad_accum, "world": a.world, "runs": results}))
        return 0
    for r in results:
        print(
            f"--fsdp-grad-sync {r['fsdp_grad_sync']:5}: {a.model} ({r['params']:,} params), world {a.world}, "
            f"--grad-accum {a.grad_accum}: between micro-steps rank 0 holds "
            f"{r['between_micro_steps_peak_unsharded_bytes'] / 2**20:,.1f} MiB unsharded + "
            f"{r['between_micro_steps_peak_sharded_bytes'] / 2**20:,.1f} MiB sharded gradients "
            f"({r['between_micro_steps_bytes_per_param']:.2f} bytes/param)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
