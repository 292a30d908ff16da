"""nvidia-smi's XML log as other drivers and GPUs print it, each case the recorded H100 log
(tests/jobs/fixtures/health/nvsmi-nd96isr-h100-healthy.xml) with one element changed the way the nvidia-smi
docs (https://docs.nvidia.com/deploy/nvidia-smi/index.html) and older driver layouts differ: a GPU with ECC
off has no counters ("N/A") or no <ecc_errors> block, a driver keeps only the aggregate counts, a counter
element is missing, older drivers name the throttle block <clocks_throttle_reasons>, a GPU without
<minor_number> or PCIe link info. What the user notices: the node's verdict and the numbers shown."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "jobs" / "src"
sys.path.insert(0, str(SRC))
import healthparse as hp  # noqa: E402

HEALTHY = (Path(__file__).parent / "fixtures" / "health" / "nvsmi-nd96isr-h100-healthy.xml").read_text()


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
