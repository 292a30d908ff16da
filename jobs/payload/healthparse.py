"""Readers for what a GPU node reports about itself, and the rules health.py judges them by.

Pure functions over text and folders (no torch), uploaded with the job (jobs/payload) and tested on recorded
outputs (tests/jobs/fixtures/health/). Formats:
- `nvidia-smi -q -x`: the XML log (<nvidia_smi_log><gpu id=...>; element names from the nvidia-smi docs,
  https://docs.nvidia.com/deploy/nvidia-smi/index.html). Older drivers name the throttle block
  <clocks_throttle_reasons> / clocks_throttle_reason_*, 535+ <clocks_event_reasons> / clocks_event_reason_*;
  older ECC blocks have <sram_uncorrectable>, newer split it into _parity and _secded.
- `nvidia-smi --query-gpu=... --format=csv`: a header of the field names (units in brackets), then one
  line per GPU; `clocks_event_reasons.active` is the NVML bitmask printed as hex (0x0000000000000004).
- Kernel log XID lines (dmesg or journalctl -k): `NVRM: Xid (PCI:0000:9b:00): 79, pid=0, GPU has fallen
  off the bus.`; Azure's check greps "Xid.*: <code>," (azurehpc-health-checks customTests/azure_gpu_xid.nhc).
- /sys/class/infiniband/<dev>/ports/<n>/{state,phys_state,rate,link_layer}: `4: ACTIVE`, `5: LinkUp`,
  `400 Gb/sec (4X NDR)`, `InfiniBand` (Linux Documentation/ABI/stable/sysfs-class-infiniband).
- nccl-tests all_reduce_perf: a table `size count type redop root time algbw busbw #wrong` (out-of-place,
  then the same for in-place) and `# Avg bus bandwidth    : X` (nccl-tests src/common.cu).
- Our own all-reduce lines: smoke.py's `smoke all_reduce size=N ... busbw=X` and health.py's
  `health allreduce scope=S size=N ... busbw=X`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

PASS, WARN, FAIL, NA = "pass", "warn", "fail", "n/a"
NOT_ON_CPU = "not applicable on CPU"
_RANK = {PASS: 0, NA: 0, WARN: 1, FAIL: 2}

# NVML clocks event (throttle) reason bits (nvmlClocksEventReasons; the same constants
# azurehpc-health-checks customTests/azure_gpu_clock_throttling.nhc lists).
THROTTLE_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clocks_setting",
}


@dataclass
class Finding:
    """One check's verdict on one node: measured against expected, and what it means."""

    check: str
    status: str
    detail: str
    measured: object = None
    expected: object = None

    def to_json(self) -> dict:
        return asdict(self)


def worst(statuses: Iterable[str]) -> str:
    """The node's verdict: fail > warn > pass; n/a never worsens it, and only n/a is not a pass."""
    statuses = list(statuses)
    if statuses and all(s == NA for s in statuses):
        return NA
    best = PASS
    for s in statuses:
        if _RANK[s] > _RANK[best]:
            best = s
    return best


# --- nvidia-smi ---------------------------------------------------------------------------------------


@dataclass
class Gpu:
    index: int
    bus_id: str
    name: str
    dram_uncorrectable: int = 0
    dram_correctable: int = 0
    sram_uncorrectable: int = 0
    sram_correctable: int = 0
    remap_pending: bool = False
    remap_failure: bool = False
    remapped_uncorrectable: int = 0
    throttle: tuple[str, ...] = ()
    pcie_gen: tuple[int | None, int | None] = (None, None)  # current, max
    pcie_width: tuple[int | None, int | None] = (None, None)


def _int(text: str | None) -> int:
    if text is None:
        return 0
    m = re.match(r"\s*(\d+)", text)
    return int(m.group(1)) if m else 0  # "N/A" counts as 0: the counter is not kept


def _opt_int(text: str | None) -> int | None:
    m = re.match(r"\s*(\d+)", text or "")
    return int(m.group(1)) if m else None


def _ecc(block: ET.Element | None) -> dict[str, int]:
    if block is None:
        return {}
    sram_unc = sum(_int(e.text) for e in block if e.tag.startswith("sram_uncorrectable"))
    return {
        "dram_uncorrectable": _int(block.findtext("dram_uncorrectable")),
        "dram_correctable": _int(block.findtext("dram_correctable")),
        "sram_uncorrectable": sram_unc,
        "sram_correctable": _int(block.findtext("sram_correctable")),
    }


def parse_nvsmi_xml(text: str) -> list[Gpu]:
    """Every <gpu> of `nvidia-smi -q -x`; ECC counts are the larger of volatile and aggregate."""
    root = ET.fromstring(text)
    gpus = []
    for n, g in enumerate(root.iter("gpu")):
        vol, agg = _ecc(g.find("ecc_errors/volatile")), _ecc(g.find("ecc_errors/aggregate"))
        counts = {k: max(vol.get(k, 0), agg.get(k, 0)) for k in set(vol) | set(agg)}
        rr = g.find("remapped_rows")
        reasons = g.find("clocks_event_reasons")
        if reasons is None:
            reasons = g.find("clocks_throttle_reasons")
        active = ()
        if reasons is not None:
            active = tuple(
                re.sub(r"^clocks_(event|throttle)_reason_", "", e.tag)
                for e in reasons
                if (e.text or "").strip() == "Active"
            )
        link = g.find("pci/pci_gpu_link_info")
        gpus.append(
            Gpu(
                index=n if (i := _opt_int(g.findtext("minor_number"))) is None else i,
                bus_id=g.get("id") or g.findtext("pci/pci_bus_id") or "?",
                name=(g.findtext("product_name") or "?").strip(),
                remap_pending=(
                    rr is not None and (rr.findtext("remapped_row_pending") or "").strip() == "Yes"
                ),
                remap_failure=(
                    rr is not None and (rr.findtext("remapped_row_failure") or "").strip() == "Yes"
                ),
                remapped_uncorrectable=_int(rr.findtext("remapped_row_unc")) if rr is not None else 0,
                throttle=active,
                pcie_gen=(
                    _opt_int(link.findtext("pcie_gen/current_link_gen")) if link is not None else None,
                    _opt_int(link.findtext("pcie_gen/max_link_gen")) if link is not None else None,
                ),
                pcie_width=(
                    _opt_int(link.findtext("link_widths/current_link_width")) if link is not None else None,
                    _opt_int(link.findtext("link_widths/max_link_width")) if link is not None else None,
                ),
                **counts,
            )
        )
    return gpus


def parse_query_csv(text: str) -> list[dict[str, str]]:
    """`nvidia-smi --query-gpu=a,b --format=csv`: one dict per GPU keyed by field name (units dropped)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    header = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in lines[0].split(",")]
    return [dict(zip(header, (v.strip() for v in ln.split(",")), strict=False)) for ln in lines[1:]]


def throttle_reasons(mask: str) -> tuple[str, ...]:
    """`0x0000000000000048` -> ('hw_slowdown', 'hw_thermal_slowdown'); `[N/A]` -> ()."""
    try:
        value = int(mask.strip(), 16)
    except ValueError:
        return ()
    return tuple(name for bit, name in THROTTLE_BITS.items() if value & bit)


# --- kernel log -----------------------------------------------------------------------------------------

_XID = re.compile(r"NVRM: Xid \((?P<pci>[^)]*)\): (?P<code>\d+),(?P<rest>.*)")


@dataclass
class Xid:
    code: int
    pci: str
    line: str


_DMESG_TS = re.compile(r"^\[\s*(\d+(?:\.\d+)?)\]")


def recent_dmesg(text: str, uptime_s: float, window_s: float) -> str:
    """The lines of `dmesg` output (each `[seconds since boot] message`) from the last `window_s` seconds,
    as Azure's XID check skips older XIDs ("Xid older than $time_threshold hours", azurehpc-health-checks
    customTests/azure_gpu_xid.nhc; 2 hours by default). A line without a timestamp (a continuation) belongs
    to the line before it."""
    keep, out = True, []
    since = uptime_s - window_s
    for line in text.splitlines():
        if m := _DMESG_TS.match(line):
            keep = float(m.group(1)) >= since
        if keep:
            out.append(line)
    return "\n".join(out)


def parse_xids(text: str) -> list[Xid]:
    return [
        Xid(int(m.group("code")), m.group("pci"), line.strip())
        for line in text.splitlines()
        if (m := _XID.search(line))
    ]


# --- InfiniBand sysfs ---------------------------------------------------------------------------------


@dataclass
class IbPort:
    device: str
    port: int
    state: str  # ACTIVE, DOWN, INIT, ...
    phys_state: str  # LinkUp, Polling, Disabled, ...
    rate_gbps: float | None
    link_layer: str  # InfiniBand | Ethernet


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _after_colon(text: str) -> str:
    return text.split(":", 1)[1].strip() if ":" in text else text


def read_ib(root: Path = Path("/sys/class/infiniband")) -> list[IbPort] | None:
    """Every port under `root`; None when the folder does not exist (no RDMA driver loaded)."""
    if not root.is_dir():
        return None
    ports = []
    for dev in sorted(root.iterdir()):
        for p in sorted((dev / "ports").glob("*"), key=lambda x: int(x.name) if x.name.isdigit() else 0):
            rate = re.match(r"\s*([\d.]+)\s*Gb/sec", _read(p / "rate"))
            ports.append(
                IbPort(
                    device=dev.name,
                    port=int(p.name) if p.name.isdigit() else 0,
                    state=_after_colon(_read(p / "state")),
                    phys_state=_after_colon(_read(p / "phys_state")),
                    rate_gbps=float(rate.group(1)) if rate else None,
                    link_layer=_read(p / "link_layer") or "InfiniBand",
                )
            )
    return ports


# --- all-reduce outputs -------------------------------------------------------------------------------

# A number as nccl-tests prints it: getFloatStr falls back to "%*.1e" / "%*.0e" when a value does not fit its
# column (nccl-tests src/util.cu), so a long time is `1.2e+07`; the footer's average is "%g".
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NCCL_ROW = re.compile(r"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+\w+\s+\w+\s+-?\d+\s+(?P<rest>.*)$")
_NCCL_AVG = re.compile(rf"^#\s*Avg bus bandwidth\s*:\s*({_NUM})")
# The per-iteration table header (`-I 1`, nccl-tests src/util.cu writeResultHeader): each of the
# out-of-place and in-place groups then carries i_min i_max i_p99 i_cv% after time algbw busbw #wrong.
_PER_ITER_HEADER = re.compile(r"^#.*\bi_min\b.*\bi_cv%")
_OURS = re.compile(rf"^(?:smoke all_reduce|health allreduce)\b.*?\bsize=(\d+)\b.*?\bbusbw=({_NUM})")


def _busbw_of_row(rest: str, group: int) -> float | None:
    """The better busbw of a row's out-of-place and in-place groups (`group` values each: 4, or 8 with
    `-I 1`), read by position after `size count type redop root`. A group left blank (nccl-tests'
    in-place-only null body) or a value that is not a number is skipped; trailing timestamp columns too."""
    tokens = rest.split()
    found = []
    for start in range(0, len(tokens) - 2, group):
        value = tokens[start + 2]
        if re.fullmatch(_NUM, value):
            found.append(float(value))
        if len(found) == 2:
            break
    return max(found) if found else None


@dataclass
class AllReduce:
    rows: dict[int, float]  # message size (bytes) -> busbw GB/s (the better of out-of-place / in-place)
    avg_busbw: float | None = None

    def busbw_at(self, size: int) -> float | None:
        """busbw at `size`, else at the largest size measured (None without rows)."""
        if size in self.rows:
            return self.rows[size]
        return self.rows[max(self.rows)] if self.rows else self.avg_busbw


def parse_allreduce(text: str) -> AllReduce:
    """nccl-tests all_reduce_perf output (plain or `-I 1` per-iteration columns, numbers in fixed or exponent
    form), or our own smoke/health lines (whichever the text holds)."""
    out = AllReduce(rows={})
    group = 4
    for line in text.splitlines():
        line = re.sub(r"^.*?\] ", "", line) if line.startswith("[") else line
        if _PER_ITER_HEADER.match(line):
            group = 8
        elif m := _NCCL_ROW.match(line):
            busbw = _busbw_of_row(m.group("rest"), group)
            if busbw is not None:
                out.rows[int(m.group("size"))] = busbw
        elif m := _NCCL_AVG.match(line):
            out.avg_busbw = float(m.group(1))
        elif m := _OURS.match(line.strip()):
            out.rows[int(m.group(1))] = float(m.group(2))
    return out


# --- rules ----------------------------------------------------------------------------------------------


@dataclass
class Rules:
    """The size's levels and Azure's node rules, as the job builder passes them (health.py flags)."""

    gpus: int | None = None
    allreduce_gbs: float | None = None
    h2d_gbs: float | None = None
    p2p_gbs: float | None = None
    ib_ports: int | None = None
    ib_rate_gbps: float | None = None
    multi_node: tuple[float, float, float] | None = None  # expected, warn, fail
    xid_fail: frozenset[int] = frozenset()
    dram_errors_max: int = 20000000
    sram_correctable_max: int = 10000
    remapped_rows_max: int = 512
    benign_throttle: frozenset[str] = frozenset({"gpu_idle", "sw_power_cap"})


def check_gpus(gpus: list[Gpu] | None, rules: Rules, on_gpu: bool) -> list[Finding]:
    """GPU count, ECC and row remapping, throttle reasons and PCIe link, from nvidia-smi."""
    if not on_gpu:
        return [Finding(c, NA, NOT_ON_CPU) for c in ("gpu count", "ecc / row remap", "clocks", "pcie link")]
    if gpus is None:
        return [Finding("gpu count", FAIL, "nvidia-smi did not run: no driver, or it hung")]
    out = []
    if rules.gpus is not None:
        ok = len(gpus) == rules.gpus
        out.append(
            Finding(
                "gpu count",
                PASS if ok else FAIL,
                f"{len(gpus)} GPU(s), expected {rules.gpus}",
                len(gpus),
                rules.gpus,
            )
        )
    else:
        out.append(
            Finding("gpu count", NA, f"{len(gpus)} GPU(s); no expected count for this size", len(gpus))
        )
    bad = []
    for g in gpus:
        if g.remap_pending:
            bad.append(f"GPU {g.index} ({g.bus_id}): row remap pending (reset the GPU or reboot the node)")
        if g.remap_failure:
            bad.append(f"GPU {g.index} ({g.bus_id}): row remap failure")
        if g.remapped_uncorrectable > rules.remapped_rows_max:
            bad.append(
                f"GPU {g.index}: {g.remapped_uncorrectable} uncorrectable remapped rows "
                f"(> {rules.remapped_rows_max})"
            )
        if g.sram_uncorrectable > 0:
            bad.append(f"GPU {g.index}: {g.sram_uncorrectable} uncorrectable SRAM ECC error(s)")
        if g.sram_correctable > rules.sram_correctable_max:
            bad.append(
                f"GPU {g.index}: {g.sram_correctable} correctable SRAM ECC errors "
                f"(> {rules.sram_correctable_max})"
            )
        if max(g.dram_uncorrectable, g.dram_correctable) > rules.dram_errors_max:
            bad.append(f"GPU {g.index}: DRAM ECC errors above {rules.dram_errors_max}")
    out.append(
        Finding(
            "ecc / row remap",
            FAIL if bad else PASS,
            "; ".join(bad)
            or "no pending or failed row remaps, no uncorrectable SRAM errors, ECC counts within limits",
        )
    )
    throttled = [
        f"GPU {g.index}: {'+'.join(r)}"
        for g in gpus
        if (r := [x for x in g.throttle if x not in rules.benign_throttle])
    ]
    out.append(
        Finding(
            "clocks",
            WARN if throttled else PASS,
            "; ".join(throttled) or "no throttle reason beyond idle / SW power cap",
        )
    )
    narrow = [
        f"GPU {g.index}: PCIe gen {g.pcie_gen[0]} x{g.pcie_width[0]} of gen {g.pcie_gen[1]} "
        f"x{g.pcie_width[1]}"
        for g in gpus
        if None not in (*g.pcie_width, *g.pcie_gen) and g.pcie_width[0] < g.pcie_width[1]
    ]
    out.append(
        Finding("pcie link", WARN if narrow else PASS, "; ".join(narrow) or "every link at full width")
    )
    return out


def check_xids(xids: list[Xid] | None, rules: Rules, on_gpu: bool, source: str) -> Finding:
    if not on_gpu:
        return Finding("xid", NA, NOT_ON_CPU)
    if xids is None:
        return Finding("xid", WARN, "kernel log not readable (journalctl -k and dmesg both failed)")
    fatal = [x for x in xids if x.code in rules.xid_fail]
    if fatal:
        codes = sorted({x.code for x in fatal})
        return Finding(
            "xid",
            FAIL,
            f"XID {', '.join(map(str, codes))} in {source}: {fatal[-1].line}",
            codes,
            "none of " + ",".join(map(str, sorted(rules.xid_fail))),
        )
    other = sorted({x.code for x in xids})
    return Finding("xid", PASS, f"no failing XID in {source}" + (f" (seen: {other})" if other else ""))


def check_ib(ports: list[IbPort] | None, rules: Rules, on_gpu: bool) -> Finding:
    if not rules.ib_ports:
        return Finding("infiniband", NA, "the size has no backend InfiniBand ports")
    if ports is None:
        if not on_gpu:
            return Finding("infiniband", NA, NOT_ON_CPU + " (no /sys/class/infiniband here)")
        return Finding(
            "infiniband", FAIL, "no /sys/class/infiniband: the RDMA driver is not loaded", 0, rules.ib_ports
        )
    ib = [p for p in ports if p.link_layer == "InfiniBand"]
    up = [
        p
        for p in ib
        if p.state == "ACTIVE" and (rules.ib_rate_gbps is None or (p.rate_gbps or 0) >= rules.ib_rate_gbps)
    ]
    down = [
        f"{p.device}:{p.port} {p.state or '?'}/{p.phys_state or '?'}"
        + (f" {p.rate_gbps:g} Gb/s" if p.rate_gbps is not None else "")
        for p in ib
        if p not in up
    ]
    rate = f" at {rules.ib_rate_gbps:g} Gb/s" if rules.ib_rate_gbps else ""
    detail = f"{len(up)} of {rules.ib_ports} port(s) active{rate}"
    if down:
        detail += "; not: " + ", ".join(down)
    return Finding("infiniband", PASS if len(up) >= rules.ib_ports else FAIL, detail, len(up), rules.ib_ports)


def check_level(name: str, measured: float | None, floor: float | None, on_gpu: bool, at: str) -> Finding:
    """A bandwidth against the size's floor (GB/s)."""
    if not on_gpu:
        shown = f"measured {measured:.2f} GB/s on CPU; " if measured is not None else ""
        return Finding(name, NA, shown + NOT_ON_CPU, measured, floor)
    if measured is None:
        return Finding(name, FAIL, "not measured", None, floor)
    if floor is None:
        return Finding(name, NA, f"{measured:.1f} GB/s{at}; no level for this size", measured)
    ok = measured >= floor
    return Finding(
        name, PASS if ok else FAIL, f"{measured:.1f} GB/s{at}, expected at least {floor:g}", measured, floor
    )


def _pair_key(pair: str) -> tuple[int, ...]:
    return tuple(int(p) for p in pair.split("->") if p.isdigit())


def check_pairs(pairs: dict[str, float], floor: float | None, on_gpu: bool) -> Finding:
    """Every GPU-to-GPU copy ("src->dst": GB/s) against the size's P2P floor, pair by pair, as Azure's check
    compares each cell of nvbandwidth's device-to-device matrix (azurehpc-health-checks customTests/
    azure_gpu_bandwidth.nhc: "P2P test on GPU i to GPU j failed"); the slowest pair is the one measured."""
    name = "copy p2p"
    if not pairs:
        return check_level(name, None, floor, on_gpu, "")
    ordered = sorted(pairs.items(), key=lambda kv: (kv[1], _pair_key(kv[0])))
    slowest, worst = ordered[0]
    src, _, dst = slowest.partition("->")
    at = f" (slowest of {len(pairs)} GPU pairs: GPU {src} to GPU {dst})"
    finding = check_level(name, worst, floor, on_gpu, at)
    if floor is not None and on_gpu:
        below = sorted((k for k, v in pairs.items() if v < floor), key=_pair_key)
        if below:
            shown = ", ".join(below[:8]) + (f" and {len(below) - 8} more" if len(below) > 8 else "")
            finding.detail += f"; below the level: {shown}"
    return finding


def judge_multi(
    measured: float | None, levels: tuple[float, float, float] | None, on_gpu: bool, at: str
) -> Finding:
    """Across-node all-reduce busbw against expected / warn / fail."""
    name = "multi-node all-reduce"
    if not on_gpu:
        shown = f"measured {measured:.2f} GB/s on CPU; " if measured is not None else ""
        return Finding(name, NA, shown + NOT_ON_CPU, measured)
    if measured is None or levels is None:
        return Finding(
            name,
            NA if measured is not None else FAIL,
            f"{measured:.1f} GB/s{at}; no level for this size" if measured is not None else "not measured",
            measured,
        )
    expected, warn, fail = levels
    status = FAIL if measured < fail else WARN if measured < warn else PASS
    return Finding(
        name,
        status,
        f"{measured:.1f} GB/s{at}; expected about {expected:g}, warn below {warn:g}, fail below {fail:g}",
        measured,
        expected,
    )


# --- bisection ------------------------------------------------------------------------------------------


@dataclass
class Bisection:
    """Which node makes the all-reduce slow: each measured group and the nodes named."""

    steps: list[tuple[tuple[str, ...], float]] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict:
        return {
            "steps": [{"nodes": list(n), "busbw": b} for n, b in self.steps],
            "bad": self.bad,
            "note": self.note,
        }


Measure = Callable[[list[tuple[str, ...]]], dict[tuple[str, ...], float]]


def bisect(nodes: list[str], measure: Measure, slow_below: float) -> Bisection:
    """Name the slow node(s): all-reduce in disjoint pairs (one round), then each member of a slow pair
    with a node from a fast pair (one round per member). `measure(groups)` runs disjoint groups at once
    and returns busbw (GB/s) per group."""
    out = Bisection()
    if len(nodes) < 2:
        out.note = "one node: nothing to bisect"
        return out
    pairs = [tuple(nodes[i : i + 2]) for i in range(0, len(nodes) - 1, 2)]
    rounds = [pairs]
    if len(nodes) % 2:
        rounds.append([(nodes[-1], nodes[0])])
    speed: dict[tuple[str, ...], float] = {}
    for groups in rounds:
        result = measure(groups)
        for g in groups:
            speed[g] = result[g]
            out.steps.append((g, result[g]))
    if slow_below <= 0:
        out.note = "no level to judge against (a CPU run): the pairs are measured, not judged"
        return out
    slow = [g for g, b in speed.items() if b < slow_below]
    good = [n for g, b in speed.items() if b >= slow_below for n in g]
    if not slow:
        out.note = "every pair is above the warn level: the slowdown needs more than two nodes to show"
        return out
    if not good:
        out.note = (
            "every pair is slow: a fabric-wide problem (or the levels do not fit this image), not one node"
        )
        return out
    reference = good[0]
    suspects = list(dict.fromkeys(n for g in slow for n in g if n not in good))
    for n in suspects:
        g = (n, reference)
        b = measure([g])[g]
        out.steps.append((g, b))
        if b < slow_below:
            out.bad.append(n)
    if not out.bad:
        out.note = "each suspect was fast next to a known-good node: a link between the slow pair's nodes"
    return out
