"""Scaling efficiency from a 1-node and a 2-node run of the training benchmark at equal per-GPU batch.

    efficiency = throughput(2 nodes) / (2 x throughput(1 node))

Seed ("InfiniBand: confirm it, do not assume it"): "Two nodes should give close to twice the throughput;
if they give 1.3 times, communication is the bottleneck"; failure modes: "Scaling efficiency under 1.5x
on two nodes. A non-RDMA size, or an image that replaced the network stack." Hence the 0.75 threshold.

Throughput of a run = the median `tokens_per_s_per_gpu` of rank 0's metrics records (jobs/payload/metrics.py;
the first record, warm-up, is dropped when there are three or more) x the records' `world_size`.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from jobs import ranklogs
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
    logs, _ = ranklogs.rank_logs(logdir)
    if not logs:
        raise UsageError(
            f"{flag} {logdir}: no user_logs/std_log_process_<N>.txt below it; pass the folder "
            "a training job's logs were downloaded to"
        )
    rank = min(logs)  # rank 0, which logs the records (the lowest one if its file is missing)
    text = ranklogs.read(logs[rank])
    records = ranklogs.records(text, f"{flag} {logs[rank]}")
    if not records:
        raise UsageError(
            f"{flag} {logdir}: rank {rank}'s log has no `{ranklogs.RECORD}` metrics record; "
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


# ----------------------------------------------------------------------------- first-run check

#: Seed, worked example: "On the first run, check ... measured tokens per second is within about 20
#: percent of the estimate. If it is far below, the cause is usually input pipeline stalls or TCP fallback,
#: not the GPUs." (docs/reference/seed-azure-ml-compute-in-depth.txt)
TOLERANCE = 0.20
SLOW_CAUSES = (
    "input pipeline stalls (data loading slower than the GPUs: more loader workers, local or cached data)",
    "TCP fallback (NCCL on Socket instead of InfiniBand: `python -m jobs verify` shows the transport)",
)


@dataclass
class FirstRun:
    """Measured tokens/s per GPU against the plan's estimate."""

    logdir: str
    expected_tokens_per_gpu_s: float
    measured_tokens_per_gpu_s: float
    deviation: float  # (measured - expected) / expected
    within: bool
    tolerance: float = TOLERANCE
    warnings: list[str] = field(default_factory=list)


def expected_rate(value: float | None, plan_file: str | None) -> float | None:
    """--expect-tokens-per-gpu-s, else the `tokens_per_gpu_s` of a `jobs plan --json` file, else None."""
    import json
    import math

    if value is not None and plan_file is not None:
        raise UsageError("pass --expect-tokens-per-gpu-s or --plan, not both")
    if plan_file is not None:
        try:
            value = float(json.loads(Path(plan_file).read_text())["tokens_per_gpu_s"])
        except FileNotFoundError:
            raise UsageError(
                f"--plan {plan_file}: no such file; write it with `python -m jobs plan ... --json`"
            ) from None
        except (ValueError, KeyError, TypeError):
            raise UsageError(
                f"--plan {plan_file}: not the JSON of `python -m jobs plan --json` (no tokens_per_gpu_s)"
            ) from None
    if value is not None and not (math.isfinite(value) and value > 0):
        raise UsageError(f"--expect-tokens-per-gpu-s {value}: must be above 0 (the plan's tokens/s per GPU)")
    return value


def first_run(run: Run, expected: float) -> FirstRun:
    deviation = (run.tokens_per_gpu_s - expected) / expected
    check = FirstRun(run.logdir, expected, run.tokens_per_gpu_s, deviation, abs(deviation) <= TOLERANCE)
    if deviation < -TOLERANCE:
        check.warnings.append(
            f"{run.logdir}: {run.tokens_per_gpu_s:,.0f} tokens/s per GPU is {-deviation:.0%} below the "
            f"plan's {expected:,.0f} (more than {TOLERANCE:.0%}); the usual causes are not the GPUs but "
            + " and ".join(SLOW_CAUSES)
        )
    elif deviation > TOLERANCE:
        check.warnings.append(
            f"{run.logdir}: {run.tokens_per_gpu_s:,.0f} tokens/s per GPU is {deviation:.0%} above the "
            f"plan's {expected:,.0f} (more than {TOLERANCE:.0%}): the plan's hours and cost are too high; "
            "plan again with the measured rate"
        )
    return check


def render_first_run(c: FirstRun) -> list[str]:
    head = (
        f"tokens/s per GPU: {c.measured_tokens_per_gpu_s:,.0f} measured, {c.expected_tokens_per_gpu_s:,.0f} "
        f"planned ({c.deviation:+.0%}, {'within' if c.within else 'beyond'} {c.tolerance:.0%})"
    )
    return [head, *(f"warning: {w}" for w in c.warnings)]
