"""jobs/payload/healthparse.py, the node health checks: on the outputs of the tools they read in those tools'
real formats (tests/jobs/fixtures/health/, described in its README: nvidia-smi XML and --query-gpu CSV,
kernel-log XID lines, /sys/class/infiniband trees, nccl-tests all_reduce_perf and our own all-reduce lines;
failing nodes included), and every threshold at, just above and just below its level.

The rules, written from Azure/azurehpc-health-checks (AzureHPC NHC) at commit
0e0a1ac26a64b32ac4dd7632a529638505d3314a (the levels per size: tests/jobs/health/test_build.py):
- every NVIDIA conf: check_gpu_ecc 20000000 10000; customTests/azure_gpu_ecc.nhc fails a node on a pending
  row remap, a remap failure, uncorrectable remapped rows `-gt 512`, SRAM correctable `-gt 10000`, SRAM
  uncorrectable `-gt 0`, DRAM counts `-gt 20000000`
- customTests/azure_gpu_xid.nhc: XID_EC="48 56 57 58 62 63 64 65 68 69 73 74 79 80 81 92 119 120"
- customTests/azure_gpu_clock_throttling.nhc: GPU idle and SW power cap are not reported; HW slowdown etc. are
  a warning, not a failure."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import healthparse as hp
import pytest

from ..health_util import FIX, XID_EC, recorded_measure, rules
from ..jobs_util import FIXTURES

# --- ECC and row remapping (customTests/azure_gpu_ecc.nhc) -----------------------------------------------


def ecc(**counts) -> str:
    gpu = hp.Gpu(0, "00000000:19:00.0", "NVIDIA H100 80GB HBM3", **counts)
    finding = next(
        f for f in hp.check_gpus([gpu], hp.Rules(gpus=1), on_gpu=True) if f.check == "ecc / row remap"
    )
    return finding.status


@pytest.mark.parametrize(
    ("counts", "status"),
    [
        ({"remapped_uncorrectable": 511}, hp.PASS),
        ({"remapped_uncorrectable": 512}, hp.PASS),  # -gt 512: at the level passes
        ({"remapped_uncorrectable": 513}, hp.FAIL),
        ({"sram_correctable": 9999}, hp.PASS),
        ({"sram_correctable": 10000}, hp.PASS),
        ({"sram_correctable": 10001}, hp.FAIL),
        ({"sram_uncorrectable": 0}, hp.PASS),
        ({"sram_uncorrectable": 1}, hp.FAIL),  # any uncorrectable SRAM error
        ({"dram_uncorrectable": 20000000}, hp.PASS),
        ({"dram_uncorrectable": 20000001}, hp.FAIL),
        ({"dram_correctable": 20000000}, hp.PASS),
        ({"dram_correctable": 20000001}, hp.FAIL),
        ({"remap_pending": True}, hp.FAIL),
        ({"remap_failure": True}, hp.FAIL),
        ({}, hp.PASS),
    ],
)
def test_ecc_limits_at_above_and_below(counts, status):
    assert ecc(**counts) == status


def test_each_bad_gpu_is_named_with_its_reason():
    gpus = [
        hp.Gpu(0, "b0", "x"),
        hp.Gpu(1, "b1", "x", remapped_uncorrectable=600),
        hp.Gpu(2, "b2", "x", sram_correctable=10001),
    ]
    f = next(f for f in hp.check_gpus(gpus, hp.Rules(gpus=3), on_gpu=True) if f.check == "ecc / row remap")
    assert f.detail == (
        "GPU 1: 600 uncorrectable remapped rows (> 512); GPU 2: 10001 correctable SRAM ECC errors (> 10000)"
    )


# --- GPU count, clocks, PCIe ------------------------------------------------------------------------------


@pytest.mark.parametrize(("seen", "status"), [(7, hp.FAIL), (8, hp.PASS), (9, hp.FAIL)])
def test_gpu_count_must_be_exact(seen, status):
    gpus = [hp.Gpu(i, f"b{i}", "x") for i in range(seen)]
    f = hp.check_gpus(gpus, hp.Rules(gpus=8), on_gpu=True)[0]
    assert (f.check, f.status, f.detail) == ("gpu count", status, f"{seen} GPU(s), expected 8")


def test_without_an_expected_count_the_gpus_are_counted_not_judged():
    f = hp.check_gpus([hp.Gpu(0, "b", "x")], hp.Rules(), on_gpu=True)[0]
    assert (f.status, f.detail) == (hp.NA, "1 GPU(s); no expected count for this size")


def test_no_nvidia_smi_fails_the_node():
    (f,) = hp.check_gpus(None, hp.Rules(gpus=8), on_gpu=True)
    assert (f.check, f.status) == ("gpu count", hp.FAIL)


@pytest.mark.parametrize(
    ("reasons", "status"),
    [
        ((), hp.PASS),
        (("gpu_idle", "sw_power_cap"), hp.PASS),  # the two the NHC check ignores
        (("sw_power_cap", "hw_slowdown"), hp.WARN),
        (("sw_thermal_slowdown",), hp.WARN),
    ],
)
def test_throttle_reasons_beyond_idle_and_power_cap_warn(reasons, status):
    g = hp.Gpu(0, "b", "x", throttle=reasons)
    f = next(f for f in hp.check_gpus([g], hp.Rules(gpus=1), on_gpu=True) if f.check == "clocks")
    assert f.status == status


@pytest.mark.parametrize(
    ("width", "gen", "status"),
    [
        ((16, 16), (5, 5), hp.PASS),
        ((8, 16), (5, 5), hp.WARN),  # a narrow link
        ((16, 16), (4, 5), hp.PASS),  # a lower gen at idle is power saving, not a fault
        ((None, 16), (5, 5), hp.PASS),  # the driver does not say
        ((8, 16), (None, 5), hp.PASS),
    ],
)
def test_pcie_link_width(width, gen, status):
    g = hp.Gpu(3, "b", "x", pcie_width=width, pcie_gen=gen)
    f = next(f for f in hp.check_gpus([g], hp.Rules(gpus=1), on_gpu=True) if f.check == "pcie link")
    assert f.status == status
    if status == hp.WARN:
        assert f.detail == "GPU 3: PCIe gen 5 x8 of gen 5 x16"


def test_throttle_bitmask_names_each_nvml_bit():
    # the NHC check's constants: 0x8 HW slowdown, 0x40 HW thermal slowdown, 0x4 SW power cap, 0x1 idle
    assert hp.throttle_reasons("0x0000000000000048") == ("hw_slowdown", "hw_thermal_slowdown")
    assert hp.throttle_reasons("0x0000000000000005") == ("gpu_idle", "sw_power_cap")
    assert hp.throttle_reasons("0x0000000000000000") == ()
    assert hp.throttle_reasons("[N/A]") == ()


# --- XIDs -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(XID_EC))
def test_each_published_xid_fails_the_node(code):
    xids = hp.parse_xids(f"NVRM: Xid (PCI:0000:9b:00): {code}, pid=0, something")
    f = hp.check_xids(xids, hp.Rules(xid_fail=frozenset(XID_EC)), True, "dmesg")
    assert (f.status, f.measured) == (hp.FAIL, [code])


@pytest.mark.parametrize("code", [13, 31, 43, 47, 49, 78, 82, 118, 121])
def test_other_xids_are_seen_but_pass(code):
    xids = hp.parse_xids(f"NVRM: Xid (PCI:0000:9b:00): {code}, pid=1234, name=python")
    f = hp.check_xids(xids, hp.Rules(xid_fail=frozenset(XID_EC)), True, "dmesg")
    assert (f.status, f.detail) == (hp.PASS, f"no failing XID in dmesg (seen: [{code}])")


def test_an_unreadable_kernel_log_warns_and_a_cpu_run_is_not_judged():
    assert hp.check_xids(None, hp.Rules(), True, "dmesg").status == hp.WARN
    assert hp.check_xids([], hp.Rules(), False, "dmesg").status == hp.NA
    assert hp.check_xids([], hp.Rules(), True, "dmesg").detail == "no failing XID in dmesg"


# --- InfiniBand ---------------------------------------------------------------------------------------------


def ports(n_active: int, total: int = 8, rate: float | None = 400.0, layer: str = "InfiniBand"):
    return [
        hp.IbPort(f"mlx5_ib{i}", 1, "ACTIVE" if i < n_active else "DOWN", "LinkUp", rate, layer)
        for i in range(total)
    ]


@pytest.mark.parametrize(("active", "status"), [(7, hp.FAIL), (8, hp.PASS)])
def test_every_backend_port_must_be_active(active, status):
    f = hp.check_ib(ports(active), hp.Rules(ib_ports=8, ib_rate_gbps=400), True)
    assert (f.status, f.measured, f.expected) == (status, active, 8)


@pytest.mark.parametrize(("rate", "status"), [(399.0, hp.FAIL), (400.0, hp.PASS), (800.0, hp.PASS)])
def test_port_rate_at_above_and_below_the_level(rate, status):
    f = hp.check_ib(ports(8, rate=rate), hp.Rules(ib_ports=8, ib_rate_gbps=400), True)
    assert f.status == status


def test_a_port_without_a_rate_is_not_counted_against_a_rate_level():
    f = hp.check_ib(ports(8, rate=None), hp.Rules(ib_ports=8, ib_rate_gbps=400), True)
    assert (f.status, f.measured) == (hp.FAIL, 0)
    f = hp.check_ib(ports(8, rate=None), hp.Rules(ib_ports=8), True)  # no rate level: only active counts
    assert f.status == hp.PASS


def test_ethernet_ports_are_not_backend_infiniband_ports():
    # the H200 conf's mlx5_an0 is Accelerated Networking Ethernet, not one of the 8 backend ports
    extra = ports(1, total=1, layer="Ethernet")
    f = hp.check_ib(ports(7) + extra, hp.Rules(ib_ports=8, ib_rate_gbps=400), True)
    assert (f.status, f.measured) == (hp.FAIL, 7)
    assert f.detail.startswith("7 of 8 port(s) active at 400 Gb/s; not: mlx5_ib7:1 DOWN/LinkUp 400 Gb/s")


def test_a_size_without_backend_ports_is_not_applicable_and_a_missing_driver_fails():
    assert hp.check_ib(None, hp.Rules(ib_ports=0), True).status == hp.NA
    f = hp.check_ib(None, hp.Rules(ib_ports=8), True)
    assert (f.status, f.measured) == (hp.FAIL, 0)
    assert hp.check_ib(None, hp.Rules(ib_ports=8), False).status == hp.NA


# --- bandwidth floors and multi-node levels ---------------------------------------------------------------


@pytest.mark.parametrize(("measured", "status"), [(459.9, hp.FAIL), (460.0, hp.PASS), (460.1, hp.PASS)])
def test_a_bandwidth_floor_at_above_and_below(measured, status):
    f = hp.check_level("node all-reduce", measured, 460.0, True, " at 16G")
    assert f.status == status
    assert f.detail == f"{measured:.1f} GB/s at 16G, expected at least 460"


def test_a_bandwidth_without_floor_or_measurement():
    assert hp.check_level("copy h2d", 50.0, None, True, "").status == hp.NA
    assert hp.check_level("copy h2d", None, 48.0, True, "").status == hp.FAIL
    assert hp.check_level("copy h2d", 50.0, 48.0, False, "").status == hp.NA


# multi_node levels: expected 450, warn below 400, fail below 300 (the project's, marked unconfirmed)
@pytest.mark.parametrize(
    ("busbw", "status"),
    [
        (299.9, hp.FAIL),
        (300.0, hp.WARN),  # at the fail level: not below it
        (300.1, hp.WARN),
        (399.9, hp.WARN),
        (400.0, hp.PASS),  # at the warn level
        (400.1, hp.PASS),
    ],
)
def test_multi_node_levels_at_above_and_below(busbw, status):
    f = hp.judge_multi(busbw, (450.0, 400.0, 300.0), True, "")
    assert f.status == status
    assert f.detail == f"{busbw:.1f} GB/s; expected about 450, warn below 400, fail below 300"


def test_multi_node_without_levels_or_measurement():
    assert hp.judge_multi(100.0, None, True, "").status == hp.NA
    assert hp.judge_multi(None, (450.0, 400.0, 300.0), True, "").status == hp.FAIL
    assert hp.judge_multi(None, None, True, "").status == hp.FAIL
    assert hp.judge_multi(100.0, (450.0, 400.0, 300.0), False, "").status == hp.NA


@pytest.mark.parametrize(
    ("statuses", "verdict"),
    [
        ([], hp.PASS),
        ([hp.NA, hp.NA], hp.NA),
        ([hp.NA, hp.PASS], hp.PASS),
        ([hp.PASS, hp.NA], hp.PASS),  # an n/a after a pass does not undo it
        ([hp.PASS, hp.WARN, hp.NA], hp.WARN),
        ([hp.WARN, hp.FAIL, hp.PASS], hp.FAIL),
        ([hp.FAIL, hp.WARN], hp.FAIL),
    ],
)
def test_a_nodes_verdict_is_its_worst_finding(statuses, verdict):
    assert hp.worst(statuses) == verdict


def test_busbw_at_the_asked_size_else_the_largest_else_the_average():
    ar = hp.AllReduce(rows={1 << 20: 10.0, 1 << 30: 400.0, 1 << 28: 300.0})
    assert ar.busbw_at(1 << 28) == 300.0
    assert ar.busbw_at(16 << 30) == 400.0  # not measured there: the largest size measured
    assert hp.AllReduce(rows={}, avg_busbw=55.5).busbw_at(1 << 30) == 55.5


# --- bisection --------------------------------------------------------------------------------------------


def fabric(
    slow_nodes: set[str], slow_links: frozenset = frozenset(), fast: float = 450.0, slow: float = 150.0
):
    """A measure: a group is slow when it holds a slow node or is a slow link; records each round."""
    rounds: list[list[tuple[str, ...]]] = []

    def measure(groups):
        rounds.append(list(groups))
        return {g: slow if (set(g) & slow_nodes or frozenset(g) in slow_links) else fast for g in groups}

    return measure, rounds


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7])
def test_bisection_names_the_slow_node_for_even_and_odd_counts(n):
    nodes = [f"node{i}" for i in range(n)]
    bad = nodes[-1]  # the odd one out when n is odd: measured only in the extra round
    measure, rounds = fabric({bad})
    got = hp.bisect(nodes, measure, 400.0)
    if n == 2:  # both nodes of the only pair are slow together: no known-good node to compare with
        assert got.bad == [] and got.note.startswith("every pair is slow")
        return
    assert got.bad == [bad]
    pairs = [tuple(nodes[i : i + 2]) for i in range(0, n - 1, 2)]
    assert rounds[0] == pairs
    if n % 2:
        assert rounds[1] == [(bad, nodes[0])]  # the last node paired with the first
    measured = {tuple(s["nodes"]) for s in got.to_json()["steps"]}
    assert set(pairs) <= measured


def test_bisection_in_an_odd_count_clears_a_partner_that_was_only_slow_next_to_the_bad_node():
    nodes = ["a", "b", "c"]
    measure, rounds = fabric({"b"})
    got = hp.bisect(nodes, measure, 400.0)
    # round 1: (a, b) slow; round 2: (c, a) fast, so a and c are good; b alone is tried next to one of them
    assert got.bad == ["b"]
    assert rounds[:2] == [[("a", "b")], [("c", "a")]]
    assert len(rounds) == 3 and rounds[2][0][0] == "b" and rounds[2][0][1] in ("a", "c")


@pytest.mark.parametrize(("busbw", "named"), [(399.9, True), (400.0, False)])
def test_bisection_slow_level_at_and_below(busbw, named):
    nodes = ["a", "b", "c", "d"]

    def measure(groups):
        return {g: busbw if "d" in g else 450.0 for g in groups}

    got = hp.bisect(nodes, measure, 400.0)
    assert (got.bad == ["d"]) is named
    if not named:
        assert got.note.startswith("every pair is above the warn level")


def test_bisection_of_a_slow_link_names_no_node():
    measure, _ = fabric(set(), frozenset({frozenset({"c", "d"})}))
    got = hp.bisect(["a", "b", "c", "d"], measure, 400.0)
    assert got.bad == [] and got.note.startswith("each suspect was fast next to a known-good node")
    tried = [tuple(s["nodes"]) for s in got.to_json()["steps"]][-2:]  # each suspect next to a good node
    assert [t[0] for t in tried] == ["c", "d"] and all(t[1] in ("a", "b") for t in tried)


def test_bisection_names_two_slow_nodes_in_different_pairs():
    measure, _ = fabric({"b", "e"})
    got = hp.bisect(["a", "b", "c", "d", "e", "f"], measure, 400.0)
    assert got.bad == ["b", "e"]


def test_bisection_of_one_node_or_without_a_level():
    one = hp.bisect(["a"], lambda g: {}, 400.0)
    assert (one.bad, one.steps, one.note) == ([], [], "one node: nothing to bisect")
    measure, rounds = fabric({"a"})
    cpu = hp.bisect(["a", "b", "c"], measure, 0.0)
    assert cpu.bad == [] and len(rounds) == 2 and cpu.note.startswith("no level to judge against")


def test_on_cpu_a_measured_bandwidth_is_shown_but_not_judged():
    f = hp.judge_multi(0.3, (450.0, 400.0, 300.0), False, "")
    assert (f.status, f.detail, f.measured) == (
        hp.NA,
        "measured 0.30 GB/s on CPU; not applicable on CPU",
        0.3,
    )
    assert hp.judge_multi(None, (450.0, 400.0, 300.0), False, "").detail == "not applicable on CPU"
    g = hp.check_level("copy h2d", 1.234, 48.0, False, "")
    assert (g.status, g.detail) == (hp.NA, "measured 1.23 GB/s on CPU; not applicable on CPU")
    assert hp.check_level("copy h2d", None, 48.0, False, "").detail == "not applicable on CPU"


def test_a_pair_exactly_at_the_level_is_a_known_good_reference():
    def measure(groups):
        return {g: 150.0 if "d" in g else 400.0 for g in groups}  # (a, b) exactly at the 400 GB/s level

    got = hp.bisect(["a", "b", "c", "d"], measure, 400.0)
    assert got.bad == ["d"]


def test_any_level_above_zero_is_judged():
    def measure(groups):
        return {g: 0.5 if "c" in g else 2.0 for g in groups}

    got = hp.bisect(["a", "b", "c", "d"], measure, 1.0)  # a level of 1 GB/s still judges the pairs
    assert got.bad == ["c"]


# --- nvidia-smi's XML log as other drivers and GPUs print it -------------------------------------------
# Each case is the recorded H100 log (fixtures/health/nvsmi-nd96isr-h100-healthy.xml) with one element changed
# the way the nvidia-smi docs (https://docs.nvidia.com/deploy/nvidia-smi/index.html) and older driver layouts
# differ: a GPU with ECC off has no counters ("N/A") or no <ecc_errors> block, a driver keeps only the
# aggregate counts, a counter element is missing, older drivers name the throttle block
# <clocks_throttle_reasons>, a GPU without <minor_number> or PCIe link info. What the user notices: the node's
# verdict and the numbers shown.


HEALTHY = (FIXTURES / "health" / "nvsmi-nd96isr-h100-healthy.xml").read_text()


def edited(change) -> list[hp.Gpu]:
    """The recorded log with `change(first_gpu_element)` applied, parsed."""
    root = ET.fromstring(HEALTHY)
    change(root.find("gpu"))
    return hp.parse_nvsmi_xml(ET.tostring(root, encoding="unicode"))


def ecc_status(gpus: list[hp.Gpu]) -> str:
    rules = hp.Rules(gpus=len(gpus))
    return next(f for f in hp.check_gpus(gpus, rules, on_gpu=True) if f.check == "ecc / row remap").status


def _drop(parent_path: str, child: str):
    def change(gpu):
        parent = gpu.find(parent_path)
        parent.remove(parent.find(child))

    return change


def test_the_recorded_log_passes():
    gpus = hp.parse_nvsmi_xml(HEALTHY)
    assert len(gpus) == 8 and ecc_status(gpus) == hp.PASS


def test_a_gpu_without_an_ecc_block_counts_no_errors():
    gpus = edited(lambda g: g.remove(g.find("ecc_errors")))
    g = gpus[0]
    counts = (g.dram_uncorrectable, g.dram_correctable, g.sram_uncorrectable, g.sram_correctable)
    assert counts == (0, 0, 0, 0) and ecc_status(gpus) == hp.PASS


def test_only_aggregate_counts_still_pass_a_clean_gpu():
    gpus = edited(_drop("ecc_errors", "volatile"))
    assert (gpus[0].sram_uncorrectable, gpus[0].sram_correctable) == (0, 0)
    assert ecc_status(gpus) == hp.PASS


def test_only_volatile_counts_still_pass_a_clean_gpu():
    gpus = edited(_drop("ecc_errors", "aggregate"))
    assert gpus[0].sram_uncorrectable == 0 and ecc_status(gpus) == hp.PASS


def test_a_missing_counter_element_is_zero():
    def change(g):
        for block in ("volatile", "aggregate"):
            b = g.find(f"ecc_errors/{block}")
            b.remove(b.find("dram_correctable"))

    gpus = edited(change)
    assert gpus[0].dram_correctable == 0 and ecc_status(gpus) == hp.PASS


def test_na_counters_of_a_gpu_with_ecc_off_are_zero():
    def change(g):
        for e in g.find("ecc_errors").iter():
            if len(e) == 0:
                e.text = "N/A"

    gpus = edited(change)
    assert gpus[0].sram_uncorrectable == 0 and ecc_status(gpus) == hp.PASS


def test_an_uncorrectable_count_in_either_block_fails_the_gpu():
    def vol(g):
        g.find("ecc_errors/volatile/sram_uncorrectable_parity").text = "2"

    def agg(g):
        g.find("ecc_errors/aggregate/sram_uncorrectable_secded").text = "3"

    assert edited(vol)[0].sram_uncorrectable == 2 and ecc_status(edited(vol)) == hp.FAIL
    assert edited(agg)[0].sram_uncorrectable == 3 and ecc_status(edited(agg)) == hp.FAIL


def test_the_larger_of_volatile_and_aggregate_is_kept():
    def change(g):
        g.find("ecc_errors/volatile/sram_correctable").text = "10001"
        g.find("ecc_errors/aggregate/sram_correctable").text = "5"

    gpus = edited(change)
    assert gpus[0].sram_correctable == 10001 and ecc_status(gpus) == hp.FAIL


@pytest.mark.parametrize(
    ("pending", "failure", "status"), [("No", "No", hp.PASS), ("Yes", "No", hp.FAIL), ("No", "Yes", hp.FAIL)]
)
def test_row_remap_flags(pending, failure, status):
    def change(g):
        g.find("remapped_rows/remapped_row_pending").text = pending
        g.find("remapped_rows/remapped_row_failure").text = failure

    gpus = edited(change)
    assert (gpus[0].remap_pending, gpus[0].remap_failure) == (pending == "Yes", failure == "Yes")
    assert ecc_status(gpus) == status


def test_a_gpu_without_remapped_rows_has_no_remap_problem():
    gpus = edited(lambda g: g.remove(g.find("remapped_rows")))
    assert (gpus[0].remap_pending, gpus[0].remap_failure, gpus[0].remapped_uncorrectable) == (False, False, 0)


def test_the_older_throttle_block_name_is_read():
    def change(g):
        block = g.find("clocks_event_reasons")
        block.tag = "clocks_throttle_reasons"
        for e in block:
            e.tag = e.tag.replace("clocks_event_reason_", "clocks_throttle_reason_")
        block.find("clocks_throttle_reason_hw_slowdown").text = "Active"

    assert edited(change)[0].throttle == ("gpu_idle", "hw_slowdown")


def test_without_a_minor_number_gpus_are_numbered_in_order():
    gpus = edited(lambda g: g.remove(g.find("minor_number")))
    assert [g.index for g in gpus] == list(range(8))


def test_without_link_info_the_pcie_link_is_not_judged():
    gpus = edited(_drop("pci", "pci_gpu_link_info"))
    assert (gpus[0].pcie_gen, gpus[0].pcie_width) == ((None, None), (None, None))
    pcie = next(f for f in hp.check_gpus(gpus, hp.Rules(gpus=8), on_gpu=True) if f.check == "pcie link")
    assert pcie.status == hp.PASS


def test_a_narrow_link_in_the_log_warns():
    def change(g):
        g.find("pci/pci_gpu_link_info/link_widths/current_link_width").text = "8x"

    gpus = edited(change)
    assert gpus[0].pcie_width == (8, 16)
    pcie = next(f for f in hp.check_gpus(gpus, hp.Rules(gpus=8), on_gpu=True) if f.check == "pcie link")
    assert pcie.status == hp.WARN


def test_bus_id_and_name_fall_back_when_absent():
    def change(g):
        del g.attrib["id"]
        g.remove(g.find("product_name"))

    g = edited(change)[0]
    assert (g.bus_id, g.name) == ("00000001:00:00.0", "?")  # pci_bus_id, then '?'


def test_the_minor_number_is_the_gpu_index_even_out_of_bus_order():
    # nvidia-smi lists GPUs by PCI bus id; the minor number (/dev/nvidiaN) need not follow that order
    def change(g):
        g.find("minor_number").text = "5"

    assert edited(change)[0].index == 5


# --- small readers at their edges ------------------------------------------------------------------------
# `nvidia-smi --query-gpu=... --format=csv` (a header of field names with units in brackets, then one line per
# GPU; nvidia-smi docs) and the InfiniBand sysfs tree (/sys/class/infiniband/<dev>/ports/<n>/{state,
# phys_state,rate,link_layer}, Linux Documentation/ABI/stable/sysfs-class-infiniband: `state` reads
# "4: ACTIVE", `phys_state` "5: LinkUp", `rate` "400 Gb/sec (4X NDR)", `link_layer` "InfiniBand" or
# "Ethernet").


def test_query_csv_drops_units_and_keeps_values():
    text = (
        "index, memory.used [MiB], clocks_event_reasons.active\n"
        "0, 10 MiB, 0x0000000000000001\n"
        "1, 12 MiB, 0x0\n"
    )
    assert hp.parse_query_csv(text) == [
        {"index": "0", "memory.used": "10 MiB", "clocks_event_reasons.active": "0x0000000000000001"},
        {"index": "1", "memory.used": "12 MiB", "clocks_event_reasons.active": "0x0"},
    ]


def test_query_csv_of_no_output_or_a_header_only_is_no_gpu():
    assert hp.parse_query_csv("") == []
    assert hp.parse_query_csv("\n  \n") == []
    assert hp.parse_query_csv("index, name\n") == []


def port(
    root: Path, dev: str, n: str, state="4: ACTIVE", phys="5: LinkUp", rate="400 Gb/sec (4X NDR)", layer=None
):
    p = root / dev / "ports" / n
    p.mkdir(parents=True)
    (p / "state").write_text(state + "\n")
    (p / "phys_state").write_text(phys + "\n")
    if rate is not None:
        (p / "rate").write_text(rate + "\n")
    if layer is not None:
        (p / "link_layer").write_text(layer + "\n")


def test_sysfs_ports_are_read_in_device_then_numeric_port_order(tmp_path):
    for n in ("10", "2", "1"):
        port(tmp_path, "mlx5_ib1", n)
    port(tmp_path, "mlx5_ib0", "1", layer="InfiniBand")
    got = [(p.device, p.port) for p in hp.read_ib(tmp_path)]
    assert got == [("mlx5_ib0", 1), ("mlx5_ib1", 1), ("mlx5_ib1", 2), ("mlx5_ib1", 10)]


def test_sysfs_values_without_their_number_prefix(tmp_path):
    port(tmp_path, "mlx5_ib0", "1", state="ACTIVE", phys="LinkUp", rate="200 Gb/sec (4X HDR)")
    (p,) = hp.read_ib(tmp_path)
    assert (p.state, p.phys_state, p.rate_gbps, p.link_layer) == ("ACTIVE", "LinkUp", 200.0, "InfiniBand")


def test_a_port_without_a_readable_rate_or_link_layer(tmp_path):
    port(tmp_path, "mlx5_ib0", "1", rate=None)
    port(tmp_path, "mlx5_an0", "1", rate="100 Gb/sec (2X EDR)", layer="Ethernet")
    ports = {p.device: p for p in hp.read_ib(tmp_path)}
    assert ports["mlx5_ib0"].rate_gbps is None and ports["mlx5_ib0"].link_layer == "InfiniBand"
    assert (ports["mlx5_an0"].rate_gbps, ports["mlx5_an0"].link_layer) == (100.0, "Ethernet")


def test_an_empty_infiniband_folder_has_no_ports_and_a_file_is_no_folder(tmp_path):
    assert hp.read_ib(tmp_path) == []
    f = tmp_path / "file"
    f.write_text("")
    assert hp.read_ib(f) is None


def test_an_all_reduce_row_behind_a_bracketed_tag_is_read():
    # a launcher that tags each output line ("[tag] text") leaves the nccl-tests row intact behind the tag
    row = (
        "  17179869184    4294967296     float     sum      -1    65389  262.73  459.78      0"
        "    65326  262.99  460.23      0"
    )
    tagged = hp.parse_allreduce(f"[node-0] {row}\n[node-0] # Avg bus bandwidth    : 460.0050\n")
    assert tagged.rows == {16 << 30: 460.23} and tagged.avg_busbw == 460.005
    # an untagged line keeps any later "] " (a device line of the header) and is not a row
    assert hp.parse_allreduce("#  Rank  0 Group  0 device  0 [0x00] NVIDIA H100 80GB HBM3\n" + row).rows == {
        16 << 30: 460.23
    }


# --- the readers against the formats of their sources -----------------------------------------------------
# nccl-tests' `-I 1` per-iteration table and exponent numbers (NVIDIA/nccl-tests src/util.cu, 2.19.6), dmesg's
# seconds-since-boot stamps and Azure's 2-hour XID window (customTests/azure_gpu_xid.nhc), and GPU-to-GPU
# copies judged pair by pair (customTests/azure_gpu_bandwidth.nhc evaluate_nvBW_result).


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


def test_bisection_on_cpu_measures_but_does_not_judge():
    b = hp.bisect(["node-0", "node-1"], lambda gs: {g: 0.2 for g in gs}, slow_below=0.0)
    assert b.bad == [] and len(b.steps) == 1 and "not judged" in b.note
