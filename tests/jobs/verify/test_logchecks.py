"""`verify`'s checks (jobs/verify/logchecks.py) on rank logs written in the real formats: NCCL's INFO lines
(NVIDIA/nccl src/init.cc, src/transport/net.cc, net_ib, net_socket), jobs/payload/smoke.py's lines and
train.py's metrics records (tests/jobs/ranklogs_util.py): world size, processes per node, transport and busbw,
each at its boundaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.payload.metrics import StepMetrics
from jobs.verify import nccl
from jobs.verify.logchecks import CAUSE_PROCESS_COUNT, CAUSE_TCP, render_text, verify

from ..jobs_util import FIXTURES
from ..ranklogs_util import GLOO_HOSTNAME_WARNING, H100, nccl_ib, nccl_socket, smoke_lines, write_job

ONE_GPU = "Standard_NC24ads_A100_v4"


def test_infiniband_two_nodes_of_eight_passes(tmp_path):
    r = verify(write_job(tmp_path, 2, 8), 16, size=H100)
    assert r.ok, r.problems
    assert (r.world_size, r.rank_logs, r.transport) == (16, 16, "IB")
    assert set(r.transport_by_rank.values()) == {"IB"} and len(r.transport_by_rank) == 16
    assert r.processes_per_node == {"node 0": 8, "node 1": 8}
    assert r.busbw_gbps == 3640.0  # smoke.py's 455 GB/s, in Gb/s like the link rate
    assert r.link_gbps_per_gpu == 400
    assert r.busbw_levels == {"expected": 450, "warn": 400, "fail": 300}
    assert (
        "peak busbw 3640 Gb/s (455.0 GB/s); Standard_ND96isr_H100_v5 across nodes: about 450 GB/s, "
        "warn below 400, fail below 300 (vmsizes/data/health.yaml)" in r.notes
    )


@pytest.mark.parametrize(
    ("peak_gbytes", "ok", "said"),
    [(455.0, True, ""), (350.0, True, ": below the warn level"), (250.0, False, ": below the fail level")],
)
def test_busbw_against_the_sizes_multi_node_levels(tmp_path, peak_gbytes, ok, said):
    # ND H100 v5 across nodes (vmsizes/data/health.yaml): about 450 GB/s, warn below 400, fail below 300.
    r = verify(write_job(tmp_path, 2, 8, peak=peak_gbytes), 16, size=H100)
    assert r.busbw_gbps == peak_gbytes * 8
    assert r.ok is ok, r.problems
    assert any(line.endswith("(vmsizes/data/health.yaml)" + said) for line in r.problems + r.notes)


@pytest.mark.parametrize(("peak_gbytes", "ok"), [(26.0, True), (24.0, False)])
def test_a_size_without_levels_keeps_the_half_link_floor_in_bits(tmp_path, peak_gbytes, ok):
    # ND H200 v5 has no multi-node level: 26 GB/s = 208 Gb/s = 52% of its 400 Gb/s per GPU; 24 GB/s = 48%.
    r = verify(write_job(tmp_path, 2, 8, peak=peak_gbytes), 16, size="Standard_ND96isr_H200_v5")
    assert r.busbw_gbps == peak_gbytes * 8 and r.busbw_levels is None
    assert r.ok is ok, r.problems
    assert ok or any("below 50% (no multi-node level for this size)" in p for p in r.problems)


def test_socket_only_logs_fail_with_the_cause(tmp_path):
    r = verify(write_job(tmp_path, 2, 8, transport=nccl_socket, peak=2.1), 16, size=H100)
    assert not r.ok
    assert r.transport == "Socket"
    assert any("not InfiniBand" in p for p in r.problems)
    assert any("below the fail level" in p for p in r.problems)  # 2.1 GB/s against 300
    assert any("image that replaced the network stack" in c for c in r.likely_causes)


def test_one_process_per_node_fails_as_process_count_unset(tmp_path):
    r = verify(write_job(tmp_path, 2, 1), 16, size=H100)
    assert not r.ok
    assert r.world_size == 2
    assert "world size 2, expected 16" in r.problems
    assert "2 rank log(s), expected 16 (one per process)" in r.problems
    assert any(c.startswith("process_count_per_instance unset") for c in r.likely_causes)


def test_newest_retry_attempt_wins(tmp_path):
    write_job(tmp_path, 2, 1, transport=nccl_socket)  # first attempt: bad
    write_job(tmp_path, 2, 8, padding=2, sub="artifacts/user_logs/retry_001")  # retry: good
    r = verify(tmp_path, 16, size=H100)
    assert r.ok, r.problems
    assert r.attempt == 1 and r.rank_logs == 16


def test_mixed_transport_is_reported_per_rank(tmp_path):
    write_job(tmp_path, 2, 8)
    bad = tmp_path / "artifacts/user_logs/std_log_process_9.txt"
    bad.write_text("\n".join([*nccl_socket("h1", 9, 1), *smoke_lines(9, 16, 1, 1, "h1", None)]))
    r = verify(tmp_path, 16, size=H100)
    assert not r.ok
    assert r.transport == "mixed (IB, Socket)" and r.transport_by_rank[9] == "Socket"


def test_cpu_gloo_run_without_nccl_lines_needs_allow_socket(tmp_path):
    write_job(tmp_path, 2, 2, transport=lambda *a: [], peak=0.05, sub="user_logs")
    assert not verify(tmp_path, 4).ok
    r = verify(tmp_path, 4, allow_socket=True)
    assert r.ok, r.problems
    assert r.transport == "none seen (sockets)"


def test_empty_folder_is_not_ok(tmp_path):
    r = verify(tmp_path, 16)
    assert not r.ok and r.rank_logs == 0 and "no rank logs" in r.problems[0]


def nccl_ib_no_gdr(host: str, rank: int, peer: int) -> list[str]:
    return [line.replace("/GDRDMA", "") for line in nccl_ib(host, rank, peer)]


@pytest.mark.parametrize(("transport", "gdr_cause"), [(nccl_ib, False), (nccl_ib_no_gdr, True)])
def test_slow_infiniband_names_a_cause_that_fits_ib(tmp_path, transport, gdr_cause):
    r = verify(write_job(tmp_path, 2, 8, transport=transport, peak=10.0), 16, size=H100)
    assert not r.ok and r.transport == "IB"
    assert any("below the fail level" in p for p in r.problems)
    causes = " ".join(r.likely_causes)
    assert "not on InfiniBand" not in causes  # it is on InfiniBand: the report says IB
    assert "NCCL is on InfiniBand but below its link rate" in causes and "GPUDirect RDMA" in causes
    assert ("GPUDirect RDMA looks off" in causes) is gdr_cause


# -------------------------------------------- boundaries (bench/mutate.py --only jobs/verify/logchecks.py)


def nccl_single_node(host: str, rank: int, peer: int) -> list[str]:
    """One node: no NET channel lines (NVLink/PCIe), NCCL decides Socket for a network it does not use."""
    p = f"{host}:{1000 + rank}:{2000 + rank} [{rank % 8}] NCCL INFO"
    return [
        f"{p} NET/IB : No device found.",
        f"{p} Using network Socket",
        f"{p} Channel 00/0 : {rank}[{rank % 8}] -> {peer}[{peer % 8}] via P2P/CUMEM/read",
    ]


def test_socket_on_a_single_node_is_a_note_not_a_problem(tmp_path):
    r = verify(write_job(tmp_path, 1, 8, transport=nccl_single_node, peak=2.0), 8, size=H100)
    assert r.ok, r.problems
    assert r.nodes == 1 and r.transport == "Socket"
    assert any(n.endswith("(single node: traffic stays on NVLink/PCIe)") for n in r.notes)
    assert any("= 4% of one GPU's 400 Gb/s link" in n for n in r.notes)  # low busbw: only a note on one node


def test_one_process_has_no_transport_to_check(tmp_path):
    r = verify(write_job(tmp_path, 1, 1, transport=lambda *a: [], peak=None), 1)
    assert r.ok, r.problems
    assert r.notes == ["one process: no collective, so no NCCL transport to check"]


def test_busbw_exactly_at_the_floor_passes(tmp_path):
    # ND H200 v5 has no multi-node level, so the half-link floor applies: 200 Gb/s = 50% of 400 Gb/s.
    r = verify(write_job(tmp_path, 2, 8, peak=25.0), 16, size="Standard_ND96isr_H200_v5")
    assert r.ok, r.problems
    assert any("= 50% of one GPU's 400 Gb/s link" in n for n in r.notes)


def test_busbw_exactly_at_the_fail_level_passes_with_a_warning(tmp_path):
    r = verify(write_job(tmp_path, 2, 8, peak=300.0), 16, size=H100)  # ND H100 v5: fail below 300 GB/s
    assert r.ok, r.problems
    assert any(n.endswith(": below the warn level") for n in r.notes)
    assert not any("inter-node connections" in n for n in r.notes)  # every rank crosses nodes here


def test_without_size_nothing_is_compared_to_a_link(tmp_path):
    r = verify(write_job(tmp_path, 2, 8), 16)
    assert r.ok and r.size is None and r.link_gbps_per_gpu is None and r.attempt == 0
    assert r.to_json()["size"] is None and r.to_json()["link_gbps_per_gpu"] is None
    assert render_text(r).splitlines()[0] == "OK: world size 16 (expected 16), 16 rank log(s)"


def test_socket_cause_is_named_once(tmp_path):
    r = verify(write_job(tmp_path, 2, 8, transport=nccl_socket, peak=2.1), 16, size=H100)
    assert r.likely_causes.count(CAUSE_TCP) == 1 and not r.ok


@pytest.mark.parametrize(("procs", "expected", "cause"), [(2, 16, False), (1, 2, False), (1, 16, True)])
def test_process_count_cause_needs_one_process_per_node_and_too_few_ranks(tmp_path, procs, expected, cause):
    """2 x 2 of 16: too few, not one per node; 2 x 1 of 2: one per node, as asked; 2 x 1 of 16: the cause."""
    r = verify(write_job(tmp_path, 2, procs), expected)
    assert (CAUSE_PROCESS_COUNT in r.likely_causes) is cause
    assert r.ok is (2 * procs == expected)


def test_world_line_below_expected_with_every_rank_log_names_the_process_count(tmp_path):
    """Every expected rank log is there (2 of 2), one per node, yet the world is 1: the cause still fits."""
    logs = tmp_path / "user_logs"
    logs.mkdir()
    for rank in (0, 1):
        lines = [*nccl_ib(f"h{rank}", rank, 1 - rank), f"smoke rank={rank} node_rank={rank} host=h{rank}"]
        lines += ["world size 1"] if rank == 0 else []
        (logs / f"std_log_process_{rank}.txt").write_text("\n".join(lines) + "\n")
    r = verify(tmp_path, 2)
    assert r.world_size == 1 and "world size 1, expected 2" in r.problems
    assert r.likely_causes == [CAUSE_PROCESS_COUNT]


def test_lines_without_a_rank_count_once_per_log_file(tmp_path):
    logs = tmp_path / "user_logs"
    logs.mkdir()
    for rank in (0, 1):
        text = f"world size 2\nsmoke node_rank={rank} host=h{rank}\n"
        (logs / f"std_log_process_{rank}.txt").write_text(text)
    r = verify(tmp_path, 2, allow_socket=True)
    assert r.processes_per_node == {"node 0": 1, "node 1": 1} and r.nodes == 2


def test_no_world_line_or_record_is_a_problem_and_renders_as_not_seen(tmp_path):
    logs = tmp_path / "user_logs"
    logs.mkdir()
    for rank in (0, 1):
        (logs / f"std_log_process_{rank}.txt").write_text("\n".join(nccl_ib("h", rank, 1 - rank)) + "\n")
    r = verify(tmp_path, 2)
    assert r.world_size is None and not r.ok
    assert r.problems[0].startswith("no `world size N` line or train.step metrics record in any rank log")
    assert render_text(r).startswith("NOT OK: world size not seen (expected 2), 2 rank log(s)")


# ----------------------------------------------------------------------------- training jobs' logs


def write_train_job(root: Path, ranks: int, world: int, transport=nccl_socket) -> Path:
    """Rank logs of a train.py job: NCCL lines on every rank; rank 0 adds its metrics records (written by
    jobs/payload/metrics.py's StepMetrics, as train.py does). No per-rank smoke lines, so no node count."""
    logs = root / "user_logs"
    logs.mkdir(parents=True)
    for rank in range(ranks):
        lines = transport(f"h{rank // 8}", rank, (rank + 8) % ranks)
        if rank == 0:
            for step in (10, 20):
                m = StepMetrics(step, 20, 5.0, 80.0, 1000.0, None, world, 1e-3)
                lines += [m.text(), m.to_line()]
        (logs / f"std_log_process_{rank}.txt").write_text("\n".join(lines) + "\n")
    return root


def test_training_job_world_size_comes_from_its_metrics_records(tmp_path):
    r = verify(write_train_job(tmp_path, 16, 16, transport=nccl_ib), 16, size=H100)
    assert r.ok and r.world_size == 16 and r.nodes is None, r.problems
    r = verify(write_train_job(tmp_path / "short", 16, 8, transport=nccl_ib), 16, size=H100)
    assert "world size 8, expected 16" in r.problems


@pytest.mark.parametrize(("ranks", "multi_node"), [(16, True), (8, False), (9, True)])
def test_without_per_rank_lines_more_ranks_than_gpus_means_several_nodes(tmp_path, ranks, multi_node):
    """A socket transport without NET channel lines: only the rank count against the size's 8 GPUs
    tells one node (a note) from several (a problem)."""
    r = verify(write_train_job(tmp_path, ranks, ranks, transport=nccl_single_node), ranks, size=H100)
    assert r.ok is not multi_node
    assert (CAUSE_TCP in r.likely_causes) is multi_node


def test_an_unreadable_metrics_record_is_a_problem_not_a_crash(tmp_path):
    write_train_job(tmp_path, 2, 2, transport=nccl_ib)
    log0 = tmp_path / "user_logs" / "std_log_process_0.txt"
    log0.write_text(log0.read_text().replace('"v": 1,', '"v": 7,'))
    r = verify(tmp_path, 2)
    assert not r.ok
    assert any("a train.step record of version 7; this reader knows 1" in p for p in r.problems)


NCCL_FIXTURES = FIXTURES / "nccl"


def test_ranks_whose_rings_stay_inside_their_node_are_not_evidence_against_infiniband():
    # Ranks 1-3 and 5-7 only connect inside their node (P2P) and print neither `Using network` nor an IB
    # device list; ranks 0 and 4 carry the inter-node edges, over NET/IB with GPUDirect RDMA.
    r = verify(NCCL_FIXTURES / "intra-node-ranks", 8)
    assert r.ok, r.problems
    assert r.transport == "IB" and r.transport_by_rank[1] == nccl.NONE_SEEN
    assert (
        "transport judged from the 2 rank(s) with inter-node connections; the other 6 keep their rings "
        "and trees inside their node" in r.notes
    )


def test_logs_without_a_using_network_line_are_judged_from_devices_and_edges():
    text = (NCCL_FIXTURES / "no-using-network" / "user_logs" / "std_log_process_1.txt").read_text()
    assert "Using network" not in text
    parsed = nccl.parse(text)
    assert parsed.network is None and parsed.via == [] and parsed.ib_devices.startswith("[0]mlx5_ib0:1/IB")
    assert parsed.transport == "IB"  # the device list: NCCL takes IB before Socket when IB has devices
    r = verify(NCCL_FIXTURES / "no-using-network", 8)
    assert r.ok and r.transport == "IB", r.problems
    only = verify(NCCL_FIXTURES / "device-list-only", 8)
    assert only.ok and only.transport == "IB", only.problems
    assert set(only.transport_by_rank.values()) == {"IB"}


def test_busbw_exactly_at_the_warn_level_is_not_a_warning(tmp_path):
    r = verify(write_job(tmp_path, 2, 8, peak=400.0), 16, size=H100)  # ND H100 v5: warn below 400 GB/s
    assert r.ok, r.problems
    assert any("warn below 400" in n for n in r.notes)
    assert not any(n.endswith(": below the warn level") for n in r.notes)


def test_more_logs_than_one_gpu_means_several_nodes_without_per_rank_lines(tmp_path):
    """No smoke lines name a host and no NET edge is logged: with a 1-GPU size, 2 rank logs are 2 nodes, so a
    socket transport there is a problem (traffic crossed the network), not a single-node note."""
    logs = tmp_path / "user_logs"
    logs.mkdir()
    for rank in (0, 1):
        lines = nccl_single_node(f"h{rank}", rank, 1 - rank) + (["world size 2"] if rank == 0 else [])
        (logs / f"std_log_process_{rank}.txt").write_text("\n".join(lines) + "\n")
    r = verify(tmp_path, 2, size=ONE_GPU)
    assert r.nodes is None and not r.ok
    assert CAUSE_TCP in r.likely_causes


def test_two_nodes_from_rank_lines_alone_are_judged_against_the_multi_node_levels(tmp_path):
    """No NET edge logged, but the ranks' lines name two hosts: the job crossed nodes, so a busbw below the
    size's fail level is a problem (not the single-node link note)."""
    r = verify(write_job(tmp_path, 2, 8, transport=nccl_single_node, peak=250.0), 16, size=H100)
    assert r.nodes == 2 and not r.ok
    assert any(p.endswith(": below the fail level") for p in r.problems)


def test_a_gloo_hostname_warning_is_not_a_host(tmp_path):
    root = write_job(tmp_path, 2, 2)
    for log in (root / "artifacts/user_logs").iterdir():
        log.write_text(GLOO_HOSTNAME_WARNING + "\n" + log.read_text())
    r = verify(root, 4, allow_socket=True)
    assert r.processes_per_node == {"node 0": 2, "node 1": 2} and r.nodes == 2


def test_a_rankless_host_line_does_not_hide_the_ranks_own_line(tmp_path):
    root = write_job(tmp_path, 2, 2)
    for i, log in enumerate(sorted((root / "artifacts/user_logs").iterdir())):
        log.write_text(f"trainer hostname: 10f2c1a{i // 2}000000\n" + log.read_text())
    r = verify(root, 4, allow_socket=True)
    assert r.processes_per_node == {"node 0": 2, "node 1": 2}
