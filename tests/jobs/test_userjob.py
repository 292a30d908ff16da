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
from .userjob_util import differences

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
    code, job = render(tmp_path, path, "--run-name", "r1", "--nodes", "3", "--allow-idle-gpus")
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
            "command: runs torchrun inside distribution: pytorch with process_count_per_instance (unset in "
            "the file: the platform's default, the size's GPUs) 8: Azure ML starts 8 processes per node and "
            "each starts 8 (torchrun's --nproc-per-node), 64 per node (double launch); run the trainer",
        ),
        (
            {"distribution": {"type": "mpi"}},
            (),
            "distribution.type 'mpi'; the platform verifies PyTorch jobs",
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
    assert (
        "--ckpt-output: for --file jobs only (a KIND job has no job file); drop it" in capsys.readouterr().err
    )
    assert main(["render", "train", "--allow-idle-gpus", "--no-checkpoint", *base]) == 2
    assert "--no-checkpoint, --allow-idle-gpus: for --file jobs only" in capsys.readouterr().err


def test_a_multi_node_job_on_a_size_without_rdma_is_refused(tmp_path, capsys):
    code, _ = render(tmp_path, job_file(tmp_path), "--run-name", "r1", cluster="a100-lp")
    err = capsys.readouterr().err
    assert code == 2 and "the size has no RDMA usable by NCCL" in err


FULL = {
    "identity": {"type": "user_identity"},
    "limits": {"timeout": 600},
    "services": {"tb": {"type": "tensor_board", "log_dir": "outputs/tb"}},
    "resources": {"instance_count": 2, "shm_size": "16g", "docker_args": "--ipc=host"},
    "queue_settings": {"job_tier": "standard"},
    "description": "my description",
    "properties": {"owner": "me"},
    "tags": {"team": "nlp"},
    "display_name": "mine-1",
    "inputs": {"data": {"type": "uri_folder", "path": "./mydata"}, "lr": 0.1},
    "command": "python train.py --out ${{outputs.ckpt}} --data ${{inputs.data}} --lr ${{inputs.lr}}",
}


def test_every_field_the_user_set_is_kept_as_azure_ai_ml_reads_it(tmp_path, capsys):
    from .userjob_util import differences, rest

    (tmp_path / "mydata").mkdir()
    path = job_file(tmp_path, **FULL)
    code, job = render(tmp_path, path)
    assert code == 0, capsys.readouterr().err
    out = tmp_path / "out" / "built.yml"
    assert differences(path, out) == []
    body = rest(out)
    assert body["identity"] == {"identityType": "UserIdentity"} and body["limits"]["timeout"] == "PT10M"
    assert body["resources"]["shmSize"] == "16g" and body["resources"]["dockerArgs"] == "--ipc=host"
    assert body["services"]["tb"]["jobServiceType"] == "TensorBoard"
    # ./mydata is the file's folder's, written relative to the rendered YAML (was `azureml:./mydata`)
    assert job["inputs"]["data"]["path"] == "../mydata"
    assert body["inputs"]["data"]["uri"] == str((tmp_path / "mydata").resolve())
    printed = capsys.readouterr().out
    for key in ("identity", "limits.timeout", "resources.shm_size", "resources.docker_args", "services"):
        assert f"  the user's (from the file): {key}\n" in printed
    assert "  set by the platform: resources.shm_size" not in printed
    assert "  set by the platform: limits.timeout" not in printed


def test_the_comparison_fails_when_a_field_is_dropped(tmp_path):
    """The regression check itself: a rendered file without the user's identity or timeout differs."""
    from .userjob_util import differences

    (tmp_path / "mydata").mkdir()
    path = job_file(tmp_path, **FULL)
    assert render(tmp_path, path)[0] == 0
    out = tmp_path / "out" / "built.yml"
    data = yaml.safe_load(out.read_text())
    del data["identity"]
    data["limits"]["timeout"] = 7
    out.write_text(yaml.safe_dump(data))
    assert differences(path, out) == [
        "identity: {'identityType': 'UserIdentity'} became None",
        "limits.timeout: 'PT10M' became 'PT7S'",
    ]


def test_platform_settings_apply_only_where_the_file_is_silent(tmp_path, capsys):
    env = {"NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "ib0", "DATASET_UNMOUNT_TIMEOUT_SECONDS": "90"}
    code, job = render(tmp_path, job_file(tmp_path, environment_variables=env))
    assert code == 0
    got = job["environment_variables"]
    assert {k: got[k] for k in env} == env  # the user's values
    assert got["NCCL_IGNORE_CPU_AFFINITY"] == "1" and job["resources"]["shm_size"] == "950g"
    printed = capsys.readouterr().out
    assert "  set by the platform: environment_variables.NCCL_IGNORE_CPU_AFFINITY: 1\n" in printed
    assert "  set by the platform: resources.shm_size: 950g\n" in printed
    assert "  set by the platform: limits.timeout: 604800\n" in printed
    assert "environment_variables.NCCL_SOCKET_IFNAME" not in printed
    assert "  the user's (from the file): environment_variables\n" in printed
    # --set wins over the file, and says so
    code, job = render(tmp_path, job_file(tmp_path, **FULL), "--run-name", "r1", "--set", "shm_size=32g")
    assert code == 0 and job["resources"]["shm_size"] == "32g"
    assert "  set by the platform: resources.shm_size: 32g (--set)\n" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ((), "10173"),  # ND H100 v5: 640 GB of GPU memory per node at 60 MiB/s (jobs/unmount.py)
        (("--ckpt-gib", "96"), "1639"),  # ceil(96 GiB / 60 MiB/s)
        (("--ckpt-gib", "1"), "30"),  # Azure ML's default is the floor
    ],
)
def test_the_unmount_timeout_is_sized_from_the_checkpoint(tmp_path, extra, expected):
    code, job = render(tmp_path, job_file(tmp_path), "--run-name", "r1", *extra)
    assert code == 0 and job["environment_variables"]["DATASET_UNMOUNT_TIMEOUT_SECONDS"] == expected


def test_no_checkpoint_binds_nothing_and_warns_about_preemption(tmp_path, capsys):
    path = job_file(tmp_path, command="python train.py --data ${{inputs.data}}")
    code, job = render(tmp_path, path, "--run-name", "r1", "--no-checkpoint")
    assert code == 0 and "ckpt" not in job["outputs"]
    assert "DATASET_UNMOUNT_TIMEOUT_SECONDS" not in job["environment_variables"]
    assert (
        "warning: --no-checkpoint: no checkpoint output is bound; a preempted, failed or resubmitted job "
        "starts over from step 0 (no resume)" in capsys.readouterr().err
    )
    code, _ = render(tmp_path, path, "--run-name", "r1", "--no-checkpoint", "--ckpt-output", "x")
    assert code == 2 and "--ckpt-output names the checkpoint output that --no-checkpoint drops" in (
        capsys.readouterr().err
    )


def test_every_problem_before_submit_at_once(tmp_path, capsys):
    path = job_file(
        tmp_path,
        command="python -m torch.distributed.run --nproc_per_node=4 train.py --data ${{inputs.dataset}} "
        "--log ${{outputs.logs}}",
        distribution={"type": "pytorch", "process_count_per_instance": 2},
        resources={"instance_count": 1, "instance_type": "Standard_NC6"},
        outputs={"ckpt": {"type": "uri_folder", "path": "azureml://datastores/x/paths/mine/"}},
    )
    code, _ = render(tmp_path, path)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 7, err
    assert (
        "runs python -m torch.distributed.run inside distribution: pytorch with "
        "distribution.process_count_per_instance 2: Azure ML starts 2 processes per node and each starts 4 "
        "(python -m torch.distributed.run's --nproc-per-node), 8 per node (double launch)" in err
    )
    assert (
        "distribution.process_count_per_instance 2: Standard_ND96isr_H100_v5 has 8 GPUs per node, so 6 of "
        "them would sit idle; use 8 (one process per GPU), or pass --allow-idle-gpus" in err
    )
    assert (
        "command uses ${{inputs.dataset}} but the file declares no inputs.dataset (inputs declared: data)"
        in err
    )
    assert (
        "command uses ${{outputs.logs}} but the file declares no outputs.logs (outputs declared: ckpt)" in err
    )
    assert "its command does not use ${{outputs.ckpt}}" in err and "or pass --no-checkpoint" in err
    assert "resources.instance_type 'Standard_NC6': the job runs on --cluster h100-x4" in err
    assert "outputs.ckpt.path 'azureml://datastores/x/paths/mine/': the platform binds" in err


def test_one_launcher_per_node_is_accepted_and_its_processes_count(tmp_path, capsys):
    one = {"type": "pytorch", "process_count_per_instance": 1}
    cmd = "torchrun --nproc-per-node {} train.py --out ${{{{outputs.ckpt}}}}"
    code, job = render(tmp_path, job_file(tmp_path, distribution=one, command=cmd.format(8)))
    assert code == 0 and job["distribution"]["process_count_per_instance"] == 1
    code, _ = render(tmp_path, job_file(tmp_path, distribution=one, command=cmd.format(2)))
    err = capsys.readouterr().err
    assert code == 2 and "so 6 of them would sit idle" in err
    code, _ = render(
        tmp_path,
        job_file(tmp_path, distribution=one, command=cmd.format(2)),
        "--run-name",
        "r1",
        "--allow-idle-gpus",
    )
    assert code == 0


def test_serverless_instance_type_must_match_the_size(tmp_path, capsys):
    res = {"instance_count": 1, "instance_type": "Standard_ND96isr_H100_v5"}
    path = job_file(tmp_path, resources=res)
    out = tmp_path / "o.yml"
    base = ["render", "--file", str(path), "--serverless", "--run-name", "r1", "--out", str(out)]
    assert main([*base, "--size", "Standard_ND96isr_H100_v5", "--spot"]) == 0
    job = yaml.safe_load(out.read_text())
    assert job["resources"]["instance_type"] == "Standard_ND96isr_H100_v5" and "compute" not in job
    assert job["queue_settings"] == {"job_tier": "spot"}
    capsys.readouterr()
    assert main([*base, "--size", "Standard_ND96asr_v4"]) == 2
    assert (
        "resources.instance_type 'Standard_ND96isr_H100_v5': the job runs on --size Standard_ND96asr_v4; "
        "drop the key, or pass --size Standard_ND96isr_H100_v5" in capsys.readouterr().err
    )


def test_the_node_submit_sends_is_the_rendered_job(tmp_path):
    """create_or_update takes a Command node, not the CommandJob (azure-ai-ml: "Non supported job type"); the
    node userjob.to_node makes sends the same REST body as the job render writes."""
    from jobs import builders, outputs
    from jobs.settings import attach
    from jobs.userjob import from_file, to_node

    (tmp_path / "mydata").mkdir()
    target = builders.cluster_target(outputs.load(None, FIXTURE), "h100-x4")
    built = from_file(job_file(tmp_path, **FULL), target, run_name="r1")
    attach(built)
    node = to_node(built.job)
    assert type(node).__name__ == "Command"
    assert node._to_job()._to_rest_object().as_dict() == built.job._to_rest_object().as_dict()
    assert node.environment == "my-env:3" and node.experiment_name == "mine"  # as load_job holds it


def test_a_files_job_tier_and_spot_must_agree(tmp_path, capsys):
    path = job_file(tmp_path, queue_settings={"job_tier": "standard"})
    out = tmp_path / "o.yml"
    base = ["render", "--file", str(path), "--serverless", "--size", "Standard_ND96isr_H100_v5"]
    base += ["--run-name", "r1", "--out", str(out)]
    assert main([*base, "--spot"]) == 2
    assert "queue_settings.job_tier 'standard' and --spot (job_tier Spot) disagree" in capsys.readouterr().err
    assert main(base) == 0 and yaml.safe_load(out.read_text())["queue_settings"] == {"job_tier": "standard"}


# The regression set: real job files from Azure/azureml-examples (tests/fixtures/userjobs/README.md, each
# with its commit). Each renders with every field kept (load_job of the original vs of the rendered file,
# REST field by field, minus what the platform changes: tests/jobs/userjob_util.py), and what the platform
# refuses in them is refused before submit with the fix.

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "userjobs"
OUTPUTS = FIXTURE


def render_example(tmp_path: Path, name: str, *flags: str) -> tuple[int, Path]:
    out = tmp_path / "out" / "built.yml"
    argv = ["render", "--file", str(EXAMPLES / name), "--outputs", OUTPUTS, "--cluster", "h100-x4"]
    return main([*argv, "--run-name", "r1", "--out", str(out), *flags]), out


@pytest.mark.parametrize(
    ("name", "flags", "nodes", "processes"),
    [
        # PyTorch distributed, one process per node as the example runs it
        ("cifar-distributed/job.yml", ("--no-checkpoint", "--allow-idle-gpus"), 2, 1),
        # DeepSpeed under distribution pytorch, 8 per node, its own rw_mount output, limits.timeout
        ("deepspeed-training/job-schema-fixed.yml", ("--no-checkpoint",), 2, 8),
        # a plain command job: no distribution, one process
        ("iris/job.yml", ("--no-checkpoint", "--processes-per-node", "1", "--allow-idle-gpus"), 1, 1),
    ],
)
def test_an_azureml_example_renders_with_every_field_kept(tmp_path, capsys, name, flags, nodes, processes):
    code, out = render_example(tmp_path, name, *flags)
    assert code == 0, capsys.readouterr().err
    assert differences(EXAMPLES / name, out, ckpt_output=None) == []
    job = yaml.safe_load(out.read_text())
    assert job["compute"] == "azureml:h100-x4" and job["resources"]["instance_count"] == nodes
    assert job["distribution"]["process_count_per_instance"] == processes
    assert "ckpt" not in (job.get("outputs") or {})
    assert "warning: --no-checkpoint" in capsys.readouterr().err


def test_the_deepspeed_examples_timeout_and_output_are_the_users(tmp_path, capsys):
    code, out = render_example(tmp_path, "deepspeed-training/job-schema-fixed.yml", "--no-checkpoint")
    job = yaml.safe_load(out.read_text())
    assert code == 0 and job["limits"]["timeout"] == 900  # not the platform's 7 days
    assert (
        job["outputs"]["output"]["path"]
        == "azureml://datastores/workspaceblobstore/paths/outputs/training_results"
    )
    assert job["environment_variables"]["AZUREML_SSH_KEY"] == "generated-key"
    # the Docker build context, relative to the rendered YAML as it was to the example's
    build = out.parent / job["environment"]["build"]["path"]
    assert build.resolve() == (EXAMPLES / "deepspeed-training" / "docker-context").resolve()
    printed = capsys.readouterr().out
    assert "  the user's (from the file): limits.timeout\n" in printed
    assert "  set by the platform: resources.shm_size: 950g\n" in printed


def test_a_url_input_stays_the_url(tmp_path):
    """The dump writes `azureml:https://...` (a data asset name); render writes the URL back."""
    flags = ("--no-checkpoint", "--processes-per-node", "1", "--allow-idle-gpus")
    code, out = render_example(tmp_path, "iris/job.yml", *flags)
    job = yaml.safe_load(out.read_text())
    assert code == 0
    assert (
        job["inputs"]["iris_csv"]["path"] == "https://azuremlexamples.blob.core.windows.net/datasets/iris.csv"
    )
    assert job["inputs"]["epochs"] == 10 and job["inputs"]["lr"] == 0.1


def test_what_the_examples_need_is_said_before_submit(tmp_path, capsys):
    code, _ = render_example(tmp_path, "cifar-distributed/job.yml")
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert (
        "distribution.process_count_per_instance 1: Standard_ND96isr_H100_v5 has 8 GPUs per node, so 7 of "
        "them would sit idle; use 8 (one process per GPU), or pass --allow-idle-gpus" in err
    )
    assert "its command does not use ${{outputs.ckpt}}" in err and "or pass --no-checkpoint" in err


def test_the_deepspeed_example_as_published_is_refused_by_azure_ai_ml(tmp_path, capsys):
    """At the cited commit its first key is a literal `\\$schema`, which azure-ai-ml's schema rejects."""
    code, _ = render_example(tmp_path, "deepspeed-training/job.yml", "--no-checkpoint")
    err = capsys.readouterr().err
    assert code == 2 and "azure-ai-ml cannot load it as a job: \\$schema: Unknown field." in err, err


def test_the_torchtitan_example_renders_with_its_checkpoint_bound(tmp_path, capsys):
    """docs/examples/torchtitan-job.yml (pinned to torchtitan v0.2.2) renders on an 8-GPU cluster unchanged:
    the command uses ${{outputs.ckpt}}, no launcher, one process per GPU, every field kept."""
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "torchtitan-job.yml"
    out = tmp_path / "built.yml"
    argv = ["render", "--file", str(example), "--outputs", OUTPUTS, "--cluster", "h100-x4"]
    assert main([*argv, "--run-name", "cpt-8b", "--out", str(out)]) == 0, capsys.readouterr().err
    assert differences(example, out) == []
    job = yaml.safe_load(out.read_text())
    assert job["outputs"]["ckpt"]["path"] == "azureml://datastores/workspaceblobstore/paths/ckpt/cpt-8b/"
    assert job["distribution"]["process_count_per_instance"] == 8
    assert "--checkpoint.enable --checkpoint.interval 500" in job["command"]


def test_json_lists_what_the_platform_set_and_what_the_file_set(tmp_path, capsys):
    (tmp_path / "mydata").mkdir()
    path = job_file(tmp_path, **FULL)
    out = tmp_path / "o.yml"
    argv = ["render", "--file", str(path), "--outputs", FIXTURE, "--cluster", "h100-x4", "--run-name", "r1"]
    assert main([*argv, "--out", str(out), "--json"]) == 0
    j = json.loads(capsys.readouterr().out)["jobs"][0]
    assert "compute: h100-x4 (--cluster)" in j["platform"]
    assert "environment_variables.DATASET_UNMOUNT_TIMEOUT_SECONDS: 10173" in j["platform"]
    assert not any(p.startswith(("limits.timeout", "resources.shm_size")) for p in j["platform"])
    assert {"identity", "limits.timeout", "resources.shm_size", "queue_settings", "inputs.data"} <= set(
        j["kept"]
    )
    assert j["local_inputs"] == {"data": str((tmp_path / "mydata").resolve())}
