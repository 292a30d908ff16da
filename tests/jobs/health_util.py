"""Shared by the tests of the health job (jobs/health/, jobs/payload/health.py, jobs/payload/healthparse.py):
the recorded tool outputs (fixtures/health/, described in its README), the rules health.py builds from the
job's flags, a bisection measured from recorded nccl-tests runs, and the `health node` / `health summary`
records health.py writes in a rank log (docs/job-scripts.md)."""

from __future__ import annotations

import json
from pathlib import Path

import health as job  # jobs/payload/health.py, as Azure ML runs it
import healthparse as hp

from jobs.health import build

from .jobs_util import FIXTURES

FIX = FIXTURES / "health"
H100 = "Standard_ND96isr_H100_v5"
# Azure/azurehpc-health-checks customTests/azure_gpu_xid.nhc (commit 0e0a1ac2, as vmsizes/data/health.yaml
# cites): XID_EC="48 56 57 58 62 63 64 65 68 69 73 74 79 80 81 92 119 120", the XIDs that fail a node.
XID_EC = {48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81, 92, 119, 120}


def rules(size: str = H100) -> hp.Rules:
    """The rules health.py builds from the flags the job builder passes for `size`."""
    return job.rules_of(job.parse_args(build.level_flags(size, 8)))


def recorded_measure(calls: list) -> hp.Measure:
    """busbw of each group from the recorded nccl-tests output of that group (fixtures/health/bisect)."""

    def measure(groups):
        calls.append(list(groups))
        return {
            g: hp.parse_allreduce((FIX / "bisect" / f"{'+'.join(g)}.txt").read_text()).busbw_at(16 << 30)
            for g in groups
        }

    return measure


# --- health.py's records in a rank log --------------------------------------------------------------------


def node(name: str, rank: int, ip: str, status: str, checks: dict[str, str] | None = None) -> dict:
    findings = [
        {"check": c, "status": s, "detail": f"{c} {s}", "measured": None, "expected": None}
        for c, s in (checks or {"gpu count": status}).items()
    ]
    return {
        "node": name,
        "node_rank": rank,
        "host": f"vm{rank}",
        "ip": ip,
        "status": status,
        "findings": findings,
    }


def summary(nodes: list[dict]) -> dict:
    count = {s: sum(1 for n in nodes if n["status"] == s) for s in ("pass", "warn", "fail", "n/a")}
    return {
        "mode": "quick",
        "device": "cuda",
        "nodes": len(nodes),
        "world_size": 8 * len(nodes),
        "healthy": count["pass"],
        "warn": count["warn"],
        "fail": count["fail"],
        "not_judged": count["n/a"],
        "bisection": None,
    }


def write_logs(
    root: Path, nodes: list[dict], with_summary: bool = True, rank: int = 0, extra: str = ""
) -> Path:
    lines = [f"health node {json.dumps(n)}" for n in nodes]
    if with_summary:
        lines.append(f"health summary {json.dumps(summary(nodes))}")
    path = root / "artifacts" / "user_logs" / f"std_log_process_{rank}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(extra + "\n".join(lines) + "\n")
    return root


TWO = [node("node-0", 0, "10.0.0.4", "pass"), node("node-1", 1, "10.0.0.5", "fail")]
LISTED = [
    {"nodeId": "tvm-a", "privateIpAddress": "10.0.0.4", "nodeState": "running", "runId": "job1"},
    {"nodeId": "tvm-b", "privateIpAddress": "10.0.0.5", "nodeState": "running", "runId": "job1"},
]
