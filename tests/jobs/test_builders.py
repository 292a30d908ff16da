"""The job builders (jobs/builders.py) through `render`: the YAML loads back with azure-ai-ml's own `load_job`
and gives the REST body Azure ML receives (nodes, processes, the checkpoint output, the command and its
script arguments, the pinned environment); shapes the SDK lets through are refused with exit 2 naming the
flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobs.cli import main

from .render_util import FIXTURE, render, rest_body


def test_smoke_on_h100_x4_is_two_nodes_of_eight_processes(tmp_path):
    body = rest_body(render(tmp_path, "smoke", "--cluster", "h100-x4"))
    assert body["distribution"] == {"distributionType": "PyTorch", "processCountPerInstance": 8}
    assert body["resources"]["instanceCount"] == 2
    assert body["computeId"] == "h100-x4"
    # NCCL_DEBUG, plus the ND H100 v5 settings (jobs/settings.py; tests/jobs/test_settings.py)
    assert body["environmentVariables"]["NCCL_DEBUG"] == "INFO"
    assert body["environmentVariables"]["NCCL_IGNORE_CPU_AFFINITY"] == "1"
    # The GPU sweep reaches the message size of ND H100 v5's health levels (16 GiB; vmsizes/data/health.yaml).
    assert body["command"] == "python smoke.py --expect-world-size 16 --gpu-max-bytes 17179869184"
    assert body["environmentId"].startswith("azureml://registries/azureml/environments/acpt-pytorch")


def test_smoke_default_is_capped_by_the_clusters_max(tmp_path):
    body = rest_body(render(tmp_path, "smoke", "--cluster", "h100-one"))
    assert body["resources"]["instanceCount"] == 1
    assert body["command"] == "python smoke.py --expect-world-size 8 --gpu-max-bytes 17179869184"


def test_train_binds_the_checkpoint_to_a_fixed_path_in_rw_mount(tmp_path):
    body = rest_body(
        render(
            tmp_path,
            "train",
            "--cluster",
            "h100-x4",
            "--run-name",
            "llm-cpt-01",
            "--data",
            "azureml:corpus-tok:3",
            "--nodes",
            "2",
            "--steps",
            "500",
            "--batch-size",
            "8",
            "--log-every",
            "20",
        )
    )
    assert body["outputs"]["ckpt"] == {
        "uri": "azureml://datastores/workspaceblobstore/paths/ckpt/llm-cpt-01/",
        "mode": "ReadWriteMount",
        "jobOutputType": "uri_folder",
    }
    assert body["inputs"]["data"]["jobInputType"] == "uri_folder"
    assert body["inputs"]["data"]["uri"].endswith("corpus-tok:3")
    assert body["command"] == (
        "python train.py --ckpt ${{outputs.ckpt}} --data ${{inputs.data}} --steps 500 "
        "--batch-size 8 --log-every 20"
    )
    assert body["distribution"]["processCountPerInstance"] == 8
    assert body["resources"]["instanceCount"] == 2


def test_resubmitting_with_the_same_run_name_points_at_the_same_folder(tmp_path):
    a = rest_body(render(tmp_path, "train", "--cluster", "h100-x4", "--run-name", "r1", out="a.yml"))
    b = rest_body(render(tmp_path, "train", "--cluster", "h100-x4", "--run-name", "r1", out="b.yml"))
    c = rest_body(render(tmp_path, "train", "--cluster", "h100-x4", "--run-name", "r2", out="c.yml"))
    assert a["outputs"]["ckpt"]["uri"] == b["outputs"]["ckpt"]["uri"] != c["outputs"]["ckpt"]["uri"]


def test_serverless_spot_train_sets_instance_type_and_job_tier(tmp_path):
    body = rest_body(
        render(
            tmp_path,
            "train",
            "--serverless",
            "--size",
            "Standard_ND96isr_H100_v5",
            "--spot",
            "--run-name",
            "spot-01",
            "--nodes",
            "2",
        )
    )
    assert "computeId" not in body
    assert body["resources"]["instanceType"] == "Standard_ND96isr_H100_v5"
    assert body["resources"]["instanceCount"] == 2
    assert body["queueSettings"] == {"jobTier": "Spot"}
    assert body["distribution"]["processCountPerInstance"] == 8


def test_scaling_writes_one_and_two_node_jobs_with_equal_per_gpu_batch(tmp_path, capsys):
    assert (
        main(
            [
                "render",
                "scaling",
                "--outputs",
                FIXTURE,
                "--cluster",
                "h100-x4",
                "--batch-size",
                "8",
                "--out",
                str(tmp_path / "scaling.yml"),
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert [j["world_size"] for j in summary["jobs"]] == [8, 16]
    one, two = rest_body(tmp_path / "scaling-1node.yml"), rest_body(tmp_path / "scaling-2node.yml")
    assert (one["resources"]["instanceCount"], two["resources"]["instanceCount"]) == (1, 2)
    assert "--batch-size 8" in one["command"] and one["command"] == two["command"]
    assert one["outputs"]["ckpt"].get("uri") is None  # job-scoped: a benchmark never resumes


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["smoke", "--cluster", "h100-x4", "--nodes", "0"], "--nodes 0: a job needs at least 1 node"),
        (["smoke", "--cluster", "h100-x4", "--nodes", "5"], "--nodes 5: cluster h100-x4 has max_instances 4"),
        (
            ["smoke", "--cluster", "h100-x4", "--processes-per-node", "16"],
            "--processes-per-node 16: Standard_ND96isr_H100_v5 has 8 GPU(s) per node; use at most 8",
        ),
        (
            ["smoke", "--cluster", "v100"],
            "--cluster v100: no such cluster in the stack outputs (clusters: a100-lp, h100-one, h100-x4)",
        ),
        (
            ["smoke", "--cluster", "a100-lp", "--nodes", "2"],
            "--nodes 2 on Standard_NC24ads_A100_v4: the size has no RDMA usable by NCCL",
        ),
        (["train", "--cluster", "h100-x4"], "train needs --run-name"),
        (["train", "--cluster", "h100-x4", "--run-name", "bad/name"], "--run-name 'bad/name'"),
        (["train", "--cluster", "h100-x4", "--spot", "--run-name", "x"], "--spot is the serverless job tier"),
        (["train", "--serverless", "--run-name", "x"], "--serverless needs --size"),
        (
            ["smoke", "--serverless", "--size", "Standard_ND128isr_GB400_v7"],
            "--size 'Standard_ND128isr_GB400_v7' is not in the size catalog, so its GPU count is unknown",
        ),
        (["smoke", "--serverless", "--size", "Standard_HB120rs_v3"], "has no GPU (a CPU/HPC size)"),
        (["smoke", "--cluster", "h100-x4", "--steps", "3"], "--steps is for train/scaling jobs"),
        (
            ["scaling", "--cluster", "a100-lp"],
            "scaling (its second job runs 2 nodes) on Standard_NC24ads_A100_v4",
        ),
        (["train", "--cluster", "h100-x4", "--run-name", "x", "--data", ""], "--data: empty"),
        (["scaling", "--cluster", "h100-x4", "--data", ""], "--data: empty"),
        (["scaling", "--cluster", "h100-x4", "--data", "  "], "--data: empty"),
        (["scaling", "--cluster", "h100-x4", "--data", "corpus"], "--data corpus: no such local folder"),
        (["scaling", "--cluster", "h100-x4", "--data", "azureml:corpus"], "not a data asset reference"),
    ],
)
def test_refused_shapes_exit_2_naming_the_flag(tmp_path, capsys, argv, message):
    assert main(["render", *argv, "--outputs", FIXTURE, "--out", str(tmp_path / "x.yml")]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not (tmp_path / "x.yml").exists()


def test_allow_tcp_lets_a_multi_node_job_on_a_non_rdma_size_through(tmp_path):
    body = rest_body(render(tmp_path, "smoke", "--cluster", "a100-lp", "--nodes", "2", "--allow-tcp"))
    assert body["resources"]["instanceCount"] == 2
    assert body["distribution"]["processCountPerInstance"] == 1


def test_script_arguments_after_the_double_dash_reach_the_command(tmp_path):
    target = tmp_path / "train.yml"
    argv = [
        "render",
        "train",
        "--cluster",
        "h100-x4",
        "--run-name",
        "big",
        "--steps",
        "500",
        "--outputs",
        FIXTURE,
        "--out",
        str(target),
        "--",
        "--n-layer",
        "20",
        "--n-embd",
        "2048",
    ]
    assert main(argv) == 0
    body = rest_body(target)
    assert body["command"] == (
        "python train.py --ckpt ${{outputs.ckpt}} --steps 500 --n-layer 20 --n-embd 2048"
    )


@pytest.mark.parametrize(
    ("kind", "script_arg", "message"),
    [
        ("train", "--ckpt=/mnt/x", "the job sets --ckpt itself; use --run-name (before `--`) instead"),
        ("train", "--steps", "the job sets --steps itself; use --steps (before `--`) instead"),
        ("smoke", "--expect-world-size", "use --nodes and --processes-per-node (before `--`) instead"),
    ],
)
def test_script_arguments_cannot_override_what_the_job_sets(tmp_path, capsys, kind, script_arg, message):
    argv = ["render", kind, "--cluster", "h100-x4", "--outputs", FIXTURE, "--out", str(tmp_path / "j.yml")]
    if kind == "train":
        argv += ["--run-name", "r1"]
    assert main([*argv, "--", script_arg, "4"]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "j.yml").exists()


@pytest.mark.parametrize(
    ("kind", "script_arg", "message"),
    [
        ("train", "--ck=/mnt/x", "'--ck=/mnt/x' (an abbreviation of --ckpt): the job sets --ckpt itself"),
        ("train", "--log-e", "(an abbreviation of --log-every)"),
        ("smoke", "--expect", "(an abbreviation of --expect-world-size)"),
    ],
)
def test_script_arguments_cannot_abbreviate_what_the_job_sets(tmp_path, capsys, kind, script_arg, message):
    argv = ["render", kind, "--cluster", "h100-x4", "--outputs", FIXTURE, "--out", str(tmp_path / "j.yml")]
    if kind == "train":
        argv += ["--run-name", "r1"]
    assert main([*argv, "--", script_arg, "4"]) == 2
    assert message in capsys.readouterr().err


def test_script_flags_that_only_share_a_prefix_pass(tmp_path):
    # --ckpt-every is train.py's own flag, not an abbreviation of --ckpt
    target = tmp_path / "j.yml"
    argv = ["render", "train", "--cluster", "h100-x4", "--run-name", "r1", "--outputs", FIXTURE]
    assert main([*argv, "--out", str(target), "--", "--ckpt-every", "100"]) == 0
    assert rest_body(target)["command"].endswith("--ckpt-every 100")


def test_scaling_on_a_one_node_cluster_does_not_suggest_nodes(tmp_path, capsys):
    argv = ["render", "scaling", "--cluster", "h100-one", "--outputs", FIXTURE]
    assert main([*argv, "--out", str(tmp_path / "s.yml")]) == 2
    err = capsys.readouterr().err
    assert "cluster h100-one has max_instances 1; pick a cluster with max_instances 2 or more" in err
    assert "--nodes" not in err  # scaling refuses --nodes, so it cannot be the fix


def test_every_job_names_its_pinned_environment_in_the_yaml_and_the_render_output(tmp_path, capsys):
    from jobs.builders import DEFAULT_ENVIRONMENT, ENVIRONMENT_NAME, ENVIRONMENT_VERSION

    # One version of one curated environment, never a label that moves.
    assert (
        f"azureml://registries/azureml/environments/{ENVIRONMENT_NAME}/versions/{ENVIRONMENT_VERSION}"
    ) == DEFAULT_ENVIRONMENT
    assert ENVIRONMENT_VERSION.isdigit() and "/labels/" not in DEFAULT_ENVIRONMENT
    out = tmp_path / "scaling.yml"
    argv = ["render", "scaling", "--outputs", FIXTURE, "--cluster", "h100-x4", "--out", str(out), "--json"]
    assert main(argv) == 0
    written = json.loads(capsys.readouterr().out)["jobs"]
    assert [j["environment"] for j in written] == [DEFAULT_ENVIRONMENT, DEFAULT_ENVIRONMENT]
    for j in written:
        assert rest_body(Path(j["file"]))["environmentId"] == DEFAULT_ENVIRONMENT
    # Plain output names it too; --environment replaces it everywhere.
    assert main(["render", "smoke", "--outputs", FIXTURE, "--cluster", "h100-x4", "--out", str(out)]) == 0
    first, settings = capsys.readouterr().out.splitlines()  # the job line, then its settings line
    assert first.endswith(f"world size 16, environment {DEFAULT_ENVIRONMENT}")
    assert settings.startswith("  settings: timeout 3600 s, shm_size 950g, env ")
    argv = ["render", "smoke", "--outputs", FIXTURE, "--cluster", "h100-x4", "--out", str(out), "--json",
            "--environment", "azureml:my-env:3"]  # fmt: skip
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["jobs"][0]["environment"] == "azureml:my-env:3"
    assert rest_body(out)["environmentId"].endswith("my-env:3")
