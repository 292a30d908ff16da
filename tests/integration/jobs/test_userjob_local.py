"""`python -m jobs submit --file` end to end against localml: a user's job file that fails shows the failing
rank's error, rank, node and log on the screen and in --json (issue 35 item 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.jobs.jobs_util import FIXTURES, REPO

FIXTURE = FIXTURES / "outputs-prod.json"


@pytest.fixture(scope="module")
def local_azure_ml():
    from doubles.localml import LocalAzureML

    with LocalAzureML() as env:
        yield env


def submit_file(
    env, tmp_path: Path, job: Path, *argv: str, json_out: bool = True
) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "jobs", "submit", "--file", str(job), "--outputs", str(FIXTURE)]
    cmd += ["--logs", str(tmp_path / "logs"), "--poll-seconds", "0.5", "--no-stream", *argv]
    cmd += ["--json"] if json_out else []
    return subprocess.run(
        cmd, env=env.subprocess_env(), cwd=REPO, capture_output=True, text=True, timeout=300
    )


def failing_job(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("import sys\n\nimport torchtitan  # not installed\n")
    job = {
        "$schema": "https://azuremlschemas.azureedge.net/latest/commandJob.schema.json",
        "type": "command",
        "code": "./src",
        "command": "python train.py",
        "environment": "azureml://registries/azureml/environments/acpt-pytorch-2.2-cuda12.1/versions/55",
        "distribution": {"type": "pytorch", "process_count_per_instance": 1},
        "resources": {"instance_count": 2},
    }
    path = tmp_path / "job.yml"
    path.write_text(yaml.safe_dump(job, sort_keys=False))
    return path


@pytest.mark.slow
def test_a_failed_file_jobs_cause_is_on_the_screen_and_in_json(local_azure_ml, tmp_path):
    path = failing_job(tmp_path)
    base = ["--cluster", "a100-lp", "--run-name", "t1", "--no-checkpoint", "--allow-tcp"]
    p = submit_file(local_azure_ml, tmp_path, path, *base)
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    (job,) = json.loads(p.stdout)["jobs"]
    assert job["status"] == "Failed"
    f = job["failure"]
    assert f["message"] == "ModuleNotFoundError: No module named 'torchtitan'"
    assert f["frame"].endswith("line 3, in <module>: import torchtitan  # not installed")
    # both ranks fail alike: the first is named, with the node and host from its azml-gpu rank line
    assert (f["rank"], f["node"]) == (0, 0) and f["host"] and Path(f["log"]).is_file()
    assert Path(f["log"]).name.startswith("std_log_process_0")
    text = submit_file(local_azure_ml, tmp_path / "again", path, *base, json_out=False)
    assert text.returncode == 1
    assert (
        "  cause: rank 0 (node 0, host " in text.stdout
        and "ModuleNotFoundError: No module named 'torchtitan'" in text.stdout
    )
    assert "  log: " in text.stdout


@pytest.mark.slow
def test_a_file_job_completes_verified_with_its_checkpoint_and_its_fields(local_azure_ml, tmp_path):
    """A file job with a literal input, its own environment variable and limits.timeout runs on localml,
    writes to the bound checkpoint output and verifies from the platform's rank lines."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(
        "import os, sys\n"
        "steps, out = sys.argv[1], sys.argv[2]\n"
        "print('steps', steps, 'mine', os.environ['MY_SETTING'])\n"
        "os.makedirs(out, exist_ok=True)\n"
        "open(os.path.join(out, f\"rank{os.environ['RANK']}.txt\"), 'w').write('ok')\n"
    )
    job = {
        "type": "command",
        "code": "./src",
        "command": "python train.py ${{inputs.steps}} ${{outputs.ckpt}}",
        "environment": "azureml://registries/azureml/environments/acpt-pytorch-2.2-cuda12.1/versions/55",
        "inputs": {"steps": 7},
        "environment_variables": {"MY_SETTING": "kept"},
        "limits": {"timeout": 900},
        "distribution": {"type": "pytorch"},
        "resources": {"instance_count": 2},
    }
    path = tmp_path / "job.yml"
    path.write_text(yaml.safe_dump(job, sort_keys=False))
    argv = ["--cluster", "a100-lp", "--run-name", "file-ok", "--allow-tcp", "--allow-socket"]
    p = submit_file(local_azure_ml, tmp_path, path, *argv)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (got,) = json.loads(p.stdout)["jobs"]
    assert got["status"] == "Completed" and got["verify"]["ok"] and got["verify"]["world_size"] == 2
    assert got["failure"] is None
    log0 = next(Path(got["logs"]).rglob("std_log_process_0*.txt")).read_text()
    assert "steps 7 mine kept" in log0
    ckpt = Path(local_azure_ml.control_plane.store.datastore_path("workspaceblobstore", "ckpt/file-ok"))
    assert sorted(p.name for p in ckpt.iterdir()) == ["rank0.txt", "rank1.txt"]  # the run's folder


@pytest.mark.slow
def test_run_stops_at_a_user_error_and_its_ledger_and_screen_carry_the_cause(local_azure_ml, tmp_path):
    path = failing_job(tmp_path)
    cmd = [sys.executable, "-m", "jobs", "run", "--file", str(path), "--outputs", str(FIXTURE)]
    # serverless: run checks that a --cluster exists in the workspace, and localml has no deployed cluster
    cmd += ["--serverless", "--size", "Standard_NC80adis_H100_v5", "--allow-idle-gpus", "--allow-tcp"]
    cmd += ["--run-name", "t2", "--no-checkpoint", "--no-quota-check"]
    cmd += ["--logs", str(tmp_path / "logs"), "--poll-seconds", "0.5", "--no-stream"]
    p = subprocess.run(
        cmd, env=local_azure_ml.subprocess_env(), cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    assert "cause: rank 0 (node 0, host " in p.stdout  # under the attempt's line
    assert "ModuleNotFoundError: No module named 'torchtitan'" in p.stdout
    (ledger,) = (tmp_path / "logs").glob("run-t2.ledger.json")
    (attempt,) = json.loads(ledger.read_text())["attempts"]
    assert attempt["cause"] == "user-error"
    assert attempt["failure"]["message"] == "ModuleNotFoundError: No module named 'torchtitan'"
