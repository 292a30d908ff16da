"""Smoke test for a distributed GPU job: who is where, the world size, and all-reduce bandwidth.

Run it as an Azure ML PyTorch job with process_count_per_instance = GPUs per node (Azure ML sets
MASTER_ADDR, MASTER_PORT, WORLD_SIZE, NODE_RANK, RANK, LOCAL_RANK: docs/reference/azure-notes.md §4),
under torchrun, or with `python -m jobs local smoke`. With NCCL_DEBUG=INFO the rank-0 log also shows the
transport NCCL chose (NET/IB vs NET/Socket), which `python -m jobs verify` reads.

Output (stable; parsed by `jobs verify`, documented in docs/job-scripts.md):
    smoke rank=3 local_rank=1 node_rank=1 world_size=4 host=node-1 device=cuda:1     (every rank)
    world size 4                                                                     (rank 0)
    smoke all_reduce size=1048576 count=262144 time_us=123.4 algbw=8.50 busbw=12.75  (rank 0, per size)
    smoke peak busbw: 12.75 GB/s                                                     (rank 0, last line)
algbw = bytes / time (decimal GB/s) and busbw = algbw * 2 * (n - 1) / n, the nccl-tests formulas
(nccl-tests doc/PERFORMANCE.md); time is the slowest rank's mean over --iters.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import socket
import sys
import time

import distenv
import torch
import torch.distributed as dist
from peerloss import is_peer_loss

EXIT_WRONG_WORLD = 3
EXIT_BAD_SUM = 4
EXIT_PEER_LOST = 1
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_arg(text: str) -> int:
    m = re.fullmatch(r"(\d+)([KMG]?)", text.strip().upper().removesuffix("B").removesuffix("I"))
    if not m or int(m.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 4096, 64K, 1M or 1G")
    return int(m.group(1)) * UNITS[m.group(2)]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    # allow_abbrev=False: `--expect 8` must not silently become --expect-world-size (the job sets it).
    p = argparse.ArgumentParser(prog="smoke.py", description=__doc__.split("\n")[0], allow_abbrev=False)
    p.add_argument("--expect-world-size", type=int, help="exit non-zero unless WORLD_SIZE equals this")
    p.add_argument(
        "--timeout-min", type=float, default=10.0, help="collective timeout in minutes (default 10)"
    )
    p.add_argument("--min-bytes", type=size_arg, help="smallest all-reduce (default 1M on GPU, 1K on CPU)")
    p.add_argument(
        "--max-bytes", type=size_arg, help="largest all-reduce (default: --gpu-max-bytes on GPU, 4M on CPU)"
    )
    p.add_argument(
        "--gpu-max-bytes",
        type=size_arg,
        default=1 << 30,
        help="largest all-reduce on GPU when --max-bytes is unset (default 1G; the job builder sets the "
        "message size of the size's health levels, 16G on ND H100 v5); a CPU run keeps its small sweep",
    )
    p.add_argument("--factor", type=int, default=2, help="size multiplier between steps (default 2)")
    p.add_argument("--iters", type=int, default=20, help="timed iterations per size (nccl-tests default 20)")
    p.add_argument("--warmup", type=int, default=5, help="untimed iterations per size (nccl-tests default 5)")
    p.add_argument("--no-sweep", action="store_true", help="only check ranks, world size and one all-reduce")
    args = p.parse_args(argv)
    if args.expect_world_size is not None and args.expect_world_size < 1:
        p.error(f"--expect-world-size must be at least 1 (got {args.expect_world_size})")
    if args.timeout_min <= 0:
        p.error(f"--timeout-min must be positive (got {args.timeout_min})")
    if args.factor < 2:
        p.error(f"--factor must be at least 2 (got {args.factor})")
    if args.iters < 1 or args.warmup < 0:
        p.error("--iters must be at least 1 and --warmup at least 0")
    if args.min_bytes and args.max_bytes and args.min_bytes > args.max_bytes:
        p.error(f"--min-bytes ({args.min_bytes}) is larger than --max-bytes ({args.max_bytes})")
    return args


def bandwidth(nbytes: int, seconds: float, world: int) -> tuple[float, float]:
    """nccl-tests all_reduce: algbw = bytes/s in GB/s (1e9), busbw = algbw * 2(n-1)/n."""
    algbw = nbytes / seconds / 1e9
    return algbw, algbw * 2 * (world - 1) / world


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def sweep(args: argparse.Namespace, device: torch.device, world: int, rank: int) -> float:
    lo = args.min_bytes or (1 << 20 if device.type == "cuda" else 1 << 10)
    hi = args.max_bytes or (args.gpu_max_bytes if device.type == "cuda" else 4 << 20)
    peak = 0.0
    if rank == 0:
        print(
            f"smoke all_reduce dtype=float32 op=sum ranks={world} iters={args.iters} warmup={args.warmup}",
            flush=True,
        )
    size = lo
    while size <= hi:
        count = max(1, size // 4)
        x = torch.ones(count, dtype=torch.float32, device=device)
        for _ in range(args.warmup):
            dist.all_reduce(x)
        sync(device)
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(args.iters):
            dist.all_reduce(x)
        sync(device)
        elapsed = torch.tensor([(time.perf_counter() - t0) / args.iters], dtype=torch.float64, device=device)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # the collective is as slow as its slowest rank
        seconds = float(elapsed.item())
        algbw, busbw = bandwidth(count * 4, seconds, world)
        peak = max(peak, busbw)
        if rank == 0:
            print(
                f"smoke all_reduce size={count * 4} count={count} time_us={seconds * 1e6:.1f} "
                f"algbw={algbw:.2f} busbw={busbw:.2f}",
                flush=True,
            )
        del x
        size *= args.factor
    return peak


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = distenv.from_environ("smoke.py", "smoke")
    if env is None:
        return 2
    rank, world, local_rank, node_rank = env.rank, env.world, env.local_rank, env.node_rank
    device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(
        backend="nccl" if device.type == "cuda" else "gloo",
        timeout=datetime.timedelta(minutes=args.timeout_min),
    )
    print(
        f"smoke rank={rank} local_rank={local_rank} node_rank={node_rank} world_size={world} "
        f"host={socket.gethostname()} device={device}",
        flush=True,
    )

    try:
        if rank == 0:
            print(f"world size {world}", flush=True)
        if args.expect_world_size is not None and world != args.expect_world_size:
            if rank == 0:  # "If process_count_per_instance isn't specified, Azure Machine Learning will by
                # default launch one process per node" (how-to-train-distributed-gpu.md, azure-notes §4)
                print(
                    f"smoke.py: error: world size is {world} but --expect-world-size is "
                    f"{args.expect_world_size}. Set the job's distribution process_count_per_instance to the "
                    "GPUs per node: without it Azure ML starts one process per node (WORLD_SIZE = "
                    "instance_count x process_count_per_instance).",
                    file=sys.stderr,
                    flush=True,
                )
            return EXIT_WRONG_WORLD  # every rank sees the same WORLD_SIZE, so every rank exits here

        check = torch.full((4,), float(rank + 1), device=device)
        dist.all_reduce(check)
        expected = world * (world + 1) / 2
        if not torch.all(check == expected):
            print(
                f"smoke.py: error: rank {rank}: all-reduce returned {check.tolist()}, expected {expected}",
                file=sys.stderr,
                flush=True,
            )
            return EXIT_BAD_SUM
        if rank == 0:
            print(f"smoke all_reduce check: ok (sum of ranks 1..{world} = {expected:g})", flush=True)
        if not args.no_sweep:
            peak = sweep(args, device, world, rank)
            if rank == 0:
                print(f"smoke peak busbw: {peak:.2f} GB/s", flush=True)
        dist.barrier()
    except RuntimeError as e:
        if not is_peer_loss(e):
            raise
        print(
            f"smoke.py: error: rank {rank}: lost a peer: a collective failed "
            f"({str(e).splitlines()[0][:300]}); another rank died or hung "
            f"(collective timeout {args.timeout_min:g} min)",
            file=sys.stderr,
            flush=True,
        )
        os._exit(EXIT_PEER_LOST)  # skip process-group teardown: it can block on a dead peer
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
