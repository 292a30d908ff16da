"""jobs/userjobcheck.py: which commands start their own launcher, and with how many processes."""

from __future__ import annotations

import pytest

from jobs.userjobcheck import launcher


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("torchrun --nproc-per-node 8 train.py", ("torchrun", "8")),
        ("torchrun --nproc_per_node=4 -m pkg.train", ("torchrun", "4")),
        ("torchrun train.py", ("torchrun", "1")),  # torchrun's default --nproc-per-node
        ("torchrun --nproc-per-node gpu train.py", ("torchrun", "gpu")),
        ("pip install -r r.txt && torchrun --nproc-per-node 2 t.py", ("torchrun", "2")),
        ("python -m torch.distributed.run --nproc_per_node 8 t.py", ("python -m torch.distributed.run", "8")),
        ("python3  -m torch.distributed.launch t.py", ("python3 -m torch.distributed.launch", "1")),
        ("python train.py --launcher torchrun_like", None),
        ("python mytorchrun.py", None),
        ("echo torchrun-free", None),
        ("python -m torchtitan.train --job.config_file x.toml", None),
    ],
)
def test_a_launcher_is_found_where_a_shell_command_starts(command, expected):
    assert launcher(command) == expected


def test_gpu_or_auto_per_node_counts_one_process_per_gpu(tmp_path, capsys):
    """With one launcher per node, `--nproc-per-node gpu` uses every GPU: no idle-GPU refusal."""
    from jobs.cli import main

    from .jobs_util import FIXTURES

    (tmp_path / "src").mkdir()
    job = tmp_path / "job.yml"
    job.write_text(
        "type: command\ncode: ./src\nenvironment: azureml:e:1\n"
        "command: torchrun --nproc-per-node gpu t.py --out ${{outputs.ckpt}}\n"
        "distribution: {type: pytorch, process_count_per_instance: 1}\n"
    )
    argv = ["render", "--file", str(job), "--outputs", str(FIXTURES / "outputs-prod.json"), "--cluster"]
    assert main([*argv, "h100-x4", "--run-name", "r1", "--out", str(tmp_path / "o.yml")]) == 0, (
        capsys.readouterr().err
    )
