"""Every log-line pattern `jobs/` reads, in one place: what the job scripts and NCCL print in a rank's log.

Readers: `logchecks` (`python -m jobs verify`), `efficiency` (`python -m jobs scaling`), `nccl` and
`health.report` (the health job's records).
The file layout of the logs (`user_logs/std_log_process_<N>.txt`, `retry_NNN/`) is `logfiles`' concern.

smoke.py (jobs/payload; the format is stable, docs/job-scripts.md "Output format"):
    smoke rank=3 local_rank=1 node_rank=1 world_size=4 host=node-1 device=cuda:1    every rank
    world size 4                                                                    rank 0
    smoke peak busbw: 12.75 GB/s                                                    rank 0
health.py (jobs/payload) on rank 0:
    health node {"node": "node-0", "status": "pass", "findings": [...], ...}    one per node
    health summary {"nodes": 2, "fail": 0, "bisection": null, ...}              last
train.py (jobs/payload) on rank 0:
    model 1.23M params | world size 4 | device cuda | ...
  and per log step a metrics record (a JSON line, jobs/payload/metrics.py), which `trainlog` reads, not a
  pattern.
NCCL with NCCL_DEBUG=INFO, `host:pid:tid [rank] NCCL INFO <text>` (NVIDIA/nccl sources; the lines are
listed in `nccl`'s docstring).
"""

from __future__ import annotations

import re

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
