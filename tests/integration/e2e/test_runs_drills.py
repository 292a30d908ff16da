"""`python -m jobs run` against localml with failure drills (doubles/localml/drills.py): a training run
preempted twice and one node lost reaches the uninterrupted run's final weights on its own, with three
restarts in its ledger; a failure of the user's code is not retried."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from doubles.localml import LocalAzureML, drills
from doubles.localml.store import Job

ROOT = Path(__file__).resolve().parents[3]
SIZE = "Standard_NC80adis_H100_v5"
STEPS = 400  # train.py checkpoints every 100 steps
FINGERPRINT = re.compile(r"final parameters sha256: ([0-9a-f]{64})")

pytestmark = pytest.mark.slow


def _run_argv(outputs: Path, logs: Path, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "jobs",
        "run",
        *args,
        "--outputs",
        str(outputs),
        "--serverless",
        "--size",
        SIZE,
        "--nodes",
        "2",
        "--processes-per-node",
        "1",
        "--allow-tcp",
        "--allow-socket",
        "--logs",
        str(logs),
        "--poll-seconds",
        "0.5",
        "--backoff-seconds",
        "0.5",
        "--no-stream",
        "--json",
    ]


def _finish(p: subprocess.Popen[str], timeout: float) -> tuple[int, dict, str]:
    out, err = p.communicate(timeout=timeout)
    try:
        return p.returncode, json.loads(out), err
    except ValueError:
        pytest.fail(f"jobs run printed no JSON (exit {p.returncode}):\n{out}\n{err[-4000:]}")


def _rank0(attempt: dict) -> str:
    return (Path(attempt["logs"]) / "artifacts" / "user_logs" / "std_log_process_0.txt").read_text()


def _jobs_of(local: LocalAzureML, run: str) -> list[Job]:
    assert local.control_plane is not None
    return [
        j
        for j in list(local.control_plane.store.jobs.values())
        if (j.properties.get("tags") or {}).get("azml-gpu.run-name") == run
    ]


def _next_job(local: LocalAzureML, run: str, seen: set[str], deadline: float) -> Job:
    while True:
        fresh = [j for j in _jobs_of(local, run) if j.name not in seen]
        if fresh:
            seen.add(fresh[0].name)
            return fresh[0]
        assert time.monotonic() < deadline, f"no new job for run {run}"
        time.sleep(0.05)


def test_preempted_twice_and_a_node_lost_completes_with_the_uninterrupted_weights(
    local: LocalAzureML, outputs_file: Path, tmp_path: Path
) -> None:
    assert local.control_plane is not None
    runner = local.control_plane.runner

    ref = subprocess.Popen(
        _run_argv(outputs_file, tmp_path / "ref", "train", "--run-name", "drill-ref", "--steps", str(STEPS)),
        cwd=ROOT,
        env=local.subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    code, reference, err = _finish(ref, 600)
    assert code == 0, err[-3000:]
    ref_ledger = reference["ledgers"][0]
    assert ref_ledger["restarts"] == 0 and ref_ledger["outcome"] == "completed"
    expected = FINGERPRINT.findall(_rank0(ref_ledger["attempts"][0]))
    assert len(expected) == 1

    run = "drill-run"
    ckpt = local.control_plane.store.datastore_path("workspaceblobstore", f"ckpt/{run}")
    proc = subprocess.Popen(
        _run_argv(
            outputs_file,
            tmp_path / "logs",
            "train",
            "--run-name",
            run,
            "--steps",
            str(STEPS),
            "--max-restarts",
            "5",
        ),
        cwd=ROOT,
        env=local.subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    drilled: list[str] = []
    problems: list[BaseException] = []

    def drill() -> None:
        try:
            seen: set[str] = set()
            deadline = time.monotonic() + 900
            for step, action in ((100, "preempt"), (200, "preempt"), (300, "fail-node")):
                job = _next_job(local, run, seen, deadline)
                drills.wait_running(job)
                while not any(
                    (ckpt / f"step_{s:08d}" / "commit.json").exists() for s in range(step, STEPS, 100)
                ):
                    assert time.monotonic() < deadline and not job.done.is_set(), f"no checkpoint {step}"
                    time.sleep(0.02)
                killed = (
                    drills.preempt(runner, job) if action == "preempt" else drills.fail_node(runner, job, 1)
                )
                assert killed >= 1
                drilled.append(job.name)
        except BaseException as exc:  # surfaced by the main thread
            problems.append(exc)

    t = threading.Thread(target=drill, daemon=True)
    t.start()
    code, summary, err = _finish(proc, 900)
    t.join(10)
    assert not problems, problems
    ledger = summary["ledgers"][0]
    assert code == 0, err[-4000:]
    causes = [a["cause"] for a in ledger["attempts"]]
    assert causes == ["preempted", "preempted", "node-lost", "completed"], ledger
    assert ledger["restarts"] == 3 and ledger["outcome"] == "completed"
    assert [a["job"] for a in ledger["attempts"][:3]] == drilled
    assert "PreemptionError" in ledger["attempts"][0]["evidence"]
    assert "lost a peer" in ledger["attempts"][2]["evidence"]
    # Each attempt resumed from the checkpoint the previous one completed.
    starts = [a["start_step"] for a in ledger["attempts"]]
    assert starts[0] == 0 and starts == sorted(starts) and starts[-1] >= 300, starts
    assert all(a["time_lost_s"] is not None for a in ledger["attempts"])
    assert FINGERPRINT.findall(_rank0(ledger["attempts"][-1])) == expected
    on_disk = json.loads((tmp_path / "logs" / f"run-{run}.ledger.json").read_text())
    assert [a["cause"] for a in on_disk["attempts"]] == causes and on_disk["restarts"] == 3


def test_user_code_failure_is_not_retried(local: LocalAzureML, outputs_file: Path, tmp_path: Path) -> None:
    assert local.control_plane is not None
    empty = local.control_plane.store.datastore_path("workspaceblobstore", "drill-empty-data")
    empty.mkdir(parents=True, exist_ok=True)
    p = subprocess.Popen(
        _run_argv(
            outputs_file,
            tmp_path,
            "train",
            "--run-name",
            "drill-user",
            "--steps",
            "5",
            "--data",
            "azureml://datastores/workspaceblobstore/paths/drill-empty-data/",
        ),
        cwd=ROOT,
        env=local.subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    code, summary, err = _finish(p, 300)
    ledger = summary["ledgers"][0]
    assert code == 1, err[-3000:]
    assert [a["cause"] for a in ledger["attempts"]] == ["user-error"] and ledger["restarts"] == 0
    assert ledger["outcome"] == "user-error"
    assert len(_jobs_of(local, "drill-user")) == 1
