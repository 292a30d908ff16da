"""`python -m jobs run --file JOB.yml` against localml: a team's own trainer (tests/integration/e2e/
usertrainer, not train.py) in an Azure ML command job file gets the platform layer, is preempted once by the
drill (doubles/localml/drills.py), is resubmitted by the managed run, resumes from the checkpoint folder the
platform bound to its run name, and completes with its world size and processes per node (the size's 2 GPUs,
the file sets no count) verified from the platform's per-process line."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from doubles.localml import LocalAzureML, drills

ROOT = Path(__file__).resolve().parents[3]
SIZE = "Standard_NC80adis_H100_v5"
STEPS = 200

pytestmark = pytest.mark.slow


def test_a_user_job_file_is_preempted_resubmitted_and_resumes_from_its_checkpoint(
    local: LocalAzureML, outputs_file: Path, tmp_path: Path
) -> None:
    assert local.control_plane is not None
    runner = local.control_plane.runner
    job_file = tmp_path / "job.yml"
    job_file.write_text(
        yaml.safe_dump(
            {
                "$schema": "https://azuremlschemas.azureedge.net/latest/commandJob.schema.json",
                "type": "command",
                "code": str(Path(__file__).parent / "usertrainer"),
                "command": f"python trainer.py --out ${{{{outputs.ckpt}}}} --steps {STEPS}",
                "environment": "azureml://registries/azureml/environments/acpt-pytorch-2.2-cuda12.1/versions/55",
                "distribution": {"type": "pytorch"},
                "resources": {"instance_count": 2},
            }
        )
    )
    run = "user-drill"
    ckpt = local.control_plane.store.datastore_path("workspaceblobstore", f"ckpt/{run}")
    argv = [sys.executable, "-m", "jobs", "run", "--file", str(job_file), "--run-name", run]
    argv += ["--outputs", str(outputs_file), "--serverless", "--size", SIZE]  # 2 GPUs: 2 processes a node
    argv += ["--allow-tcp", "--allow-socket", "--logs", str(tmp_path / "logs"), "--poll-seconds", "0.5"]
    argv += ["--backoff-seconds", "0.5", "--no-stream", "--no-quota-check", "--json"]
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=local.subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    problems: list[BaseException] = []

    def drill() -> None:
        try:
            deadline = time.monotonic() + 300
            while not (
                jobs := [j for j in local.control_plane.store.jobs.values() if run in str(j.properties)]
            ):
                assert time.monotonic() < deadline, "the job was never created"
                time.sleep(0.05)
            job = jobs[0]
            drills.wait_running(job)
            while not (ckpt / "my-trainer-state.json").exists():  # its first checkpoint, then preempt
                assert time.monotonic() < deadline and not job.done.is_set(), "no checkpoint"
                time.sleep(0.02)
            assert drills.preempt(runner, job) >= 1
        except BaseException as exc:  # surfaced by the main thread
            problems.append(exc)

    t = threading.Thread(target=drill, daemon=True)
    t.start()
    out, err = proc.communicate(timeout=600)
    t.join(10)
    assert not problems, problems
    summary = json.loads(out)
    ledger = summary["ledgers"][0]
    assert proc.returncode == 0, json.dumps(ledger["attempts"][-1], indent=1)[-3000:]
    assert [a["cause"] for a in ledger["attempts"]] == ["preempted", "completed"], ledger
    last = Path(ledger["attempts"][-1]["logs"]) / "artifacts" / "user_logs"
    log0 = (last / "std_log_process_0.txt").read_text()
    resumed = int(log0.split("my trainer: rank 0 starts at step ")[1].split()[0])
    assert resumed >= 20 and resumed % 20 == 0, log0[:2000]
    assert f"my trainer: rank 0 done, total {STEPS}" in log0
    assert "azml-gpu rank=0 local_rank=0 node_rank=0 world_size=4" in log0
    rank2 = (last / "std_log_process_2.txt").read_text()
    assert "azml-gpu rank=2 local_rank=0 node_rank=1 world_size=4" in rank2
    assert sorted(p.name for p in last.iterdir()) == [f"std_log_process_{r}.txt" for r in range(4)]
    assert json.loads((ckpt / "my-trainer-state.json").read_text())["step"] == STEPS
