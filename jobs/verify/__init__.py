"""`python -m jobs verify LOGDIR --expect-world-size N [--size SIZE] [--allow-socket]
[--expect-tokens-per-gpu-s R | --plan PLAN_JSON] [--json]`.

Exit 0 when every check passes, 1 when one fails, 2 on bad input (including a LOGDIR with no rank logs).
The first-run throughput check (a train run's tokens/s per GPU against the plan's) warns, never fails.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from jobs.errors import UsageError, guarded


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "verify",
        help="check a job's rank logs: world size, processes per node, NCCL transport, busbw",
        description=__doc__,
        allow_abbrev=False,
    )
    p.add_argument("logdir", metavar="LOGDIR", help="folder with user_logs/std_log_process_<N>.txt below it")
    p.add_argument(
        "--expect-world-size", type=int, required=True, metavar="N", help="nodes x processes per node"
    )
    p.add_argument("--size", metavar="VM_SIZE", help="VM size: GPUs per node and link speed (catalog)")
    p.add_argument(
        "--allow-socket",
        action="store_true",
        help="a CPU/gloo or single-host run: report the socket transport without failing",
    )
    p.add_argument(
        "--expect-tokens-per-gpu-s",
        type=float,
        metavar="R",
        help="the plan's tokens/s per GPU: warn when the measured rate is more than 20%% off",
    )
    p.add_argument("--plan", metavar="PLAN_JSON", help="or take R from a `jobs plan --json` file")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs.verify.logchecks import render_text, verify

    logdir = Path(args.logdir)
    if not logdir.is_dir():
        raise UsageError(f"LOGDIR {logdir}: not a folder; pass the folder the logs were downloaded to")
    if args.expect_world_size < 1:
        raise UsageError(
            f"--expect-world-size {args.expect_world_size}: use nodes x processes per node (>= 1)"
        )
    if args.size:
        from vmsizes import UnknownSize, describe

        try:
            describe(args.size)
        except UnknownSize as exc:
            raise UsageError(
                f"--size {args.size}: {exc}; use a VM size such as Standard_ND96isr_H100_v5"
            ) from None
    from jobs.ranklogs import rank_logs

    if not rank_logs(logdir)[0]:
        raise UsageError(
            f"LOGDIR {logdir}: no rank logs (user_logs/std_log_process_<N>.txt) below it; pass the folder "
            "`jobs.download(all=True)` (submit --logs DIR/<job name>) or `python -m jobs local --logs` wrote"
        )
    from jobs.scaling import efficiency

    expected = efficiency.expected_rate(args.expect_tokens_per_gpu_s, args.plan)
    first = efficiency.first_run(efficiency.read_run(logdir, "LOGDIR"), expected) if expected else None
    report = verify(logdir, args.expect_world_size, size=args.size, allow_socket=args.allow_socket)
    if args.json:
        out = report.to_json()
        if first is not None:  # a warning: the run is not wrong, the plan may be
            out["throughput"] = asdict(first)
        print(json.dumps(out, indent=2))
    else:
        print("\n".join([render_text(report), *(efficiency.render_first_run(first) if first else [])]))
    return 0 if report.ok else 1
