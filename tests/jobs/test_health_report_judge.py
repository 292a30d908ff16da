"""A health job's verdict (jobs/health/judge.py `outcome`) and its report (jobs/health/report.py) from the
rank logs health.py writes (`health node {...}` / `health summary {...}` records, docs/job-scripts.md),
with node ids from `compute.list_nodes` through azure-ai-ml's real HTTP pipeline: POST
.../computes/{name}/listNodes answers AmlComputeNodesInformation {nodes: [{nodeId, privateIpAddress,
nodeState, runId}], nextLink} (Azure ML REST spec, Compute_ListNodes). Each case changes one thing and
asserts what the user sees: exit code, node ids, notes and the rendered report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobs_azure_fakes import RoutedTransport, ml_client

from jobs.builders import BuiltJob
from jobs.health import judge, report
from jobs.lifecycle import Outcome


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


def ml_with_nodes(listed: list[dict] | None, status: int = 200):
    def route(method, url):
        if method == "POST" and url.split("?")[0].endswith("/computes/h100-x4/listNodes"):
            return (
                (status, {"nodes": listed, "nextLink": None})
                if status == 200
                else (
                    status,
                    {"error": {"code": "AuthorizationFailed", "message": "no listNodes"}},
                )
            )
        return 404, {"error": {"code": "NotFound", "message": url}}

    return ml_client(RoutedTransport(route), retry_total=0)


def built(compute: str | None = "h100-x4") -> BuiltJob:
    return BuiltJob("health", "health", None, 2, 8, "Standard_ND96isr_H100_v5", extra={"compute": compute})


def outcome(logs: Path | None, status: str = "Completed", code: int = 0, name: str = "job1") -> Outcome:
    return Outcome("health", name, status, code, logs=None if logs is None else str(logs))


TWO = [node("node-0", 0, "10.0.0.4", "pass"), node("node-1", 1, "10.0.0.5", "fail")]
LISTED = [
    {"nodeId": "tvm-a", "privateIpAddress": "10.0.0.4", "nodeState": "running", "runId": "job1"},
    {"nodeId": "tvm-b", "privateIpAddress": "10.0.0.5", "nodeState": "running", "runId": "job1"},
]


def test_a_failed_node_is_exit_1_with_node_ids_and_advice(tmp_path):
    result, code = judge.outcome(ml_with_nodes(LISTED), built(), outcome(write_logs(tmp_path, TWO)), 0)
    assert code == 1 and result["failed"] is True
    assert [(n["node"], n["node_id"]) for n in result["nodes"]] == [("node-0", "tvm-a"), ("node-1", "tvm-b")]
    assert result["nodes"][0]["advice"] == [] and len(result["nodes"][1]["advice"]) == 2


def test_healthy_nodes_are_exit_0_even_when_the_job_failed_after_its_report(tmp_path):
    ok = [node("node-0", 0, "10.0.0.4", "pass"), node("node-1", 1, "10.0.0.5", "pass")]
    logs = write_logs(tmp_path, ok)
    for status in ("Completed", "Failed"):
        result, code = judge.outcome(ml_with_nodes(LISTED), built(), outcome(logs, status, 1), 1)
        assert (code, result["failed"]) == (0, False), status


def test_a_warn_node_does_not_fail_the_check_but_gets_the_advice(tmp_path):
    nodes = [node("node-0", 0, "10.0.0.4", "pass"), node("node-1", 1, "10.0.0.5", "warn")]
    result, code = judge.outcome(ml_with_nodes(LISTED), built(), outcome(write_logs(tmp_path, nodes)), 0)
    assert code == 0 and len(result["nodes"][1]["advice"]) == 2


def test_a_completed_job_without_a_report_is_exit_1(tmp_path):
    logs = write_logs(tmp_path, TWO[:1], with_summary=False)
    result, code = judge.outcome(ml_with_nodes(LISTED), built(), outcome(logs), 0)
    assert code == 1 and "no `health summary` line" in result["problems"][0]


@pytest.mark.parametrize(("status", "code"), [("Canceled", 2), ("NotResponding", 2)])
def test_another_terminal_state_keeps_submits_code(tmp_path, status, code):
    got, c = judge.outcome(
        ml_with_nodes(LISTED), built(), outcome(write_logs(tmp_path, TWO), status, code), code
    )
    assert c == code


def test_a_job_not_followed_has_no_logs_and_says_so():
    result, code = judge.outcome(ml_with_nodes(LISTED), built(), outcome(None, "Running", 0), 0)
    assert (result, code) == ({"error": "no logs: the job was not followed to its end (--no-wait)"}, 0)
    failed = Outcome("health", None, None, 3, error="create failed: quota")
    assert judge.outcome(ml_with_nodes(LISTED), built(), failed, 3) == ({"error": "create failed: quota"}, 3)


def test_a_list_nodes_call_that_fails_leaves_a_note_on_each_node(tmp_path):
    result, code = judge.outcome(ml_with_nodes(None, 403), built(), outcome(write_logs(tmp_path, TWO)), 0)
    assert code == 1
    notes = [n["node_id_note"] for n in result["nodes"]]
    assert all(n.startswith("compute.list_nodes(h100-x4) failed: HttpResponseError") for n in notes)
    assert all(n["node_id"] is None for n in result["nodes"])


def test_serverless_nodes_are_not_looked_up(tmp_path):
    result, _ = judge.outcome(ml_with_nodes(LISTED), built(None), outcome(write_logs(tmp_path, TWO)), 0)
    assert {n["node_id_note"] for n in result["nodes"]} == {"serverless compute: no cluster to list nodes of"}


def test_node_ids_prefer_the_nodes_that_ran_this_job(tmp_path):
    listed = [
        {"nodeId": "tvm-old", "privateIpAddress": "10.0.0.4", "nodeState": "idle", "runId": "job0"},
        *LISTED,
    ]
    result, _ = judge.outcome(ml_with_nodes(listed), built(), outcome(write_logs(tmp_path, TWO)), 0)
    assert result["nodes"][0]["node_id"] == "tvm-a"


def test_a_node_no_longer_listed_gets_a_note():
    rep = report.HealthReport([report.NodeReport("node-0", 0, "vm", "10.0.0.9", "fail", [])], None)
    report.attach_node_ids(rep, LISTED, "job1")
    assert rep.nodes[0].node_id is None
    assert (
        rep.nodes[0].node_id_note == "no listed node has private IP 10.0.0.9 (the node may have scaled down)"
    )


def test_one_listed_node_with_the_ip_is_taken_even_from_another_run():
    rep = report.HealthReport([report.NodeReport("node-0", 0, "vm", "10.0.0.4", "pass", [])], None)
    report.attach_node_ids(
        rep, [{"nodeId": "tvm-x", "privateIpAddress": "10.0.0.4", "runId": "other"}], "job1"
    )
    assert rep.nodes[0].node_id == "tvm-x"


def test_records_from_every_rank_log_are_read_in_node_rank_order_and_bad_lines_skipped(tmp_path):
    write_logs(tmp_path, [TWO[1]], with_summary=False, rank=1)
    write_logs(tmp_path, [TWO[0]], rank=0, extra='health node {"broken json\nhealth node {"node": "x"}\n')
    rep = report.read(tmp_path)
    assert [n.node for n in rep.nodes] == ["node-0", "node-1"] and rep.summary is not None
    assert rep.failed and rep.problems == []


def test_no_rank_logs_is_a_problem(tmp_path):
    rep = report.read(tmp_path)
    assert rep.failed and rep.problems == [
        f"no rank logs (user_logs/std_log_process_<N>.txt) below {tmp_path}"
    ]


def test_the_text_report_names_each_node_finding_and_problem(tmp_path):
    nodes = [
        node("node-0", 0, "10.0.0.4", "pass"),
        node("node-1", 1, "10.0.0.5", "fail", {"infiniband": "fail", "xid": "pass"}),
    ]
    rep = report.read(write_logs(tmp_path, nodes))
    report.attach_node_ids(rep, LISTED, "job1")
    data = rep.to_json()
    data["summary"]["bisection"] = {
        "steps": [{"nodes": ["node-0", "node-1"], "busbw": 150.0}],
        "bad": [],
        "note": "every pair is slow",
    }
    data["problems"] = ["one problem"]
    text = report.render_text(data).splitlines()
    assert (
        text[0] == "health (quick, cuda): 2 node(s), world size 16: 1 healthy, 0 warn, 1 fail, 0 not judged"
    )
    assert "node-1 vm1 10.0.0.5 [tvm-b]: FAIL" in text
    assert "  fail infiniband: infiniband fail" in text and "  pass xid: xid pass" in text
    assert sum(1 for ln in text if ln.startswith("  do: ")) == 2
    assert "bisection: node-0+node-1 150.0 GB/s; every pair is slow" in text
    assert text[-1] == "problem: one problem"


def test_the_text_report_of_an_unlooked_up_node_and_an_error():
    data = {
        "nodes": [{"node": "n0", "host": "h", "ip": "1.2.3.4", "status": "n/a", "findings": []}],
        "error": "no logs",
    }
    assert report.render_text(data).splitlines() == [
        "n0 h 1.2.3.4 [node id not looked up]: N/A",
        "problem: no logs",
    ]
    data["nodes"][0]["node_id_note"] = "serverless"
    assert report.render_text(data).splitlines()[0] == "n0 h 1.2.3.4 [node id ? (serverless)]: N/A"


def test_a_summary_from_a_health_py_without_the_not_judged_count_shows_0():
    s = summary(TWO)
    del s["not_judged"]
    line = report.render_text({"summary": s, "nodes": []}).splitlines()[0]
    assert line.endswith("1 healthy, 0 warn, 1 fail, 0 not judged")
