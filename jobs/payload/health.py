"""Node health job: check every node of a GPU cluster against its size's levels, and name a slow node.

Run as an Azure ML PyTorch job with one process per GPU (`python -m jobs submit health`), under
torchrun, or with `python -m jobs local health`. The job builder passes the size's levels as flags
(from vmsizes/data/health.yaml); without them each bandwidth is measured and reported without a verdict.

Per node (its first rank): GPUs present (nvidia-smi -q -x), failing XIDs in the kernel log of the last
2 hours, uncorrectable ECC and pending or failed row remaps, throttle reasons and PCIe link width, and
InfiniBand ports (/sys/class/infiniband). Every rank: host-to-device / device-to-host copy bandwidth, and
GPU-to-GPU copy to every other GPU of the node (all ordered pairs, judged pair by pair, as Azure's check).
Then all-reduce inside each node and across all nodes at the size's message size, and when the across-node
result is below the warn level (or with --bisect always), pairs of nodes and then each slow
pair's members next to a known-good node, until a node is named. On CPU (gloo) the GPU-only checks
report "not applicable on CPU" and the all-reduces run at --cpu-bytes, unjudged.

Output (stable; parsed by `jobs.health`): `health allreduce scope=S ranks=N size=B ... busbw=X` per
measurement, then on rank 0 one `health node {json}` line per node and `health summary {json}`.
Exit: 0 no node failed, 1 a node failed (or a peer was lost), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import distenv
import healthparse as hp
import torch
import torch.distributed as dist
from peerloss import is_peer_loss

EXIT_NODE_FAILED = 1
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
XID_WINDOW = "-2h"  # azurehpc-health-checks check_gpu_xid's default time_threshold: 2 hours
XID_WINDOW_S = 2 * 3600


def size_arg(text: str) -> int:
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    num, unit = (t[:-1], t[-1]) if t and t[-1] in "KMG" else (t, "")
    if not num.isdigit() or int(num) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 4096, 64K, 1M or 16G")
    return int(num) * UNITS[unit]


def _floats(n: int):
    def parse(text: str) -> tuple[float, ...]:
        try:
            values = tuple(float(v) for v in text.split(","))
        except ValueError:
            values = ()
        if len(values) != n:
            raise argparse.ArgumentTypeError(f"{text!r}: expected {n} comma-separated numbers")
        return values

    return parse


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="health.py", description=__doc__.split("\n")[0], allow_abbrev=False)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--quick", dest="mode", action="store_const", const="quick", help="few iterations (default)"
    )
    mode.add_argument(
        "--full", dest="mode", action="store_const", const="full", help="nccl-tests' 5 + 20 iterations"
    )
    p.set_defaults(mode="quick")
    lv = p.add_argument_group("levels (the job builder sets them from the size catalog)")
    lv.add_argument("--gpus", type=int, help="GPUs a node must show")
    lv.add_argument("--allreduce-gbs", type=float, help="single-node all-reduce busbw floor, GB/s")
    lv.add_argument(
        "--allreduce-bytes", type=size_arg, default=1 << 30, help="message size on GPU (default 1G)"
    )
    lv.add_argument("--h2d-gbs", type=float, help="host<->device copy floor per GPU, GB/s")
    lv.add_argument("--p2p-gbs", type=float, help="GPU-to-GPU copy floor, GB/s")
    lv.add_argument("--ib-ports", type=int, help="backend InfiniBand ports a node must have active")
    lv.add_argument("--ib-rate", type=float, help="each port's rate, Gb/s")
    lv.add_argument(
        "--multi-node", type=_floats(3), metavar="EXPECTED,WARN,FAIL", help="across-node busbw, GB/s"
    )
    lv.add_argument("--xid-fail", default="", metavar="CODES", help="comma-separated XIDs that fail a node")
    lv.add_argument(
        "--ecc-limits",
        type=_floats(3),
        metavar="DRAM,SRAM_CORR,ROWS",
        help="DRAM errors, SRAM correctable errors and uncorrectable remapped rows allowed",
    )
    p.add_argument("--cpu-bytes", type=size_arg, default=1 << 20, help="all-reduce size on CPU (default 1M)")
    p.add_argument(
        "--bisect",
        choices=("auto", "always", "never"),
        default="auto",
        help="auto: when the across-node result is below warn (GPU only)",
    )
    p.add_argument(
        "--timeout-min", type=float, default=10.0, help="collective timeout in minutes (default 10)"
    )
    args = p.parse_args(argv)
    try:
        args.xid_codes = frozenset(int(c) for c in args.xid_fail.split(",") if c.strip())
    except ValueError:
        p.error(f"--xid-fail {args.xid_fail!r}: use comma-separated integers such as 48,79")
    if args.timeout_min <= 0:
        p.error(f"--timeout-min must be positive (got {args.timeout_min})")
    return args


def rules_of(args: argparse.Namespace) -> hp.Rules:
    r = hp.Rules(
        gpus=args.gpus,
        allreduce_gbs=args.allreduce_gbs,
        h2d_gbs=args.h2d_gbs,
        p2p_gbs=args.p2p_gbs,
        ib_ports=args.ib_ports,
        ib_rate_gbps=args.ib_rate,
        multi_node=args.multi_node,
        xid_fail=args.xid_codes,
    )
    if args.ecc_limits:
        r.dram_errors_max, r.sram_correctable_max, r.remapped_rows_max = (int(v) for v in args.ecc_limits)
    return r


def _run(argv: list[str]) -> str | None:
    if not shutil.which(argv[0]):
        return None
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def _has_lines(text: str | None) -> bool:
    return any(ln.strip() and not ln.startswith("-- No entries --") for ln in (text or "").splitlines())


def node_facts(on_gpu: bool) -> dict:
    """What the node says about itself: nvidia-smi, the kernel log's XIDs, InfiniBand ports."""
    facts: dict = {"gpus": None, "xids": None, "xid_source": None, "ib": None}
    if on_gpu:
        xml = _run(["nvidia-smi", "-q", "-x"])
        try:
            gpus = hp.parse_nvsmi_xml(xml) if xml is not None else None
        except ET.ParseError:
            gpus = None  # a cut-off log: reported as nvidia-smi not answering
        if gpus is not None:
            # The throttle bitmask, as Azure's check reads it (clocks_event_reasons on drivers 535+).
            for field in ("clocks_event_reasons.active", "clocks_throttle_reasons.active"):
                csv = _run(["nvidia-smi", f"--query-gpu=index,{field}", "--format=csv"])
                if csv is not None:
                    rows = hp.parse_query_csv(csv)
                    for g, row in zip(gpus, rows, strict=False):
                        g.throttle = hp.throttle_reasons(row.get(field, ""))
                    break
            facts["gpus"] = gpus
        # A container may see no journal ("-- No entries --" even since boot): then dmesg, else unreadable
        # (reported as a warning, never as a pass).
        log, source = None, "journalctl -k (last 2 h)"
        if _has_lines(_run(["journalctl", "-k", "-b", "-n", "1", "--no-pager", "-q"])):
            log = _run(["journalctl", "-k", f"--since={XID_WINDOW}", "--no-pager", "-q"])
        if log is None:
            # dmesg stamps lines with seconds since boot: keep the same 2 hours (healthparse.recent_dmesg).
            log, source = _run(["dmesg"]), "dmesg (last 2 h)"
            uptime = _uptime()
            if log is not None and uptime is not None:
                log = hp.recent_dmesg(log, uptime, XID_WINDOW_S)
            elif log is not None:
                source = "dmesg (since boot: no /proc/uptime)"
            log = log if _has_lines(log) else None
        if log is not None:
            facts["xids"], facts["xid_source"] = hp.parse_xids(log), source
    facts["ib"] = hp.read_ib()
    return facts


def _uptime() -> float | None:
    """Seconds since boot (/proc/uptime's first field, the clock dmesg stamps its lines with)."""
    try:
        with open("/proc/uptime") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def copy_bandwidth(device: torch.device, nbytes: int, iters: int) -> dict:
    """H2D and D2H from pinned memory, and this GPU to every other GPU of the node (GB/s), as nvbandwidth's
    CE copies. Azure's check compares every cell of nvbandwidth's device-to-device matrix, each ordered pair
    (source, peer), with the P2P floor (azurehpc-health-checks customTests/azure_gpu_bandwidth.nhc
    evaluate_nvBW_result): each rank measures its own row, one peer at a time, so together the node's ranks
    cover every pair in both directions. `p2p` is the slowest of this GPU's, `p2p_pairs` each "src->dst"."""
    out: dict = {}
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    dev = torch.empty(nbytes, dtype=torch.uint8, device=device)
    for name, dst, src in (("h2d", dev, host), ("d2h", host, dev)):
        dst.copy_(src, non_blocking=True)
        sync(device)
        t0 = time.perf_counter()
        for _ in range(iters):
            dst.copy_(src, non_blocking=True)
        sync(device)
        out[name] = nbytes * iters / (time.perf_counter() - t0) / 1e9
    n = torch.cuda.device_count()
    pairs: dict[str, float] = {}
    for j in range(n):
        if j == device.index:
            continue
        peer = torch.device(f"cuda:{j}")
        other = torch.empty(nbytes, dtype=torch.uint8, device=peer)
        other.copy_(dev)
        sync(device)
        sync(peer)
        t0 = time.perf_counter()
        for _ in range(iters):
            other.copy_(dev)
        sync(device)
        sync(peer)
        pairs[f"{device.index}->{j}"] = nbytes * iters / (time.perf_counter() - t0) / 1e9
        del other
    if pairs:
        out["p2p"] = min(pairs.values())
        out["p2p_pairs"] = pairs
    del host, dev
    return out


def allreduce(
    nbytes: int, group, ranks: list[int], device: torch.device, iters: int, warmup: int, scope: str
) -> float:
    """busbw (GB/s) of an all-reduce among `ranks` (nccl-tests formulas); the first rank prints the line."""
    n = len(ranks)
    count = max(1, nbytes // 4)
    x = torch.ones(count, dtype=torch.float32, device=device)
    for _ in range(warmup):
        dist.all_reduce(x, group=group)
    sync(device)
    dist.barrier(group=group)
    t0 = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(x, group=group)
    sync(device)
    elapsed = torch.tensor([(time.perf_counter() - t0) / iters], dtype=torch.float64, device=device)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX, group=group)
    seconds = float(elapsed.item())
    algbw = count * 4 / seconds / 1e9
    busbw = algbw * 2 * (n - 1) / n
    if dist.get_rank() == ranks[0]:
        print(
            f"health allreduce scope={scope} ranks={n} size={count * 4} count={count} "
            f"time_us={seconds * 1e6:.1f} algbw={algbw:.2f} busbw={busbw:.2f}",
            flush=True,
        )
    del x
    return busbw


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = distenv.from_environ("health.py", "health")
    if env is None:
        return 2
    rank, world, local_rank, node_rank = env.rank, env.world, env.local_rank, env.node_rank
    on_gpu = torch.cuda.is_available()
    device = torch.device(f"cuda:{local_rank}" if on_gpu else "cpu")
    if on_gpu:
        torch.cuda.set_device(device)
    dist.init_process_group(
        backend="nccl" if on_gpu else "gloo", timeout=datetime.timedelta(minutes=args.timeout_min)
    )
    full = args.mode == "full"
    iters, warmup = (20, 5) if full else (5, 2)
    nbytes = args.allreduce_bytes if on_gpu else args.cpu_bytes
    at = f" at {nbytes >> 20} MiB" if nbytes < 1 << 30 else f" at {nbytes >> 30} GiB"
    rules = rules_of(args)
    try:
        layout: list = [None] * world
        dist.all_gather_object(layout, (rank, node_rank, socket.gethostname(), _ip()))
        nodes: dict[int, list[int]] = {}
        for r, n, _h, _addr in sorted(layout):
            nodes.setdefault(n, []).append(r)
        hosts = {n: h for _r, n, h, _ in layout}
        ips = {n: ip for _r, n, _h, ip in layout}
        leader = nodes[node_rank][0] == rank
        facts = node_facts(on_gpu) if leader else None
        copies: dict[str, float] = {}
        if on_gpu:
            # One GPU of a node at a time, as nvbandwidth measures (concurrent copies share host links).
            local_index = nodes[node_rank].index(rank)
            for turn in range(max(len(r) for r in nodes.values())):
                if turn == local_index:
                    copies = copy_bandwidth(device, (1 << 30) if full else (256 << 20), iters)
                dist.barrier()

        per_node: dict[int, float | None] = {}
        for n in sorted(nodes):  # every rank creates every group, in the same order
            group = dist.new_group(nodes[n])
            if n == node_rank and len(nodes[n]) > 1:
                per_node[n] = allreduce(nbytes, group, nodes[n], device, iters, warmup, f"node-{n}")
        multi = None
        if len(nodes) > 1:
            multi = allreduce(nbytes, None, list(range(world)), device, iters, warmup, "all")

        gathered: list = [None] * world
        dist.all_gather_object(gathered, (rank, node_rank, facts, copies, per_node.get(node_rank)))
        if len(nodes) > 1:
            multi_finding = hp.judge_multi(multi, rules.multi_node, on_gpu, at)
        else:
            multi_finding = hp.Finding("multi-node all-reduce", hp.NA, "one node: no all-reduce across nodes")
        bisection = None
        slow = multi_finding.status in (hp.WARN, hp.FAIL)
        if len(nodes) > 1 and (args.bisect == "always" or (args.bisect == "auto" and slow)):
            threshold = rules.multi_node[1] if (rules.multi_node and on_gpu) else 0.0
            names = [f"node-{n}" for n in sorted(nodes)]

            def measure(groups: list[tuple[str, ...]]) -> dict[tuple[str, ...], float]:
                mine, result = None, {}
                members = {g: [r for name in g for r in nodes[int(name.split("-")[1])]] for g in groups}
                pgs = {g: dist.new_group(rs) for g, rs in members.items()}
                for g, rs in members.items():
                    if rank in rs:
                        mine = (g, allreduce(nbytes, pgs[g], rs, device, iters, warmup, "+".join(g)))
                got: list = [None] * world
                dist.all_gather_object(got, mine)
                for item in got:
                    if item is not None:
                        result[item[0]] = item[1]
                return result

            bisection = hp.bisect(names, measure, threshold)
    except RuntimeError as e:
        if not is_peer_loss(e):
            raise
        print(
            f"health.py: error: rank {rank}: lost a peer ({str(e).splitlines()[0][:300]})",
            file=sys.stderr,
            flush=True,
        )
        os._exit(EXIT_NODE_FAILED)

    code = 0
    if rank == 0:
        code = report(gathered, nodes, hosts, ips, rules, on_gpu, at, multi_finding, bisection, args.mode)
    codes = [code]
    dist.broadcast_object_list(codes, src=0)
    dist.barrier()
    dist.destroy_process_group()
    return codes[0]


def report(
    gathered: list,
    nodes: dict[int, list[int]],
    hosts: dict,
    ips: dict,
    rules: hp.Rules,
    on_gpu: bool,
    at: str,
    multi: hp.Finding,
    bisection: hp.Bisection | None,
    mode: str,
) -> int:
    """Rank 0: one `health node {json}` line per node and the `health summary {json}` line; the exit code."""
    verdicts = {}
    bad = set(bisection.bad) if bisection else set()
    for n in sorted(nodes):
        rows = [g for g in gathered if g[1] == n]
        facts = next(g[2] for g in rows if g[2] is not None)
        findings = hp.check_gpus(facts["gpus"], rules, on_gpu)
        findings.append(hp.check_xids(facts["xids"], rules, on_gpu, facts["xid_source"] or "the kernel log"))
        findings.append(hp.check_ib(facts["ib"], rules, on_gpu))
        for kind, floor in (("h2d", rules.h2d_gbs), ("d2h", rules.h2d_gbs)):
            values = [g[3][kind] for g in rows if kind in g[3]]
            worst_value = min(values) if values else None
            findings.append(hp.check_level(f"copy {kind}", worst_value, floor, on_gpu, " (slowest GPU)"))
        pairs = {k: v for g in rows for k, v in g[3].get("p2p_pairs", {}).items()}
        if on_gpu and not pairs:
            findings.append(hp.Finding("copy p2p", hp.NA, "one GPU: no GPU-to-GPU copy"))
        else:
            findings.append(hp.check_pairs(pairs, rules.p2p_gbs, on_gpu))
        single = next((g[4] for g in rows if g[4] is not None), None)
        if len(nodes[n]) < 2:
            findings.append(
                hp.Finding("node all-reduce", hp.NA, "one process on the node: nothing to reduce")
            )
        else:
            findings.append(hp.check_level("node all-reduce", single, rules.allreduce_gbs, on_gpu, at))
        if len(nodes) > 1:
            f = hp.Finding(multi.check, multi.status, multi.detail, multi.measured, multi.expected)
            if bisection is not None and bisection.bad:
                named = f"node-{n}" in bad
                f.status = hp.FAIL if named and multi.status == hp.FAIL else hp.WARN if named else hp.PASS
                f.detail += "; bisection names this node" if named else "; bisection cleared this node"
            findings.append(f)
        verdict = hp.worst(f.status for f in findings)
        verdicts[n] = verdict
        record = {
            "node": f"node-{n}",
            "node_rank": n,
            "host": hosts[n],
            "ip": ips[n],
            "ranks": nodes[n],
            "status": verdict,
            "findings": [f.to_json() for f in findings],
        }
        print("health node " + json.dumps(record, sort_keys=True), flush=True)
    summary = {
        "nodes": len(nodes),
        "world_size": sum(len(r) for r in nodes.values()),
        "device": "cuda" if on_gpu else "cpu",
        "mode": mode,
        "multi_node": multi.to_json(),
        "bisection": bisection.to_json() if bisection else None,
        "healthy": sum(v == hp.PASS for v in verdicts.values()),
        "warn": sum(v == hp.WARN for v in verdicts.values()),
        "fail": sum(v == hp.FAIL for v in verdicts.values()),
        "not_judged": sum(v == hp.NA for v in verdicts.values()),
    }
    print("health summary " + json.dumps(summary, sort_keys=True), flush=True)
    return EXIT_NODE_FAILED if summary["fail"] else 0


def _ip() -> str:
    """This node's address on the network to the master (the private IP Azure ML lists for the node)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])))
            return s.getsockname()[0]
    except OSError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
