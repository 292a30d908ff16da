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


def _render(tmp_path, body: str, *flags: str, cluster: str = "h100-x4") -> tuple[int, str]:
    import contextlib
    import io

    from jobs.cli import main

    from .jobs_util import FIXTURES

    (tmp_path / "src").mkdir(exist_ok=True)
    job = tmp_path / "job.yml"
    job.write_text("type: command\ncode: ./src\nenvironment: azureml:e:1\n" + body)
    argv = ["render", "--file", str(job), "--outputs", str(FIXTURES / "outputs-prod.json")]
    argv += ["--cluster", cluster, "--run-name", "r1", "--out", str(tmp_path / "o.yml"), *flags]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, err.getvalue()


def test_a_declared_output_of_the_files_own_is_used_without_complaint(tmp_path):
    rc, err = _render(
        tmp_path,
        "command: python t.py --ckpt ${{outputs.ckpt}} --model ${{outputs.model}} --data ${{inputs.data}}\n"
        "inputs: {data: {type: uri_folder, path: azureml://datastores/workspaceblobstore/paths/d/}}\n"
        "outputs: {model: {type: uri_folder}}\n"
        "distribution: {type: pytorch, process_count_per_instance: 8}\n",
    )
    assert rc == 0, err


@pytest.mark.parametrize(
    ("output", "refused"),
    [
        ("{type: uri_folder, mode: rw_mount}", None),  # the platform's own mode: nothing to drop
        ("{type: uri_folder, mode: upload}", "outputs.ckpt.mode 'upload'"),
        ("{type: uri_folder, path: azureml://datastores/workspaceblobstore/paths/x/}", "outputs.ckpt.path"),
    ],
)
def test_a_checkpoint_output_the_file_binds_itself_is_refused_unless_it_is_rw_mount(
    tmp_path, output, refused
):
    rc, err = _render(
        tmp_path,
        "command: python t.py --ckpt ${{outputs.ckpt}}\n"
        f"outputs: {{ckpt: {output}}}\n"
        "distribution: {type: pytorch, process_count_per_instance: 8}\n",
    )
    if refused is None:
        assert rc == 0, err
    else:
        assert rc == 2 and refused in err and "the platform binds the checkpoint output" in err


def test_zero_processes_per_node_on_a_one_gpu_size_leaves_its_gpu_idle(tmp_path):
    """load_job accepts process_count_per_instance: 0 (azure-ai-ml 1.35's schema has no minimum)."""
    body = (
        "command: python t.py --ckpt ${{outputs.ckpt}}\n"
        "distribution: {type: pytorch, process_count_per_instance: %d}\n"
    )
    rc, err = _render(tmp_path, body % 0, cluster="a100-lp")
    assert rc == 2 and "process_count_per_instance 0: Standard_NC24ads_A100_v4 has 1 GPUs per node" in err
    rc, err = _render(tmp_path, body % 1, cluster="a100-lp")
    assert rc == 0, err
