"""Scaling efficiency from a 1-node and a 2-node run of the training benchmark at equal per-GPU batch.

    efficiency = throughput(2 nodes) / (2 x throughput(1 node))

Seed ("InfiniBand: confirm it, do not assume it"): "Two nodes should give close to twice the throughput;
if they give 1.3 times, communication is the bottleneck"; failure modes: "Scaling efficiency under 1.5x
on two nodes. A non-RDMA size, or an image that replaced the network stack." Hence the 0.75 threshold.

Throughput of a run = the median `tokens_per_s_per_gpu` of rank 0's metrics records (jobs/src/metrics.py;
the first record, warm-up, is dropped when there are three or more) x the records' `world_size`.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from jobs import logfiles, trainlog
from jobs.errors import UsageError

THRESHOLD = 0.75


@dataclass
class Run:
    logdir: str
    world_size: int
    tokens_per_gpu_s: float
    samples: int

    @property
    def throughput(self) -> float:
        return self.tokens_per_gpu_s * self.world_size


@dataclass
class Scaling:
    one_node: Run
    two_nodes: Run
    speedup: float
    efficiency: float
    ok: bool
    threshold: float = THRESHOLD
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        d = asdict(self)
        d["one_node"]["throughput"] = self.one_node.throughput
        d["two_nodes"]["throughput"] = self.two_nodes.throughput
        return d


def read_run(logdir: Path, flag: str) -> Run:
    logs, _ = logfiles.rank_logs(logdir)
    if not logs:
        raise UsageError(
            f"{flag} {logdir}: no user_logs/std_log_process_<N>.txt below it; pass the folder "
            "a training job's logs were downloaded to"
        )
    rank = min(logs)  # rank 0, which logs the records (the lowest one if its file is missing)
    text = logs[rank].read_text(encoding="utf-8", errors="replace")
    records = trainlog.records(text, f"{flag} {logs[rank]}")
    if not records:
        raise UsageError(
            f"{flag} {logdir}: rank {rank}'s log has no `{trainlog.RECORD}` metrics record; "
            "was it a train.py run that reached its first --log-every step?"
        )
    steady = records[1:] if len(records) >= 3 else records
    return Run(
        str(logdir),
        records[-1].world_size,
        statistics.median(r.tokens_per_s_per_gpu for r in steady),
        len(steady),
    )


def compare(one: Run, two: Run) -> Scaling:
    """Raises UsageError when the runs are not a 1-node / 2-node pair: their efficiency means nothing."""
    problems = []
    if two.world_size != 2 * one.world_size:
        raise UsageError(
            f"world sizes {one.world_size} ({one.logdir}) and {two.world_size} ({two.logdir}): the second "
            "run should have twice the GPUs of the first (same processes per node, 1 vs 2 nodes); pass the "
            "1-node run's logs first, then the 2-node run's (`submit scaling` writes such a pair)"
        )
    speedup = two.throughput / one.throughput
    efficiency = speedup / 2.0
    if efficiency < THRESHOLD:
        problems.append(
            f"efficiency {efficiency:.2f} (speedup {speedup:.2f}x) is below {THRESHOLD:.2f} "
            f"({2 * THRESHOLD:.1f}x): communication is the bottleneck; check the NCCL transport "
            "with `python -m jobs verify` on the 2-node logs (expect `Using network IB`, "
            "not Socket)"
        )
    return Scaling(one, two, speedup, efficiency, not problems, problems=problems)


def render_text(s: Scaling) -> str:
    lines = [
        f"1 node : {s.one_node.throughput:,.0f} tokens/s ({s.one_node.world_size} GPUs x "
        f"{s.one_node.tokens_per_gpu_s:,.0f})",
        f"2 nodes: {s.two_nodes.throughput:,.0f} tokens/s ({s.two_nodes.world_size} GPUs x "
        f"{s.two_nodes.tokens_per_gpu_s:,.0f})",
        f"speedup {s.speedup:.2f}x, efficiency {s.efficiency:.2f} "
        f"({'OK' if s.ok else 'NOT OK'}, threshold {s.threshold:.2f})",
    ]
    lines += [f"problem: {p}" for p in s.problems]
    return "\n".join(lines)
