"""`jobs run`'s parts that need no job: why a job ended (jobs/runs/causes.py) from the texts Azure ML and the
job scripts really print, the ledger's arithmetic, backoff, and the quota pre-check and allocation line
through azure-ai-ml's real HTTP pipeline answered at the transport (bodies in the REST spec's shape).
The loop itself runs end to end against localml in tests/e2e/test_runs_drills.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobs_azure_fakes import RoutedTransport, ml_client

from jobs.cli import main
from jobs.runs import precheck
from jobs.runs.causes import classify
from jobs.runs.ledger import Attempt, Ledger, progress
from jobs.runs.loop import Policy

FIXTURES = Path(__file__).parent / "fixtures"
OUTPUTS = str(FIXTURES / "outputs-prod.json")
USAGES = json.loads((FIXTURES / "usages-eastus.json").read_text())
COMPUTE = json.loads((FIXTURES / "compute-get-amlcompute.json").read_text())
PREEMPTED = (
    "UserError: AzureMLCompute job failed. PreemptionError: Nodes of this job got pre-empted. Check "
    "if the run has failed or restarted. Reason: Received pre-emption warning signal"
)
LOST = (
    "rank 0: error: lost a peer: a collective failed "
    "([../third_party/gloo/gloo/transport/tcp/pair.cc:537] Connection closed by peer [127.0.0.1]:4321); "
    "another rank died or hung"
)
SIGTERMED = (
    "rank 1: interrupted by signal 15 after step 120/400 (checkpoint step 120 written to /ckpt); "
    "exiting 143: the run did NOT complete, resubmit to resume"
)
TRACEBACK = (
    'Traceback (most recent call last):\n  File "train.py", line 3\nZeroDivisionError: division by zero'
)


@pytest.mark.parametrize(
    ("status", "error", "logs", "cause", "retry"),
    [
        ("Completed", None, {}, "completed", False),
        ("Canceled", None, {0: SIGTERMED}, "canceled", False),
        (
            "Paused",
            None,
            {0: SIGTERMED},
            "paused",
            False,
        ),  # JobStatus PAUSED: terminal, not an infrastructure cause
        ("Failed", PREEMPTED, {}, "preempted", True),
        ("Failed", PREEMPTED, {0: TRACEBACK}, "preempted", True),  # the service's reason outranks the logs
        ("NotResponding", None, {}, "not-responding", True),
        (
            "Failed",
            "UserError: command exited with code 1",
            {
                0: "[Rank 0] Watchdog caught collective operation "
                "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE)"
            },
            "nccl-timeout",
            True,
        ),
        ("Failed", None, {0: LOST, 1: ""}, "node-lost", True),
        ("Failed", None, {0: LOST, 1: SIGTERMED}, "node-lost", True),  # the launcher SIGTERMed the survivor
        ("Failed", None, {0: TRACEBACK, 1: SIGTERMED}, "user-error", False),
        ("Failed", None, {0: SIGTERMED, 1: SIGTERMED}, "interrupted", True),
        (
            "Failed",
            "UserError: command exited with code 2",
            {0: "train.py: error: --data x: no *.bin token shards there"},
            "user-error",
            False,
        ),
    ],
)
def test_classify(status, error, logs, cause, retry):
    got = classify(status, error, logs)
    assert (got.name, got.retry) == (cause, retry), got


def test_evidence_names_the_rank_and_line():
    got = classify("Failed", None, {0: "x\n" + SIGTERMED, 1: "y\n" + LOST + "\nz"})
    assert got.evidence.startswith("rank 1: rank 0: error: lost a peer")


def test_progress_reads_train_py_records():
    from jobs.src.metrics import StepMetrics

    lines = [StepMetrics(step, 400, 5.0, ms, 1.0, None, 2, 1e-3) for step, ms in ((110, 10.0), (120, 20.0))]
    log = "resumed from /ckpt/step_00000100.pt at step 100\n" + "".join(
        f"{m.text()}\n{m.to_line()}\n" for m in lines
    )
    p = progress(log)
    assert (p.start_step, p.last_step, p.total_steps, p.ms_per_step) == (100, 120, 400, 15.0)
    assert progress("no steps here").last_step is None


def test_ledger_counts_kept_redone_and_lost_time():
    ledger = Ledger("r", "train", 5, None)
    ledger.attempts = [
        Attempt(
            1,
            "j1",
            "Failed",
            "preempted",
            "",
            True,
            1,
            elapsed_s=30.0,
            start_step=0,
            last_step=150,
            ms_per_step=100.0,
            backoff_s=2.0,
        ),
        Attempt(
            2,
            "j2",
            "Completed",
            "completed",
            "",
            False,
            0,
            elapsed_s=40.0,
            start_step=100,
            last_step=400,
            ms_per_step=100.0,
        ),
    ]
    data = ledger.to_json()
    first, last = data["attempts"]
    assert (first["steps_done"], first["steps_kept"], first["steps_redone"]) == (150, 100, 50)
    assert first["time_lost_s"] == 30.0 - 10.0 + 2.0  # 100 kept steps x 0.1 s were useful; plus the backoff
    assert (last["steps_kept"], last["steps_redone"], last["time_lost_s"]) == (300, 0, 10.0)
    assert data["restarts"] == 1 and data["time_lost_s"] == 32.0


def test_backoff_doubles_up_to_the_cap():
    assert [Policy(backoff_s=30, backoff_max_s=100).backoff(n) for n in (1, 2, 3, 4)] == [30, 60, 100, 100]


def _route(method: str, url: str):
    if "/locations/eastus/usages" in url:
        return 200, USAGES
    if "/computes/h100-x4" in url:
        return 200, COMPUTE
    return 404, {"error": {"code": "NotFound", "message": url}}


def test_quota_check_counts_the_jobs_nodes_against_family_and_regional_pools():
    from jobs import outputs
    from jobs.builders import cluster_target, smoke

    transport = RoutedTransport(_route)
    ml = ml_client(transport, retry_total=0)
    target = cluster_target(outputs.from_file(Path(OUTPUTS)), "h100-x4")
    fits = precheck.check_quota(ml, smoke(target, nodes=2), "eastus", "dedicated", "h100-x4")
    assert fits.checked and fits.fits
    assert {p["pool"]: (p["need"], p["used"], p["limit"]) for p in fits.pools} == {
        next(p["pool"] for p in fits.pools if p["limit"] == 192): (192, 0, 192),
        next(p["pool"] for p in fits.pools if p["limit"] == 500): (192, 14, 500),
    }
    short = precheck.check_quota(ml, smoke(target, nodes=3), "eastus", "dedicated", "h100-x4")
    assert not short.fits and "needs 288 vCPUs, 0 of 192 are in use" in short.message()
    assert precheck.allocation(ml, "h100-x4") == "cluster h100-x4: allocation Resizing; nodes 0/1"


def test_run_refuses_a_job_that_cannot_fit_with_exit_3_before_creating_it(monkeypatch, capsys, tmp_path):
    import jobs.azure_client

    transport = RoutedTransport(_route)
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    argv = [
        "run",
        "smoke",
        "--outputs",
        OUTPUTS,
        "--cluster",
        "h100-x4",
        "--nodes",
        "3",
        "--logs",
        str(tmp_path),
        "--json",
    ]
    assert main(argv) == 3
    out = capsys.readouterr()
    body = json.loads(out.out)
    assert body["ok"] is False and body["exit_code"] == 3
    assert "needs 288 vCPUs, 0 of 192 are in use (0 held by this cluster), 192 free" in body["error"]
    assert body["quota"]["fits"] is False
    assert not [r for r in transport.requests if r.method == "PUT"]  # nothing was created


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--max-restarts", "-1"], "--max-restarts -1"),
        (["--max-hours", "0"], "--max-hours 0"),
        (["--backoff-seconds", "nan"], "--backoff-seconds nan"),
        (["--poll-seconds", "0"], "--poll-seconds 0"),
    ],
)
def test_bad_run_flags_are_exit_2(capsys, tmp_path, flags, named):
    argv = ["run", "smoke", "--outputs", OUTPUTS, "--cluster", "h100-x4", "--logs", str(tmp_path), *flags]
    assert main(argv) == 2
    assert f"error: {named}" in capsys.readouterr().err
