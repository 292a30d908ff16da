"""Node health levels per GPU size (vmsizes/data/health.yaml): what a healthy node of the size shows.

The levels come from Azure/azurehpc-health-checks (`conf/<size>.conf`, `customTests/*.nhc`) and Azure's
published benchmark results; each entry carries its sources, and `unconfirmed` names the levels no
primary source states.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


class HealthDataError(RuntimeError):
    """health.yaml is malformed: names the entry and the field."""


@dataclass(frozen=True)
class MultiNode:
    """Across-node all-reduce busbw levels, GB/s: about `expected`; warn below `warn`; fail below `fail`."""

    expected: float
    warn: float
    fail: float


@dataclass(frozen=True)
class HealthLevels:
    """What a healthy node of one size shows. GB/s are decimal (nccl-tests busbw, nvbandwidth)."""

    size: str
    gpus: int
    allreduce_gbs: float | None  # single-node all-reduce busbw floor at allreduce_bytes
    allreduce_bytes: int  # the message size the all-reduce levels are stated at
    h2d_gbs: float | None  # host-to-device and device-to-host copy, per GPU
    p2p_gbs: float | None  # GPU-to-GPU copy read
    ib_ports: int  # backend InfiniBand ports (0: none)
    ib_rate_gbps: int | None  # each port's rate, Gb/s
    multi_node: MultiNode | None
    sources: tuple[str, ...]
    unconfirmed: tuple[str, ...] = ()
    # Why a size AHC publishes levels for is not in the size catalog (vmsizes/data/sizes.yaml), or None: the
    # stack config does not take it (its GPU count is not from Microsoft's size pages), its levels are here
    # for a cluster made outside the stack or a size Azure ML later lists.
    outside_catalog: str | None = None


@dataclass(frozen=True)
class NodeRules:
    """The size-independent rules: the XIDs that fail a node, ECC and row-remap limits, benign throttles."""

    xid_fail_codes: frozenset[int]
    dram_errors_max: int
    sram_correctable_max: int
    remap_uncorrectable_rows_max: int
    benign_throttle: frozenset[str]
    sources: tuple[str, ...]


def size_bytes(text: str | int) -> int:
    """`16G` -> 17179869184 (binary units, as all_reduce_perf -b/-e read them)."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"(\d+)([KMG]?)", str(text).strip().upper())
    if not m:
        raise ValueError(f"{text!r} is not a size such as 16G")
    return int(m.group(1)) * _UNITS[m.group(2)]


def levels(size: str) -> HealthLevels | None:
    """The levels for `size` (any case; a constrained size uses its base size's), or None without a source."""
    data = _data()
    found = data[0].get(size.lower())
    if found is None:
        from vmsizes import describe
        from vmsizes.errors import UnknownSize

        try:
            base = describe(size).base_size
        except UnknownSize:
            return None
        found = data[0].get(base.lower()) if base else None
    return found


def rules() -> NodeRules:
    return _data()[1]


def all_levels() -> tuple[HealthLevels, ...]:
    return tuple(_data()[0].values())


@functools.cache
def _data() -> tuple[dict[str, HealthLevels], NodeRules]:
    text = (resources.files(__package__) / "data" / "health.yaml").read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    try:
        xid, ecc, thr = raw["xid_fail_codes"], raw["ecc"], raw["throttle"]
        node_rules = NodeRules(
            xid_fail_codes=frozenset(int(c) for c in xid["codes"]),
            dram_errors_max=int(ecc["dram_errors_max"]),
            sram_correctable_max=int(ecc["sram_correctable_max"]),
            remap_uncorrectable_rows_max=int(ecc["remap_uncorrectable_rows_max"]),
            benign_throttle=frozenset(thr["benign_reasons"]),
            sources=(xid["source"], ecc["source"], thr["source"]),
        )
    except (KeyError, TypeError, ValueError) as err:
        raise HealthDataError(f"health.yaml: bad or missing rule field ({err})") from err
    by_name = {}
    for item in raw["sizes"]:
        entry = _entry(item)
        by_name[entry.size.lower()] = entry
    return by_name, node_rules


def _entry(item: dict[str, Any]) -> HealthLevels:
    name = item.get("name", "?")
    try:
        multi = item.get("multi_node")
        entry = HealthLevels(
            size=name,
            gpus=int(item["gpus"]),
            allreduce_gbs=_num(item["allreduce_gbs"]),
            allreduce_bytes=size_bytes(item["allreduce_bytes"]),
            h2d_gbs=_num(item["h2d_gbs"]),
            p2p_gbs=_num(item["p2p_gbs"]),
            ib_ports=int(item["ib_ports"]),
            ib_rate_gbps=item["ib_rate_gbps"],
            multi_node=MultiNode(float(multi["expected"]), float(multi["warn"]), float(multi["fail"]))
            if multi
            else None,
            sources=tuple(item["source"]),
            unconfirmed=tuple(item.get("unconfirmed") or ()),
            outside_catalog=item.get("outside_catalog"),
        )
    except (KeyError, TypeError, ValueError) as err:
        raise HealthDataError(f"health.yaml: entry {name}: bad or missing field ({err})") from err
    if not entry.sources:
        raise HealthDataError(f"health.yaml: entry {name}: no source")
    m = entry.multi_node
    if m is not None and not (m.fail < m.warn <= m.expected):
        raise HealthDataError(f"health.yaml: entry {name}: multi_node needs fail < warn <= expected")
    return entry


def _num(value: object) -> float | None:
    return None if value is None else float(value)
