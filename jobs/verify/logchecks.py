"""Verify a distributed job from its rank logs: world size, processes per node, NCCL transport, busbw.

Inputs are the files `jobs.download(name, all=True)` or the local launcher write (see `jobs.ranklogs`).
The checks are the seed's first-run checks ("On the first run, check the world size is 16, the log
shows NET/IB ..."; failure modes "One GPU busy per node" and "Scaling efficiency under 1.5x"):

- world size: train.py's metrics records (`world_size`, jobs/payload/metrics.py), else the smoke script's
  `world size N` line, against the expected N; the number of rank logs against N;
- processes per node, from the smoke script's per-rank lines (node_rank / host);
- transport per rank (`nccl.parse`), which must be an RDMA network (IB) on a multi-node job;
- the transport judged from the ranks whose connections cross nodes (`via NET/...` edges): a rank whose
  rings and trees stay inside its node is not evidence either way;
- peak all-reduce busbw of a multi-node job against the size's multi-node levels (fail / warn / expected,
  vmsizes/data/health.yaml via `vmsizes.health`); a size without levels falls back to half the per-GPU link
  speed from the catalog (`VmSize.per_gpu_link_gbps`).

Units: smoke.py logs busbw in GB/s (gigabytes, the nccl-tests unit); the report holds every rate in
Gb/s (gigabits, the link-rate unit), so `busbw_gbps` and `link_gbps_per_gpu` compare directly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from jobs import ranklogs
from jobs.errors import UsageError
from jobs.verify import nccl

# The log lines read here; each is defined, with the line it matches, in `ranklogs`.
_WORLD, _NODE_RANK, _HOST = ranklogs.WORLD_SIZE, ranklogs.NODE_RANK, ranklogs.HOST
_RANK, _PEAK_BUSBW, _IB_CHANNEL = ranklogs.RANK, ranklogs.PEAK_BUSBW, ranklogs.IB_CHANNEL

#: Below this fraction of one GPU's link speed, the fabric is not carrying the all-reduce: on an
#: RDMA size, ring all-reduce busbw across nodes approaches the node's aggregate NIC rate (one NIC per
#: GPU), so even a single GPU's link rate is a generous floor; TCP fallback lands far below it.
BUSBW_FLOOR = 0.5

BITS_PER_BYTE = 8

CAUSE_PROCESS_COUNT = (
    "process_count_per_instance unset or too small: Azure ML starts one process per node "
    "when it is missing, so one GPU per node works and the others sit idle"
)
CAUSE_TCP = (
    "NCCL is not on InfiniBand: a size without usable RDMA, or an image that replaced the network "
    "stack (its own NCCL/OFED/plugin); look for `Using network Socket` / `via NET/Socket`"
)

CAUSE_SLOW_RDMA = (
    "NCCL is on InfiniBand but below its link rate: check GPUDirect RDMA (new-format channel lines end in "
    "`via NET/IB/<n>/GDRDMA`; it needs the nvidia-peermem module and NCCL_NET_GDR_LEVEL not lowered), "
    "the channels and NICs in use (each node should use all its IB NICs: NCCL_IB_HCA, NCCL_MIN_NCHANNELS "
    "not set too low), and a slow rank or node (compare the ranks' logs, `ibstat` link rates, "
    "`nvidia-smi topo -m`)"
)
CAUSE_NO_GDR = (
    "GPUDirect RDMA looks off: the `via NET/IB/<n>` channel lines carry no `/GDRDMA`, so inter-node "
    "traffic is staged through host memory; check that nvidia-peermem is loaded on the nodes and that "
    "NCCL_NET_GDR_LEVEL / NCCL_NET_GDR_READ are not set to turn it off"
)


@dataclass
class Report:
    world_size: int | None
    expected_world_size: int
    rank_logs: int
    transport: str
    transport_by_rank: dict[int, str]
    busbw_gbps: float | None  # Gb/s (bits), like link_gbps_per_gpu; smoke.py logs GB/s
    ok: bool
    nodes: int | None  # None: no per-rank lines to count nodes from
    attempt: int  # 0 = the first attempt, N = user_logs/retry_N
    size: str | None
    problems: list[str] = field(default_factory=list)
    processes_per_node: dict[str, int] = field(default_factory=dict)
    link_gbps_per_gpu: float | None = None  # Gb/s (bits); None without --size
    likely_causes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    busbw_levels: dict[str, float] | None = None  # GB/s: the size's multi-node expected / warn / fail

    def to_json(self) -> dict:
        d = asdict(self)
        d["transport_by_rank"] = {str(k): v for k, v in self.transport_by_rank.items()}
        return d


def _smoke_lines(
    text: str,
) -> tuple[int | None, list[tuple[int | None, str | None, int | None]], float | None]:
    world = None
    ranks: list[tuple[int | None, str | None, int | None]] = []
    busbw = None
    for line in text.splitlines():
        if "NCCL" in line:
            continue
        if (m := _WORLD.search(line)) and world is None:
            world = int(m.group(1))
        node = _NODE_RANK.search(line)
        host = _HOST.search(line)
        if node or host:
            rank = _RANK.search(line)
            ranks.append(
                (
                    int(node.group(1)) if node else None,
                    host.group(1) if host else None,
                    int(rank.group(1)) if rank else None,
                )
            )
        if m := _PEAK_BUSBW.search(line):
            busbw = float(m.group(1))
    return world, ranks, busbw


def verify(
    logdir: Path, expected_world_size: int, size: str | None = None, allow_socket: bool = False
) -> Report:
    logs, attempt = ranklogs.rank_logs(logdir)
    by_rank: dict[int, str] = {}
    net_lines = False
    worlds: list[int] = []
    per_node: Counter[str] = Counter()
    seen_ranks: set[int] = set()
    busbws: list[float] = []
    ib_channels = gdr_channels = 0
    crossing: set[int] = set()  # ranks with a `via NET/...` edge: a connection to another node
    unreadable: list[str] = []
    for rank, path in logs.items():
        text = ranklogs.read(path)
        for m in _IB_CHANNEL.finditer(text):
            ib_channels += 1
            gdr_channels += m.group(1) is not None
        parsed = nccl.parse(text)
        by_rank[rank] = parsed.transport
        if parsed.via:
            crossing.add(rank)
        net_lines = net_lines or bool(parsed.via)
        world, rank_lines, busbw = _smoke_lines(text)
        try:
            records = ranklogs.records(text, str(path))
        except UsageError as e:  # a record this version cannot read: a finding, not a crash of the report
            unreadable.append(str(e))
            records = []
        if records:  # a training job: its own record of the world
            world = records[-1].world_size
        if world is not None:
            worlds.append(world)
        # A line that names its rank first: one without (a trainer's own) stands for the log's rank only if
        # no line of the log names it.
        for node, host, r in sorted(rank_lines, key=lambda line: line[2] is None):
            key = r if r is not None else rank
            if key in seen_ranks:
                continue
            seen_ranks.add(key)
            per_node[f"node {node}" if node is not None else f"host {host}"] += 1
        if busbw is not None:
            busbws.append(busbw)

    world = max(worlds) if worlds else None
    # Judge the transport from the connections that cross nodes: a rank whose rings and trees stay inside its
    # node prints no `via NET/` edge, and what it says is no evidence about the inter-node network.
    judged = {r: by_rank[r] for r in crossing} or by_rank
    transport = nccl.overall(judged) if judged else nccl.NONE_SEEN
    report = Report(
        world_size=world,
        expected_world_size=expected_world_size,
        rank_logs=len(logs),
        transport=transport,
        transport_by_rank=by_rank,
        busbw_gbps=max(busbws) * BITS_PER_BYTE if busbws else None,
        ok=False,
        processes_per_node=dict(sorted(per_node.items())),
        nodes=len(per_node) or None,
        attempt=attempt,
        size=size,
    )
    problems, causes = report.problems, report.likely_causes

    if not logs:
        problems.append(
            f"no rank logs (user_logs/std_log_process_<N>.txt) below {logdir}; pass the folder "
            "`jobs.download(all=True)` or `python -m jobs local --logs` wrote"
        )
        return report

    gpus = None
    if size:
        from vmsizes import describe

        vm = describe(size)
        report.size = vm.name
        gpus = vm.gpus
        report.link_gbps_per_gpu = vm.per_gpu_link_gbps

    problems.extend(unreadable)
    if world is None:
        problems.append(
            "no `world size N` line or train.step metrics record in any rank log: did the smoke or "
            "training script run to its first print (train.py: its first --log-every step)?"
        )
    elif world != expected_world_size:
        problems.append(f"world size {world}, expected {expected_world_size}")
    if len(logs) != expected_world_size:
        problems.append(f"{len(logs)} rank log(s), expected {expected_world_size} (one per process)")

    counts = set(per_node.values())
    nodes = len(per_node)
    if per_node and gpus and any(c < gpus for c in counts):
        problems.append(
            f"processes per node {dict(sorted(per_node.items()))}, but {report.size} has {gpus} GPUs"
        )
        causes.append(CAUSE_PROCESS_COUNT)
    elif (
        (world is not None and world < expected_world_size) or len(logs) < expected_world_size
    ) and counts == {1}:
        causes.append(CAUSE_PROCESS_COUNT)

    # NET channels exist only between nodes; without per-rank lines, more ranks than GPUs means > 1 node.
    multi_node = nodes > 1 or net_lines or (nodes == 0 and gpus is not None and len(logs) > max(gpus, 1))
    rdma_ok = all(nccl.is_rdma(t) for t in judged.values())
    if len(judged) < len(by_rank):
        report.notes.append(
            f"transport judged from the {len(judged)} rank(s) with inter-node connections; the other "
            f"{len(by_rank) - len(judged)} keep their rings and trees inside their node"
        )
    if transport == nccl.NONE_SEEN and expected_world_size == 1:
        report.notes.append("one process: no collective, so no NCCL transport to check")
    elif transport == nccl.NONE_SEEN:
        if allow_socket:
            report.notes.append(
                "no NCCL lines (CPU/gloo run): transport reported as sockets, allowed by --allow-socket"
            )
            report.transport = "none seen (sockets)"
        else:
            problems.append(
                "no NCCL transport lines: set NCCL_DEBUG=INFO and use the nccl backend, "
                "or pass --allow-socket for a CPU (gloo) run"
            )
    elif not rdma_ok:
        socketish = [r for r, t in judged.items() if not nccl.is_rdma(t)]
        msg = f"NCCL transport {transport} on {len(socketish)} of {len(judged)} rank(s), not InfiniBand"
        if allow_socket:
            report.notes.append(msg + " (allowed by --allow-socket)")
        elif multi_node:
            problems.append(msg)
            causes.append(CAUSE_TCP)
        else:
            report.notes.append(msg + " (single node: traffic stays on NVLink/PCIe)")

    levels = _multi_node_levels(report.size) if size else None
    if levels is not None:
        report.busbw_levels = {"expected": levels.expected, "warn": levels.warn, "fail": levels.fail}
    link = report.link_gbps_per_gpu
    if report.busbw_gbps is not None and levels is not None and multi_node:
        gbytes = report.busbw_gbps / BITS_PER_BYTE
        text = (
            f"peak busbw {_rate(report.busbw_gbps)}; {report.size} across nodes: about "
            f"{levels.expected:g} GB/s, warn below {levels.warn:g}, fail below {levels.fail:g} "
            "(vmsizes/data/health.yaml)"
        )
        if gbytes < levels.fail and not allow_socket:
            problems.append(text + ": below the fail level")
            _slow_causes(causes, by_rank, rdma_ok, ib_channels, gdr_channels)
        else:
            report.notes.append(text + (": below the warn level" if gbytes < levels.warn else ""))
    elif report.busbw_gbps is not None and link:
        share = report.busbw_gbps / link  # both Gb/s
        text = (
            f"peak busbw {_rate(report.busbw_gbps)} = {share:.0%} of one GPU's {link:.0f} Gb/s link "
            f"({link / BITS_PER_BYTE:.1f} GB/s)"
        )
        if multi_node and share < BUSBW_FLOOR and not allow_socket:
            problems.append(text + f", below {BUSBW_FLOOR:.0%} (no multi-node level for this size)")
            _slow_causes(causes, by_rank, rdma_ok, ib_channels, gdr_channels)
        else:
            report.notes.append(text)

    report.ok = not problems
    return report


def _multi_node_levels(size: str | None):  # -> vmsizes.health.MultiNode | None
    from vmsizes import health

    lv = health.levels(size) if size else None
    return lv.multi_node if lv else None


def _slow_causes(causes: list[str], by_rank: dict, rdma_ok: bool, ib_channels: int, gdr: int) -> None:
    if by_rank and rdma_ok:
        # The transport is InfiniBand, so "not on InfiniBand" would contradict the report.
        if ib_channels and not gdr:
            causes.append(CAUSE_NO_GDR)
        causes.append(CAUSE_SLOW_RDMA)
    elif CAUSE_TCP not in causes:
        causes.append(CAUSE_TCP)


def _rate(gbps: float) -> str:
    """A rate in Gb/s, with its GB/s (the nccl-tests unit) alongside: `392 Gb/s (49.0 GB/s)`."""
    return f"{gbps:.0f} Gb/s ({gbps / BITS_PER_BYTE:.1f} GB/s)"


def render_text(r: Report) -> str:
    head = "OK" if r.ok else "NOT OK"
    lines = [
        f"{head}: world size {r.world_size if r.world_size is not None else 'not seen'} "
        f"(expected {r.expected_world_size}), {r.rank_logs} rank log(s)"
        + (f", attempt retry_{r.attempt:03d}" if r.attempt else "")
    ]
    if r.processes_per_node:
        lines.append("processes per node: " + ", ".join(f"{k}: {v}" for k, v in r.processes_per_node.items()))
    lines.append(f"NCCL transport: {r.transport}")
    if r.busbw_gbps is not None:
        lines.append(f"peak busbw: {_rate(r.busbw_gbps)}")
    lines += [f"problem: {p}" for p in r.problems]
    lines += [f"likely cause: {c}" for c in r.likely_causes]
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines)
