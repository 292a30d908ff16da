"""`python -m jobs local {smoke,train,health}`: run a job script here as Azure ML would on a cluster.

    python -m jobs local smoke --nodes 2 --processes-per-node 2 -- --expect-world-size 4
    python -m jobs local train --nodes 1 --processes-per-node 2 --logs out -- --steps 100 --ckpt out/ckpt

Starts nodes x processes-per-node processes of jobs/payload/<script>.py with Azure ML's PyTorch distribution
variables (see jobs/local/launcher.py); logs land in <logs>/user_logs/std_log_process_<rank>.txt, the layout
of an Azure ML job's logs (docs/reference/platform-notes.md, "Logs").
Exit code: the job's (0 only when every rank exited 0); 2 for bad flags; 130 when interrupted here.
`--procs-per-node` is the old name of `--processes-per-node` (one name in every command), still accepted.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from jobs.builders import SRC_DIR as SRC  # the payload folder, one home
from jobs.errors import UsageError, guarded
from jobs.jobargs import add_processes_per_node

SCRIPTS = ("smoke", "train", "health")

MAX_PROCS = 256


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "local",
        help="run smoke.py, train.py or health.py here with Azure ML's distributed environment",
        description=__doc__.split("\n")[0],
    )
    scripts = p.add_subparsers(dest="script", required=True, metavar="{smoke,train,health}")
    for name in SCRIPTS:
        s = scripts.add_parser(
            name,
            help=f"jobs/payload/{name}.py",
            description=f"Run jobs/payload/{name}.py as nodes x processes-per-node local processes.",
            epilog=f"Script arguments go after `--` (python jobs/payload/{name}.py --help lists them).",
        )
        s.add_argument("--nodes", type=int, default=1, help="simulated nodes (instance_count), default 1")
        add_processes_per_node(
            s, default=1, help="processes per node (process_count_per_instance), default 1"
        )
        s.add_argument("--logs", type=Path, help="folder for user_logs/ (default: a new temporary folder)")
        s.add_argument(
            "--grace", type=float, default=10.0, help="seconds from SIGTERM to SIGKILL (default 10)"
        )
        s.add_argument(
            "--json", action="store_true", help="print a JSON summary on stdout (rank 0 not streamed)"
        )
        s.add_argument(
            "--sigterm-at",
            metavar="STEP|random",
            help="drill: SIGTERM one rank at the first logged step >= STEP (jobs/local/rankdrill.py)",
        )
        s.add_argument("--sigterm-rank", type=int, default=0, metavar="R", help="the rank the drill signals")
        s.add_argument("--seed", type=int, default=0, help="seed of --sigterm-at random")
        s.add_argument("script_args", nargs=argparse.REMAINDER, help="-- then the script's own arguments")
        s.set_defaults(func=run)


def _usage_error(msg: str) -> int:
    raise UsageError(msg)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs.local.launcher import CANCELLED
    from jobs.local.launcher import run as launch_run

    for flag in ("nodes", "processes_per_node"):
        if getattr(args, flag) < 1:
            return _usage_error(f"--{flag.replace('_', '-')} must be at least 1 (got {getattr(args, flag)})")
    if args.nodes * args.processes_per_node > MAX_PROCS:
        return _usage_error(
            f"--nodes x --processes-per-node is {args.nodes * args.processes_per_node}; at most "
            f"{MAX_PROCS} processes run on one machine"
        )
    if args.grace < 0:
        return _usage_error(f"--grace must be 0 or more (got {args.grace})")
    script_args = list(args.script_args)
    if script_args[:1] == ["--"]:
        script_args = script_args[1:]
    if args.logs is not None and args.logs.exists() and not args.logs.is_dir():
        return _usage_error(f"--logs {args.logs} is a file; pass a folder")

    drill = None
    if args.sigterm_at is not None:
        from jobs.local.rankdrill import SigtermAt, parse_at

        try:
            drill = SigtermAt(args.sigterm_rank, parse_at(args.sigterm_at), args.seed)
        except ValueError as exc:
            return _usage_error(str(exc))
        if not 0 <= args.sigterm_rank < args.nodes * args.processes_per_node:
            return _usage_error(
                f"--sigterm-rank {args.sigterm_rank}: the job has ranks 0.."
                f"{args.nodes * args.processes_per_node - 1}"
            )
    stop = threading.Event()

    def cancel(signum: int, frame: object) -> None:
        stop.set()

    previous = {s: signal.signal(s, cancel) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        result = launch_run(
            [sys.executable, str(SRC / f"{args.script}.py"), *script_args],
            args.nodes,
            args.processes_per_node,
            args.logs,
            stream_rank0=not args.json,
            stop_event=stop,
            grace_s=args.grace,
            on_start=drill.start if drill else None,
        )
    finally:
        if drill:
            drill.stop()
        for s, h in previous.items():
            signal.signal(s, h)
    if args.json:
        print(
            json.dumps(
                {
                    "script": args.script,
                    "nodes": args.nodes,
                    "processes_per_node": args.processes_per_node,
                    **result.to_json(),
                    **(
                        {
                            "drill": {
                                "rank": drill.rank,
                                "target_step": drill.target,
                                "sigterm_at_step": drill.sent_at_step,
                            }
                        }
                        if drill
                        else {}
                    ),
                },
                indent=2,
            )
        )
    elif result.exit_code == CANCELLED:
        print(f"[jobs local] interrupted; logs in {result.logs_dir / 'user_logs'}", file=sys.stderr)
    return result.exit_code
