"""Goodput of a managed run (`python -m jobs run`) in a simulated 5-hour training run, against the seed's
planned 0.85.

    .venv/bin/python bench/goodput_sim.py [--ledger LEDGER.json] [--runs 2000] [--json]

The run (the seed's worked example, docs/reference/seed-azure-ml-compute-in-depth.txt, as `jobs plan`
reproduces it): 2.0e9 tokens at 8,200 tokens/s per GPU on 16 GPUs = 15,244 s of training, 5.0 h once the
seed divides by its planned goodput 0.85, on 2 x Standard_ND96isr_H100_v5 low-priority nodes.

Preemption model (the seed: low-priority capacity "can be taken back at any time", "losing one node stops all
of them", so the risk "grows with node count"): each node fails independently as a Poisson process with mean
time between failures `node_mtbf_h`; the job fails when any node does, so its MTBF is node_mtbf_h / nodes.
The headline uses 3 failures expected in the 5-hour run, the drill's count (2 preemptions + 1 node loss,
tests/integration/e2e/test_runs_drills.py): job MTBF 5/3 h. A sensitivity table covers other rates.

Checkpoints (Young 1974 / Daly 2006, jobs/plan/runplan.py `young_daly`): interval tau = sqrt(2 C M) with C the
time training is held per checkpoint, but never shorter than one background write (at most one save in flight,
jobs/payload/checkpointing.py). A checkpoint counts for a restart only once it is committed (its write
finished). The checkpoint path is DCP's async_save under FSDP (train.py): the seed's 8B model, 12 bytes per
parameter (fp32 weights + AdamW moments, jobs/unmount.py) of 8e9 parameters = 96 GB, sharded: each of the 16
ranks holds and writes 1/16. C = staging, the copy of each rank's shard from GPU to host memory before
async_save returns, at `stage_gbps` (default 25 GB/s, an assumption: about 40% of PCIe Gen5 x16's
~63 GB/s per direction, 32 GT/s x 16 lanes with 128b/130b coding, PCI-SIG PCIe 5.0 base specification;
H100 SXM's host link is PCIe Gen5 x16, NVIDIA H100 datasheet); 6 GB per rank takes 0.24 s. It is not
measured: the CPU-only machine of bench/checkpoint_stall.py cannot show it (docs/job-scripts.md). The
write then runs in the background, each rank its own shard, so write time = bytes / min(writers x
`write_gbps` (per writer, an assumption), nodes x the node's network, the storage account's ingress):
  - node network: Standard_ND96isr_H100_v5, 80,000 Mbps across its NICs = 10 GB/s per node
    (https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series, "Network";
    MicrosoftDocs/azure-compute-docs articles/virtual-machines/sizes/gpu-accelerated/ndh100v5-series.md);
  - account ingress: a standard GPv2 / Blob storage account's default maximum, 60 Gbps in the large
    regions it lists (East US, West Europe, ...), 25 Gbps in the others; raised on request
    (https://learn.microsoft.com/azure/storage/common/scalability-targets-standard-account).
    The default here is the 25 Gbps of any region. `--writers 1` is the one-writer model this replaced.

Restart cost R (failure to training again): `jobs run`'s overhead per restart measured in the drills (from a
ledger: per restarted attempt, wall time minus time spent on logged steps, plus the backoff), plus an
Azure allocation allowance (`alloc_s`: the local control plane has no node allocation or image pull; a
real low-priority node takes minutes). Each failure loses the work since the newest complete checkpoint.

Not modelled: data stalls (also in the seed's 0.85), a preempted pool that has no capacity for hours
(`--max-hours` bounds it), failures during a restart.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

SEED_TOKENS, SEED_TPS, SEED_GPUS, SEED_GOODPUT = 2.0e9, 8200.0, 16, 0.85
WORK_S = SEED_TOKENS / (SEED_TPS * SEED_GPUS)  # 15,244 s of training
PLANNED_H = WORK_S / SEED_GOODPUT / 3600.0  # 4.98 h: the seed's 5.0 h
NODES = 2
WRITERS = SEED_GPUS  # one shard per rank
NODE_NET_GBIT = 80.0  # Standard_ND96isr_H100_v5 max network bandwidth, 80,000 Mbps (module docstring)
ACCOUNT_INGRESS_GBIT = 25.0  # standard GPv2 default max ingress outside the listed regions (docstring)
CKPT_BYTES = 8e9 * 12
STAGE_GBPS = 25.0  # GPU-to-host copy per rank, GB/s (module docstring: an assumption under PCIe Gen5 x16)


@dataclass
class Inputs:
    job_mtbf_h: float
    stall_s: float
    write_s: float
    restart_s: float
    interval_s: float


def overhead_from_ledger(path: Path) -> float:
    """Median non-training time of the restarted attempts in a `jobs run` ledger, plus their backoff."""
    data = json.loads(path.read_text())
    ledger = data["ledgers"][0] if "ledgers" in data else data
    rows = ledger["attempts"]
    costs = []
    for prev, a in zip(rows, rows[1:], strict=False):
        steps_s = (a.get("steps_done") or 0) * (a.get("ms_per_step") or 0.0) / 1000.0
        costs.append(a["elapsed_s"] - steps_s + prev.get("backoff_s", 0.0))
    if not costs:
        raise SystemExit(f"{path}: no restarted attempt to measure")
    return statistics.median(costs)


def simulate(inp: Inputs, rng: random.Random) -> float:
    """Wall seconds to finish WORK_S of training under failures; one sample."""
    wall, done, saved = 0.0, 0.0, 0.0
    rate = 1.0 / (inp.job_mtbf_h * 3600.0)
    next_fail = rng.expovariate(rate)
    pending: list[tuple[float, float]] = []  # (wall time the write completes, work it saves)
    while done < WORK_S:
        seg = min(inp.interval_s, WORK_S - done)
        step_end = wall + seg + (inp.stall_s if done + seg < WORK_S else 0.0)
        while pending and pending[0][0] <= min(step_end, next_fail):
            saved = max(saved, pending.pop(0)[1])
        if next_fail < step_end:  # fails inside this interval: back to the newest complete checkpoint
            done = saved
            pending.clear()
            wall = next_fail + inp.restart_s
            next_fail = wall + rng.expovariate(rate)
            continue
        wall, done = step_end, done + seg
        if done < WORK_S:
            pending.append((wall + inp.write_s, done))
    return wall


def goodput(inp: Inputs, runs: int, seed: int) -> tuple[float, float]:
    rng = random.Random(seed)
    samples = [WORK_S / simulate(inp, rng) for _ in range(runs)]
    return statistics.fmean(samples), sorted(samples)[len(samples) // 20]  # mean, 5th percentile


def write_rate_gbps(writers: int, per_writer_gbps: float, ingress_gbit: float) -> float:
    """GB/s of one checkpoint's background write: the writers in parallel, bounded by the nodes' network
    and the storage account's ingress."""
    return min(writers * per_writer_gbps, NODES * NODE_NET_GBIT / 8.0, ingress_gbit / 8.0)


def inputs(
    job_mtbf_h: float, stage_gbps: float, write_gbps: float, restart_s: float, writers: int = WRITERS
) -> Inputs:
    """`stage_gbps`: one rank's GPU-to-host copy of its shard; `write_gbps`: the rate of the whole (sharded)
    write, write_rate_gbps."""
    stall = CKPT_BYTES / writers / (stage_gbps * 1e9)
    write = CKPT_BYTES / (write_gbps * 1e9)
    tau = max(math.sqrt(2.0 * stall * job_mtbf_h * 3600.0), write)
    return Inputs(job_mtbf_h, stall, write, restart_s, tau)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ledger", type=Path, help="a `jobs run --json` output or ledger file of the drill run")
    p.add_argument(
        "--drill-overhead-s",
        type=float,
        default=None,
        help="restart overhead measured in the drills, seconds (instead of --ledger)",
    )
    p.add_argument("--alloc-s", type=float, default=300.0, help="Azure node allocation + image start, s")
    p.add_argument(
        "--stage-gbps", type=float, default=STAGE_GBPS, help="async_save staging, GPU to host, per rank, GB/s"
    )
    p.add_argument(
        "--write-gbps", type=float, default=0.5, help="background write rate of one writer, GB/s (assumed)"
    )
    p.add_argument("--writers", type=int, default=WRITERS, help="ranks writing shards in parallel")
    p.add_argument(
        "--ingress-gbit",
        type=float,
        default=ACCOUNT_INGRESS_GBIT,
        help="storage account ingress, Gb/s (25 default; 60 in the large regions)",
    )
    p.add_argument("--runs", type=int, default=2000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    if a.ledger:
        drill = overhead_from_ledger(a.ledger)
    elif a.drill_overhead_s is not None:
        drill = a.drill_overhead_s
    else:
        p.error("pass --ledger FILE (the drill run's ledger) or --drill-overhead-s S")
    for flag, value in (
        ("--writers", a.writers),
        ("--stage-gbps", a.stage_gbps),
        ("--write-gbps", a.write_gbps),
        ("--ingress-gbit", a.ingress_gbit),
    ):
        if value <= 0:
            p.error(f"{flag} must be positive (got {value})")
    restart = drill + a.alloc_s
    rate = write_rate_gbps(a.writers, a.write_gbps, a.ingress_gbit)
    headline = inputs(PLANNED_H / 3, a.stage_gbps, rate, restart, a.writers)
    mean, p5 = goodput(headline, a.runs, a.seed)
    rows = []
    for mtbf in (1.0, PLANNED_H / 3, 2.5, 5.0, 10.0):
        for alloc in (0.0, a.alloc_s, 2 * a.alloc_s):
            inp = inputs(mtbf, a.stage_gbps, rate, drill + alloc, a.writers)
            m, q = goodput(inp, a.runs, a.seed)
            rows.append(
                {
                    "job_mtbf_h": round(mtbf, 3),
                    "restart_s": round(drill + alloc, 1),
                    "interval_s": round(inp.interval_s, 1),
                    "goodput": round(m, 4),
                    "p5": round(q, 4),
                }
            )
    result = {
        "work_s": round(WORK_S, 1),
        "planned_h": round(PLANNED_H, 3),
        "seed_goodput": SEED_GOODPUT,
        "drill_overhead_s": round(drill, 2),
        "write": {
            "writers": a.writers,
            "per_writer_gbps": a.write_gbps,
            "node_network_gbit": NODE_NET_GBIT,
            "nodes": NODES,
            "account_ingress_gbit": a.ingress_gbit,
            "rate_gbps": round(rate, 3),
            "stage_gbps_per_rank": a.stage_gbps,
        },
        "headline": asdict(headline) | {"goodput": round(mean, 4), "p5": round(p5, 4)},
        "sensitivity": rows,
        "runs": a.runs,
    }
    if a.json:
        print(json.dumps(result, indent=2))
        return 0
    h = headline
    print(f"training work {WORK_S:,.0f} s; the seed plans {PLANNED_H:.2f} h at goodput {SEED_GOODPUT}")
    print(
        f"checkpoint write: {CKPT_BYTES / 1e9:.0f} GB at {rate:.2f} GB/s = min({a.writers} writers x "
        f"{a.write_gbps} GB/s, {NODES} nodes x {NODE_NET_GBIT:g} Gb/s, "
        f"account ingress {a.ingress_gbit:g} Gb/s)"
    )
    print(
        f"headline: job MTBF {h.job_mtbf_h:.2f} h (3 failures per 5 h), checkpoint stall "
        f"{h.stall_s:.2f} s, write {h.write_s:.0f} s, interval {h.interval_s:.0f} s, "
        f"restart {h.restart_s:.0f} s (drill overhead {drill:.1f} s + allocation {a.alloc_s:.0f} s)"
    )
    print(f"goodput {mean:.4f} (5th percentile {p5:.4f}) over {a.runs} runs vs planned {SEED_GOODPUT}")
    print("job MTBF h | restart s | interval s | goodput | p5")
    for r in rows:
        print(
            f"{r['job_mtbf_h']:10.2f} | {r['restart_s']:9.0f} | {r['interval_s']:10.0f} | "
            f"{r['goodput']:.4f} | {r['p5']:.4f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
