"""The health report: health.py's `health node` / `health summary` records from the job's rank logs, each
node matched to its Azure ML node id (`ml_client.compute.list_nodes`), with what to do about a bad node.

Node ids: `compute.list_nodes` answers `AmlComputeNodeInformation` {nodeId, privateIpAddress, nodeState,
runId} (REST `Compute_ListNodes`); a node is matched by the private IP health.py saw (its address on the
route to MASTER_ADDR). When several listed nodes share that IP (localml runs every node on 127.0.0.1) the
report lists the candidates instead of guessing.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jobs import ranklogs
from jobs.ranklogs import HEALTH_RECORD

HEALTHY, WARN, FAIL, NOT_JUDGED = "pass", "warn", "fail", "n/a"

#: What to do with a node that failed or warned. The Compute REST operations (azure-ai-ml's generated
#: `build_compute_*_request`: create_or_update, update, delete, get, list, list_keys, list_nodes, start,
#: stop, restart; the last three are for compute instances) have no call that removes one AmlCompute
#: node, so the ways out are the cluster's scale-down and a report to Azure.
ADVICE = (
    "Keep the node out of long runs: Azure ML has no call that removes one AmlCompute node (Compute REST "
    "operations), so let the cluster scale down (min_instances 0; nodes are released after "
    "idle_time_before_scale_down) and run this check again on the nodes the next job gets.",
    "Report the node to Azure with its node id and this report: Azure Impact Reporting (Guest Health "
    "Reporting, https://learn.microsoft.com/azure/impact-reporting/; azurehpc-health-checks triggerGHR/"
    "README.md automates it from a node) or an Azure support request.",
)


@dataclass
class NodeReport:
    node: str
    node_rank: int
    host: str
    ip: str
    status: str
    findings: list[dict[str, Any]]
    node_id: str | None = None
    node_id_note: str | None = None
    advice: list[str] = field(default_factory=list)


@dataclass
class HealthReport:
    nodes: list[NodeReport]
    summary: dict[str, Any] | None
    problems: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.problems) or any(n.status == FAIL for n in self.nodes)

    def to_json(self) -> dict:
        return {
            "nodes": [asdict(n) for n in self.nodes],
            "summary": self.summary,
            "problems": self.problems,
            "failed": self.failed,
        }


def read(logdir: Path) -> HealthReport:
    """The records rank 0 printed; a report with a problem when there are none (the job died first)."""
    logs, _attempt = ranklogs.rank_logs(logdir)
    nodes: dict[str, NodeReport] = {}
    summary = None
    for _rank, path in sorted(logs.items()):
        for line in ranklogs.read(path).splitlines():
            if not (m := HEALTH_RECORD.match(line)):
                continue
            try:
                rec = json.loads(m.group(2))
                if m.group(1) == "node":
                    nodes[rec["node"]] = NodeReport(
                        node=rec["node"],
                        node_rank=rec["node_rank"],
                        host=rec["host"],
                        ip=rec["ip"],
                        status=rec["status"],
                        findings=rec["findings"],
                    )
                else:
                    summary = rec
            except (ValueError, KeyError):
                continue
    report = HealthReport(sorted(nodes.values(), key=lambda n: n.node_rank), summary)
    if not logs:
        report.problems.append(f"no rank logs (user_logs/std_log_process_<N>.txt) below {logdir}")
    elif summary is None:
        report.problems.append(
            "no `health summary` line in the rank logs: the health job stopped before its report (see rank "
            "0's log and any rank that exited non-zero)"
        )
    for n in report.nodes:
        if n.status in (FAIL, WARN):
            n.advice = list(ADVICE)
    return report


def _get(info: Any, *names: str) -> Any:
    """A field of an `AmlComputeNodeInfo` (its __dict__ holds the REST model's fields) or of a dict."""
    for name in names:
        value = info.get(name) if isinstance(info, dict) else getattr(info, name, None)
        if value is not None:
            return value
    return None


def attach_node_ids(report: HealthReport, listed: list[Any], job_name: str | None) -> None:
    """Match each node to a listed node by private IP, preferring nodes that ran this job."""
    for n in report.nodes:
        same_ip = [x for x in listed if _get(x, "private_ip_address", "privateIpAddress") == n.ip]
        ran = [x for x in same_ip if job_name and _get(x, "run_id", "runId") == job_name]
        candidates = ran or same_ip
        ids = [str(_get(x, "node_id", "nodeId")) for x in candidates]
        if len(ids) == 1:
            n.node_id = ids[0]
        elif not ids:
            n.node_id_note = f"no listed node has private IP {n.ip} (the node may have scaled down)"
        else:
            n.node_id_note = f"{len(ids)} listed nodes share private IP {n.ip}: {', '.join(ids)}"


def render_text(report: dict[str, Any]) -> str:
    """The report (`HealthReport.to_json()`) as text: a summary line, each node and its findings."""
    lines = []
    s = report.get("summary")
    if s:
        lines.append(
            f"health ({s['mode']}, {s['device']}): {s['nodes']} node(s), world size {s['world_size']}: "
            f"{s['healthy']} healthy, {s['warn']} warn, {s['fail']} fail, {s.get('not_judged', 0)} not judged"
        )
    for n in report.get("nodes", []):
        note = n.get("node_id_note")
        ident = n.get("node_id") or (note and f"node id ? ({note})") or "node id not looked up"
        lines.append(f"{n['node']} {n['host']} {n['ip']} [{ident}]: {n['status'].upper()}")
        for f in n["findings"]:
            lines.append(f"  {f['status']:<4} {f['check']}: {f['detail']}")
        lines += [f"  do: {a}" for a in n.get("advice", [])]
    b = s.get("bisection") if s else None
    if b:
        steps = ", ".join(f"{'+'.join(st['nodes'])} {st['busbw']:.1f} GB/s" for st in b["steps"])
        lines.append(
            f"bisection: {steps}; " + (f"slow node(s): {', '.join(b['bad'])}" if b["bad"] else b["note"])
        )
    lines += [f"problem: {p}" for p in report.get("problems", [])]
    if report.get("error"):
        lines.append(f"problem: {report['error']}")
    return "\n".join(lines)
