"""healthparse readers against the formats of their sources: nccl-tests' `-I 1` per-iteration table and
exponent numbers (NVIDIA/nccl-tests src/util.cu, 2.19.6), dmesg's seconds-since-boot stamps and Azure's
2-hour XID window (Azure/azurehpc-health-checks customTests/azure_gpu_xid.nhc), and GPU-to-GPU copies judged
pair by pair (customTests/azure_gpu_bandwidth.nhc evaluate_nvBW_result)."""

from __future__ import annotations

import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "jobs" / "src"
sys.path.insert(0, str(SRC))
import healthparse as hp  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "health"
G16 = 16 << 30


def test_per_iteration_columns_are_not_read_as_bandwidth() -> None:
    """With `-I 1` each group is time algbw busbw #wrong i_min i_max i_p99 i_cv%: the in-place busbw is the
    13th value of the row, not the 10th (i_p99 of the out-of-place group, 65010 us here)."""
    got = hp.parse_allreduce((FIX / "nccl-tests-per-iter-I1.txt").read_text())
    assert got.rows == {1 << 30: 455.88, G16: 464.03}
    assert got.avg_busbw == 459.703


def test_times_in_exponent_form_keep_their_row() -> None:
    got = hp.parse_allreduce((FIX / "nccl-tests-exponent-times.txt").read_text())
    assert got.rows == {8 << 30: 2.50, G16: 2.51}
    assert got.busbw_at(G16) == 2.51


def test_the_plain_table_still_reads_the_better_of_both_groups() -> None:
    got = hp.parse_allreduce((FIX / "nccl-tests-single-node-healthy.txt").read_text())
    assert got.busbw_at(G16) is not None and got.busbw_at(G16) > 400


def test_an_average_in_g_format_with_an_exponent() -> None:
    assert hp.parse_allreduce("# Avg bus bandwidth    : 1.5e+03 \n").avg_busbw == 1500.0


def test_dmesg_keeps_the_last_two_hours_only() -> None:
    text = (FIX / "dmesg-xid79.txt").read_text()
    xid79 = [x for x in hp.parse_xids(text) if x.code == 79]
    assert xid79  # the fixture's XID 79
    stamp = float(xid79[0].line.split("]")[0].strip("[ "))
    window = 2 * 3600
    recent = hp.recent_dmesg(text, uptime_s=stamp + window - 1, window_s=window)
    assert [x.code for x in hp.parse_xids(recent)].count(79) == 1
    old = hp.recent_dmesg(text, uptime_s=stamp + window + 1, window_s=window)
    assert 79 not in [x.code for x in hp.parse_xids(old)]


def test_a_continuation_line_follows_its_stamped_line() -> None:
    xid = "[7300.0] NVRM: Xid (PCI:0000:9b:00): 79, pid=0, off the bus"
    text = f"[  10.0] old line\n  continued old\n{xid}\n  more\n"
    assert hp.recent_dmesg(text, uptime_s=7300.0, window_s=7200) == (
        "[7300.0] NVRM: Xid (PCI:0000:9b:00): 79, pid=0, off the bus\n  more"
    )


def _pairs(n: int, slow: dict[str, float] | None = None) -> dict[str, float]:
    pairs = {f"{i}->{j}": 340.0 for i in range(n) for j in range(n) if i != j}
    return {**pairs, **(slow or {})}


def test_every_ordered_pair_is_judged_against_the_floor() -> None:
    ok = hp.check_pairs(_pairs(8), 335, on_gpu=True)
    assert ok.status == hp.PASS and "slowest of 56 GPU pairs" in ok.detail
    # One direction of one pair slow: the other 55 cells are fine, the node fails on that one.
    bad = hp.check_pairs(_pairs(8, {"5->2": 120.0}), 335, on_gpu=True)
    assert bad.status == hp.FAIL and bad.measured == 120.0
    assert bad.detail == (
        "120.0 GB/s (slowest of 56 GPU pairs: GPU 5 to GPU 2), expected at least 335; below the level: 5->2"
    )


def test_many_slow_pairs_are_listed_in_order_and_counted() -> None:
    slow = {f"0->{j}": 100.0 + j for j in range(1, 8)} | {"3->1": 99.0, "7->6": 50.0}
    f = hp.check_pairs(_pairs(8, slow), 335, on_gpu=True)
    assert f.detail.endswith("below the level: 0->1, 0->2, 0->3, 0->4, 0->5, 0->6, 0->7, 3->1 and 1 more")
    assert "GPU 7 to GPU 6" in f.detail


def test_pairs_without_a_level_or_on_cpu_are_not_judged() -> None:
    assert hp.check_pairs(_pairs(2), None, on_gpu=True).status == hp.NA
    assert hp.check_pairs(_pairs(2), 335, on_gpu=False).status == hp.NA
    assert hp.check_pairs({}, 335, on_gpu=True).status == hp.FAIL  # not measured on a multi-GPU node
