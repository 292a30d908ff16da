"""The managed-run loop (`jobs.run.loop.managed`) driven attempt by attempt with a scripted submit/follow,
its backoff and the run error it reads.

`jobs.submit.lifecycle.submit` is replaced by a script of attempts, each ending the way a followed Azure ML
job ends (`Outcome`: status, exit code, the downloaded rank logs in Azure ML's `user_logs/std_log_process_<N>
.txt` layout, elapsed time). The run error (run history `RunDetails.error`) comes from a real MLClient over
an HTTP transport answered with the run-history body shape, the clock and the sleeps are scripted, so each
case shows what a user of `python -m jobs run` sees: how many jobs were created, how long it waited between
them, the exit code, and the ledger on disk."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from rich.console import Console

import jobs.submit.lifecycle
from jobs import outputs
from jobs.builders import cluster_target, smoke
from jobs.payload.metrics import StepMetrics
from jobs.run import loop
from jobs.run.ledger import Ledger
from jobs.run.loop import Policy, managed
from jobs.submit.lifecycle import EXIT_CREATE, EXIT_STATUS, Outcome

from ..jobs_azure_fakes import RoutedTransport, ml_client
from ..jobs_util import FIXTURES
from ..runs_util import SIGTERM, TRACEBACK


def test_backoff_doubles_up_to_the_cap():
    assert [Policy(backoff_s=30, backoff_max_s=100).backoff(n) for n in (1, 2, 3, 4)] == [30, 60, 100, 100]


OUTPUTS = FIXTURES / "outputs-prod.json"
WORKSPACE = json.loads((FIXTURES / "workspace-get.json").read_text())


# Azure ML's text for a low-priority preemption (jobs/run/causes.py cites the issues it is quoted from).
PREEMPTED = (
    "AzureMLCompute job failed. PreemptionError: Nodes of this job got pre-empted. Check if the run has "
    "failed or restarted. Reason: Received pre-emption warning signal"
)


def steps_log(start: int, steps: list[int], ms: float = 100.0, tail: str = "") -> str:
    """Rank 0's log as train.py prints it: the resume line, then one metrics record per logged step."""
    head = f"resumed from /ckpt/step_{start:08d}.pt at step {start}\n" if start else ""
    recs = [StepMetrics(s, 400, 5.0, ms, 1.0, None, 2, 1e-3) for s in steps]
    return head + "".join(f"{m.text()}\n{m.to_line()}\n" for m in recs) + (tail + "\n" if tail else "")


class ReadingTransport(RoutedTransport):
    """RoutedTransport whose answers are read in full (the workspace discovery document is fetched with
    `stream=True`, azure-ai-ml `download_text_from_url`, and read after the pipeline returns)."""

    def send(self, request, **kwargs):
        response = super().send(request, **kwargs)
        response.read()
        return response


@dataclass
class Script:
    """The attempts submit/follow will end with, in order; the clock advances by each job's wall time."""

    tmp: Path
    attempts: list[dict]
    now: float = 1000.0
    calls: list[dict] = field(default_factory=list)
    events: list[tuple[str, str]] = field(default_factory=list)  # submits and cancels, in order
    slept: list[float] = field(default_factory=list)
    ledger_at_sleep: list[dict] = field(default_factory=list)
    ledger_path: Path | None = None

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert self.ledger_path is not None
        self.ledger_at_sleep.append(json.loads(self.ledger_path.read_text()))  # written before the wait
        self.slept.append(seconds)
        self.now += seconds

    def submit(self, ml, built, *, console, **kwargs) -> Outcome:
        n = len(self.calls) + 1
        self.calls.append({"label": built.label, "nodes": built.nodes, **kwargs})
        self.events.append(("submit", f"job-{n}"))
        a = self.attempts[n - 1]
        name = f"job-{n}"
        logs = None
        if a.get("logs") is not None:
            root = self.tmp / name
            for rank, text in a["logs"].items():
                path = root / "artifacts" / "user_logs" / f"std_log_process_{rank}.txt"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            logs = str(root)
        self.now += a.get("elapsed", 60.0)
        return Outcome(
            label=built.label,
            name=None if a.get("exit") == EXIT_CREATE else name,
            status=a.get("status"),
            exit_code=a.get("exit", 0),
            logs=logs,
            elapsed_s=a.get("elapsed", 60.0),
            error=a.get("error"),
        )


def _job(name: str, status: str) -> dict:
    """A command job as the ARM jobs GET returns it (JobBase: properties.jobType and status)."""
    ws = WORKSPACE["id"]
    return {
        "id": f"{ws}/jobs/{name}",
        "name": name,
        "type": "Microsoft.MachineLearningServices/workspaces/jobs",
        "properties": {
            "jobType": "Command",
            "status": status,
            "command": "python smoke.py",
            "environmentId": "azureml://registries/azureml/environments/acpt/labels/latest",
            "computeId": f"{ws}/computes/h100-x4",
        },
    }


def _route(errors: dict[str, str], jobs: dict[str, list] | None = None, events: list | None = None):
    """`jobs`: each job's answers to GET after a cancel (a status, or an HTTP code; the last repeats);
    `events`: where the cancel requests are recorded, beside the script's submits."""
    jobs = jobs if jobs is not None else {}

    def route(method: str, url: str):
        path = url.split("?")[0]
        if method == "POST" and path.endswith("/cancel"):  # Jobs_Cancel: 200 or 202 (localml answers 200)
            name = path.rsplit("/", 2)[-2]
            if events is not None:
                events.append(("cancel", name))
            if name not in jobs:
                return 404, {"error": {"code": "UserError", "message": f"job {name!r} not found"}}
            return 200, None
        if method == "GET" and "/jobs/" in path and path.rsplit("/", 1)[1] in jobs:
            name = path.rsplit("/", 1)[1]
            answers = jobs[name]
            answer = answers.pop(0) if len(answers) > 1 else answers[0]
            if isinstance(answer, int):
                return answer, {"error": {"code": "InternalServerError", "message": "try again later"}}
            return 200, _job(name, answer)
        if url.startswith("http://example.com"):  # the workspace's discoveryUrl (workspace-get.json)
            return 200, {"api": "https://eastus.api.azureml.ms"}
        if "/history/v1.0/" in path and path.endswith("/details"):
            run_id = path.rsplit("/", 2)[-2]
            body = {"runId": run_id, "status": "Failed"}
            if run_id in errors:  # RunDetails.error: ErrorResponse {error: RootError {code, message}}
                body["error"] = {"error": {"code": "UserError", "message": errors[run_id]}}
            return 200, body
        if path.endswith("/workspaces/ws-llm"):
            return 200, WORKSPACE
        return 404, {"error": {"code": "NotFound", "message": url}}

    return route


def drive(
    monkeypatch,
    tmp_path,
    attempts,
    policy: Policy,
    errors: dict[str, str] | None = None,
    job_states: dict[str, list] | None = None,
):
    """Run `managed` over the script; returns (exit code, ledger JSON as written, script, console text)."""
    script = Script(tmp_path, attempts)
    monkeypatch.setattr(jobs.submit.lifecycle, "submit", script.submit)
    ml = ml_client(ReadingTransport(_route(errors or {}, job_states, script.events)), retry_total=0)
    target = cluster_target(outputs.from_file(OUTPUTS), "h100-x4")
    ledger = Ledger("r1", "train", policy.max_restarts, policy.max_hours)
    path = tmp_path / "run-r1.ledger.json"
    script.ledger_path = path
    text = io.StringIO()
    console = Console(file=text, width=300)
    code = managed(
        ml,
        lambda: smoke(target, nodes=2),
        ledger,
        path,
        policy,
        console=console,
        submit_kwargs={"wait": True, "poll_s": 5.0},
        sleep=script.sleep,
        clock=script.clock,
    )
    return code, json.loads(path.read_text()), script, text.getvalue()


DONE = {"status": "Completed", "exit": 0, "logs": {0: steps_log(0, [10, 20])}}
KILLED = {"status": "Failed", "exit": 1, "logs": {0: SIGTERM.format(step=20), 1: SIGTERM.format(step=20)}}


def test_a_job_that_completes_and_verifies_is_submitted_once(monkeypatch, tmp_path):
    code, data, script, _ = drive(monkeypatch, tmp_path, [DONE], Policy(max_restarts=3))
    assert code == 0
    assert (data["outcome"], data["exit_code"], data["restarts"]) == ("completed", 0, 0)
    assert len(script.calls) == 1 and script.slept == []
    assert script.calls[0]["wait"] is True and script.calls[0]["poll_s"] == 5.0  # the flags reach submit


def test_completed_but_not_verified_is_exit_1_and_not_resubmitted(monkeypatch, tmp_path):
    attempt = {**DONE, "exit": 1}  # submit's verify failed on a Completed job
    code, data, script, _ = drive(monkeypatch, tmp_path, [attempt, DONE], Policy(max_restarts=3))
    assert code == 1
    assert (data["outcome"], data["exit_code"]) == ("not-verified", 1)
    assert len(script.calls) == 1


@pytest.mark.parametrize(
    ("max_restarts", "failures", "jobs", "code", "outcome"),
    [
        (0, 1, 1, 1, "gave-up"),  # no restart allowed: the first infrastructure failure ends it
        (2, 1, 2, 0, "completed"),  # below the limit
        (2, 2, 3, 0, "completed"),  # exactly at the limit: the last restart is still made
        (2, 3, 3, 1, "gave-up"),  # one more failure than restarts
    ],
)
def test_restarts_stop_exactly_at_the_limit(
    monkeypatch, tmp_path, max_restarts, failures, jobs, code, outcome
):
    attempts = [KILLED] * failures + [DONE]
    policy = Policy(max_restarts=max_restarts, backoff_s=10, backoff_max_s=1000)
    got, data, script, text = drive(monkeypatch, tmp_path, attempts, policy)
    assert (got, data["outcome"], len(script.calls)) == (code, outcome, jobs)
    assert data["restarts"] == jobs - 1
    assert script.slept == [10 * 2**i for i in range(jobs - 1)]  # 10, 20, ... before each resubmit
    if outcome == "gave-up":
        assert f"{max_restarts} restart(s) used up; not resubmitting" in text
    else:
        assert "used up" not in text


def test_each_wait_is_logged_with_the_restart_number_and_the_ledger_is_on_disk_before_it(
    monkeypatch, tmp_path
):
    policy = Policy(max_restarts=2, backoff_s=7, backoff_max_s=1000)
    _, data, script, text = drive(monkeypatch, tmp_path, [KILLED, KILLED, DONE], policy)
    assert "interrupted is an infrastructure cause; resubmitting in 7 s (restart 1 of at most 2)" in text
    assert "resubmitting in 14 s (restart 2 of at most 2)" in text
    # a run killed during a wait still leaves its history: the ledger holds every attempt so far
    assert [len(seen["attempts"]) for seen in script.ledger_at_sleep] == [1, 2]
    assert [a["backoff_s"] for a in script.ledger_at_sleep[1]["attempts"]] == [7, 14]
    assert [a["backoff_s"] for a in data["attempts"]] == [7, 14, 0.0]


@pytest.mark.parametrize(
    ("elapsed", "resubmitted"),
    [
        (3569.0, True),  # elapsed + the coming 30 s backoff = 3599 s: below one hour
        (3570.0, False),  # 3600 s: the limit reached counting the wait
        (3571.0, False),
    ],
)
def test_the_time_limit_counts_the_coming_backoff(monkeypatch, tmp_path, elapsed, resubmitted):
    first = {**KILLED, "elapsed": elapsed}
    policy = Policy(max_restarts=5, max_hours=1.0, backoff_s=30, backoff_max_s=600)
    code, data, script, text = drive(monkeypatch, tmp_path, [first, DONE], policy)
    if resubmitted:
        assert (code, data["outcome"], len(script.calls), script.slept) == (0, "completed", 2, [30])
    else:
        assert (code, data["outcome"], len(script.calls), script.slept) == (1, "time-limit", 1, [])
        assert "--max-hours 1 reached; not resubmitting" in text


def test_the_time_limit_counts_waits_already_made(monkeypatch, tmp_path):
    # 1000 s per job, backoffs 100 then 200: after job 2, 2100 s have passed and the next wait ends at
    # 2300 s, past a 0.625 h (2250 s) limit only because the first wait is counted (jobs alone: 2200 s).
    policy = Policy(max_restarts=5, max_hours=0.625, backoff_s=100, backoff_max_s=1000)
    k = {**KILLED, "elapsed": 1000.0}
    code, data, script, _ = drive(monkeypatch, tmp_path, [k, k, k, DONE], policy)
    assert (code, data["outcome"], len(script.calls), script.slept) == (1, "time-limit", 2, [100])


def test_without_a_time_limit_long_jobs_are_resubmitted(monkeypatch, tmp_path):
    k = {**KILLED, "elapsed": 10 * 3600.0}
    code, data, script, _ = drive(monkeypatch, tmp_path, [k, DONE], Policy(max_restarts=1, backoff_s=1))
    assert (code, data["outcome"], len(script.calls)) == (0, "completed", 2)


def test_a_preemption_from_run_history_is_resubmitted(monkeypatch, tmp_path):
    failed = {"status": "Failed", "exit": 1, "logs": {0: steps_log(0, [10, 20])}}
    code, data, script, text = drive(
        monkeypatch, tmp_path, [failed, DONE], Policy(max_restarts=1, backoff_s=5), {"job-1": PREEMPTED}
    )
    assert (code, len(script.calls)) == (0, 2)
    first = data["attempts"][0]
    assert (first["cause"], first["retry"]) == ("preempted", True)
    assert first["evidence"].startswith("run error: UserError: AzureMLCompute job failed. PreemptionError")
    assert "attempt 1: job job-1 Failed: preempted" in text


def test_a_completed_job_is_not_asked_for_its_run_error(monkeypatch, tmp_path):
    # even when run history would answer with a preemption text, a Completed job is judged completed
    code, data, _, _ = drive(monkeypatch, tmp_path, [DONE], Policy(), {"job-1": PREEMPTED})
    assert (code, data["attempts"][0]["cause"]) == (0, "completed")


def test_a_failed_job_without_a_run_error_or_traceback_is_a_user_error(monkeypatch, tmp_path):
    failed = {"status": "Failed", "exit": 1, "logs": {0: "train.py: error: --data x: no shards"}}
    code, data, script, _ = drive(monkeypatch, tmp_path, [failed, DONE], Policy(max_restarts=3))
    assert (code, data["outcome"], data["exit_code"], len(script.calls)) == (1, "user-error", 1, 1)


def test_user_code_failure_stops_at_once(monkeypatch, tmp_path):
    failed = {"status": "Failed", "exit": 1, "logs": {0: TRACEBACK, 1: SIGTERM.format(step=3)}}
    code, data, script, _ = drive(monkeypatch, tmp_path, [failed, DONE], Policy(max_restarts=3))
    assert (code, data["outcome"], data["exit_code"], len(script.calls)) == (1, "user-error", 1, 1)
    assert script.slept == []


def test_a_canceled_job_ends_otherwise_and_is_not_resubmitted(monkeypatch, tmp_path):
    from jobs.errors import EXIT_ENDED_OTHERWISE  # docs/jobs.md "Exit codes": another terminal state

    canceled = {"status": "Canceled", "exit": EXIT_ENDED_OTHERWISE, "logs": {0: SIGTERM.format(step=3)}}
    code, data, script, _ = drive(monkeypatch, tmp_path, [canceled, DONE], Policy(max_restarts=3))
    assert (code, data["outcome"], len(script.calls)) == (EXIT_ENDED_OTHERWISE, "canceled", 1)


@pytest.mark.parametrize(
    ("exit_code", "outcome"), [(EXIT_CREATE, "create-failed"), (EXIT_STATUS, "status-unknown")]
)
def test_create_or_status_failure_ends_the_run_with_submits_code(monkeypatch, tmp_path, exit_code, outcome):
    attempt = {"status": None, "exit": exit_code, "error": "HttpResponseError: (AuthorizationFailed) no"}
    code, data, script, _ = drive(monkeypatch, tmp_path, [attempt, DONE], Policy(max_restarts=3))
    assert (code, data["outcome"], data["exit_code"], len(script.calls)) == (exit_code, outcome, exit_code, 1)
    row = data["attempts"][0]
    assert (row["cause"], row["evidence"]) == (outcome, "HttpResponseError: (AuthorizationFailed) no")


def test_a_later_create_failure_keeps_the_earlier_attempts(monkeypatch, tmp_path):
    attempts = [KILLED, {"status": None, "exit": EXIT_CREATE, "error": "quota"}]
    code, data, _, _ = drive(monkeypatch, tmp_path, attempts, Policy(max_restarts=3, backoff_s=1))
    assert code == EXIT_CREATE
    assert [(a["attempt"], a["cause"]) for a in data["attempts"]] == [
        (1, "interrupted"),
        (2, "create-failed"),
    ]


def test_the_ledger_follows_a_run_that_resumes_from_its_checkpoint(monkeypatch, tmp_path):
    # job 1 logs steps 10..150 and is preempted; job 2 resumes at 100 (its newest checkpoint) and completes
    first = {"status": "Failed", "exit": 1, "elapsed": 30.0, "logs": {0: steps_log(0, [50, 100, 150])}}
    second = {"status": "Completed", "exit": 0, "elapsed": 40.0, "logs": {0: steps_log(100, [200, 400])}}
    code, data, _, _ = drive(
        monkeypatch, tmp_path, [first, second], Policy(max_restarts=1, backoff_s=2), {"job-1": PREEMPTED}
    )
    assert code == 0
    a, b = data["attempts"]
    assert (a["start_step"], a["last_step"], a["steps_done"], a["steps_kept"], a["steps_redone"]) == (
        0,
        150,
        150,
        100,
        50,
    )
    assert a["time_lost_s"] == pytest.approx(30.0 - 100 * 0.1 + 2.0)  # 100 kept steps at 100 ms, + backoff
    assert (b["start_step"], b["steps_kept"], b["steps_redone"], b["time_lost_s"]) == (100, 300, 0, 10.0)
    assert data["time_lost_s"] == pytest.approx(32.0)


# --- backoff and run error ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("restart", "seconds"), [(0, 30.0), (1, 30.0), (2, 60.0), (5, 480.0), (6, 600.0), (7, 600.0)]
)
def test_backoff_starts_at_the_base_and_stops_at_the_cap(restart, seconds):
    assert Policy().backoff(restart) == seconds  # defaults: 30 s doubling to at most 600 s (the run help)


def test_the_run_error_reads_code_and_message_and_is_none_without_one():
    ml = ml_client(ReadingTransport(_route({"job-1": PREEMPTED})), retry_total=0)
    assert loop.run_error(ml, "job-1") == f"UserError: {PREEMPTED}"
    assert loop.run_error(ml, "job-2") is None  # a run without an error
    assert loop.run_error(ml, None) is None  # the job was never created


def test_a_run_history_read_that_fails_is_no_error():
    def route(method, url):
        if url.startswith("http://example.com"):
            return 200, {"api": "https://eastus.api.azureml.ms"}
        if "/history/" in url:
            return 403, {"error": {"code": "AuthorizationFailed", "message": "no read on runs"}}
        return 200, WORKSPACE

    ml = ml_client(ReadingTransport(route), retry_total=0)
    assert loop.run_error(ml, "job-1") is None


def test_a_paused_job_ends_otherwise_like_submit_and_is_not_resubmitted(monkeypatch, tmp_path):
    # JobStatus PAUSED is terminal (azureml-examples run-job.sh); `submit` exits 5 for it (README "Exit
    # codes"), and a resubmission would run beside the paused job.
    paused = {"status": "Paused", "exit": 5, "logs": {0: SIGTERM.format(step=3)}}
    code, data, script, _ = drive(monkeypatch, tmp_path, [paused, DONE], Policy(max_restarts=3))
    assert (code, data["outcome"], data["exit_code"], len(script.calls)) == (5, "paused", 5, 1)


# NotResponding is not final: "A run can go from NotResponding to any of the previous states" (azure-ai-ml
# JobStatus.NOT_RESPONDING); submit stops following there (exit 5) and the cause is a retry.
NOT_RESPONDING = {"status": "NotResponding", "exit": 5, "logs": {0: steps_log(0, [10])}}


def test_a_not_responding_attempt_that_runs_again_is_canceled_before_the_next(monkeypatch, tmp_path):
    states = {"job-1": ["Running", "CancelRequested", "Canceled"]}
    policy = Policy(max_restarts=2, backoff_s=30, backoff_max_s=600)
    code, data, script, text = drive(monkeypatch, tmp_path, [NOT_RESPONDING, DONE], policy, job_states=states)
    assert code == 0
    assert script.events == [("submit", "job-1"), ("cancel", "job-1"), ("submit", "job-2")]
    first = data["attempts"][0]
    assert (first["cause"], first["status"]) == ("not-responding", "NotResponding")
    assert first["canceled"] == "NotResponding -> canceled -> Canceled after 20 s"
    assert data["attempts"][1]["canceled"] is None
    assert script.slept == [10.0, 10.0, 30]  # two polls while it cancels, then the backoff
    assert "job job-1 is NotResponding, which is not final" in text


def test_an_attempt_that_will_not_cancel_stops_the_run(monkeypatch, tmp_path):
    states = {"job-1": ["Running"]}
    code, data, script, text = drive(
        monkeypatch, tmp_path, [NOT_RESPONDING, DONE], Policy(max_restarts=2), job_states=states
    )
    assert (code, data["outcome"], data["exit_code"]) == (1, "cancel-failed", 1)
    assert script.events == [("submit", "job-1"), ("cancel", "job-1")]
    assert data["attempts"][0]["canceled"] == "job job-1 is still Running 900 s after the cancel"
    assert script.slept == [10.0] * 90
    assert "cancel it (`az ml job cancel --name job-1`), then run again to resume" in text


def test_a_cancel_the_service_refuses_stops_the_run(monkeypatch, tmp_path):
    code, data, script, _ = drive(monkeypatch, tmp_path, [NOT_RESPONDING, DONE], Policy(max_restarts=2))
    assert (code, data["outcome"], len(script.calls)) == (1, "cancel-failed", 1)
    assert data["attempts"][0]["canceled"].startswith("cancel of job-1 failed: ")
    assert "not found" in data["attempts"][0]["canceled"]


@pytest.mark.parametrize("final", ["Failed", "Canceled", "Completed"])
def test_a_status_query_that_fails_while_canceling_is_retried(monkeypatch, tmp_path, final):
    states = {"job-1": [500, final]}
    code, data, script, text = drive(
        monkeypatch, tmp_path, [NOT_RESPONDING, DONE], Policy(max_restarts=2), job_states=states
    )
    assert code == 0 and len(script.calls) == 2
    assert data["attempts"][0]["canceled"] == f"NotResponding -> canceled -> {final} after 10 s"
    assert "status query failed while canceling" in text


def test_a_final_attempt_is_not_canceled(monkeypatch, tmp_path):
    _, data, script, _ = drive(monkeypatch, tmp_path, [KILLED, DONE], Policy(max_restarts=2))
    assert script.events == [("submit", "job-1"), ("submit", "job-2")]
    assert [a["canceled"] for a in data["attempts"]] == [None, None]
