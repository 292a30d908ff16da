"""Training stall per checkpoint: DCP async_save (checkpointing.py, as train.py does) vs a synchronous save.

    .venv/bin/python bench/checkpoint_stall.py                # table
    .venv/bin/python bench/checkpoint_stall.py --json         # one JSON object
    .venv/bin/python bench/checkpoint_stall.py --blob-mount   # every write through localml's blob mount

Method (one process, one run, methods interleaved so both see the same machine load):
- train.py's Llama (jobs/payload/model.py) with AdamW state, by default the `small` preset with 24 blocks:
  about 200M parameters, 2.4 GB of model and optimizer state (fp32 weights, two fp32 moments), the largest
  this 23 GB, shared machine holds twice over (async_save stages a CPU copy of the whole state);
- baseline: the median time of a training step with no checkpoint;
- sync DCP: `CheckpointManager(async_=False).maybe_save` (dcp.save with our writer, then the commit
  marker): the training thread waits for all of it;
- sync torch.save of the same state, for reference (the seed's example);
- async DCP (train.py's default): the stall is the time `maybe_save` blocks the training thread (DCP
  stages the state to CPU, then writes from a thread) plus the extra time of the training steps that ran
  while the write went on (sum of (step - a paired step without a write)); the commit marker is written
  when the write finished.
- `--blob-mount`: every method writes through an emulated rw_mount (doubles/localml/blobfs.py, FUSE), where
  close() uploads the file, so a synchronous stall includes the upload.
Target: async stall <= 10% of the synchronous DCP stall.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jobs" / "payload"))
from checkpointing import CheckpointManager  # noqa: E402
from model import PRESETS, Llama  # noqa: E402

TARGET = 0.10


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--checkpoints", type=int, default=3, help="checkpoints per method (default 3)")
    p.add_argument("--model", choices=sorted(PRESETS), default="small")
    p.add_argument("--n-layer", type=int, default=24, help="blocks (default 24: a 2.4 GB state)")
    p.add_argument("--dir", type=Path, help="where to write (default: a temporary folder)")
    p.add_argument("--blob-mount", action="store_true", help="write through localml's emulated blob mount")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.checkpoints < 1:
        p.error("--checkpoints must be at least 1")
    torch.manual_seed(0)
    cfg = dataclasses.replace(PRESETS[args.model], n_layer=args.n_layer, block_size=32)
    model = Llama(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, cfg.vocab_size, (1, 32))

    def step() -> float:
        t0 = time.perf_counter()
        model(x, x).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return time.perf_counter() - t0

    for _ in range(2):  # creates the optimizer state
        step()
    nbytes = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    nbytes += sum(
        t.numel() * t.element_size()
        for s in opt.state.values()
        for t in s.values()
        if isinstance(t, torch.Tensor)
    )
    baseline = statistics.median(step() for _ in range(3))

    root = Path(tempfile.mkdtemp(prefix="ckpt-stall-", dir=args.dir))
    mount = None
    target = root
    if args.blob_mount:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from doubles.localml.mount import BlobMount

        mount = BlobMount(root / "store", root / "mnt", root / "blobfs").start()
        target = mount.mountpoint
    config = dataclasses.asdict(cfg)
    managers = {}
    for name, async_ in (("sync", False), ("async", True)):
        managers[name] = CheckpointManager(
            target / name, interval=1, keep=1, total_steps=10**6, async_=async_
        )
        managers[name].track(model, opt, config)
    (target / "torch").mkdir()
    sync_s, torch_s, block_s, slow_s, write_s, overlapped = [], [], [], [], [], []
    for i in range(args.checkpoints):
        t0 = time.perf_counter()
        managers["sync"].maybe_save(i + 1)
        sync_s.append(time.perf_counter() - t0)
        step()
        t0 = time.perf_counter()
        torch.save(
            {"model": model.state_dict(), "optimizer": opt.state_dict()}, target / "torch" / "state.pt"
        )
        torch_s.append(time.perf_counter() - t0)
        step()
        t0 = time.perf_counter()
        managers["async"].maybe_save(i + 1)
        blocked = time.perf_counter() - t0
        during = []
        pending = managers["async"]._pending
        while pending is not None and not pending[2].is_set():  # until the commit marker is written
            during.append(step())
        write_s.append(time.perf_counter() - t0)
        managers["async"].wait()
        control = [step() for _ in during]  # the same number of steps with no write: a paired baseline
        block_s.append(blocked)
        slow_s.append(sum(during) - sum(control))
        overlapped.append(len(during))
    for m in managers.values():
        m.close()
    if mount is not None:
        mount.unmount()
    shutil.rmtree(root)

    med = statistics.median
    stall = med(block_s) + max(0.0, med(slow_s))
    result = {
        "state_gb": round(nbytes / 1e9, 2),
        "params_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
        "baseline_step_s": round(baseline, 4),
        "checkpoints": args.checkpoints,
        "sync_dcp_stall_s": round(med(sync_s), 3),
        "sync_torch_save_stall_s": round(med(torch_s), 3),
        "async_dcp_blocked_s": round(med(block_s), 3),
        "async_dcp_steps_during_write": med(overlapped),
        "async_dcp_steps_slowdown_s": round(med(slow_s), 3),
        "async_dcp_stall_s": round(stall, 3),
        "async_dcp_write_to_commit_s": round(med(write_s), 3),
        "ratio": round(stall / med(sync_s), 4),
        "target_ratio": TARGET,
        "cpu_count": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "torch": torch.__version__,
        "blob_mount": args.blob_mount,
    }
    result["meets_target"] = result["ratio"] <= TARGET
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"state {result['state_gb']} GB ({result['params_m']}M params + AdamW), baseline step "
            f"{baseline:.2f} s, {args.checkpoints} checkpoints per method, medians, "
            f"{result['cpu_count']} CPUs, load {result['load_avg_1m']}:"
        )
        print(f"  {'training stall per checkpoint':44s} {'seconds':>9s} {'vs sync DCP':>12s}")
        for name, v in (
            ("synchronous DCP save + commit", med(sync_s)),
            ("synchronous torch.save", med(torch_s)),
            ("async DCP (staging + slower steps)", stall),
        ):
            print(f"  {name:44s} {v:>9.3f} {100 * v / med(sync_s):>11.1f}%")
        print(
            f"  async: blocked {med(block_s):.3f} s for the copy to CPU; the write took {med(write_s):.3f} s "
            f"to its commit, {med(overlapped):g} steps ran during it ({med(slow_s):+.3f} s against the same "
            "steps without a write)"
        )
        print(
            f"  target: stall <= {100 * TARGET:.0f}% of the synchronous DCP stall: "
            f"{'PASS' if result['meets_target'] else 'FAIL'} ({100 * result['ratio']:.1f}%)"
        )
    return 0 if result["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
