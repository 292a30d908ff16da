"""train.py in one process: a --ckpt folder of the checkpoint format before DCP is refused with the fix; the
optimizer it builds per device; the checkpointing and gradient-sync flags. train.py under faults on real
ranks is in tests/integration/job_scripts/test_job_scripts_train.py, FSDP's gradient sync with --grad-accum
in test_job_scripts_fsdp_grad_sync.py."""

from __future__ import annotations

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
