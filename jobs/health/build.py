"""Build the health job: health.py on every node, one process per GPU, with the size's levels as flags.

The levels come from vmsizes/data/health.yaml (`vmsizes.health`); a size without an entry still runs
every check, and each bandwidth is reported unjudged ("no level for this size").
"""

from __future__ import annotations

from jobs import builders
from jobs.builders import BuiltJob, Target
from jobs.errors import UsageError

MODES = ("quick", "full")
# Flags the builder sets from the catalog; a script argument after `--` may not override them.
_OWNED = {
    f: "the size catalog (vmsizes/data/health.yaml)"
    for f in (
        "--gpus",
        "--allreduce-gbs",
        "--allreduce-bytes",
        "--h2d-gbs",
        "--p2p-gbs",
        "--ib-ports",
        "--ib-rate",
        "--multi-node",
        "--xid-fail",
        "--ecc-limits",
    )
} | {"--quick": "--quick", "--full": "--full"}


def level_flags(size: str, gpus: int | None) -> list[str]:
    """health.py's level flags for `size`: its catalog entry, else only the GPU count and Azure's rules."""
    from vmsizes import health

    lv, rules = health.levels(size), health.rules()
    flags = [
        "--xid-fail",
        ",".join(map(str, sorted(rules.xid_fail_codes))),
        "--ecc-limits",
        f"{rules.dram_errors_max},{rules.sram_correctable_max},{rules.remap_uncorrectable_rows_max}",
    ]
    if lv is None:
        return ([] if not gpus else ["--gpus", str(gpus)]) + flags
    flags += [
        "--gpus",
        str(lv.gpus),
        "--allreduce-bytes",
        str(lv.allreduce_bytes),
        "--ib-ports",
        str(lv.ib_ports),
    ]
    for flag, value in (
        ("--allreduce-gbs", lv.allreduce_gbs),
        ("--h2d-gbs", lv.h2d_gbs),
        ("--p2p-gbs", lv.p2p_gbs),
        ("--ib-rate", lv.ib_rate_gbps),
    ):
        if value is not None:
            flags += [flag, f"{value:g}"]
    if lv.multi_node is not None:
        m = lv.multi_node
        flags += ["--multi-node", f"{m.expected:g},{m.warn:g},{m.fail:g}"]
    return flags


def health(
    target: Target,
    *,
    nodes: int | None = None,
    processes: int | None = None,
    environment: str | None = None,
    allow_tcp: bool = False,
    mode: str = "quick",
    script_args: tuple[str, ...] = (),
) -> BuiltJob:
    """Every node of the cluster by default (its max_instances; 2 serverless), one process per GPU."""
    if mode not in MODES:
        raise UsageError(f"health mode {mode!r}: use --quick or --full")
    builders._check_script_args(script_args, owned=_OWNED)
    if nodes is None:
        nodes = 2 if target.max_instances is None else target.max_instances
    procs = processes if processes is not None else max(target.gpus_per_node, 1)
    builders.check_shape(target, nodes, procs, allow_tcp)
    from vmsizes import health as levels

    command = " ".join(["python health.py", f"--{mode}", *level_flags(target.size, target.gpus_per_node)])
    job = builders._command(
        target,
        command=builders._with_script_args(command, script_args),
        nodes=nodes,
        processes=procs,
        environment=environment,
        display_name=f"health-{nodes}x{procs}",
        experiment="azml-gpu-health",
        tags=builders._tags("health", target, nodes, procs) | {"azml-gpu.health-mode": mode},
    )
    lv = levels.levels(target.size)
    extra = {"mode": mode, "levels": lv.size if lv else None, "compute": target.compute}
    return BuiltJob("health", "health", job, nodes, procs, target.size, extra=extra)
