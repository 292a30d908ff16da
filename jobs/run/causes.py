"""Why an Azure ML job ended, and whether resubmitting it can help.

Inputs, each as Azure ML exposes it: the job status (azure-ai-ml `JobStatus`,
`_restclient/arm_ml_service/models/_enums.py`), the run's error from run history (`RunDetails.error`, what
azure-ai-ml's own `stream_logs_until_completion` prints for a Failed job, `operations/_job_ops_helper.py`),
and every rank's log (`user_logs/std_log_process_<N>.txt`, jobs/ranklogs.py).

The rules, first match wins (`classify`); "retry" marks the infrastructure causes (`INFRA`):

- completed: status `Completed` (JobStatus).
- canceled: status `Canceled`, a person or a pipeline cancelled it. Not retried.
- paused: status `Paused` (JobStatus `PAUSED`; terminal for azureml-examples' run-job.sh): someone paused it,
  and a resubmission would run beside it. Not retried; exit 5 like `submit`.
- preempted (retry): the run error contains `PreemptionError` or "pre-empted". Azure ML reports a
  low-priority preemption as a Failed job with "AzureMLCompute job failed. PreemptionError: Nodes of this
  job got pre-empted. Check if the run has failed or restarted. Reason: Received pre-emption warning
  signal", error code `UserError` (so the code alone misleads). Sources:
  github.com/Azure/MachineLearningNotebooks/issues/1242, github.com/MicrosoftDocs/azure-docs/issues/66288,
  github.com/microsoft/MLOpsPython/issues/346; docs/reference/azure-notes.md section 5 ("You have to
  restart a preempted job").
- not-responding (retry): status `NotResponding`, "the run isn't updating any information to RunHistory"
  (JobStatus docstring): the heartbeat was lost.
- nccl-timeout (retry): a rank log has ProcessGroupNCCL's `Watchdog caught collective operation timeout`
  or `timed out in blocking wait` (a hung peer or fabric; torch ProcessGroupNCCL.cpp,
  jobs/payload/peerloss.py).
- node-lost (retry): a rank log has the job scripts' `lost a peer` line: a collective failed because another
  rank vanished (a VM lost, kill -9, a dead NIC). The lost node itself leaves no traceback.
  jobs/payload/peerloss.py `is_peer_loss`, docs/job-scripts.md "Lost peer or local error".
- user-error: a rank log has a Python `Traceback (most recent call last)` none of the above explains.
- interrupted (retry): a rank log has train.py's `interrupted by signal 15` (SIGTERM: a Spot eviction
  notice, azure-notes.md section 5, 30 s; a node drain) and nothing above matched.
- user-error: any other ended job: a non-zero exit with no infrastructure cause (bad flags exit 2, a
  checkpoint write that failed, an `os._exit(1)`).

A failed job's cause on the screen (`failure`, printed by `submit` and `run`, and in their --json): the
failing rank's last Python traceback, as its last frame (`File "...", line N, in F` and the code line) and the
exception line (`ModuleNotFoundError: No module named 'torchtitan'`), with the rank, its node and the log
file. The failing rank is the first whose traceback is not a consequence of another's failure (a lost peer, an
NCCL timeout); else the first with a traceback. The node is the rank's `azml-gpu ... node_rank=N ... host=H`
line (jobs/userjob.py, smoke.py), else rank // processes per node (Azure ML numbers ranks node by node: RANK =
NODE_RANK x processes per node + LOCAL_RANK, azure-notes.md section 4).

Order matters: when one rank fails, the launcher SIGTERMs the others (every rank log but one then says
"interrupted"), so a traceback or a lost peer anywhere outranks an interruption. Azure publishes no
fixed text for a lost node (the cluster shows it in `nodeStateCounts.unusableNodeCount` /
`preemptedNodeCount`, jobs/run/precheck.py), so a node loss is recognised by what the surviving ranks
print.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from jobs.ranklogs import INTERRUPTED, LOST_PEER, NCCL_TIMEOUT, PREEMPTED, TRACEBACK, rank_logs, read

#: Causes a resubmit with the same run name can fix.
INFRA = ("preempted", "not-responding", "nccl-timeout", "node-lost", "interrupted")


@dataclass(frozen=True)
class Cause:
    name: str  # one of the table's causes
    evidence: str  # the status, error text or log line that decided it, with its rank

    @property
    def retry(self) -> bool:
        return self.name in INFRA


def _first(pattern: re.Pattern[str], logs: dict[int, str]) -> str | None:
    for rank, text in sorted(logs.items()):
        m = pattern.search(text)
        if m:
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            return f"rank {rank}: {text[start : end if end >= 0 else None].strip()[:300]}"
    return None


def read_logs(root: Path | None) -> dict[int, str]:
    """rank -> log text of the newest attempt below `root` (nothing when there are no logs)."""
    if root is None or not root.exists():
        return {}
    found, _ = rank_logs(root)
    return {r: read(p) for r, p in found.items()}


_FRAME = re.compile(r'^\s+File "[^"]*", line \d+')
_RANK_LINE = re.compile(r"azml-gpu rank=(\d+) .*?node_rank=(\d+).*?host=(\S+)")


def _traceback(text: str) -> tuple[str | None, str] | None:
    """(last frame with its code line, the exception line) of the last traceback in `text`, or None."""
    starts = [m.end() for m in TRACEBACK.finditer(text)]
    if not starts:
        return None
    lines = text[starts[-1] :].splitlines()
    frame, message = None, None
    for i, line in enumerate(lines):
        if _FRAME.match(line):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            code = nxt.strip() if nxt[:1].isspace() and not _FRAME.match(nxt) else ""  # the indented code
            frame = line.strip() + (f": {code}" if code else "")
        elif line.strip() and not line[:1].isspace() and frame is not None:
            message = line.strip()
            break
    return (frame, message[:500]) if message else None


def failure(root: Path | None, processes_per_node: int) -> dict[str, object] | None:
    """The failing rank's last error (module docstring): rank, node, host, frame, message, log; None when no
    rank log has a traceback."""
    if root is None or not root.exists():
        return None
    found, _ = rank_logs(root)
    hits = []
    for rank, path in found.items():
        text = read(path)
        tb = _traceback(text)
        if tb is None:
            continue
        consequence = bool(LOST_PEER.search(text) or NCCL_TIMEOUT.search(text))
        hits.append((consequence, rank, path, text, tb))
    if not hits:
        return None
    _, rank, path, text, (frame, message) = min(hits, key=lambda h: (h[0], h[1]))
    m = _RANK_LINE.search(text)
    node = int(m.group(2)) if m else rank // max(processes_per_node, 1)
    return {
        "rank": rank,
        "node": node,
        "host": m.group(3) if m else None,
        "frame": frame,
        "message": message,
        "log": str(path),
    }


def failure_lines(f: dict[str, object]) -> list[str]:
    """`failure` as the lines `submit` and `run` print."""
    host = f", host {f['host']}" if f.get("host") else ""
    lines = [f"cause: rank {f['rank']} (node {f['node']}{host}): {f['message']}"]
    if f.get("frame"):
        lines.append(f"  at {f['frame']}")
    lines.append(f"  log: {f['log']}")
    return lines


def classify(status: str | None, error: str | None, logs: dict[int, str]) -> Cause:
    """Why a job in a terminal state ended (see the module table)."""
    if status == "Completed":
        return Cause("completed", "status Completed")
    if status == "Canceled":
        return Cause("canceled", "status Canceled")
    if status == "Paused":
        return Cause("paused", "status Paused")
    if error and PREEMPTED.search(error):
        return Cause("preempted", f"run error: {error.strip()[:300]}")
    if status == "NotResponding":
        return Cause("not-responding", "status NotResponding (no heartbeat to run history)")
    for name, pattern in (
        ("nccl-timeout", NCCL_TIMEOUT),
        ("node-lost", LOST_PEER),
        ("user-error", TRACEBACK),
        ("interrupted", INTERRUPTED),
    ):
        hit = _first(pattern, logs)
        if hit:
            return Cause(name, hit)
    detail = f"; run error: {error.strip()[:300]}" if error else ""
    return Cause("user-error", f"status {status} with no infrastructure cause in the logs{detail}")
