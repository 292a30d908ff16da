"""Training of a Llama-architecture model on token shards (or synthetic tokens), DDP or FSDP2,
resumable after preemption from torch.distributed.checkpoint folders.

Runs unchanged as an Azure ML PyTorch job (distribution type PyTorch, process_count_per_instance = GPUs
per node; Azure ML sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE, NODE_RANK, RANK, LOCAL_RANK:
docs/reference/azure-notes.md §4, how-to-train-distributed-gpu.md), under `torchrun`, under
`python -m jobs local train`, or as one plain process.

    python train.py --steps 200                                              # one process, synthetic tokens
    torchrun --nproc-per-node 8 train.py --parallel fsdp --model 8B --init-from HF_DIR --data DIR --ckpt OUT

Model (model.py): `--model` picks a preset (tiny .. 8B); the shape flags override it. `--init-from` starts
from released Hugging Face Llama weights (config.json + *.safetensors: hfweights.py), the way continued
pre-training does. Parallelism: `--parallel ddp` replicates the model (DistributedDataParallel);
`--parallel fsdp` shards every block and the rest with FSDP2 `fully_shard`, computing in bf16 on GPU
(MixedPrecisionPolicy) with fp32 master weights and gradient reduction; with --grad-accum > 1 it
reduce-scatters after every micro-step (torchtitan's choice: only sharded gradients between micro-steps;
`--fsdp-grad-sync last` trades that memory for one reduce-scatter per step). `--activation-checkpointing
selective|full` recomputes part of each block (torchtitan's per-op policy) or all of it in backward;
`--compile` compiles each block with its checkpointing (torchtitan's order: checkpoint, compile, shard).
AdamW is fused on CUDA (DDP and FSDP's DTensor shards alike), foreach elsewhere. The host waits for the
device only at log steps: the loss stays on the device between them, and the stop request (SIGTERM) is
agreed across ranks at log steps and checkpoint steps.

Data: every `*.bin` in --data is a flat array of token ids (nanoGPT's train.bin format), uint16 or, as the
folder's meta.json says, uint32 (tokenshards.py; prepdata.py writes them from text with a tokenizer.json). The
batch of step s on rank r is drawn from a generator seeded by (seed, s, micro-step, r), so the data
position is the step number and a resumed run reads exactly what an uninterrupted one would.
Rank 0 logs one metrics record per --log-every step (a JSON line, metrics.py) beside a human line, and
ends with `final parameters sha256: <hex>`, a fingerprint of the final (full) weights.

Resume (--ckpt): the newest committed checkpoint there (checkpointing.py, DCP) gives the weights, optimizer,
step and the model's shape, at any world size; a model flag given on the command line must match it (exit
2 otherwise), as in nanoGPT.
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
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from checkpointing import CheckpointError, CheckpointManager, OldFormat, StopRequest
from hfweights import HFError, load_hf_weights, read_hf_config
from metrics import StepMetrics
from model import CHECKPOINTING, PRESETS, Llama, LlamaConfig, config_from_dict
from parallel import shard
from peerloss import is_peer_loss
from tokenshards import check_shards, open_shards
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.fsdp import MixedPrecisionPolicy
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
#: The flags that size the model: their defaults are the --model preset's (model.py), and a resume takes
#: them from the checkpoint.
MODEL_FLAGS = ("n_layer", "n_head", "n_kv_head", "n_embd", "ffn_hidden", "block_size", "vocab_size")
#: --fsdp-grad-sync: reduce-scatter gradients after every micro-step, or only after the last one.
GRAD_SYNC = ("every", "last")


class BadFlag(Exception):
    """A flag that does not fit what --ckpt holds: main prints it and exits EXIT_USAGE."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    # allow_abbrev=False: `--ste 5` must not silently become --steps (the jobs package sets --steps itself).
    p = argparse.ArgumentParser(prog="train.py", description=__doc__.split("\n")[0], allow_abbrev=False)
    p.add_argument("--data", help="folder of *.bin token shards and meta.json (default: synthetic tokens)")
    p.add_argument("--steps", type=int, default=50, help="optimizer steps in total (a resume counts from 0)")
    p.add_argument("--batch-size", type=int, default=4, help="sequences per GPU per micro-step")
    p.add_argument("--grad-accum", type=int, default=1, help="micro-steps per optimizer step")
    p.add_argument(
        "--model", choices=sorted(PRESETS), help="model shape preset (default tiny, or the checkpoint's)"
    )
    p.add_argument("--n-layer", type=int, help="blocks (default: the preset's, or the checkpoint's)")
    p.add_argument("--n-head", type=int, help="query heads")
    p.add_argument("--n-kv-head", type=int, help="key/value heads (grouped-query attention)")
    p.add_argument("--n-embd", type=int, help="model width")
    p.add_argument("--ffn-hidden", type=int, help="SwiGLU hidden width")
    p.add_argument("--block-size", type=int, help="context length in tokens")
    p.add_argument("--vocab-size", type=int, help="vocabulary size")
    p.add_argument("--init-from", help="Hugging Face Llama folder (config.json, *.safetensors) to start from")
    p.add_argument(
        "--parallel", choices=("ddp", "fsdp"), default="ddp", help="replicate (ddp) or shard (fsdp)"
    )
    p.add_argument(
        "--activation-checkpointing",
        choices=CHECKPOINTING,
        nargs="?",
        const="full",
        default="none",
        help="recompute in backward: nothing, torchtitan's per-op selection, or whole blocks (alone: full)",
    )
    p.add_argument(
        "--fsdp-grad-sync",
        choices=GRAD_SYNC,
        default="every",
        help="FSDP with --grad-accum > 1: reduce-scatter after every micro-step (sharded gradients only, "
        "torchtitan's) or only after the last (one reduce-scatter, unsharded fp32 gradients held meanwhile)",
    )
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (cosine decay to 10%%)")
    p.add_argument("--warmup", type=int, default=10, help="linear warmup steps")
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--ckpt", help="checkpoint folder (the job's output mount); resumes from it at start")
    p.add_argument("--ckpt-every", type=int, default=100, help="steps between checkpoints (with --ckpt)")
    p.add_argument("--keep", type=int, default=3, help="checkpoints to keep")
    p.add_argument("--sync-ckpt", action="store_true", help="save synchronously (default: DCP async_save)")
    p.add_argument("--peak-tflops", type=float, help="peak FLOP/s per device for MFU (default: GPU table)")
    p.add_argument("--timeout-min", type=float, default=10.0, help="collective timeout in minutes")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (GPU)")
    args = p.parse_args(argv)
    args.model_flags_given = {f for f in MODEL_FLAGS if getattr(args, f) is not None}
    for flag in (
        "steps",
        "batch_size",
        "grad_accum",
        "log_every",
        "ckpt_every",
        "keep",
    ):
        if getattr(args, flag) < 1:
            p.error(f"--{flag.replace('_', '-')} must be at least 1 (got {getattr(args, flag)})")
    for f in MODEL_FLAGS:
        if getattr(args, f) is not None and getattr(args, f) < 1:
            p.error(f"--{f.replace('_', '-')} must be at least 1 (got {getattr(args, f)})")
    if args.init_from is not None and args.model is not None:
        p.error(
            "--model and --init-from both give the model's shape: pass one (--init-from reads config.json)"
        )
    if args.timeout_min <= 0:
        p.error(f"--timeout-min must be positive (got {args.timeout_min})")
    if args.peak_tflops is not None and args.peak_tflops <= 0:
        p.error(f"--peak-tflops must be positive (got {args.peak_tflops})")
    if args.ckpt is not None and Path(args.ckpt).exists() and not Path(args.ckpt).is_dir():
        p.error(f"--ckpt {args.ckpt}: exists and is not a folder; pass a folder (the job's output mount)")
    return args


def model_config(args: argparse.Namespace, saved: dict | None, path: Path | None) -> LlamaConfig:
    """The model's config: on a resume, the checkpoint's (nanoGPT's rule; a shape flag that differs raises
    BadFlag: those weights cannot be loaded into another shape); else --init-from's config.json or the
    --model preset, with the shape flags given applied over it."""
    given = {f: getattr(args, f) for f in args.model_flags_given}
    if saved is not None:
        stored = config_from_dict(saved["config"])
        wanted = PRESETS[args.model] if args.model else None
        for f, v in given.items():
            if v != getattr(stored, f):
                flag, old = "--" + f.replace("_", "-"), getattr(stored, f)
                raise BadFlag(
                    f"{flag} {v} does not match the checkpoint {path}, written with {flag} {old}: "
                    f"leave {flag} out (or pass {flag} {old}) to resume it, or pass another --ckpt "
                    "folder to start a new run of this shape"
                )
        if wanted is not None and dataclasses.asdict(wanted) != dataclasses.asdict(stored):
            raise BadFlag(
                f"--model {args.model} does not match the checkpoint {path}: leave --model out to resume it, "
                "or pass another --ckpt folder to start a new run of this shape"
            )
        return stored
    base = read_hf_config(args.init_from) if args.init_from else PRESETS[args.model or "tiny"]
    cfg = dataclasses.replace(base, **given)
    if problem := cfg.problem():
        raise BadFlag(problem)
    shape_given = sorted(f for f in given if f != "block_size")  # the context length is the run's choice
    if args.init_from and shape_given:
        raise BadFlag(
            f"--init-from {args.init_from} gives the model's shape; leave out "
            + ", ".join("--" + f.replace("_", "-") for f in shape_given)
        )
    return cfg


class Tokens:
    """Token shards (memmaps of their dtype) or synthetic tokens; batch(step, micro, rank) is repeatable."""

    def __init__(self, data: str | None, vocab_size: int, block_size: int, seed: int) -> None:
        self.block_size, self.seed, self.vocab_size = block_size, seed, vocab_size
        if data is None:  # learnable synthetic text: random walks along a fixed random cycle of the vocab
            rng = np.random.default_rng(seed)
            cycle = rng.permutation(vocab_size)
            starts = rng.integers(0, vocab_size, size=(1 << 20) // 64)
            walk = (starts[:, None] + np.arange(64)[None, :]).reshape(-1) % vocab_size
            self.shards, self.names = [cycle[walk].astype(np.int64)], ["synthetic"]
        else:
            self.shards, self.names = open_shards(data)  # uint16, or meta.json's dtype (tokenshards.py)
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


@contextlib.contextmanager
def micro_step(
    model: torch.nn.Module, micro: int, grad_accum: int, kind: str, grad_sync: str = "every"
) -> Any:
    """Around one micro-step's forward and backward: whether its gradients are reduced across ranks.

    kind "fsdp": with grad_sync "every" (the default) FSDP2 reduce-scatters after every micro-step, so between
    micro-steps each rank holds only its shard of the summed gradients (torchtitan's train.py leaves gradient
    sync on for every micro-step: memory over communication); with "last" it skips the reduce-scatter until
    the last micro-step and meanwhile holds every unsharded gradient, upcast to the fp32 reduce dtype under
    the bf16 policy (FSDPParam.to_accumulated_grad_if_needed): +4 bytes per parameter per GPU.
    kind "ddp": all-reduce after the last micro-step only (DDP holds the full gradients in any case).
    kind "none" (one process): nothing to reduce."""
    last = micro == grad_accum - 1
    if kind == "fsdp":
        model.set_requires_gradient_sync(last or grad_sync == "every")  # type: ignore[operator]
    with model.no_sync() if kind == "ddp" and not last else contextlib.nullcontext():  # type: ignore[operator]
        yield


def adamw(model: torch.nn.Module, device: torch.device, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only. Fused (one kernel for every parameter) on CUDA, under FSDP
    too: torch 2.13 shards aten._fused_adamw_ like any pointwise op of DTensors
    (torch/distributed/tensor/_ops/_pointwise_ops.py), and torchtitan's optimizer default is "fused".
    Elsewhere foreach (CPU has a fused kernel too, but its rounding differs from the per-tensor loop, which
    foreach equals bit for bit: CPU runs keep their weights)."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    cuda_fused = device.type == "cuda" and "fused" in inspect.signature(torch.optim.AdamW).parameters
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
        betas=(0.9, 0.95),
        **({"fused": True} if cuda_fused else {"foreach": True}),
    )


def fingerprint(model: torch.nn.Module) -> str:
    """sha256 over the full state dict in key order: name, dtype, shape, then the raw bytes of each tensor.
    A collective under FSDP (the shards are gathered); every rank must call it, rank 0's is the answer."""
    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    h = hashlib.sha256()
    for name, t in full.items():
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

    # ---- resume: the newest committed checkpoint (all ranks load the one rank 0 chose) sizes the model
    stop = StopRequest((signal.SIGTERM, signal.SIGINT))  # SIGINT: Ctrl-C in `python -m jobs local`
    ckpt = CheckpointManager(
        args.ckpt,
        interval=args.ckpt_every,
        keep=args.keep,
        total_steps=args.steps,
        log=log,
        timeout=datetime.timedelta(minutes=args.timeout_min),
        async_=not args.sync_ckpt,
    )  # no --ckpt: every method is a no-op
    try:
        saved = ckpt.latest()
        cfg = model_config(args, saved, ckpt.path)
        if args.data is not None and (problems := check_shards(args.data, cfg.block_size, cfg.vocab_size)):
            raise BadFlag("; ".join(problems))
    except (BadFlag, OldFormat, HFError) as e:  # every rank finds the same: rank 0 says it, once
        if master:
            print(f"train.py: error: {e}", file=sys.stderr, flush=True)
        return EXIT_USAGE

    # ---- data, model (built on CPU from one seed, so every rank starts from the same weights), sharding
    tokens_per_step = args.batch_size * cfg.block_size * args.grad_accum  # per GPU
    data = Tokens(args.data, cfg.vocab_size, cfg.block_size, args.seed)
    torch.manual_seed(args.seed)
    # Weights that come from a checkpoint or an --init-from folder need no random init: the model is built
    # on the meta device (no memory) and each rank materialises only its shards (torchtitan's order: build on
    # meta, parallelize, to_empty, load), so no rank holds the whole model in CPU memory under FSDP.
    loaded = saved is not None or args.init_from is not None
    with torch.device("meta") if loaded else contextlib.nullcontext():
        model = Llama(cfg, activation_checkpointing=args.activation_checkpointing)
    n_params = model.num_params()
    fsdp = args.parallel == "fsdp" and distributed
    bf16 = device.type == "cuda"
    if args.compile:  # per block, before sharding (torchtitan parallelize_llama: apply_compile, apply_fsdp)
        for i, block in enumerate(model.model.layers):
            model.model.layers.register_module(str(i), torch.compile(block))
    if fsdp:
        # FSDP2: the embedding, each block, and norm + lm_head are all-gather/reduce-scatter units (one
        # unit for embedding and lm_head when tied; parallel.py, torchtitan's layout). On GPU the compute
        # is bf16 and gradients are reduced in fp32 (torchtitan's defaults); fully_shard moves each rank's
        # shard to the device of the mesh.
        mesh = dist.device_mesh.init_device_mesh(device.type, (world,))
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if bf16 else None
        kw = {"mesh": mesh, **({"mp_policy": mp} if mp else {})}
        shard(model, **kw)  # parallel.py: embedding, each block, norm + lm_head, the root
    if loaded:  # each rank's shards (FSDP) or the whole model (DDP), uninitialised until the load below
        model.to_empty(device=device)
        model.tie_weights()
        model.init_rope(device)
    else:
        model.to(device)  # under FSDP: the RoPE tables (buffers, not sharded)
    if args.init_from and saved is None:
        try:
            load_hf_weights(model, args.init_from)  # into the shards: DCP's Hugging Face reader
        except HFError as e:  # DCP's load is a collective: every rank raises it, rank 0 says it
            if master:
                print(f"train.py: error: {e}", file=sys.stderr, flush=True)
            return EXIT_USAGE
        log(f"initialised from {args.init_from}")
    elif args.init_from:
        log(f"--init-from {args.init_from} ignored: resuming {ckpt.path}")
    optimizer = adamw(model, device, args.lr, args.weight_decay)  # fused on CUDA, foreach elsewhere
    # DDP on GPU computes under autocast; FSDP's policy casts instead.
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if bf16 and not fsdp else contextlib.nullcontext()
    peak, peak_source = peak_flops(device, args.peak_tflops)
    raw_model = model
    kind = "fsdp" if fsdp else "ddp" if distributed else "none"
    if distributed and not fsdp:
        model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    # Weights and optimizer state from the checkpoint, resharded to this world size; its step (0 on a
    # fresh start). The data position needs nothing more: a batch is a function of (--seed, step, rank).
    try:
        start = ckpt.restore(raw_model, optimizer, config=dataclasses.asdict(cfg))
    except CheckpointError as e:
        print(f"rank {rank}: error: {e}", file=sys.stderr, flush=True)
        return 1
    log(
        f"model {n_params / 1e6:.2f}M params | {args.parallel if distributed else 'single process'} | "
        f"world size {world} | device {device.type} | {tokens_per_step} tokens/step/GPU | peak {peak_source}"
    )

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
            loss_sum = torch.zeros((), device=device)  # on the device: read at log steps only
            for micro in range(args.grad_accum):
                x, y = data.batch(step, micro, rank, args.batch_size)
                if device.type == "cuda":  # pinned, so the copy does not wait for the host
                    x, y = x.pin_memory(), y.pin_memory()
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                with micro_step(model, micro, args.grad_accum, kind, args.fsdp_grad_sync):
                    with autocast:
                        loss = model(x, y) / args.grad_accum
                    loss.backward()
                loss_sum += loss.detach()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # no host sync (no error_if_nonfinite)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            done, steps_since = step + 1, steps_since + 1

            log_step = done % args.log_every == 0 or done == args.steps
            if log_step:
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

            # Every rank stops at the same step boundary: agreed (an all-reduce the host waits for) at log and
            # checkpoint steps only, so keep --log-every x step time under the eviction notice (30 s).
            stopping = stop.agreed(device) if log_step or ckpt.should_save(done) or not distributed else False
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

    if device.type == "cuda":  # bench/gpu_train_smoke.sh reads it
        log(f"peak GPU memory allocated: {torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB (rank 0)")
    digest = fingerprint(raw_model)  # a collective under FSDP
    if distributed:
        dist.barrier()
        dist.destroy_process_group()
    log(f"final parameters sha256: {digest}")
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
