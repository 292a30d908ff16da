"""train.py started on its own, one process: a --ckpt folder of the checkpoint format before DCP is refused
with the fix. train.py under faults on real ranks is in
tests/integration/job_scripts/test_job_scripts_train.py."""

from __future__ import annotations

import json
import subprocess

import pytest
import torch
import train
from model import Llama, LlamaConfig

from ..jobs_util import PY, SRC, base_env


def test_checkpoints_of_the_format_before_dcp_are_refused_with_the_fix(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "step_00000100.pt").write_bytes(b"old")
    (ckpt / "step_00000100.pt.sha256").write_text("0  step_00000100.pt\n")
    p = subprocess.run(
        [PY, str(SRC / "train.py"), "--ckpt", str(ckpt), "--steps", "3"],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.startswith(
        f"train.py: error: --ckpt {ckpt} holds checkpoints of the format before DCP (step_00000100.pt, ...)"
    )
    assert "pass a new --ckpt folder" in p.stderr
    assert sorted(q.name for q in ckpt.iterdir()) == ["step_00000100.pt", "step_00000100.pt.sha256"]


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


def test_adamw_is_fused_on_cuda_and_foreach_elsewhere():
    """The optimizer train.py builds: fused AdamW on a CUDA device (one kernel, DTensor shards included),
    foreach on CPU; weight decay on matrices only."""
    torch.manual_seed(0)
    model = Llama(LlamaConfig())
    cpu = train.adamw(model, torch.device("cpu"), 1e-3, 0.1)
    assert (cpu.defaults["foreach"], cpu.defaults["fused"]) == (True, None)
    cuda = train.adamw(model, torch.device("cuda", 0), 1e-3, 0.1)  # built, not stepped: no GPU here
    assert (cuda.defaults["fused"], cuda.defaults["foreach"]) == (True, None)
    decay, no_decay = cpu.param_groups
    assert (decay["weight_decay"], no_decay["weight_decay"]) == (0.1, 0.0)
    assert {p.dim() for p in decay["params"]} == {2} and {p.dim() for p in no_decay["params"]} == {1}
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))


@pytest.mark.parametrize(
    ("flags", "mode"),
    [
        ([], "none"),
        (["--activation-checkpointing"], "full"),
        (["--activation-checkpointing", "selective"], "selective"),
    ],
)
def test_activation_checkpointing_flag_keeps_its_old_spelling(flags, mode):
    assert train.parse_args(flags).activation_checkpointing == mode
    assert train.parse_args(flags).fsdp_grad_sync == "every"


def test_a_bad_checkpointing_or_grad_sync_value_names_the_flag(capsys):
    for flags, needle in (
        (
            ["--activation-checkpointing", "some"],
            "argument --activation-checkpointing: invalid choice: 'some'",
        ),
        (["--fsdp-grad-sync", "never"], "argument --fsdp-grad-sync: invalid choice: 'never'"),
    ):
        with pytest.raises(SystemExit) as e:
            train.parse_args(flags)
        assert e.value.code == 2 and needle in capsys.readouterr().err
