"""Small readers of node facts at their edges: `nvidia-smi --query-gpu=... --format=csv` (a header of field
names with units in brackets, then one line per GPU; nvidia-smi docs) and the InfiniBand sysfs tree
(/sys/class/infiniband/<dev>/ports/<n>/{state,phys_state,rate,link_layer}, Linux
Documentation/ABI/stable/sysfs-class-infiniband: `state` reads "4: ACTIVE", `phys_state` "5: LinkUp", `rate`
"400 Gb/sec (4X NDR)", `link_layer` "InfiniBand" or "Ethernet")."""

from __future__ import annotations

import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "jobs" / "src"
sys.path.insert(0, str(SRC))
import healthparse as hp  # noqa: E402


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
