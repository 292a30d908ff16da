"""FSDP's gradient sync with --grad-accum on 2 gloo ranks (CPU): the memory gradients hold between
micro-steps, and DDP and FSDP runs against the code before issue 34 and against a plain loop.

train.py reduce-scatters after every micro-step by default (`--fsdp-grad-sync every`, torchtitan's choice),
so no unsharded gradient is held between micro-steps; `last` is the old behaviour.

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

import json
import subprocess

import torch
import torch.distributed.checkpoint as dcp
import train
from checkpointing import read_commit, step_name
from model import Llama, config_from_dict
from torch.distributed.checkpoint import FileSystemReader

from tests.jobs.jobs_util import PY, SRC, base_env

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


GRAD_MEMORY = r"""
import json, sys
import torch, torch.distributed as dist
import torch.multiprocessing as mp
sys.path.insert(0, sys.argv[1])
import train
from model import Llama, LlamaConfig
from parallel import shard
from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy

def held(model):
    # Unsharded gradients as FSDP2 keeps them (on the unsharded parameter, or upcast to the reduce dtype in
    # unsharded_accumulated_grad), and the sharded DTensor gradients of the parameters.
    unsharded = 0
    for m in model.modules():
        if isinstance(m, FSDPModule):
            group = m._get_fsdp_state()._fsdp_param_group
            for fp in group.fsdp_params if group else []:
                grad = fp._unsharded_param.grad if hasattr(fp, "_unsharded_param") else None
                for t in (fp.unsharded_accumulated_grad, grad):
                    unsharded += 0 if t is None else t.numel() * t.element_size()
    sharded = sum(p.grad.to_local().nbytes for p in model.parameters() if p.grad is not None)
    return unsharded, sharded

def rank(r, store, sync, out_file):
    dist.init_process_group("gloo", init_method="file://" + store, rank=r, world_size=2)
    torch.manual_seed(0)
    model = Llama(LlamaConfig())  # the tiny preset: 164,160 parameters
    # train.py's policy on GPU: bf16 compute, fp32 reduction
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    shard(model, mesh=dist.device_mesh.init_device_mesh("cpu", (2,)), mp_policy=policy)
    g = torch.Generator().manual_seed(r)
    out = []
    for micro in range(4):
        x = torch.randint(0, 512, (2, 16), generator=g)
        with train.micro_step(model, micro, 4, "fsdp", sync):
            (model(x, x) / 4).backward()
        out.append(held(model))
    grads = {k: p.grad.full_tensor().tolist() for k, p in model.named_parameters()}  # a collective
    if r == 0:
        with open(out_file, "w") as f:
            json.dump({"held": out, "grads": grads}, f)
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(rank, (sys.argv[2], sys.argv[3], sys.argv[4]), nprocs=2)
"""


def grad_memory(tmp_path, sync: str) -> dict:
    script = tmp_path / f"grad_memory_{sync}.py"
    script.write_text(GRAD_MEMORY)
    p = subprocess.run(
        [PY, str(script), str(SRC), str(tmp_path / f"store_{sync}"), sync, str(tmp_path / f"{sync}.json")],
        env=base_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return json.loads((tmp_path / f"{sync}.json").read_text())


def test_fsdp_with_grad_accum_4_holds_no_unsharded_gradient_between_micro_steps(tmp_path):
    """train.py's micro-steps under FSDP2 on 2 gloo ranks with the bf16/fp32 policy: by default (torchtitan's
    choice) each micro-step reduce-scatters, so between micro-steps a rank holds no unsharded gradient, only
    its fp32 half: 164,160 / 2 x 4 bytes. --fsdp-grad-sync last (what train.py did before) holds every
    gradient unsharded between micro-steps, at least 4 bytes per parameter (the fp32 accumulation), and
    reduce-scatters once; both end with the same summed gradient up to fp32 rounding."""
    # the tiny preset: embedding and lm_head, 2 blocks (2 norms, q/o 64 x 64, k/v 64 x 32, 3 x 64 x 192), norm
    params = 164_160
    assert params == 2 * 512 * 64 + 2 * (2 * 64 + 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 192) + 64
    every, last = grad_memory(tmp_path, "every"), grad_memory(tmp_path, "last")
    for unsharded, sharded in every["held"]:
        assert (unsharded, sharded) == (0, params // 2 * 4)
    for unsharded, sharded in last["held"][:-1]:
        assert unsharded >= params * 4 and sharded == 0
    assert tuple(last["held"][-1]) == (0, params // 2 * 4)
    for name, grad in every["grads"].items():
        torch.testing.assert_close(
            torch.tensor(grad), torch.tensor(last["grads"][name]), rtol=1e-5, atol=1e-6
        )
