"""DDP and FSDP train.py runs against the code before issue 34 and against a plain loop, 2 gloo ranks on CPU,
--grad-accum 2.

DDP, and FSDP with `--fsdp-grad-sync last` (one reduce-scatter of the summed micro-step gradients: the math
train.py had before), end with the fingerprints main's train.py gave at 635eb98 (torch 2.13.0, CPU, these
flags): enable_gqa, foreach AdamW, checkpointing inside the block and the stop check at log steps changed no
bit. With the default `every` each micro-step's gradient is reduce-scattered and the shards summed, another
order of fp32 additions, so its weights differ in the last bits. Every run ends within 1% of the weights'
largest movement of a plain one-process loop over both ranks' batches; the same loop on rank 0's batches
alone is more than ten times farther. (DDP and FSDP already differed from each other in the last bits
before this change, with these flags and with tests/jobs/jobs_util.py's TRAIN_ARGS.)
"""

from __future__ import annotations

import torch
import torch.distributed.checkpoint as dcp
import train
from checkpointing import read_commit, step_name
from model import Llama, config_from_dict
from torch.distributed.checkpoint import FileSystemReader

from .jobscripts_util import fingerprint, start_ranks

STEPS = 12
FLAGS = [
    "--steps", str(STEPS), "--n-embd", "128", "--vocab-size", "2048", "--block-size", "32",
    "--batch-size", "2", "--grad-accum", "2", "--log-every", "4", "--ckpt-every", str(STEPS), "--sync-ckpt",
    "--timeout-min", "2",
]  # fmt: skip


def run(tmp_path, name: str, extra: list[str]) -> tuple[str, dict[str, torch.Tensor]]:
    """A 2-rank run: its fingerprint and final weights (its last checkpoint, read in one process)."""
    ckpt, logs = tmp_path / name / "ckpt", tmp_path / name / "logs"
    procs = start_ranks("train.py", [*FLAGS, *extra, "--ckpt", str(ckpt)], 2, logs)
    for p in procs:
        assert p.wait(timeout=600) == 0, (logs / "rank0.txt").read_text()
    folder = ckpt / step_name(STEPS)
    model = Llama(config_from_dict(read_commit(folder)["config"]))
    state = {"model": model.state_dict()}
    dcp.load(state, storage_reader=FileSystemReader(folder), no_dist=True)
    return fingerprint((logs / "rank0.txt").read_text()), state["model"]


def plain_loop(ranks: tuple[int, ...] = (0, 1)) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """One process, no torch.distributed: each step sums the ranks' micro-batches (the batches train.py's
    ranks draw), then clips and steps AdamW as train.py does. Returns (initial, final) weights."""
    args = train.parse_args(FLAGS)
    cfg = train.model_config(args, None, None)
    data = train.Tokens(None, cfg.vocab_size, cfg.block_size, args.seed)
    torch.manual_seed(args.seed)
    model = Llama(cfg)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    opt = train.adamw(model, torch.device("cpu"), args.lr, args.weight_decay)
    for step in range(STEPS):
        for group in opt.param_groups:
            group["lr"] = train.lr_at(step, args)
        for micro in range(args.grad_accum):
            for rank in ranks:
                x, y = data.batch(step, micro, rank, args.batch_size)
                (model(x, y) / (args.grad_accum * len(ranks))).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return initial, model.state_dict()


def max_diff(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    assert a.keys() == b.keys()
    return max((a[k] - b[k]).abs().max().item() for k in a)


#: `final parameters sha256` of main's jobs/src/train.py (635eb98, before issue 34's round two) with FLAGS.
BEFORE = {
    "ddp": "facc8078a1c5eac231303539bf7b33263de7040ecebf5c40ffffc1d2703c555d",
    "fsdp": "52d104fbf28fd82772d9aec67d0bbd6b5940e3dc0410cd6698f87acb06134017",
}


def test_ddp_and_fsdp_keep_their_bits_where_the_math_is_the_same_and_all_equal_a_plain_loop(tmp_path):
    ddp_fp, ddp = run(tmp_path, "ddp", ["--parallel", "ddp"])
    last_fp, last = run(tmp_path, "fsdp-last", ["--parallel", "fsdp", "--fsdp-grad-sync", "last"])
    every_fp, every = run(tmp_path, "fsdp-every", ["--parallel", "fsdp"])
    assert (ddp_fp, last_fp) == (BEFORE["ddp"], BEFORE["fsdp"])
    assert every_fp != last_fp  # the reduction order changed, the bits with it
    initial, plain = plain_loop()
    tolerance = max_diff(plain, initial) / 100
    for name, weights in (("ddp", ddp), ("fsdp last", last), ("fsdp every", every)):
        assert max_diff(weights, plain) < tolerance, name
    _, half = plain_loop(ranks=(0,))  # another computation: the tolerance tells it apart
    assert max_diff(half, plain) > 10 * tolerance
