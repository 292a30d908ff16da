"""Training stall per checkpoint: the project's background checkpoint vs a synchronous torch.save.

    .venv/bin/python bench/checkpoint_stall.py                # table
    .venv/bin/python bench/checkpoint_stall.py --json         # one JSON object
    .venv/bin/python bench/checkpoint_stall.py --blob-mount   # every write through localml's blob mount

Method (one process, one run, methods interleaved so both see the same machine load):
- a GPT from jobs/src/model.py with AdamW state, sized so model + optimizer state is >= 200 MB;
- baseline: the median time of a training step with no checkpoint;
- sync: the stall is the wall time of `torch.save(state, path)` of the same state at a step boundary
  (what the seed's example does), where training cannot proceed;
- project (jobs/src/checkpointing.py AsyncCheckpointer): the stall is the time `save()` blocks the
  training thread (copy to CPU) plus the extra time of the training steps that ran while the background
  thread wrote (sum of (step - baseline median) over those steps: GIL, memory bandwidth and I/O
  contention count against the method). Its writes do not fsync (checkpointing.py: no fsync on a blob
  mount); the second sync row adds an fsync to torch.save for comparison.
- `--blob-mount`: both methods write through an emulated rw_mount (localml/blobfs.py, FUSE), where
  close() uploads the file, so the synchronous stall includes the upload.
Target: project stall <= 10% of the synchronous stall.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jobs" / "src"))
from checkpointing import AsyncCheckpointer  # noqa: E402
from model import GPT, GPTConfig  # noqa: E402

TARGET = 0.10


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--checkpoints", type=int, default=5, help="checkpoints per method (default 5)")
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=512)
    p.add_argument("--vocab-size", type=int, default=16384)
    p.add_argument("--dir", type=Path, help="where to write (default: a temporary folder)")
    p.add_argument("--blob-mount", action="store_true", help="write through localml's emulated blob mount")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.checkpoints < 1:
        p.error("--checkpoints must be at least 1")
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = GPT(GPTConfig(args.vocab_size, 32, args.n_layer, 8, args.n_embd))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, args.vocab_size, (1, 32))

    saver: AsyncCheckpointer | None = None
    fenced = [0.0]  # seconds step() waited in fence()

    def step() -> float:
        t0 = time.perf_counter()
        model(x, x).backward()
        if saver is not None:
            fenced[0] += saver.fence()  # as train.py: the overlapped copy must finish before weights change
        opt.step()
        opt.zero_grad(set_to_none=True)
        return time.perf_counter() - t0

    for _ in range(3):  # creates the optimizer state
        step()
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 0}
    nbytes = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    nbytes += sum(
        t.numel() * t.element_size()
        for s in opt.state.values()
        for t in s.values()
        if isinstance(t, torch.Tensor)
    )
    baseline = statistics.median(step() for _ in range(5))

    root = Path(tempfile.mkdtemp(prefix="ckpt-stall-", dir=args.dir))
    mount = None
    target = root
    if args.blob_mount:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from localml.mount import BlobMount

        mount = BlobMount(root / "store", root / "mnt", root / "blobfs").start()
        target = mount.mountpoint
    saver = AsyncCheckpointer(target / "async", keep=2)
    (target / "sync").mkdir()
    sync_s, durable_s, block_s, slow_s, write_s, overlapped = [], [], [], [], [], []
    for i in range(args.checkpoints):
        t0 = time.perf_counter()
        torch.save(state, target / "sync" / f"step_{i}.pt")
        sync_s.append(time.perf_counter() - t0)
        (target / "sync" / f"step_{i}.pt").unlink()
        step()
        t0 = time.perf_counter()
        with open(target / "sync" / f"durable_{i}.pt", "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        durable_s.append(time.perf_counter() - t0)
        (target / "sync" / f"durable_{i}.pt").unlink()
        step()
        fenced[0] = 0.0
        blocked = saver.save(state, i + 1, overlap=True)
        during = []
        while saver.busy:
            during.append(step())
        saver.wait()
        control = [step() for _ in during]  # the same number of steps with no write: a paired baseline
        block_s.append(blocked + fenced[0])
        slow_s.append(sum(during) - sum(control))
        write_s.append(saver.last_write_s)
        overlapped.append(len(during))
        step()
    saver.close()
    if mount is not None:
        mount.unmount()
    shutil.rmtree(root)

    med = statistics.median
    result = {
        "state_mb": round(nbytes / 1e6, 1),
        "params_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 2),
        "baseline_step_s": round(baseline, 4),
        "checkpoints": args.checkpoints,
        "sync_torch_save_stall_s": round(med(sync_s), 4),
        "sync_torch_save_fsync_stall_s": round(med(durable_s), 4),
        "project_stall_s": round(med(block_s), 4),
        "project_background_write_s": round(med(write_s), 4),
        "steps_during_write": med(overlapped),
        "steps_during_write_slowdown_s": round(med(slow_s), 4),
        "ratio": round(med(block_s) / med(sync_s), 4),
        "ratio_vs_durable": round(med(block_s) / med(durable_s), 4),
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
            f"state {result['state_mb']} MB ({result['params_m']}M params + AdamW), baseline step "
            f"{baseline * 1000:.0f} ms, {args.checkpoints} checkpoints per method, medians, "
            f"{result['cpu_count']} CPUs, load {result['load_avg_1m']}:"
        )
        print(f"  {'training stall per checkpoint':46s} {'seconds':>10s} {'vs torch.save':>14s}")
        rows = [
            ("synchronous torch.save", med(sync_s)),
            ("synchronous torch.save + fsync (durable)", med(durable_s)),
            ("project: save() + fence() (snapshot, overlap)", med(block_s)),
        ]
        for name, v in rows:
            print(f"  {name:46s} {v:>10.3f} {100 * v / med(sync_s):>13.1f}%")
        print(
            f"  background write incl. sha256 (and upload on a mount): {med(write_s):.3f} s; "
            f"{med(overlapped):g} steps ran "
            f"during it, {med(slow_s):+.3f} s slower in total than the same steps without a write"
        )
        print(
            f"  target: stall <= {100 * TARGET:.0f}% of the synchronous torch.save stall: "
            f"{'PASS' if result['meets_target'] else 'FAIL'} ({100 * result['ratio']:.1f}%)"
        )
    return 0 if result["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
