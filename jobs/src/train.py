"""DDP training of a small GPT on uint16 token shards (or synthetic tokens), resumable after preemption.

Runs unchanged as an Azure ML PyTorch job (distribution type PyTorch, process_count_per_instance = GPUs
per node; Azure ML sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE, NODE_RANK, RANK, LOCAL_RANK:
docs/reference/azure-notes.md §4, how-to-train-distributed-gpu.md), under `torchrun`, under
`python -m jobs local train`, or as one plain process.

    python train.py --steps 200                                  # one process, synthetic tokens
    torchrun --nproc-per-node 8 train.py --data DIR --ckpt OUT   # one node, 8 GPUs

Data: every `*.bin` in --data is a flat array of uint16 token ids (nanoGPT's train.bin format). The
batch of step s on rank r is drawn from a generator seeded by (seed, s, micro-step, r), so the data
position is the step number and a resumed run reads exactly what an uninterrupted one would.
Rank 0 logs one metrics record per --log-every step (a JSON line, metrics.py) beside a human line, and
ends with `final parameters sha256: <hex>`, a fingerprint of the final weights.

Resume (--ckpt): the newest complete checkpoint there gives the weights, optimizer, RNG states, step and the
model's shape; a model flag given on the command line must match it (exit 2 otherwise), as in nanoGPT.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import hashlib
import inspect
import math
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from checkpointing import CheckpointError, CheckpointManager, StopRequest
from metrics import StepMetrics
from model import GPT, GPTConfig
from peerloss import is_peer_loss
from torch.nn.parallel import DistributedDataParallel as DDP

# Peak dense BF16 tensor throughput per GPU, TFLOP/s (datasheets quote "with sparsity": dense is half).
# Matched against torch.cuda.get_device_name() in order, most specific first.
PEAK_BF16_TFLOPS: list[tuple[str, float, str]] = [
    ("H100 NVL", 835.0, "NVIDIA H100 datasheet: H100 NVL BF16 1,671 TFLOPS with sparsity (Azure NC H100 v5)"),
    ("H100 PCIe", 756.0, "NVIDIA H100 datasheet: H100 PCIe BF16 1,513 TFLOPS with sparsity"),
    ("H100", 989.0, "NVIDIA H100 datasheet: H100 SXM BF16 1,979 TFLOPS with sparsity (Azure ND H100 v5)"),
    ("H200 NVL", 835.0, "NVIDIA H200 datasheet: H200 NVL BF16 1,671 TFLOPS with sparsity"),
    ("H200", 989.0, "NVIDIA H200 datasheet: H200 SXM BF16 1,979 TFLOPS with sparsity (Azure ND H200 v5)"),
    ("GB200", 2500.0, "NVIDIA GB200 NVL72 datasheet: 360 PFLOPS FP16/BF16 sparse over 72 GPUs"),
    ("B200", 2250.0, "NVIDIA HGX B200 datasheet: 36 PFLOPS FP16/BF16 sparse over 8 GPUs"),
    ("A100", 312.0, "NVIDIA A100 datasheet: BF16 312 TFLOPS dense (Azure ND A100 v4, NC A100 v4)"),
    ("A10", 125.0, "NVIDIA A10 datasheet: BF16 125 TFLOPS dense (Azure NVads A10 v5)"),
    ("MI300X", 1307.4, "AMD Instinct MI300X datasheet: BF16 1,307.4 TFLOPS dense (Azure ND MI300X v5)"),
]
EXIT_INTERRUPTED = 128  # + the signal number (143 for SIGTERM), as if killed by it: never 0
EXIT_PEER_LOST = 1
EXIT_USAGE = 2  # argparse's code for a bad flag
#: The flags that size the model: their defaults are GPTConfig's (model.py), and a resume takes them from
#: the checkpoint. Dropout is not a shape: given on the command line it overrides the checkpoint's.
MODEL_FLAGS = ("n_layer", "n_head", "n_embd", "block_size", "vocab_size", "dropout")
SHAPE_FLAGS = MODEL_FLAGS[:-1]


class BadFlag(Exception):
    """A flag that does not fit what --ckpt holds: main prints it and exits EXIT_USAGE."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    # allow_abbrev=False: `--ste 5` must not silently become --steps (the jobs package sets --steps itself).
    p = argparse.ArgumentParser(prog="train.py", description=__doc__.split("\n")[0], allow_abbrev=False)
    p.add_argument("--data", help="folder of *.bin uint16 token shards (default: synthetic tokens)")
    p.add_argument("--steps", type=int, default=50, help="optimizer steps in total (a resume counts from 0)")
    p.add_argument("--batch-size", type=int, default=4, help="sequences per GPU per micro-step")
    p.add_argument("--grad-accum", type=int, default=1, help="micro-steps per optimizer step")
    model = GPTConfig()  # the one set of model defaults; None below means "not given"
    p.add_argument("--n-layer", type=int, help=f"default {model.n_layer}, or the checkpoint's")
    p.add_argument("--n-head", type=int, help=f"default {model.n_head}, or the checkpoint's")
    p.add_argument("--n-embd", type=int, help=f"default {model.n_embd}, or the checkpoint's")
    p.add_argument("--block-size", type=int, help=f"context length in tokens (default {model.block_size})")
    p.add_argument("--vocab-size", type=int, help=f"default {model.vocab_size}, or the checkpoint's")
    p.add_argument("--dropout", type=float, help=f"default {model.dropout}, or the checkpoint's")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (cosine decay to 10%%)")
    p.add_argument("--warmup", type=int, default=10, help="linear warmup steps")
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--ckpt", help="checkpoint folder (the job's output mount); resumes from it at start")
    p.add_argument("--ckpt-every", type=int, default=100, help="steps between checkpoints (with --ckpt)")
    p.add_argument("--keep", type=int, default=3, help="checkpoints to keep")
    p.add_argument("--peak-tflops", type=float, help="peak FLOP/s per device for MFU (default: GPU table)")
    p.add_argument("--timeout-min", type=float, default=10.0, help="collective timeout in minutes")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (GPU)")
    args = p.parse_args(argv)
    args.model_flags_given = {f for f in MODEL_FLAGS if getattr(args, f) is not None}
    for f in MODEL_FLAGS:
        if getattr(args, f) is None:
            setattr(args, f, getattr(model, f))
    for flag in (
        "steps",
        "batch_size",
        "grad_accum",
        "n_layer",
        "n_head",
        "n_embd",
        "block_size",
        "vocab_size",
        "log_every",
        "ckpt_every",
        "keep",
    ):
        if getattr(args, flag) < 1:
            p.error(f"--{flag.replace('_', '-')} must be at least 1 (got {getattr(args, flag)})")
    if args.n_embd % args.n_head:
        p.error(f"--n-embd {args.n_embd} must be a multiple of --n-head {args.n_head}")
    if not 0.0 <= args.dropout < 1.0:
        p.error(f"--dropout must be in [0, 1) (got {args.dropout})")
    if args.timeout_min <= 0:
        p.error(f"--timeout-min must be positive (got {args.timeout_min})")
    if args.peak_tflops is not None and args.peak_tflops <= 0:
        p.error(f"--peak-tflops must be positive (got {args.peak_tflops})")
    if args.ckpt is not None and Path(args.ckpt).exists() and not Path(args.ckpt).is_dir():
        p.error(f"--ckpt {args.ckpt}: exists and is not a folder; pass a folder (the job's output mount)")
    if args.data is not None and (problem := check_shards(args.data, args.block_size)):
        p.error(problem)
    return args


def check_shards(data: str, block_size: int) -> str | None:
    """Why the --data folder cannot feed this --block-size, or None."""
    shards = sorted(Path(data).glob("*.bin")) if Path(data).is_dir() else []
    if not shards:
        return (
            f"--data {data}: no *.bin token shards there; pass a folder of uint16 shards "
            "or leave --data out for synthetic tokens"
        )
    short = [s.name for s in shards if s.stat().st_size // 2 < block_size + 2]
    if short:
        return f"--data: shards {short} hold fewer than --block-size + 2 ({block_size + 2}) tokens"
    return None


def model_config(args: argparse.Namespace, saved: dict | None, path: Path | None) -> GPTConfig:
    """The model's config: the flags (or GPTConfig's defaults) on a fresh start; on a resume, the
    checkpoint's, as nanoGPT's train.py does. A shape flag given on the command line that differs from the
    checkpoint raises BadFlag: those weights cannot be loaded into another shape."""
    flags = {f: getattr(args, f) for f in MODEL_FLAGS}
    if saved is None or "config" not in saved:
        return GPTConfig(**flags)
    stored = saved["config"]
    for f in SHAPE_FLAGS:
        if f in args.model_flags_given and flags[f] != stored[f]:
            flag = "--" + f.replace("_", "-")
            raise BadFlag(
                f"{flag} {flags[f]} does not match the checkpoint {path}, written with {flag} {stored[f]}: "
                f"leave {flag} out (or pass {flag} {stored[f]}) to resume it, or pass another --ckpt "
                "folder to start a new run of this shape"
            )
    keep_given = {"dropout": flags["dropout"]} if "dropout" in args.model_flags_given else {}
    return GPTConfig(**({f: stored[f] for f in MODEL_FLAGS} | keep_given))


class Tokens:
    """Token shards (uint16 memmaps) or a synthetic corpus; batch(step, micro, rank) is deterministic."""

    def __init__(self, data: str | None, vocab_size: int, block_size: int, seed: int) -> None:
        self.block_size, self.seed, self.vocab_size = block_size, seed, vocab_size
        if data is None:  # learnable synthetic text: random walks along a fixed random cycle of the vocab
            rng = np.random.default_rng(seed)
            cycle = rng.permutation(vocab_size)
            starts = rng.integers(0, vocab_size, size=(1 << 20) // 64)
            walk = (starts[:, None] + np.arange(64)[None, :]).reshape(-1) % vocab_size
            self.shards, self.names = [cycle[walk].astype(np.int64)], ["synthetic"]
        else:
            paths = sorted(Path(data).glob("*.bin"))
            self.shards, self.names = (
                [np.memmap(p, dtype=np.uint16, mode="r") for p in paths],
                [str(p) for p in paths],
            )
        usable = np.array([len(s) - block_size - 1 for s in self.shards], dtype=np.float64)
        self.weights = usable / usable.sum()

    def batch(self, step: int, micro: int, rank: int, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
        rng = np.random.default_rng([self.seed, step, micro, rank])
        which = rng.choice(len(self.shards), size=batch_size, p=self.weights)
        rows = []
        for i in which:
            off = int(rng.integers(0, len(self.shards[i]) - self.block_size - 1))
            rows.append(np.asarray(self.shards[i][off : off + self.block_size + 1], dtype=np.int64))
        xy = np.stack(rows)
        if xy.max() >= self.vocab_size:
            row = int(xy.max(axis=1).argmax())
            raise SystemExit(
                f"train.py: error: token id {int(xy.max())} in {self.names[which[row]]} is >= "
                f"--vocab-size {self.vocab_size}; set --vocab-size to the tokenizer's vocabulary size"
            )
        xy_t = torch.from_numpy(xy)
        return xy_t[:, :-1].contiguous(), xy_t[:, 1:].contiguous()


def peak_flops(device: torch.device, override_tflops: float | None) -> tuple[float | None, str]:
    if override_tflops is not None:
        return override_tflops * 1e12, "--peak-tflops"
    if device.type != "cuda":
        return None, "no peak for CPU (pass --peak-tflops)"
    name = torch.cuda.get_device_name(device)
    for key, tflops, source in PEAK_BF16_TFLOPS:
        if key in name:
            return tflops * 1e12, f"{name}: {source}"
    return None, f"{name} is not in the peak table (pass --peak-tflops)"


def fingerprint(model: torch.nn.Module) -> str:
    """sha256 over the state_dict in key order: name, dtype, shape, then the raw bytes of each tensor."""
    h = hashlib.sha256()
    for name, t in model.state_dict().items():
        t = t.detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.view(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def lr_at(step: int, args: argparse.Namespace) -> float:
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress))))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    # ---- distributed setup from the environment (Azure ML, torchrun and `jobs local` all set these)
    distributed = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    rank = int(os.environ.get("RANK", 0))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = True  # fp32 matmuls outside autocast
    if distributed:  # init_method defaults to env://: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE
        dist.init_process_group(
            backend="nccl" if device.type == "cuda" else "gloo",
            timeout=datetime.timedelta(minutes=args.timeout_min),
        )
    master = rank == 0

    def log(msg: str) -> None:
        if master:
            print(msg, flush=True)

    # ---- resume: the newest complete checkpoint (all ranks load the one rank 0 verified) sizes the model
    stop = StopRequest((signal.SIGTERM, signal.SIGINT))  # SIGINT: Ctrl-C in `python -m jobs local`
    ckpt = CheckpointManager(
        args.ckpt,
        interval=args.ckpt_every,
        keep=args.keep,
        total_steps=args.steps,
        log=log,
        timeout=datetime.timedelta(minutes=args.timeout_min),
    )  # no --ckpt: every method is a no-op
    try:
        cfg = model_config(args, ckpt.latest(), ckpt.path)
        if args.data is not None and (problem := check_shards(args.data, cfg.block_size)):
            raise BadFlag(problem)
    except BadFlag as e:
        print(f"train.py: error: {e}", file=sys.stderr, flush=True)
        return EXIT_USAGE

    # ---- data, model, optimizer
    tokens_per_step = args.batch_size * cfg.block_size * args.grad_accum  # per GPU
    data = Tokens(args.data, cfg.vocab_size, cfg.block_size, args.seed)
    torch.manual_seed(args.seed)  # identical initial weights on every rank
    model = GPT(cfg).to(device)
    n_params = model.num_params()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    fused = device.type == "cuda" and "fused" in inspect.signature(torch.optim.AdamW).parameters
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr,
        betas=(0.9, 0.95),
        **({"fused": True} if fused else {}),
    )
    autocast = (
        torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else contextlib.nullcontext()
    )
    peak, peak_source = peak_flops(device, args.peak_tflops)
    torch.manual_seed(args.seed + 1 + rank)  # this rank's dropout stream; checkpointed and restored
    # Weights, optimizer state and this rank's RNG states from the checkpoint; its step (0 on a fresh start).
    # The data position needs nothing more: the batch of a step is a function of (--seed, step, rank).
    start = ckpt.restore(model, optimizer, config=dataclasses.asdict(cfg))
    log(
        f"model {n_params / 1e6:.2f}M params | world size {world} | device {device.type} | "
        f"{tokens_per_step} tokens/step/GPU | peak {peak_source}"
    )

    raw_model = model
    if args.compile:
        model = torch.compile(model)
    if distributed:
        model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    mlflow = None
    if master:
        try:  # Azure ML shows MLflow metrics; a job supplies the tracking settings through environment
            import mlflow  # variables (learn.microsoft.com/azure/machine-learning/how-to-use-mlflow-cli-runs)
        except ImportError:
            mlflow = None

    # ---- train
    try:
        t_last, steps_since = time.perf_counter(), 0
        for step in range(start, args.steps):
            for group in optimizer.param_groups:
                group["lr"] = lr_at(step, args)
            loss_sum = torch.zeros((), device=device)
            for micro in range(args.grad_accum):
                x, y = data.batch(step, micro, rank, args.batch_size)
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                sync = micro == args.grad_accum - 1 or not distributed
                with contextlib.nullcontext() if sync else model.no_sync(), autocast:
                    loss = model(x, y) / args.grad_accum
                loss.backward()
                loss_sum += loss.detach()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            ckpt.fence()  # a checkpoint copy that overlapped forward/backward has finished
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            done, steps_since = step + 1, steps_since + 1

            if done % args.log_every == 0 or done == args.steps:
                if distributed:
                    dist.all_reduce(loss_sum, op=dist.ReduceOp.SUM)
                lossf = loss_sum.item() / world  # .item() waits for the GPU, so the timing below is real
                dt = time.perf_counter() - t_last
                tok_s = tokens_per_step * steps_since / dt
                metrics = StepMetrics(
                    step=done,
                    steps=args.steps,
                    loss=lossf,
                    step_ms=1000 * dt / steps_since,
                    tokens_per_s_per_gpu=tok_s,
                    mfu=6 * n_params * tok_s / peak if peak else None,
                    world_size=world,
                    lr=optimizer.param_groups[0]["lr"],
                )
                log(metrics.text())  # for people
                log(metrics.to_line())  # for `jobs scaling` / `jobs verify`
                if mlflow is not None:
                    mlflow.log_metrics(metrics.scalars(), step=done)
                t_last, steps_since = time.perf_counter(), 0

            stopping = stop.agreed(device)  # every rank stops at the same step boundary
            ckpt.maybe_save(done, force=stopping)  # every --ckpt-every steps, the last step, or stopping
            if stopping:
                where = f"checkpoint step {done} written to {args.ckpt}" if ckpt.enabled else "no --ckpt"
                print(
                    f"rank {rank}: interrupted by signal {stop.signum} after step {done}/{args.steps} "
                    f"({where}); exiting {EXIT_INTERRUPTED + stop.signum}: the run did NOT complete, "
                    "resubmit to resume",
                    file=sys.stderr,
                    flush=True,
                )
                return EXIT_INTERRUPTED + (stop.signum or 15)
        ckpt.close()
        if distributed:
            # Every rank leaves its last collective before any rank tears the group down: a rank that
            # destroys gloo's pairs while a peer is still in DDP's final all-reduce aborts that peer
            # ("terminate called without an active exception", exit 134; seen once in tests/e2e).
            dist.barrier()
    except CheckpointError as e:
        print(f"rank {rank}: error: {e}", file=sys.stderr, flush=True)
        return 1
    except RuntimeError as e:
        if not (distributed and is_peer_loss(e)):
            raise
        print(
            f"rank {rank}: error: lost a peer: a collective failed ({str(e).splitlines()[0][:300]}); "
            f"another rank died or hung (collective timeout {args.timeout_min:g} min). Exiting "
            f"{EXIT_PEER_LOST} so the job fails instead of hanging; resubmit to resume from the newest "
            "checkpoint.",
            file=sys.stderr,
            flush=True,
        )
        with contextlib.suppress(CheckpointError):
            ckpt.close()
        sys.stdout.flush()
        os._exit(EXIT_PEER_LOST)  # no process-group teardown: it can block on a dead peer

    if distributed:
        dist.destroy_process_group()
    log(f"final parameters sha256: {fingerprint(raw_model)}")
    return 0


def finish(code: int) -> None:
    """Exit with `code`. A distributed run leaves without interpreter finalization: gloo's C++ worker
    threads can still hold work objects with tensors when the interpreter tears down, and destroying them
    then aborts the process ("terminate called without an active exception", exit 134) after it finished:
    pytorch/pytorch#190489 (a repro), #179291 (the finalization race). Seen once here after a complete
    run (rank 1 of tests/e2e's resume test). Everything the run owes is done first (main closed the
    checkpoints and, after a completed run, destroyed the process group; an interrupted run leaves it, as a
    peer may be gone): MLflow's run is ended here (its atexit hook would not run) and output flushed."""
    mlflow = sys.modules.get("mlflow")
    if mlflow is not None and mlflow.active_run() is not None:
        mlflow.end_run("FINISHED" if code == 0 else "FAILED")
    sys.stdout.flush()
    sys.stderr.flush()
    if "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1:
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    finish(main())
