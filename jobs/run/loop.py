"""The managed-run loop: submit, follow, classify, back off, resubmit, until the job completes and
verifies or a cause says stop.

Each attempt is a new job (job names are unique in a workspace) built from the same flags, so a train job
binds the same checkpoint folder (`ckpt/<run name>/`, jobs/builders.py) and resumes from its newest
complete checkpoint (jobs/payload/checkpointing.py `resume_state`). Backoff before attempt n+1:
`backoff_s x 2^(n-1)`, capped at `backoff_max_s` (a preempted low-priority pool rarely has capacity back
within seconds; the cap keeps a long run from idling). `max_hours` bounds the whole run, waits included.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobs import errors
from jobs.run.causes import Cause, classify, read_logs
from jobs.run.ledger import Attempt, Ledger, progress

if TYPE_CHECKING:
    from azure.ai.ml import MLClient
    from rich.console import Console

    from jobs.builders import BuiltJob
    from jobs.submit.lifecycle import Outcome

EXIT_OK, EXIT_FAILED, EXIT_OTHER = errors.EXIT_OK, errors.EXIT_FAILED, errors.EXIT_ENDED_OTHERWISE

#: States a job never leaves. azure-ai-ml's TERMINAL_STATUSES (operations/_run_history_constants.py) also
#: hold NotResponding, where following a job stops; but "NotResponding is the only state that is exempt from
#: strict transition orders. A run can go from NotResponding to any of the previous states" (azure-ai-ml
#: _restclient/arm_ml_service/models/_enums.py, JobStatus.NOT_RESPONDING): such an attempt may run again and
#: write the checkpoint folder the next attempt resumes from, so it is canceled first.
FINAL = ("Completed", "Failed", "Canceled")
CANCEL_TIMEOUT_S = 900.0
CANCEL_POLL_S = 10.0


@dataclass
class Policy:
    max_restarts: int = 10
    max_hours: float | None = None
    backoff_s: float = 30.0
    backoff_max_s: float = 600.0

    def backoff(self, restart: int) -> float:
        """Seconds to wait before restart number `restart` (1-based)."""
        return min(self.backoff_max_s, self.backoff_s * 2 ** max(0, restart - 1))


def run_error(ml: MLClient, name: str | None) -> str | None:
    """The run's error as run history reports it (`RunDetails.error`, what azure-ai-ml's
    `stream_logs_until_completion` prints for a Failed job, operations/_job_ops_helper.py), or None."""
    if not name:
        return None
    try:
        details = ml.jobs._runs_operations.get_run_details(name)
    except Exception:
        return None
    err = getattr(details, "error", None)
    inner = getattr(err, "error", None) if err is not None else None
    if inner is None:
        return None
    return f"{getattr(inner, 'code', None) or 'Error'}: {getattr(inner, 'message', '') or ''}".strip()


def cancel_unfinished(
    ml: MLClient,
    name: str,
    status: str | None,
    *,
    console: Console,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
    timeout_s: float = CANCEL_TIMEOUT_S,
    poll_s: float = CANCEL_POLL_S,
) -> tuple[str | None, str]:
    """Cancel attempt `name`, last seen `status` (not final), and wait until it is final: (its final status,
    or None when it did not get there, and what happened)."""
    from jobs.submit.lifecycle import _status

    console.log(
        f"job {name} is {status}, which is not final (a NotResponding job may run again and write the same "
        "checkpoint folder): canceling it before the next attempt",
        markup=False,
    )
    try:
        ml.jobs.begin_cancel(name)
    except Exception as exc:
        return None, f"cancel of {name} failed: {errors.error_detail(exc)}"
    start, now = clock(), status
    while True:
        try:
            now = _status(ml.jobs.get(name).status)
        except Exception as exc:
            console.log(f"job {name}: status query failed while canceling: {errors.error_detail(exc)}")
        if now in FINAL:
            return now, f"{status} -> canceled -> {now} after {clock() - start:g} s"
        if clock() - start >= timeout_s:
            return None, f"job {name} is still {now} {timeout_s:g} s after the cancel"
        sleep(poll_s)


def attempt_row(n: int, out: Outcome, cause: Cause) -> Attempt:
    logs = read_logs(Path(out.logs)) if out.logs else {}
    p = progress(logs.get(0, ""))
    return Attempt(
        attempt=n,
        job=out.name,
        status=out.status,
        cause=cause.name,
        evidence=cause.evidence,
        retry=cause.retry,
        exit_code=out.exit_code,
        elapsed_s=round(out.elapsed_s, 3),
        start_step=p.start_step,
        last_step=p.last_step,
        logs=out.logs,
        ms_per_step=p.ms_per_step,
        failure=out.failure,
    )


def managed(
    ml: MLClient,
    build: Callable[[], BuiltJob],
    ledger: Ledger,
    ledger_path: Path,
    policy: Policy,
    *,
    console: Console,
    submit_kwargs: dict[str, Any],
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Run one job to completion under `policy`; returns the exit code and fills `ledger`."""
    from jobs.submit.lifecycle import EXIT_CREATE, EXIT_STATUS, submit

    start = clock()
    n = 0
    while True:
        n += 1
        built = build()
        out = submit(ml, built, console=console, **submit_kwargs)
        if out.exit_code in (EXIT_CREATE, EXIT_STATUS):  # never ran to an end we can judge
            name = "create-failed" if out.exit_code == EXIT_CREATE else "status-unknown"
            cause = Cause(name, out.error or "")
            ledger.attempts.append(attempt_row(n, out, cause))
            ledger.outcome, ledger.exit_code = cause.name, out.exit_code
            ledger.write(ledger_path)
            return out.exit_code
        cause = classify(
            out.status,
            run_error(ml, out.name) if out.status != "Completed" else None,
            read_logs(Path(out.logs)) if out.logs else {},
        )
        row = attempt_row(n, out, cause)
        ledger.attempts.append(row)
        console.log(
            f"{built.label} attempt {n}: job {out.name} {out.status}: {cause.name} ({cause.evidence})",
            markup=False,
        )
        if cause.name == "completed":
            ok = out.exit_code == 0
            ledger.outcome, ledger.exit_code = ("completed" if ok else "not-verified"), out.exit_code
            ledger.write(ledger_path)
            return out.exit_code
        if not cause.retry:
            ended_otherwise = cause.name in ("canceled", "paused")  # submit's exit 5 too
            ledger.outcome = cause.name if ended_otherwise else "user-error"
            ledger.exit_code = EXIT_OTHER if ended_otherwise else EXIT_FAILED
            ledger.write(ledger_path)
            return ledger.exit_code
        if n > policy.max_restarts:
            ledger.outcome, ledger.exit_code = "gave-up", EXIT_FAILED
            console.log(f"{built.label}: {policy.max_restarts} restart(s) used up; not resubmitting")
            ledger.write(ledger_path)
            return EXIT_FAILED
        wait = policy.backoff(n)
        if policy.max_hours is not None and clock() - start + wait >= policy.max_hours * 3600:
            ledger.outcome, ledger.exit_code = "time-limit", EXIT_FAILED
            console.log(f"{built.label}: --max-hours {policy.max_hours:g} reached; not resubmitting")
            ledger.write(ledger_path)
            return EXIT_FAILED
        if out.name and out.status not in FINAL:
            ledger.write(ledger_path)  # before waiting on the cancel, as before any wait
            final, what = cancel_unfinished(
                ml, out.name, out.status, console=console, sleep=sleep, clock=clock
            )
            row.canceled = what
            if final is None:
                ledger.outcome, ledger.exit_code = "cancel-failed", EXIT_FAILED
                console.log(
                    f"{built.label}: {what}; not resubmitting while it may still write the checkpoint "
                    f"folder: cancel it (`az ml job cancel --name {out.name}`), then run again to resume",
                    markup=False,
                )
                ledger.write(ledger_path)
                return EXIT_FAILED
            console.log(f"{built.label}: job {out.name}: {what}", markup=False)
        row.backoff_s = wait
        ledger.write(ledger_path)
        console.log(
            f"{built.label}: {cause.name} is an infrastructure cause; resubmitting in {wait:g} s "
            f"(restart {n} of at most {policy.max_restarts})"
        )
        sleep(wait)
