"""jobs/payload/health.py's rank-0 report over recorded node outputs (tests/jobs/fixtures/health/), read back
as the health report (jobs/health/report.py) a user gets, with Azure ML node ids."""

from __future__ import annotations

import contextlib
import io
import json

import health as job  # jobs/payload/health.py, as Azure ML runs it
import healthparse as hp

from jobs.health import report

from ..health_util import FIX, recorded_measure, rules


def node_facts(ib: str = "ib-nd96isr-h100-healthy", xml: str = "nvsmi-nd96isr-h100-healthy.xml") -> dict:
    return {
        "gpus": hp.parse_nvsmi_xml((FIX / xml).read_text()),
        "xids": [],
        "xid_source": "journalctl -k",
        "ib": hp.read_ib(FIX / ib),
    }


def test_report_of_four_nodes_names_the_slow_one_and_the_broken_ones(tmp_path):
    """health.py's rank-0 report over recorded node outputs: node-1 with two IB ports down, node-2 with a row
    remap failure, node-3 slow (the bisection names it): each with its reason; exit 1."""
    r = rules()
    nodes = {n: list(range(8 * n, 8 * n + 8)) for n in range(4)}

    def copies(rank: int) -> dict:
        """One rank's row of GPU-to-GPU copies (health.py copy_bandwidth): to every other GPU of its node."""
        i = rank % 8
        return {
            "h2d": 51.0,
            "d2h": 52.0,
            "p2p": 340.0,
            "p2p_pairs": {f"{i}->{j}": 340.0 for j in range(8) if j != i},
        }

    per_node_facts = {
        0: node_facts(),
        1: node_facts(ib="ib-nd96isr-h100-two-ports-down"),
        2: node_facts(xml="nvsmi-nd96isr-h100-row-remap-failure.xml"),
        3: node_facts(),
    }
    gathered = [
        (
            rank,
            n,
            per_node_facts[n] if rank == ranks[0] else None,
            copies(rank),
            465.0 if rank == ranks[0] else None,
        )
        for n, ranks in nodes.items()
        for rank in ranks
    ]
    four = hp.parse_allreduce((FIX / "nccl-tests-4node-slow.txt").read_text()).busbw_at(16 << 30)
    multi = hp.judge_multi(four, r.multi_node, True, " at 16 GiB")
    bisection = hp.bisect([f"node-{n}" for n in range(4)], recorded_measure([]), r.multi_node[1])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = job.report(
            gathered,
            nodes,
            {n: f"host{n}" for n in nodes},
            {n: f"10.0.0.{4 + n}" for n in nodes},
            r,
            True,
            " at 16 GiB",
            multi,
            bisection,
            "quick",
        )
    assert code == 1
    logs = tmp_path / "user_logs"
    logs.mkdir()
    (logs / "std_log_process_0.txt").write_text(out.getvalue())
    rep = report.read(tmp_path)
    status = {n.node: n.status for n in rep.nodes}
    assert status == {"node-0": "pass", "node-1": "fail", "node-2": "fail", "node-3": "fail"}
    why = {n.node: {f["check"]: f for f in n.findings if f["status"] != "pass"} for n in rep.nodes}
    assert set(why["node-1"]) == {"infiniband"} and why["node-1"]["infiniband"]["measured"] == 6
    assert set(why["node-2"]) == {"gpu count", "ecc / row remap"}
    assert set(why["node-3"]) == {"multi-node all-reduce"}
    assert "bisection names this node" in why["node-3"]["multi-node all-reduce"]["detail"]
    assert all(n.advice for n in rep.nodes if n.status == "fail") and not rep.nodes[0].advice
    assert rep.summary["bisection"]["bad"] == ["node-3"] and rep.failed

    # Node ids from compute.list_nodes, matched by private IP (the REST model's fields as the SDK keeps them).
    listed = [
        {"node_id": f"tvm-{n}", "private_ip_address": f"10.0.0.{4 + n}", "run_id": "job1"} for n in range(4)
    ]
    report.attach_node_ids(rep, listed, "job1")
    assert [n.node_id for n in rep.nodes] == ["tvm-0", "tvm-1", "tvm-2", "tvm-3"]
    text = report.render_text(rep.to_json())
    assert "node-3 host3 10.0.0.7 [tvm-3]: FAIL" in text and "slow node(s): node-3" in text
    assert json.loads(json.dumps(rep.to_json()))["failed"] is True
