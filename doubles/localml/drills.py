"""Failure drills on a running job, as Azure reports them: preempt it, or lose one of its nodes.

`preempt(runner, job)`: a low-priority/Spot preemption. Every node of the job goes away (its ranks and
its rw_mount daemons are SIGKILLed, so an upload in flight never commits), optionally after a SIGTERM
notice (`notice_s`: Azure Scheduled Events give a Preempt event at most 30 s ahead, best effort;
docs/reference/azure-notes.md section 5; microsoft/hi-ml docs/source/lowpriority.md: "there is no signal",
hence the default of none). The job then ends Failed with the run error Azure ML users report for it
(github.com/Azure/MachineLearningNotebooks/issues/1242, github.com/MicrosoftDocs/azure-docs/issues/66288,
github.com/microsoft/MLOpsPython/issues/346: code `UserError`, the message in `PREEMPTION_MESSAGE`).

`fail_node(runner, job, node)`: one VM lost (`Runner.lose_node`): that node's ranks and mounts are
SIGKILLed; the other nodes' ranks lose a peer and exit, so the job fails the way a node loss fails it, with
no service-side error text (Azure publishes none for it; jobs/run/causes.py recognises it by the surviving
ranks' `lost a peer`).

Where this differs from Azure: the cluster's `nodeStateCounts.preemptedNodeCount` is not updated (localml
has no nodes), and Azure may also restart a preempted job itself (hi-ml reports that; the product docs say
"you have to restart"); localml never does, the case `jobs run` exists for.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from doubles.localml.runner import Runner
    from doubles.localml.store import Job

#: The run error of a preempted job, as quoted in the issues above.
PREEMPTION_MESSAGE = (
    "AzureMLCompute job failed. PreemptionError: Nodes of this job got pre-empted. "
    "Check if the run has failed or restarted. Reason: Received pre-emption warning signal"
)


def _nodes(runner: Runner, job: Job) -> int:
    return int((job.properties.get("resources") or {}).get("instanceCount") or 1)


def _signal_ranks(runner: Runner, job: Job, sig: int) -> int:
    sent = 0
    for node in range(_nodes(runner, job)):
        pids = runner.store.root / "jobs" / job.name / "nodes" / f"node-{node}" / "pids"
        for pid_file in sorted(pids.glob("*")) if pids.exists() else []:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.name), sig)
                sent += 1
    return sent


def preempt(runner: Runner, job: Job, notice_s: float | None = None) -> int:
    """Preempt every node of a running job; returns how many rank processes were killed."""
    if job.status != "Running":
        raise RuntimeError(f"job {job.name} is {job.status}, not Running: nothing to preempt")
    job.system_error = PREEMPTION_MESSAGE
    if notice_s:
        _signal_ranks(runner, job, signal.SIGTERM)
        job.done.wait(notice_s)
    return sum(runner.lose_node(job.name, node) for node in range(_nodes(runner, job)))


def fail_node(runner: Runner, job: Job, node: int) -> int:
    """Lose one node of a running job; returns how many rank processes were killed."""
    if job.status != "Running":
        raise RuntimeError(f"job {job.name} is {job.status}, not Running: no node to lose")
    if not 0 <= node < _nodes(runner, job):
        raise ValueError(f"job {job.name} has nodes 0..{_nodes(runner, job) - 1}, not {node}")
    return runner.lose_node(job.name, node)


def wait_running(job: Job, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while job.status != "Running":
        if job.done.is_set() or time.monotonic() > deadline:
            raise RuntimeError(f"job {job.name} never ran (status {job.status})")
        time.sleep(0.05)
