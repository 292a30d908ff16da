"""The health checks on outputs in the real formats of the tools they read (tests/jobs/fixtures/health/,
described in its README): nvidia-smi XML and --query-gpu CSV, kernel-log XID lines, /sys/class/infiniband
trees, nccl-tests all_reduce_perf and our own all-reduce lines; failing nodes included. Also the size
levels (vmsizes/data/health.yaml), the job's flags, and the report with Azure ML node ids."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

from jobs.health import build, report
from vmsizes import health as levels

SRC = Path(__file__).resolve().parents[2] / "jobs" / "src"
sys.path.insert(0, str(SRC))
import health as job  # noqa: E402  (jobs/src/health.py, as Azure ML runs it)
import healthparse as hp  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "health"
H100 = "Standard_ND96isr_H100_v5"


def rules(size: str = H100) -> hp.Rules:
    """The rules health.py builds from the flags the job builder passes for `size`."""
    return job.rules_of(job.parse_args(build.level_flags(size, 8)))


# --- the levels ------------------------------------------------------------------------------------------


def test_h100_levels_are_the_azure_health_check_values_with_their_sources():
    lv = levels.levels("standard_nd96isr_h100_v5")
    assert (lv.gpus, lv.allreduce_gbs, lv.allreduce_bytes) == (8, 460.0, 16 << 30)
    assert (lv.h2d_gbs, lv.p2p_gbs, lv.ib_ports, lv.ib_rate_gbps) == (48, 335, 8, 400)
    assert (lv.multi_node.expected, lv.multi_node.warn, lv.multi_node.fail) == (450, 400, 300)
    assert any(
        "conf/nd96isr_h100_v5.conf" in s and "check_nccl_allreduce 460.0 1 16G" in s for s in lv.sources
    )
    assert any(u.startswith("multi_node:") for u in lv.unconfirmed)  # no primary source: said so
    r = levels.rules()
    assert 79 in r.xid_fail_codes and 13 not in r.xid_fail_codes
    assert any("azure_gpu_xid.nhc" in s for s in r.sources)


def test_every_level_entry_matches_the_size_catalog():
    from vmsizes import lookup

    for lv in levels.all_levels():
        vm = lookup(lv.size)
        assert vm is not None and vm.gpus == lv.gpus, lv.size
        assert lv.sources
        if lv.ib_ports:  # the catalog's per-VM InfiniBand total is ports x rate
            assert vm.infiniband_gbps == lv.ib_ports * lv.ib_rate_gbps, lv.size
    assert levels.levels("Standard_NC6") is None  # no source, no levels


def test_job_flags_carry_the_levels_and_refuse_an_override():
    flags = build.level_flags(H100, 8)
    args = job.parse_args(flags)
    assert (args.gpus, args.allreduce_gbs, args.allreduce_bytes, args.multi_node) == (
        8,
        460.0,
        16 << 30,
        (450.0, 400.0, 300.0),
    )
    assert 79 in args.xid_codes and args.ecc_limits == (20000000.0, 10000.0, 512.0)
    # A size without levels still gets its GPU count and Azure's node rules.
    assert job.parse_args(build.level_flags("Standard_NC24ads_A100_v4", 1)).gpus == 1
    from jobs.builders import Target
    from jobs.errors import UsageError

    target = Target(size=H100, gpus_per_node=8, rdma_usable=True, compute="h100-x4", max_instances=4)
    built = build.health(target, mode="full")
    assert built.nodes == 4 and built.processes_per_node == 8  # every node of the cluster, one rank per GPU
    assert built.job.command.startswith("python health.py --full --xid-fail 48,")
    with pytest.raises(UsageError, match="--gpus"):
        build.health(target, script_args=("--gpus", "4"))


# --- nvidia-smi ------------------------------------------------------------------------------------------


def test_healthy_node_xml_and_throttle_csv():
    gpus = hp.parse_nvsmi_xml((FIX / "nvsmi-nd96isr-h100-healthy.xml").read_text())
    assert [g.index for g in gpus] == list(range(8)) and gpus[0].name == "NVIDIA H100 80GB HBM3"
    assert gpus[0].pcie_gen == (5, 5) and gpus[0].pcie_width == (16, 16)
    findings = {f.check: f for f in hp.check_gpus(gpus, rules(), on_gpu=True)}
    assert all(f.status == hp.PASS for f in findings.values()), findings
    # The throttle bitmask as Azure's check reads it: GPU 2 at SW power cap (benign), GPU 4 HW slowdown.
    rows = hp.parse_query_csv((FIX / "query-clocks-event-reasons.csv").read_text())
    assert rows[4] == {"index": "4", "clocks_event_reasons.active": "0x0000000000000048"}
    for g, row in zip(gpus, rows, strict=True):
        g.throttle = hp.throttle_reasons(row["clocks_event_reasons.active"])
    assert gpus[2].throttle == ("sw_power_cap",)
    clocks = next(f for f in hp.check_gpus(gpus, rules(), on_gpu=True) if f.check == "clocks")
    assert clocks.status == hp.WARN and clocks.detail == "GPU 4: hw_slowdown+hw_thermal_slowdown"


def test_row_remap_failure_and_a_missing_gpu_fail_the_node():
    # An older driver's format: clocks_throttle_reasons and a single sram_uncorrectable counter.
    gpus = hp.parse_nvsmi_xml((FIX / "nvsmi-nd96isr-h100-row-remap-failure.xml").read_text())
    assert len(gpus) == 7 and gpus[3].remap_failure and gpus[3].remapped_uncorrectable == 3
    assert gpus[0].throttle == ("gpu_idle",)
    findings = {f.check: f for f in hp.check_gpus(gpus, rules(), on_gpu=True)}
    assert findings["gpu count"].status == hp.FAIL and findings["gpu count"].detail == "7 GPU(s), expected 8"
    assert findings["ecc / row remap"].status == hp.FAIL
    assert findings["ecc / row remap"].detail == "GPU 3 (00000008:00:00.0): row remap failure"
    assert findings["clocks"].status == hp.PASS


def test_pending_remap_sram_errors_and_a_narrow_link_from_the_same_format():
    text = (FIX / "nvsmi-nd96isr-h100-healthy.xml").read_text()
    text = text.replace(
        "<remapped_row_pending>No</remapped_row_pending>",
        "<remapped_row_pending>Yes</remapped_row_pending>",
        1,
    )
    text = text.replace(
        "<sram_uncorrectable_parity>0</sram_uncorrectable_parity>",
        "<sram_uncorrectable_parity>2</sram_uncorrectable_parity>",
        1,
    )
    text = text.replace(
        "<current_link_width>16x</current_link_width>", "<current_link_width>8x</current_link_width>", 1
    )
    findings = {f.check: f for f in hp.check_gpus(hp.parse_nvsmi_xml(text), rules(), on_gpu=True)}
    assert findings["ecc / row remap"].status == hp.FAIL
    assert "GPU 0 (00000001:00:00.0): row remap pending" in findings["ecc / row remap"].detail
    assert "GPU 0: 2 uncorrectable SRAM ECC error(s)" in findings["ecc / row remap"].detail
    assert findings["pcie link"].status == hp.WARN and "x8 of gen 5 x16" in findings["pcie link"].detail


# --- kernel log and InfiniBand ---------------------------------------------------------------------------


def test_xid_79_in_dmesg_fails_and_a_benign_xid_does_not():
    xids = hp.parse_xids((FIX / "dmesg-xid79.txt").read_text())
    assert [x.code for x in xids] == [13, 13, 79] and xids[2].pci == "PCI:0008:00:00"
    f = hp.check_xids(xids, rules(), on_gpu=True, source="dmesg")
    assert f.status == hp.FAIL and f.measured == [79] and "GPU has fallen off the bus" in f.detail
    ok = hp.check_xids(hp.parse_xids((FIX / "journal-xid-healthy.txt").read_text()), rules(), True, "journal")
    assert ok.status == hp.PASS and "(seen: [13, 43])" in ok.detail


def test_infiniband_trees():
    healthy = hp.read_ib(FIX / "ib-nd96isr-h100-healthy")
    assert len(healthy) == 9 and healthy[0].device == "mlx5_an0" and healthy[0].link_layer == "Ethernet"
    assert hp.check_ib(healthy, rules(), on_gpu=True).status == hp.PASS
    down = hp.check_ib(hp.read_ib(FIX / "ib-nd96isr-h100-two-ports-down"), rules(), on_gpu=True)
    assert down.status == hp.FAIL and (down.measured, down.expected) == (6, 8)
    assert down.detail == (
        "6 of 8 port(s) active at 400 Gb/s; not: mlx5_ib2:1 DOWN/Disabled 10 Gb/s, "
        "mlx5_ib5:1 DOWN/Disabled 10 Gb/s"
    )
    assert hp.read_ib(FIX / "no-such-dir") is None
    assert hp.check_ib(None, rules(), on_gpu=True).status == hp.FAIL  # a GPU node without its RDMA driver


def test_on_cpu_gpu_checks_are_not_applicable_never_passed():
    for f in [
        *hp.check_gpus(None, rules(), on_gpu=False),
        hp.check_xids(None, rules(), False, "x"),
        hp.check_ib(None, rules(), on_gpu=False),
        hp.check_level("copy h2d", None, 48, False, ""),
        hp.judge_multi(0.3, (450, 400, 300), False, ""),
    ]:
        assert f.status == hp.NA and hp.NOT_ON_CPU in f.detail, f
    assert hp.worst([hp.NA, hp.NA]) == hp.NA and hp.worst([hp.NA, hp.PASS]) == hp.PASS
    assert hp.worst([hp.PASS, hp.WARN, hp.NA]) == hp.WARN and hp.worst([hp.WARN, hp.FAIL]) == hp.FAIL


# --- all-reduce outputs and the bisection ----------------------------------------------------------------


def test_nccl_tests_and_our_own_allreduce_output():
    good = hp.parse_allreduce((FIX / "nccl-tests-single-node-healthy.txt").read_text())
    assert good.rows == {16 << 30: 460.23} and good.avg_busbw == 460.005
    assert hp.check_level("node all-reduce", good.busbw_at(16 << 30), 460.0, True, "").status == hp.PASS
    slow = hp.parse_allreduce((FIX / "nccl-tests-single-node-slow.txt").read_text())
    f = hp.check_level("node all-reduce", slow.busbw_at(16 << 30), 460.0, True, " at 16 GiB")
    assert f.status == hp.FAIL and f.detail == "302.5 GB/s at 16 GiB, expected at least 460"
    smoke = hp.parse_allreduce((FIX / "smoke-local-2x2-rank0.txt").read_text())
    assert sorted(smoke.rows) == [1 << k for k in range(10, 17)]
    ours = hp.parse_allreduce((FIX / "health-local-2x2-rank0.txt").read_text())
    assert list(ours.rows) == [1 << 20]


@pytest.mark.parametrize(("busbw", "status"), [(455.0, hp.PASS), (350.0, hp.WARN), (184.6, hp.FAIL)])
def test_multi_node_levels(busbw, status):
    assert hp.judge_multi(busbw, (450, 400, 300), True, "").status == status


def recorded_measure(calls: list) -> hp.Measure:
    """busbw of each group from the recorded nccl-tests output of that group (fixtures/health/bisect)."""

    def measure(groups):
        calls.append(list(groups))
        return {
            g: hp.parse_allreduce((FIX / "bisect" / f"{'+'.join(g)}.txt").read_text()).busbw_at(16 << 30)
            for g in groups
        }

    return measure


def test_bisection_names_the_one_slow_node_of_four():
    four = hp.parse_allreduce((FIX / "nccl-tests-4node-slow.txt").read_text()).busbw_at(16 << 30)
    assert hp.judge_multi(four, (450, 400, 300), True, "").status == hp.FAIL  # 185 GB/s across 4 nodes
    calls: list = []
    b = hp.bisect(["node-0", "node-1", "node-2", "node-3"], recorded_measure(calls), slow_below=400)
    assert b.bad == ["node-3"]
    # Pairs at once, then each member of the slow pair next to a known-good node, one at a time.
    assert calls == [
        [("node-0", "node-1"), ("node-2", "node-3")],
        [("node-2", "node-0")],
        [("node-3", "node-0")],
    ]
    assert [round(s[1]) for s in b.steps] == [456, 182, 453, 180]


def test_bisection_without_a_good_pair_names_nobody():
    b = hp.bisect(["a", "b"], lambda gs: {g: 100.0 for g in gs}, slow_below=400)
    assert b.bad == [] and "fabric-wide" in b.note


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


def test_render_health_yaml_and_the_mode_flags_belong_to_health(tmp_path, capsys):
    from jobs.cli import main

    outputs = str(Path(__file__).parent / "fixtures" / "outputs-prod.json")
    out = tmp_path / "health.yml"
    assert (
        main(["render", "health", "--outputs", outputs, "--cluster", "h100-x4", "--full", "--out", str(out)])
        == 0
    )
    from azure.ai.ml import load_job

    job = load_job(str(out))
    assert job.command.startswith("python health.py --full ") and "--multi-node 450,400,300" in job.command
    assert (job.resources.instance_count, job.distribution.process_count_per_instance) == (4, 8)
    capsys.readouterr()
    assert (
        main(["render", "smoke", "--outputs", outputs, "--cluster", "h100-x4", "--quick", "--out", str(out)])
        == 2
    )
    assert "--quick is for health jobs, not smoke" in capsys.readouterr().err


def test_bisection_on_cpu_measures_but_does_not_judge():
    b = hp.bisect(["node-0", "node-1"], lambda gs: {g: 0.2 for g in gs}, slow_below=0.0)
    assert b.bad == [] and len(b.steps) == 1 and "not judged" in b.note


def test_run_refuses_health_a_check_is_not_resubmitted(capsys):
    from jobs.cli import main

    outputs = str(Path(__file__).parent / "fixtures" / "outputs-prod.json")
    assert main(["run", "health", "--outputs", outputs, "--cluster", "h100-x4"]) == 2
    assert "use `python -m jobs submit health`" in capsys.readouterr().err
