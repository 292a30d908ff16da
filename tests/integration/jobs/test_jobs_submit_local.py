"""`python -m jobs submit` end to end against the local Azure ML control plane (localml: the HTTP boundary
plus Azurite), reached only through the environment variables the real SDKs read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.jobs.jobs_util import FIXTURES, REPO

FIXTURE = FIXTURES / "outputs-prod.json"


@pytest.fixture(scope="module")
def local_azure_ml():
    from doubles.localml import LocalAzureML

    with LocalAzureML() as env:
        yield env


def submit(env, tmp_path: Path, *argv: str, script_args: tuple[str, ...] = ()) -> tuple[int, dict, str]:
    cmd = [
        sys.executable,
        "-m",
        "jobs",
        "submit",
        *argv,
        "--outputs",
        str(FIXTURE),
        "--logs",
        str(tmp_path / "logs"),
        "--poll-seconds",
        "0.5",
        "--json",
        *(("--", *script_args) if script_args else ()),
    ]
    p = subprocess.run(cmd, env=env.subprocess_env(), cwd=REPO, capture_output=True, text=True, timeout=300)
    return p.returncode, json.loads(p.stdout) if p.stdout.strip() else {}, p.stderr


@pytest.mark.slow
def test_smoke_submit_follows_downloads_and_verifies(local_azure_ml, tmp_path):
    code, summary, err = submit(
        local_azure_ml,
        tmp_path,
        "smoke",
        "--cluster",
        "a100-lp",
        "--nodes",
        "2",
        "--allow-tcp",
        "--allow-socket",
    )
    assert code == 0, err[-3000:]
    job = summary["jobs"][0]
    assert job["status"] == "Completed" and job["exit_code"] == 0
    assert job["verify"]["world_size"] == 2 and job["verify"]["rank_logs"] == 2
    assert job["verify"]["processes_per_node"] == {"node 0": 1, "node 1": 1}
    assert Path(job["logs"], "artifacts", "user_logs", "std_log_process_0.txt").is_file()
    assert "Queued -> Running" in err or "Running -> Completed" in err  # progress went to stderr
    # azure-ai-ml's noise is silenced: six "experimental class" warnings and a tenant-id line per poll
    assert "experimental class" not in err and "Proceeding with no tenant id" not in err


@pytest.mark.slow
def test_smoke_without_allow_socket_is_not_verified_on_a_cpu_run(local_azure_ml, tmp_path):
    code, summary, _ = submit(
        local_azure_ml, tmp_path, "smoke", "--cluster", "a100-lp", "--nodes", "2", "--allow-tcp"
    )
    assert code == 1
    job = summary["jobs"][0]
    assert job["status"] == "Completed" and job["verify"]["ok"] is False
    assert any("no NCCL transport lines" in p for p in job["verify"]["problems"])


@pytest.mark.slow
def test_no_wait_then_audit_sees_the_job_on_its_cluster(local_azure_ml, tmp_path):
    code, summary, _ = submit(local_azure_ml, tmp_path, "smoke", "--cluster", "a100-lp", "--no-wait")
    assert code == 0 and summary["jobs"][0]["status"] in ("NotStarted", "Queued", "Starting", "Running")
    name = summary["jobs"][0]["name"]
    p = subprocess.run(
        [sys.executable, "-m", "jobs", "audit", "--outputs", str(FIXTURE), "--json"],
        env=local_azure_ml.subprocess_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    clusters = {c["cluster"]: c for c in json.loads(p.stdout)["clusters"]}
    assert clusters["a100-lp"]["last_job"] == name and not clusters["a100-lp"]["unused"]
    # h100-x4 has no jobs, but the workspace has no such compute (none was created here): nothing to delete,
    # so it is not flagged and audit exits 0 (tests/jobs/test_audit.py: the age rule).
    assert p.returncode == 0
    assert not clusters["h100-x4"]["unused"] and clusters["h100-x4"]["vcpus_held"] == 384
    assert clusters["h100-x4"]["note"].startswith("not in the workspace: nothing to delete")


@pytest.mark.slow
def test_scaling_jobs_downloads_both_runs_and_scores_them(local_azure_ml, tmp_path):
    """`submit scaling` runs the pair; `scaling --jobs` downloads each job's logs again through
    `jobs.download(all=True)` and reads them: the same pair, the same world sizes."""
    tiny = ("--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--block-size", "32", "--vocab-size", "256")
    code, summary, err = submit(
        local_azure_ml,
        tmp_path,
        "scaling",
        "--cluster",
        "a100-lp",
        "--allow-tcp",
        "--allow-socket",
        "--steps",
        "6",
        "--log-every",
        "2",
        "--batch-size",
        "2",
        script_args=tiny,
    )
    assert [j["status"] for j in summary["jobs"]] == ["Completed", "Completed"], err[-3000:]
    assert code in (0, 1) and "efficiency" in summary["scaling"]  # 1: below 0.75, which 2 CPUs may give
    names = [j["name"] for j in summary["jobs"]]
    dl = tmp_path / "again"
    cmd = [
        sys.executable,
        "-m",
        "jobs",
        "scaling",
        "--jobs",
        *names,
        "--outputs",
        str(FIXTURE),
        "--logs",
        str(dl),
        "--json",
    ]
    p = subprocess.run(
        cmd, env=local_azure_ml.subprocess_env(), cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert p.returncode in (0, 1), p.stderr[-3000:]
    result = json.loads(p.stdout)
    assert (result["one_node"]["world_size"], result["two_nodes"]["world_size"]) == (1, 2)
    for name in names:
        assert Path(dl, name, "artifacts", "user_logs", "std_log_process_0.txt").is_file()
