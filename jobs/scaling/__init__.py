"""`python -m jobs scaling ONE_NODE_LOGS TWO_NODE_LOGS [--json]` or `--jobs NAME1 NAME2 --stack S`:
efficiency = throughput(2 nodes) / (2 x throughput(1 node)). Exit 0 at or above 0.75, 1 below, 2 bad input.
With --expect-tokens-per-gpu-s (or --plan), each run's tokens/s per GPU is checked against the plan's (a
warning beyond 20 percent, never a failure)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from jobs.errors import EXIT_QUERY, UsageError, error_detail, fail, guarded


def register(subparsers: argparse._SubParsersAction) -> None:
    from jobs.jobargs import add_outputs_args

    p = subparsers.add_parser(
        "scaling",
        help="scaling efficiency of a 1-node and a 2-node training run",
        description=__doc__,
        allow_abbrev=False,
    )
    p.add_argument(
        "logdirs", nargs="*", metavar="LOGDIR", help="the 1-node run's logs, then the 2-node run's"
    )
    p.add_argument(
        "--jobs",
        nargs=2,
        metavar=("ONE_NODE_JOB", "TWO_NODE_JOB"),
        help="download two submitted jobs' logs instead (needs --stack or --outputs)",
    )
    add_outputs_args(p)
    p.add_argument("--logs", metavar="DIR", default="job-logs", help="where --jobs downloads to")
    p.add_argument(
        "--expect-tokens-per-gpu-s",
        type=float,
        metavar="R",
        help="the plan's tokens/s per GPU: warn when a run's measured rate is more than 20%% off",
    )
    p.add_argument("--plan", metavar="PLAN_JSON", help="or take R from a `jobs plan --json` file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs.scaling import efficiency

    expected = efficiency.expected_rate(args.expect_tokens_per_gpu_s, args.plan)
    if args.jobs and args.logdirs:
        raise UsageError("pass either two LOGDIRs or --jobs NAME1 NAME2, not both")
    if args.jobs:
        from jobs import outputs, ranklogs
        from jobs.azure_client import NoCredentials, ml_client
        from jobs.paths import check_out_dir
        from jobs.progress import stderr_console

        check_out_dir(Path(args.logs), "--logs")
        try:
            ml = ml_client(outputs.load(args.stack, args.outputs))
        except NoCredentials as exc:  # Azure could not be asked: exit 4 (docs/jobs.md "Exit codes"), as audit
            return fail(str(exc), EXIT_QUERY, args.json)
        dirs = []
        for name in args.jobs:
            try:
                dirs.append(ranklogs.download(ml, name, Path(args.logs) / name, stderr_console()))
            except Exception as exc:
                message = f"--jobs {name}: cannot download its logs ({error_detail(exc)}); is it finished?"
                return fail(message, EXIT_QUERY, args.json)
    elif len(args.logdirs) == 2:
        dirs = [Path(d) for d in args.logdirs]
    else:
        raise UsageError("pass two LOGDIRs (the 1-node run, then the 2-node run) or --jobs NAME1 NAME2")
    for d in dirs:
        if not d.is_dir():
            raise UsageError(f"LOGDIR {d}: not a folder")
    runs = efficiency.read_run(dirs[0], "1-node LOGDIR"), efficiency.read_run(dirs[1], "2-node LOGDIR")
    result = efficiency.compare(*runs)
    checks = [efficiency.first_run(r, expected) for r in runs] if expected else []
    if args.json:
        out = result.to_json()
        if checks:
            out["throughput"] = [asdict(c) for c in checks]
        print(json.dumps(out, indent=2))
    else:
        lines = [efficiency.render_text(result)]
        for c in checks:
            lines += efficiency.render_first_run(c)
        print("\n".join(lines))
    return 0 if result.ok else 1
