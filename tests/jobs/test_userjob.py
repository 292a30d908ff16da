"""`render --file JOB.yml`: a user's Azure ML command job file with the platform layer added.

Each case changes one thing of one happy-path job file and asserts what the rendered job (read back with
azure-ai-ml's load_job, as `az ml job create -f` reads it) or the error says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from azure.ai.ml import load_job

from jobs.cli import main

from .jobs_util import FIXTURES

FIXTURE = str(FIXTURES / "outputs-prod.json")
CKPT = "azureml://datastores/workspaceblobstore/paths/ckpt/{}/"


def job_file(tmp_path: Path, **changes) -> Path:
    """A user's job: their code folder, their command (checkpoints to ${{outputs.ckpt}}), PyTorch."""
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "train.py").write_text("print('my trainer')\n")
    data = {
        "$schema": "https://azuremlschemas.azureedge.net/latest/commandJob.schema.json",
        "type": "command",
        "code": "./src",
        "command": "python train.py --out ${{outputs.ckpt}} --data ${{inputs.data}}",
        "environment": "azureml:my-env:3",
        "inputs": {
            "data": {"type": "uri_folder", "path": "azureml://datastores/workspaceblobstore/paths/d/"}
        },
        "outputs": {"metrics": {"type": "uri_folder"}},
        "distribution": {"type": "pytorch"},
        "resources": {"instance_count": 2},
        "environment_variables": {"MY_SETTING": "1"},
        "experiment_name": "mine",
    }
    for k, v in changes.items():
        if v is None:
            data.pop(k, None)
        else:
            data[k] = v
    path = tmp_path / "job.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def render(tmp_path: Path, path: Path, *extra: str, cluster: str = "h100-x4") -> tuple[int, dict | None]:
    out = tmp_path / "out" / "built.yml"
    argv = ["render", "--file", str(path), "--outputs", FIXTURE, "--cluster", cluster, "--out", str(out)]
    code = main([*argv, *(extra or ("--run-name", "r1"))])
    return code, (yaml.safe_load(out.read_text()) if code == 0 else None)


def test_the_platform_layer_is_added_and_the_users_job_kept(tmp_path, capsys):
    code, job = render(tmp_path, job_file(tmp_path))
    assert code == 0
    assert job["outputs"]["ckpt"] == {"mode": "rw_mount", "path": CKPT.format("r1"), "type": "uri_folder"}
    assert "metrics" in job["outputs"] and job["inputs"]["data"]["path"].endswith("/paths/d/")
    assert job["compute"] == "azureml:h100-x4" and job["resources"]["instance_count"] == 2
    assert job["distribution"] == {"process_count_per_instance": 8, "type": "pytorch"}  # the size's GPUs
    env = job["environment_variables"]
    assert env["MY_SETTING"] == "1" and env["NCCL_DEBUG"] == "INFO"
    assert (
        env["NCCL_IGNORE_CPU_AFFINITY"] == "1" and env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "3"
    )  # ND H100 v5
    assert job["resources"]["shm_size"] == "950g" and job["limits"]["timeout"] == 7 * 24 * 3600
    assert job["environment"] == "azureml:my-env:3" and job["experiment_name"] == "mine"
    assert job["command"].startswith(
        'echo "azml-gpu rank=${RANK} local_rank=${LOCAL_RANK} node_rank=${NODE_RANK}'
    )
    assert job["command"].endswith("&& python train.py --out ${{outputs.ckpt}} --data ${{inputs.data}}")
    assert job["tags"]["azml-gpu.expect-world-size"] == "16" and job["tags"]["azml-gpu.run-name"] == "r1"
    out = tmp_path / "out" / "built.yml"
    assert (out.parent / job["code"]).resolve() == (tmp_path / "src").resolve()  # relative to the YAML
    again = load_job(out)  # what `az ml job create -f` reads
    assert again.outputs["ckpt"].path == CKPT.format("r1")
    printed = capsys.readouterr().out
    assert "user-job, 2 node(s) x 8 process(es) = world size 16" in printed and "settings: timeout" in printed


def test_the_files_process_count_and_the_nodes_flag(tmp_path):
    path = job_file(tmp_path, distribution={"type": "pytorch", "process_count_per_instance": 4})
    code, job = render(tmp_path, path, "--run-name", "r1", "--nodes", "3")
    assert code == 0 and job["distribution"]["process_count_per_instance"] == 4
    assert job["resources"]["instance_count"] == 3 and job["tags"]["azml-gpu.expect-world-size"] == "12"
    code, job = render(tmp_path, job_file(tmp_path, resources=None), "--run-name", "r2")
    assert code == 0 and job["resources"]["instance_count"] == 1


def test_another_checkpoint_output_name(tmp_path):
    path = job_file(tmp_path, command="python train.py --checkpoint.folder ${{outputs.state}}")
    code, job = render(tmp_path, path, "--run-name", "r1", "--ckpt-output", "state")
    assert code == 0 and job["outputs"]["state"]["path"] == CKPT.format("r1") and "ckpt" not in job["outputs"]


def test_json_summary_names_the_checkpoint_folder(tmp_path, capsys):
    path = job_file(tmp_path)
    out = tmp_path / "o.yml"
    argv = ["render", "--file", str(path), "--outputs", FIXTURE, "--cluster", "h100-x4", "--run-name", "r1"]
    assert main([*argv, "--out", str(out), "--json"]) == 0
    j = json.loads(capsys.readouterr().out)["jobs"][0]
    assert (j["label"], j["world_size"], j["checkpoint_uri"]) == ("user-job", 16, CKPT.format("r1"))


@pytest.mark.parametrize(
    ("changes", "extra", "needle"),
    [
        ({"command": "python train.py --out /tmp/ckpt"}, (), "its command does not use ${{outputs.ckpt}}"),
        (
            {"command": "torchrun --nproc-per-node 8 train.py ${{outputs.ckpt}}", "distribution": None},
            (),
            "the command starts its own launcher (torchrun) and the file has no distribution",
        ),
        (
            {"distribution": {"type": "mpi"}},
            (),
            "distribution type 'mpi'; the platform verifies PyTorch jobs",
        ),
        ({"code": "./missing"}, (), "code: Can't find directory or file in resolved absolute path"),
        ({"type": "sweep"}, (), "azure-ai-ml cannot load it as a job"),
        ({}, ("--run-name", "bad name"), "--run-name 'bad name': use 1-100 letters"),
        ({}, ("--steps", "5"), "--steps is for the platform's train.py"),
        (
            {},
            ("--run-name", "r1", "--processes-per-node", "9"),
            "--processes-per-node 9: Standard_ND96isr_H100_v5",
        ),
        ({}, ("--run-name", "r1", "--nodes", "5"), "--nodes 5: cluster h100-x4 has max_instances 4"),
        ({}, ("--run-name", "r1", "--ckpt-output", "a-b"), "--ckpt-output 'a-b': an output name"),
    ],
)
def test_what_the_platform_refuses_names_the_fix(tmp_path, capsys, changes, extra, needle):
    code, _ = render(tmp_path, job_file(tmp_path, **changes), *extra)
    err = capsys.readouterr().err
    assert code == 2 and needle in err and "Traceback" not in err, err


def test_file_and_kind_exclude_each_other_and_one_is_needed(tmp_path, capsys):
    path = job_file(tmp_path)
    base = [
        "--outputs",
        FIXTURE,
        "--cluster",
        "h100-x4",
        "--run-name",
        "r1",
        "--out",
        str(tmp_path / "o.yml"),
    ]
    assert main(["render", "train", "--file", str(path), *base]) == 2
    assert "--file replaces KIND; drop 'train' or --file" in capsys.readouterr().err
    assert main(["render", *base]) == 2
    assert "pass a job KIND (smoke, train, scaling, health) or --file JOB.yml" in capsys.readouterr().err
    assert main(["render", "--file", str(tmp_path / "none.yml"), *base]) == 2
    assert "none.yml: no such file" in capsys.readouterr().err
    assert main(["render", "train", "--ckpt-output", "x", *base]) == 2
    assert "--ckpt-output is for --file jobs" in capsys.readouterr().err


def test_a_multi_node_job_on_a_size_without_rdma_is_refused(tmp_path, capsys):
    code, _ = render(tmp_path, job_file(tmp_path), "--run-name", "r1", cluster="a100-lp")
    err = capsys.readouterr().err
    assert code == 2 and "the size has no RDMA usable by NCCL" in err
