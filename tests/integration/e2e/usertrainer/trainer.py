"""A team's own trainer, as far as the platform knows: not train.py, nothing of jobs/payload. It takes its
checkpoint folder as --out, keeps its own checkpoint format (one JSON file), resumes from it, and talks to
its peers over torch.distributed (gloo) with the variables Azure ML sets."""

import argparse
import json
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist

p = argparse.ArgumentParser()
p.add_argument("--out", required=True)
p.add_argument("--steps", type=int, default=200)
p.add_argument("--every", type=int, default=20)
a = p.parse_args()
dist.init_process_group("gloo")
rank = dist.get_rank()
state = Path(a.out) / "my-trainer-state.json"
start = json.loads(state.read_text())["step"] if state.exists() else 0
total = torch.tensor([float(start)])
print(f"my trainer: rank {rank} starts at step {start}", flush=True)
for step in range(start, a.steps):
    x = torch.ones(1)
    dist.all_reduce(x)  # every rank takes part in every step
    total += x / dist.get_world_size()
    time.sleep(0.05)
    if (step + 1) % a.every == 0:
        dist.barrier()
        if rank == 0:
            with open(state, "w") as f:  # its own format, written under its final name
                json.dump({"step": step + 1, "total": float(total)}, f)
        print(f"my trainer: checkpoint at step {step + 1}", flush=True)
print(f"my trainer: rank {rank} done, total {float(total):.0f}", flush=True)
dist.barrier()
os._exit(0)
