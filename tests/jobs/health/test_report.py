"""The health report (jobs/health/report.py): health.py's `health node` / `health summary` records read back
from every rank log (docs/job-scripts.md), each node matched to its Azure ML node id from
`compute.list_nodes` (AmlComputeNodesInformation, Azure ML REST spec Compute_ListNodes), and the text a user
reads."""

from __future__ import annotations

from jobs.health import report

from ..health_util import FIX, LISTED, TWO, node, summary, write_logs


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


# --- reports read from recorded runs ----------------------------------------------------------------


def test_node_ids_shared_by_ip_are_listed_not_guessed():
    rep = report.HealthReport([report.NodeReport("node-0", 0, "vm", "127.0.0.1", "n/a", [])], None)
    report.attach_node_ids(
        rep,
        [{"nodeId": "a", "privateIpAddress": "127.0.0.1"}, {"nodeId": "b", "privateIpAddress": "127.0.0.1"}],
        None,
    )
    assert rep.nodes[0].node_id is None and rep.nodes[0].node_id_note.endswith(
        "share private IP 127.0.0.1: a, b"
    )


def test_a_job_that_died_before_its_report_is_a_problem(tmp_path):
    (tmp_path / "user_logs").mkdir()
    (tmp_path / "user_logs" / "std_log_process_0.txt").write_text("health allreduce scope=all ranks=4 ...\n")
    rep = report.read(tmp_path)
    assert rep.failed and "no `health summary` line" in rep.problems[0]


def test_the_captured_cpu_run_reads_back_as_not_judged(tmp_path):
    """rank 0 of a real `jobs local health` run (gloo): every node `n/a`, measured but never passed."""
    (tmp_path / "user_logs").mkdir()
    text = (FIX / "health-local-2x2-rank0.txt").read_text()
    (tmp_path / "user_logs" / "std_log_process_0.txt").write_text(text)
    rep = report.read(tmp_path)
    assert [n.status for n in rep.nodes] == ["n/a", "n/a"] and not rep.failed
    assert rep.summary["device"] == "cpu" and rep.summary["not_judged"] == 2
    assert all(f["status"] == "n/a" for n in rep.nodes for f in n.findings)
