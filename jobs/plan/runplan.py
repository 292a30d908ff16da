"""Plan a training run: hours, nodes, quota, cost, and the checkpoint interval.

Hours (the seed's worked example, "Worked example: planning a two-node run"):
    hours = tokens / (tokens_per_gpu_s x gpus x goodput) / 3600
    2.0e9 / (8,200 x 16 x 0.85) / 3600 = 5.0 h; 16 GPUs on Standard_ND96isr_H100_v5 (8 GPUs) = 2 nodes,
    and 2 x 96 = 192 vCPUs of standardNDSH100v5Family in the region (quota via `vmsizes.quota.reserve`).

Checkpoint interval (Young, "A first order approximation to the optimum checkpoint interval",
Communications of the ACM 17(9), 1974; Daly, "A higher order estimate of the optimum checkpoint
interval for restart dumps", Future Generation Computer Systems 22(3), 2006, first-order term):
    tau_opt = sqrt(2 x C x M)        C = seconds to write one checkpoint, M = mean time between failures
and the expected fraction of time lost to checkpoints and rework, to first order,
    waste = C / tau + tau / (2 M)    (at tau_opt: sqrt(2 C / M)), so goodput = 1 - waste.

Cost (the seed's "price per useful hour, including the restart tax"): the price per node-hour from the price
file (vmsizes/prices.py; `--price-per-node-hour` wins) for the size, region and tier (dedicated:
pay-as-you-go; low-priority and spot: their meters); never a price the file does not give. On low-priority
or Spot, a preemption of any node stops the job ("losing one node stops all of them", the seed) and throws
away, on average, half a checkpoint interval plus the restart, so to first order (as Young/Daly's tau / 2M):
    job preemptions per hour   lam = nodes x r          r = the user's preemptions per node-hour
    restart tax                f   = lam x (I / 2 + R)  I = checkpoint interval, R = restart time, in hours
    wall hours = hours / (1 - f);  cost = nodes x wall hours x price
    price per useful node-hour = price / (goodput x (1 - f))   (dedicated: price / goodput)
The preemption rate is the user's assumption (Azure publishes none: low-priority and Spot have no SLA) and is
printed as such.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from jobs.errors import UsageError


@dataclass
class Checkpointing:
    checkpoint_seconds: float
    mtbf_hours: float
    interval_seconds: float
    expected_goodput: float


#: Model-state bytes per parameter of mixed-precision Adam (ZeRO, SC 2020, section 3.1: 2 + 2 + 12).
BYTES_PER_PARAM = 16
BYTES_SOURCE = (
    "16 bytes/parameter: 16-bit weights (2) + gradients (2) + Adam's fp32 weights, momentum, variance (12); "
    "Rajbhandari et al., ZeRO, SC 2020, section 3.1"
)
GIB = 2**30


@dataclass
class Memory:
    params: int
    bytes_per_param: int
    bytes_source: str
    gpus: int
    gpu_memory_gib: float
    gpu_memory_source: str
    ddp_gib_per_gpu: float
    fsdp_gib_per_gpu: float
    fits_ddp: bool
    fits_fsdp: bool
    use: str | None


def memory_fit(params: int, gpus: int, gpu_memory_gib: float, source: str) -> Memory:
    """Model-state memory per GPU under DDP (all of it) and FSDP (1/gpus of it), against the GPU's."""
    total = params * BYTES_PER_PARAM / GIB
    ddp, fsdp = total, total / gpus
    fits_ddp, fits_fsdp = ddp <= gpu_memory_gib, fsdp <= gpu_memory_gib
    use = "ddp" if fits_ddp else "fsdp" if fits_fsdp else None
    return Memory(
        params,
        BYTES_PER_PARAM,
        BYTES_SOURCE,
        gpus,
        gpu_memory_gib,
        source,
        ddp,
        fsdp,
        fits_ddp,
        fits_fsdp,
        use,
    )


@dataclass
class RestartTax:
    preemptions_per_node_hour: float
    nodes: int
    job_preemptions_per_hour: float
    checkpoint_interval_minutes: float
    interval_source: str
    restart_minutes: float
    lost_fraction: float
    wall_hours: float


@dataclass
class Plan:
    tokens: float
    tokens_per_gpu_s: float
    gpus: int
    goodput: float
    hours: float
    gpu_hours: float
    size: str | None = None
    gpus_per_node: int | None = None
    nodes: int | None = None
    node_hours: float | None = None
    region: str | None = None
    tier: str = "dedicated"
    quota: list[dict] = field(default_factory=list)
    price_per_node_hour: float | None = None
    cost: float | None = None
    checkpointing: Checkpointing | None = None
    memory: Memory | None = None
    notes: list[str] = field(default_factory=list)
    price_source: str | None = None
    currency: str | None = None
    restart_tax: RestartTax | None = None
    price_per_useful_node_hour: float | None = None
    dedicated_price_per_useful_node_hour: float | None = None

    def to_json(self) -> dict:
        return asdict(self)


def young_daly(checkpoint_seconds: float, mtbf_hours: float) -> Checkpointing:
    if checkpoint_seconds <= 0:
        raise UsageError(f"--checkpoint-seconds {checkpoint_seconds}: must be above 0 (time to write one)")
    if mtbf_hours <= 0:
        raise UsageError(f"--mtbf-hours {mtbf_hours}: must be above 0 (mean hours between failures)")
    mtbf_s = mtbf_hours * 3600.0
    if checkpoint_seconds >= mtbf_s:
        raise UsageError(
            f"--checkpoint-seconds {checkpoint_seconds:g} is not below --mtbf-hours {mtbf_hours:g} "
            f"({mtbf_s:g} s): a failure would come before one checkpoint is written, so no interval "
            "makes progress; make checkpoints faster (smaller, async, local disk) or check both values"
        )
    tau = math.sqrt(2.0 * checkpoint_seconds * mtbf_s)
    waste = checkpoint_seconds / tau + tau / (2.0 * mtbf_s)
    return Checkpointing(checkpoint_seconds, mtbf_hours, tau, max(0.0, 1.0 - waste))


def plan(
    tokens: float,
    tokens_per_gpu_s: float,
    gpus: int,
    goodput: float = 0.85,
    size: str | None = None,
    price_per_node_hour: float | None = None,
    checkpoint_seconds: float | None = None,
    mtbf_hours: float | None = None,
    region: str | None = None,
    tier: str = "dedicated",
    params: int | None = None,
    gpu_memory_gib: float | None = None,
    prices: Any = None,
    preemptions_per_node_hour: float | None = None,
    checkpoint_interval_minutes: float | None = None,
    restart_minutes: float = 0.0,
) -> Plan:
    """The plan (module docstring). `prices`: a vmsizes.prices.Prices (None: no price file)."""
    for flag, value in (
        ("--tokens", tokens),
        ("--tokens-per-gpu-s", tokens_per_gpu_s),
        ("--goodput", goodput),
        ("--price-per-node-hour", price_per_node_hour),
        ("--checkpoint-seconds", checkpoint_seconds),
        ("--mtbf-hours", mtbf_hours),
        ("--preemptions-per-node-hour", preemptions_per_node_hour),
        ("--checkpoint-interval-minutes", checkpoint_interval_minutes),
        ("--restart-minutes", restart_minutes),
    ):
        if value is not None and not math.isfinite(value):
            raise UsageError(f"{flag} {value}: not a finite number; pass a number such as 2.0e9")
    if region is not None:
        from jobs.regions import check_region

        region = check_region(region, "--region")
    if tokens <= 0:
        raise UsageError(f"--tokens {tokens}: must be above 0")
    if tokens_per_gpu_s <= 0:
        raise UsageError(f"--tokens-per-gpu-s {tokens_per_gpu_s}: must be above 0 (measure it on ~200 steps)")
    if gpus < 1:
        raise UsageError(f"--gpus {gpus}: must be at least 1")
    if not 0 < goodput <= 1:
        raise UsageError(f"--goodput {goodput}: a fraction in (0, 1], e.g. 0.85")
    if price_per_node_hour is not None and price_per_node_hour < 0:
        raise UsageError(f"--price-per-node-hour {price_per_node_hour}: must not be negative")
    if params is not None and params < 1:
        raise UsageError(f"--params {params}: must be at least 1 (the model's parameter count, e.g. 8.03e9)")
    if gpu_memory_gib is not None and not (math.isfinite(gpu_memory_gib) and gpu_memory_gib > 0):
        raise UsageError(f"--gpu-memory-gib {gpu_memory_gib}: must be above 0 (memory of one GPU)")
    for flag, value in (
        ("--preemptions-per-node-hour", preemptions_per_node_hour),
        ("--checkpoint-interval-minutes", checkpoint_interval_minutes),
        ("--restart-minutes", restart_minutes),
    ):
        if value is not None and value < 0:
            raise UsageError(f"{flag} {value:g}: must not be negative")
    if tier not in TIERS:
        raise UsageError(f"--tier {tier}: use one of dedicated, low-priority, spot")
    tier = TIERS[tier]
    if preemptions_per_node_hour is not None and tier == "dedicated":
        raise UsageError(
            "--preemptions-per-node-hour is the preemption rate of low-priority or Spot nodes; "
            "pass --tier low-priority or --tier spot (dedicated nodes are not preempted)"
        )
    if (checkpoint_seconds is None) != (mtbf_hours is None):
        raise UsageError("--checkpoint-seconds and --mtbf-hours go together; pass both or neither")

    hours = tokens / (tokens_per_gpu_s * gpus * goodput) / 3600.0
    p = Plan(
        tokens=tokens,
        tokens_per_gpu_s=tokens_per_gpu_s,
        gpus=gpus,
        goodput=goodput,
        hours=hours,
        gpu_hours=hours * gpus,
        region=region,
        tier=tier,
        price_per_node_hour=price_per_node_hour,
    )
    if size:
        from datetime import date

        from stackconfig.sizes import canonical_size
        from vmsizes import describe, retired, retirement_date
        from vmsizes.quota import ClusterDemand, reserve

        try:  # the same rule as a cluster's size: a catalog size with at least one whole GPU
            vm = describe(canonical_size(size))
        except ValueError as exc:
            raise UsageError(f"--size {exc}") from None
        if retired(vm, date.today(), region):
            when = retirement_date(vm, region)
            p.notes.append(
                f"{vm.name} is retired{f' since {when}' if when else ''}"
                f"{f' in {region}' if region else ''}: it cannot be provisioned; plan on a current size"
            )
        p.size, p.gpus_per_node = vm.name, vm.gpus
        p.nodes = math.ceil(gpus / vm.gpus)
        p.node_hours = hours * p.nodes
        if gpus % vm.gpus:
            p.notes.append(
                f"{gpus} GPUs is not a whole number of {vm.gpus}-GPU nodes; "
                f"{p.nodes} nodes leave {p.nodes * vm.gpus - gpus} GPU(s) idle"
            )
        pools = []
        if tier == "spot":
            p.notes.append(
                "Spot is not an Azure ML cluster tier (clusters are dedicated or low-priority); "
                "its quota is not computed here"
            )
        else:
            pools = reserve([ClusterDemand("plan", vm.name, region or "unspecified", tier, p.nodes)]).pools
        for pool in pools:
            p.quota.append(
                {
                    "region": region or "(any)",
                    "kind": pool.kind,
                    "family": pool.family,
                    "pool": pool.label,
                    "vcpus": pool.vcpus,
                }
            )
        _price(p, vm.name, region, tier, price_per_node_hour, prices)
    elif price_per_node_hour is not None:
        raise UsageError("--price-per-node-hour needs --size (nodes come from the size's GPUs per node)")
    elif preemptions_per_node_hour is not None:
        raise UsageError(
            "--preemptions-per-node-hour needs --size (a preemption stops every node of the job)"
        )
    if params is not None:
        p.memory = _memory(p, params, gpus, gpu_memory_gib, size)
    elif gpu_memory_gib is not None:
        raise UsageError("--gpu-memory-gib needs --model or --params (what has to fit)")
    if checkpoint_seconds is not None and mtbf_hours is not None:
        p.checkpointing = young_daly(checkpoint_seconds, mtbf_hours)
    if size:
        _cost(p, preemptions_per_node_hour, checkpoint_interval_minutes, restart_minutes, prices)
    if p.checkpointing is not None and p.checkpointing.expected_goodput < 0.5:
        # sqrt(2C/M) > 0.5: C is not small against M, where the first-order model holds.
        p.notes.append(
            f"checkpointing loses {1 - p.checkpointing.expected_goodput:.0%} of the run "
            f"({checkpoint_seconds:g} s per checkpoint against {mtbf_hours:g} h between failures); "
            "the first-order Young/Daly estimate is rough this far from C << MTBF: make checkpoints "
            "faster or the job more reliable"
        )
    return p


#: --tier -> the tier the quota pools and the price file use.
TIERS = {
    "dedicated": "dedicated",
    "low-priority": "low_priority",
    "low_priority": "low_priority",
    "spot": "spot",
}


def _price(p: Plan, size: str, region: str | None, tier: str, given: float | None, prices: Any) -> None:
    """The price per node-hour: --price-per-node-hour, else the price file's, else unknown (a note says
    why)."""
    if given is not None:
        p.price_per_node_hour, p.price_source = given, "--price-per-node-hour"
        return
    if prices is None:
        p.notes.append(
            "price unknown: no price file (pass --prices FILE or set AZML_GPU_PRICES; "
            "`python -m jobs prices --refresh` writes one), so no cost is printed"
        )
        return
    if region is None:
        p.notes.append("price unknown: the price file's prices are per region; pass --region")
        return
    found = prices.price(size, region, tier)
    if found is None:
        meter = {"dedicated": "pay-as-you-go", "low_priority": "Low Priority", "spot": "Spot"}[tier]
        p.notes.append(
            f"price unknown: the price file gives no {meter} price for {size} in {region} "
            f"({prices.describe()}); refresh it with `python -m jobs prices --refresh --region {region}`"
        )
        return
    p.price_per_node_hour, p.currency = found, prices.currency
    p.price_source = prices.describe()


def _cost(
    p: Plan, rate: float | None, interval_minutes: float | None, restart_minutes: float, prices: Any
) -> None:
    """Cost, the restart tax (low-priority, Spot) and the price per useful node-hour (module docstring)."""
    assert p.nodes is not None and p.node_hours is not None
    lost = 0.0
    if p.tier != "dedicated":
        if rate is None:
            p.notes.append(
                f"restart tax not counted: pass --preemptions-per-node-hour, your assumption of how often a "
                f"{p.tier.replace('_', '-')} node is taken back (Azure publishes no rate; there is no SLA)"
            )
        else:
            if interval_minutes is not None:
                interval, source = interval_minutes, "--checkpoint-interval-minutes"
            elif p.checkpointing is not None:
                interval, source = p.checkpointing.interval_seconds / 60, "the Young/Daly interval above"
            else:
                raise UsageError(
                    "--preemptions-per-node-hour needs the checkpoint interval: pass "
                    "--checkpoint-interval-minutes (or --checkpoint-seconds and --mtbf-hours)"
                )
            job_rate = p.nodes * rate
            lost = job_rate * (interval / 2 + restart_minutes) / 60
            if lost >= 1:
                raise UsageError(
                    f"--preemptions-per-node-hour {rate:g} on {p.nodes} node(s) with a {interval:g} min "
                    f"checkpoint interval loses {lost:.0%} of the time to restarts: the run never ends; "
                    "checkpoint more often, use fewer nodes or dedicated nodes"
                )
            p.restart_tax = RestartTax(
                rate, p.nodes, job_rate, interval, source, restart_minutes, lost, p.hours / (1 - lost)
            )
    if p.price_per_node_hour is None:
        return
    wall = p.restart_tax.wall_hours if p.restart_tax else p.hours
    p.cost = p.nodes * wall * p.price_per_node_hour
    p.price_per_useful_node_hour = p.price_per_node_hour / (p.goodput * (1 - lost))
    if p.tier != "dedicated" and prices is not None and p.region is not None and p.size is not None:
        dedicated = prices.price(p.size, p.region, "dedicated")
        if dedicated is not None:
            p.dedicated_price_per_useful_node_hour = dedicated / p.goodput


def _memory(p: Plan, params: int, gpus: int, gpu_memory_gib: float | None, size: str | None) -> Memory:
    if gpu_memory_gib is not None:
        mem, source = gpu_memory_gib, "--gpu-memory-gib"
    elif size is not None:
        from vmsizes import describe

        vm = describe(p.size or size)
        if not vm.gpu_memory_gb or not vm.gpus:
            raise UsageError(f"--size {vm.name}: the catalog has no GPU memory for it; pass --gpu-memory-gib")
        # The catalog's gpu_memory_gb is the VM's total in the vendor's GB (10^9 bytes); per GPU, in GiB.
        mem = vm.gpu_memory_gb / vm.gpus * 1e9 / GIB
        source = (
            f"{vm.name}: {vm.gpu_memory_gb:g} GB over {vm.gpus} GPUs (vmsizes catalog), {mem:.1f} GiB each"
        )
    else:
        raise UsageError("--model/--params needs --size or --gpu-memory-gib (the memory of one GPU)")
    m = memory_fit(params, gpus, mem, source)
    if m.use is None:
        p.notes.append(
            f"the model states alone ({m.fsdp_gib_per_gpu:.1f} GiB per GPU sharded over {gpus}) exceed a "
            f"GPU's {mem:.1f} GiB: use more GPUs (FSDP divides by them) or a GPU with more memory"
        )
    return m


def render_text(p: Plan) -> str:
    lines = [
        f"{p.tokens:,.0f} tokens at {p.tokens_per_gpu_s:,.0f} tokens/s per GPU on {p.gpus} GPUs, "
        # The seed rounds to one decimal ("5.0"); the two-decimal value is what node-hours and cost use.
        f"goodput {p.goodput:.2f}: {p.hours:,.1f} hours ({p.hours:,.2f} h, {p.gpu_hours:,.1f} GPU-hours)"
    ]
    if p.nodes is not None:
        # Two decimals, so node-hours x price reads as the cost (9.96 x 98.32 ~ 979.60, not 10.0).
        lines.append(f"{p.nodes} x {p.size} ({p.gpus_per_node} GPUs each): {p.node_hours:,.2f} node-hours")
        for q in p.quota:
            lines.append(f"quota {q['region']}: {q['vcpus']} vCPUs of {q['pool']}")
    if p.restart_tax:
        r = p.restart_tax
        lines.append(
            f"restart tax (assumption: {r.preemptions_per_node_hour:g} preemptions per node-hour, yours): "
            f"{r.nodes} node(s) -> {r.job_preemptions_per_hour:g} job restarts per hour, each losing half "
            f"the {r.checkpoint_interval_minutes:.1f} min checkpoint interval ({r.interval_source}) + "
            f"{r.restart_minutes:g} min restart: {r.lost_fraction:.1%} of the time; "
            f"{r.wall_hours:,.2f} h wall"
        )
    if p.cost is not None:
        currency = f" {p.currency}" if p.currency else ""
        lines.append(
            f"cost: {p.cost:,.2f}{currency} at {p.price_per_node_hour:,.4g}{currency} per node-hour "
            f"({p.tier.replace('_', '-')}; {p.price_source})"
        )
    if p.price_per_useful_node_hour is not None:
        currency = f" {p.currency}" if p.currency else ""
        line = (
            f"price per useful node-hour: {p.price_per_useful_node_hour:,.2f}{currency} "
            f"(goodput {p.goodput:.2f}"
        )
        line += f", restart tax {p.restart_tax.lost_fraction:.1%})" if p.restart_tax else ")"
        if p.dedicated_price_per_useful_node_hour is not None:
            line += f"; dedicated: {p.dedicated_price_per_useful_node_hour:,.2f}{currency}"
        lines.append(line)
    if p.checkpointing:
        c = p.checkpointing
        lines.append(
            f"checkpoint every {c.interval_seconds / 60:.1f} min "
            f"(Young/Daly sqrt(2 x {c.checkpoint_seconds:g} s x {c.mtbf_hours:g} h)); "
            f"expected goodput from checkpoints and rework {c.expected_goodput:.3f}"
        )
    if p.memory:
        m = p.memory
        verdict = {"ddp": "use DDP", "fsdp": "use FSDP (--parallel fsdp)", None: "neither fits"}[m.use]
        lines += [
            f"memory: {m.params:,} parameters x {m.bytes_per_param} bytes of model state ({m.bytes_source})",
            f"  DDP:  {m.ddp_gib_per_gpu:,.1f} GiB per GPU: {'fits' if m.fits_ddp else 'does NOT fit'} in "
            f"{m.gpu_memory_gib:.1f} GiB",
            f"  FSDP over {m.gpus} GPUs: {m.fsdp_gib_per_gpu:,.1f} GiB per GPU: "
            f"{'fits' if m.fits_fsdp else 'does NOT fit'} ({m.gpu_memory_gib - m.fsdp_gib_per_gpu:,.1f} GiB "
            "left for activations)"
            if m.fits_fsdp
            else f"  FSDP over {m.gpus} GPUs: {m.fsdp_gib_per_gpu:,.1f} GiB per GPU: does NOT fit",
            f"  {verdict}; activations, the gathered block and buffers come on top of the model states",
        ]
    lines += [f"note: {n}" for n in p.notes]
    return "\n".join(lines)
