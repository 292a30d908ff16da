"""Submit a built job, follow it to a terminal state, download every rank's logs and verify them.

Exit codes follow azureml-examples' run-job.sh (platform-notes "Runner exit codes"): 0 completed (and
verified), 1 failed or not verified, 3 create failed, 4 status query failed; except that another terminal
state (Canceled, NotResponding, Paused) is 5, not run-job.sh's 2, which here means bad input only
(jobs/errors.py, docs/jobs.md "Exit codes").
Terminal states: azure-ai-ml `RunHistoryConstants.TERMINAL_STATUSES` (operations/_run_history_constants.py).
`jobs.stream` prints rank 0 only and raises when the job fails; `jobs.download(all=True)` works only in a
terminal state (platform-notes "Logs"; `JobOperations.download`).
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobs import ranklogs
from jobs.builders import BuiltJob
from jobs.errors import EXIT_ENDED_OTHERWISE, EXIT_FAILED, EXIT_OK, EXIT_QUERY, error_detail
from jobs.errors import EXIT_NOT_CREATED as EXIT_CREATE

if TYPE_CHECKING:
    from collections.abc import Callable

    from azure.ai.ml import MLClient
    from rich.console import Console

EXIT_OTHER, EXIT_STATUS = EXIT_ENDED_OTHERWISE, EXIT_QUERY
TERMINAL = ("Completed", "Failed", "Canceled", "NotResponding", "Paused")
#: Before the job runs: waiting for nodes or its environment (azure-ai-ml JobStatus).
WAITING = ("NotStarted", "Starting", "Provisioning", "Preparing", "Queued")
STATUS_RETRIES = 3


@dataclass
class Outcome:
    label: str
    name: str | None
    status: str | None
    exit_code: int
    studio_url: str | None = None
    logs: str | None = None
    elapsed_s: float = 0.0
    verify: dict[str, Any] | None = None
    error: str | None = None
    #: a Failed job's cause from its rank logs (jobs/run/causes.py `failure`)
    failure: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def _status(value: Any) -> str | None:
    # Job.status is azure-ai-ml's JobStatus, a str enum whose str() reads "JobStatus.RUNNING"; use its value.
    return None if value is None else str(getattr(value, "value", value))


def _fmt(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h:d}:{m:02d}:{s:02d}"


_LABELLED_ASSET = re.compile(r"^azureml:([A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+)$")


def resolve_labels(job: Any) -> None:
    """`azureml:NAME@LABEL` inputs (a data asset by label, e.g. @latest) without their `azureml:` prefix, as
    azure-ai-ml resolves a label only then when a job is created from Python: the CLI v2 YAML schema strips
    the prefix (a rendered job.yml keeps it), but `create_or_update` of a `command(...)` passes the path to
    `OperationOrchestrator.get_asset_arm_id`, whose `parse_name_label` splits at "@" and looks up the name
    `azureml:NAME`, which does not exist (azure-ai-ml operations/_operation_orchestrator.py,
    _utils/_arm_id_utils.py). `azureml:NAME:VERSION` resolves either way and is left as it is."""
    for value in (getattr(job, "inputs", None) or {}).values():
        data = getattr(value, "_data", value)
        path = getattr(data, "path", None)
        if isinstance(path, str) and (m := _LABELLED_ASSET.match(path)):
            data.path = m.group(1)


def submit(
    ml: MLClient,
    built: BuiltJob,
    *,
    console: Console,
    wait: bool = True,
    stream: bool = True,
    logs_root: Path | None = None,
    poll_s: float = 10.0,
    verify: bool = True,
    allow_socket: bool = False,
    waiting_note: Callable[[], str | None] | None = None,
) -> Outcome:
    """`waiting_note`, while the job waits for nodes: a line on the cluster (jobs/run/precheck.py
    `allocation`), shown beside the status and logged when it changes."""
    from rich.markup import escape

    out = Outcome(label=built.label, name=None, status=None, exit_code=EXIT_OK)
    console.log(
        f"[bold]{built.label}[/]: creating job ({built.nodes} node(s) x {built.processes_per_node} "
        f"process(es) on {built.size})"
    )
    try:
        job = built.job
        if not hasattr(job, "_to_job"):  # a --file job is azure-ai-ml's CommandJob (jobs/userjob.py)
            from jobs.userjob import to_node

            job = to_node(job)
        resolve_labels(job)
        created = ml.jobs.create_or_update(job)
    except Exception as exc:  # any SDK/HTTP error: the job was not created
        out.exit_code, out.error = EXIT_CREATE, f"create failed: {error_detail(exc)}"
        return out
    out.name, out.status, out.studio_url = created.name, _status(created.status), created.studio_url
    console.log(
        f"{built.label}: job {created.name} created ({out.status})"
        + (f" {created.studio_url}" if created.studio_url else "")
    )
    if not wait:
        return out

    start = time.monotonic()
    status, streamed, failures, note = out.status, False, 0, None
    with console.status("") as spinner:
        while True:
            elapsed = time.monotonic() - start
            if waiting_note is not None and status in WAITING and (new_note := waiting_note()) != note:
                note = new_note
                if note:
                    console.log(f"{built.label} {out.name}: {status}; {note}", markup=False)
            line = f"{built.label} {out.name}: {status} {_fmt(elapsed)}, {built.nodes} node(s)"
            spinner.update(line + (f"; {escape(note)}" if note and status in WAITING else ""))
            if status in TERMINAL:
                break
            if status == "Running" and stream and not streamed:
                streamed = True
                spinner.stop()
                console.log(f"{built.label}: running; streaming rank 0")
                with contextlib.redirect_stdout(sys.stderr), contextlib.suppress(Exception):
                    ml.jobs.stream(out.name)  # raises JobException when the job fails; the status says so
                spinner.start()
            else:
                time.sleep(poll_s)
            try:
                new = _status(ml.jobs.get(out.name).status)
                failures = 0
            except Exception as exc:
                failures += 1
                if failures >= STATUS_RETRIES:
                    out.exit_code, out.status = EXIT_STATUS, status
                    out.error = (
                        f"status query failed {failures} times in a row ({error_detail(exc)}); job "
                        f"{out.name} was last seen {status} and may still be running: check "
                        + (out.studio_url or f"`az ml job show --name {out.name}`")
                    )
                    out.elapsed_s = time.monotonic() - start
                    return out
                console.log(
                    f"{built.label} {out.name}: status query failed ({failures} of {STATUS_RETRIES} "
                    f"tries), retrying: {error_detail(exc)}"
                )
                continue
            if new != status:
                console.log(
                    f"{built.label} {out.name}: {status} -> {new} after {_fmt(time.monotonic() - start)}"
                )
            status = new
    out.status, out.elapsed_s = status, time.monotonic() - start

    if logs_root is not None:
        try:
            out.logs = str(ranklogs.download(ml, out.name, logs_root / out.name, console))
        except Exception as exc:
            out.error = f"log download failed: {error_detail(exc)}"

    if status == "Completed":
        out.exit_code = EXIT_OK
        if verify:
            if out.logs is None:
                out.exit_code = EXIT_FAILED
                out.error = out.error or "not verified: no logs (pass --logs DIR)"
            else:
                from jobs.verify.logchecks import verify as run_verify

                report = run_verify(
                    Path(out.logs), built.world_size, size=built.size, allow_socket=allow_socket
                )
                out.verify = report.to_json()
                if not report.ok:
                    out.exit_code = EXIT_FAILED
    elif status == "Failed":
        from jobs.run.causes import failure

        out.exit_code = EXIT_FAILED
        out.failure = failure(Path(out.logs) if out.logs else None, built.processes_per_node)
    else:
        out.exit_code = EXIT_OTHER
    return out
