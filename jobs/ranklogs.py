"""A job's rank logs, the one module of `jobs/` that reads them: where they are (`rank_logs`, `download`),
their text (`read`), every log-line pattern read from them, and train.py's metrics records in them
(`records`).

Readers, each with its own checks: `verify.logchecks` and `verify.nccl` (`python -m jobs verify`),
`scaling.efficiency` (`python -m jobs scaling`), `health.report` (the health job's records), `run.causes` and
`run.ledger` (why an attempt ended, where it started), `local.rankdrill` (`local --sigterm-at`).

Files: Azure ML writes one file per process: `user_logs/std_log_process_<N>.txt`, N the global rank, with
padding that varies (`_0`, `_00`); a retried job writes each attempt under `user_logs/retry_NNN/`
(platform-notes "Logs"). `jobs.download` puts them under `artifacts/user_logs/`. The newest attempt wins.
`jobs local` (jobs/local/launcher.py) writes the same layout.

Lines:
smoke.py (jobs/payload; the format is stable, docs/job-scripts.md "Output format"):
    smoke rank=3 local_rank=1 node_rank=1 world_size=4 host=node-1 device=cuda:1    every rank
    world size 4                                                                    rank 0
    smoke peak busbw: 12.75 GB/s                                                    rank 0
health.py (jobs/payload) on rank 0:
    health node {"node": "node-0", "status": "pass", "findings": [...], ...}    one per node
    health summary {"nodes": 2, "fail": 0, "bisection": null, ...}              last
train.py (jobs/payload) on rank 0:
    model 1.23M params | world size 4 | device cuda | ...
  and per log step a metrics record (a JSON line, jobs/payload/metrics.py), which `records` reads, not a
  pattern. jobs/payload stays self-contained (it is what Azure ML uploads), so the record is defined there
  and only read here; `scaling` and `verify` take throughput and world size from these records, not from the
  prose line.
NCCL with NCCL_DEBUG=INFO, `host:pid:tid [rank] NCCL INFO <text>` (NVIDIA/nccl sources; the lines are
listed in `verify.nccl`'s docstring).
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

from jobs.errors import UsageError
from jobs.payload.metrics import RECORD, StepMetrics

if TYPE_CHECKING:
    from azure.ai.ml import MLClient
    from rich.console import Console

__all__ = ["RECORD", "StepMetrics", "download", "rank_logs", "read", "records"]

# -- the job scripts' own lines ------------------------------------------------------------------------
#: `world size N` (smoke.py and train.py rank 0) and `world_size=N` (smoke.py's per-rank line).
WORLD_SIZE = re.compile(r"\bworld[ _]size[ =:]+(\d+)", re.IGNORECASE)
#: smoke.py's per-rank line: `node_rank=N`, `host=NAME`, `rank=N` (not `local_rank=`).
NODE_RANK = re.compile(r"\bnode_rank[ =:]+(\d+)")
#: `host=NAME` or `hostname: NAME`, never prose: ProcessGroupGloo.cpp (PyTorch) warns "Unable to resolve
#: hostname to a (local) address" on every rank of a node whose name does not resolve: no host named "to".
HOST = re.compile(r"\bhost(?:name)?\s*[=:]\s*([A-Za-z0-9._-]+)")
RANK = re.compile(r"(?<![_a-z])rank[ =:]+(\d+)")
#: smoke.py's last line: `smoke peak busbw: 12.75 GB/s` (GB/s: gigabytes, the nccl-tests unit).
PEAK_BUSBW = re.compile(r"peak busbw[ =:]+([0-9.]+)\s*GB/s", re.IGNORECASE)

#: health.py's records on rank 0 (docs/job-scripts.md "health.py"): `health node {json}` per node and one
#: `health summary {json}`; group 1 is the kind, group 2 the JSON object.
HEALTH_RECORD = re.compile(r"^health (node|summary) (\{.*\})\s*$")

# -- NCCL's INFO lines (NCCL_DEBUG=INFO) ---------------------------------------------------------------
#: Any NCCL log line.
NCCL_ANY = re.compile(r"NCCL (?:INFO|WARN)")
#: `Using network IB` (src/init.cc): the network plugin NCCL chose.
USING_NETWORK = re.compile(r"NCCL INFO Using network (\S+)")
#: `Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA`, older `Channel 00 : ...` and `Ring 00 : ...`
#: (src/transport/net.cc): the network inter-node traffic used.
VIA_NET = re.compile(r"NCCL INFO (?:Channel|Ring) \d+(?:/\d+)? : .*?\bvia NET/([A-Za-z0-9_]+)")
#: A new-format channel line on InfiniBand; group 1 is `/GDRDMA` when GPUDirect RDMA is on.
IB_CHANNEL = re.compile(r"Channel \d+/\d+ : .*?\bvia NET/IB\w*/\d+(/GDRDMA)?")
#: `NET/IB : Using [0]mlx5_0:1/IB ... ; OOB eth0:...`: the IB devices; `NET/IB : No device found.`: none.
IB_DEVICES = re.compile(r"NCCL INFO NET/IB : Using (.+?)(?: ; OOB|$)")
IB_NONE = re.compile(r"NCCL INFO NET/IB : No device found")

# -- why a job ended (jobs/run/causes.py, where each is sourced) and where a train attempt started --------
#: The run error Azure ML gives a preempted low-priority job: "... PreemptionError: Nodes of this job got
#: pre-empted. ..." (Azure/MachineLearningNotebooks#1242, MicrosoftDocs/azure-docs#66288).
PREEMPTED = re.compile(r"PreemptionError|pre-?empted", re.IGNORECASE)
#: ProcessGroupNCCL's watchdog / blocking-wait timeouts (a hung peer or fabric).
NCCL_TIMEOUT = re.compile(r"Watchdog caught collective operation timeout|timed out in blocking wait")
#: smoke.py and train.py: `rank R: error: lost a peer: ...` (jobs/payload/peerloss.py decides).
LOST_PEER = re.compile(r"lost a peer")
#: A Python traceback's first line.
TRACEBACK = re.compile(r"^Traceback \(most recent call last\):", re.MULTILINE)
#: train.py: `rank R: interrupted by signal 15 after step N/M (...)` (SIGTERM; exit 143).
INTERRUPTED = re.compile(r"interrupted by signal 15\b")
#: train.py rank 0: `resumed from <path> at step K`.
RESUMED = re.compile(r"resumed from \S+ at step (\d+)")


# -- the files -----------------------------------------------------------------------------------------
_RANK_FILE = re.compile(r"^std_log_process_(\d+)\.txt$")
_RETRY_DIR = re.compile(r"^retry_(\d+)$")


def _attempt(path: Path) -> int:
    for part in reversed(path.parent.parts):
        if m := _RETRY_DIR.match(part):
            return int(m.group(1))
        if part == "user_logs":
            break
    return 0


def rank_logs(root: Path) -> tuple[dict[int, Path], int]:
    """rank -> log file of the newest attempt, and that attempt's number (0 = first)."""
    found: dict[int, dict[int, Path]] = {}
    for path in root.rglob("std_log_process_*.txt"):
        m = _RANK_FILE.match(path.name)
        if not m or "user_logs" not in path.parts:
            continue
        found.setdefault(_attempt(path), {})[int(m.group(1))] = path
    if not found:
        return {}, 0
    newest = max(found)
    return dict(sorted(found[newest].items())), newest


def read(path: Path) -> str:
    """A rank log's text; bytes that are not UTF-8 (a crashed process's partial write) read as U+FFFD."""
    return path.read_text(encoding="utf-8", errors="replace")


def download(ml: MLClient, name: str, dest: Path, console: Console | None = None) -> Path:
    """Download all of job `name`'s logs and outputs to `dest` with `ml.jobs.download(name, all=True)`,
    which works only once the job is in a terminal state (`JobOperations.download`); a spinner on `console`
    while it runs. Returns `dest`; raises what the SDK raises."""
    waiting = console.status(f"downloading the logs of {name}") if console else contextlib.nullcontext()
    with waiting:
        ml.jobs.download(name, all=True, download_path=str(dest))
    return dest


# -- train.py's metrics records (jobs/payload/metrics.py) -----------------------------------------------
def records(text: str, source: str = "log") -> list[StepMetrics]:
    """Every metrics record in `text`, in order. A record this reader cannot read is bad input."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            rec = StepMetrics.from_line(line)
        except ValueError as e:
            raise UsageError(f"{source} line {n}: {e}; use the jobs package of its version") from None
        if rec is not None:
            out.append(rec)
    return out
