"""`python -m jobs submit KIND ...`: create the job, follow it, stream rank 0, download all logs, verify.

Exit codes (docs/jobs.md "Exit codes"; azureml-examples run-job.sh's, except that its 2 is 5 here): 0
completed and
verified, 1 failed or not verified, 2 bad input, 3 create failed, 4 status query failed, 5 another terminal
state (Canceled, NotResponding, Paused).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from jobs.errors import UsageError, fail, guarded


def register(subparsers: argparse._SubParsersAction) -> None:
    from jobs.jobargs import add_follow_args, add_job_args
    from jobs.userjob import add_file_args

    p = subparsers.add_parser(
        "submit",
        help="submit a job, follow it, download its logs and verify",
        description=__doc__,
        allow_abbrev=False,
    )
    add_job_args(p)
    add_file_args(p)
    p.add_argument(
        "--wait",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="follow the job to a terminal state (default); --no-wait returns after create",
    )
    add_follow_args(
        p,
        logs_help="download all ranks' logs to DIR/<job name> (default ./job-logs; created if missing)",
        json_help="print a JSON summary on stdout",
    )
    p.set_defaults(func=run)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs import outputs
    from jobs.azure_client import NoCredentials, ml_client
    from jobs.jobargs import announce
    from jobs.paths import check_out_dir
    from jobs.progress import stderr_console
    from jobs.submit.lifecycle import EXIT_CREATE, submit
    from jobs.userjob import build_any as build

    if not (args.stack or args.outputs):
        raise UsageError("submit needs the workspace: pass --stack NAME or --outputs FILE")
    if not (math.isfinite(args.poll_seconds) and args.poll_seconds > 0):
        raise UsageError(f"--poll-seconds {args.poll_seconds}: must be a finite number above 0, e.g. 10")
    # Before anything is created: a --logs that is a file (or below one) would fail only after the job ran.
    check_out_dir(Path(args.logs), "--logs")
    built = build(args)
    announce(built)
    try:
        ml = ml_client(outputs.load(args.stack, args.outputs))
    except NoCredentials as exc:  # before anything is created: exit 3, create failed
        return fail(str(exc), EXIT_CREATE, args.json, jobs=[])
    console = stderr_console()
    results = []
    for b in built:
        outcome = submit(
            ml,
            b,
            console=console,
            wait=args.wait,
            stream=args.stream,
            logs_root=Path(args.logs),
            poll_s=args.poll_seconds,
            allow_socket=args.allow_socket,
            # the health report and prepdata.py's line below are their verdicts; neither runs NCCL
            verify=b.kind not in ("health", "prepare-data"),
        )
        results.append(outcome)
        if outcome.exit_code != 0:
            break
    summary: dict = {"jobs": [o.to_json() for o in results]}
    code = next((o.exit_code for o in results if o.exit_code), 0)
    if args.kind == "scaling" and code == 0 and args.wait and len(results) == 2:
        from jobs.scaling import efficiency

        try:
            s = efficiency.compare(
                efficiency.read_run(Path(results[0].logs), "1-node logs"),
                efficiency.read_run(Path(results[1].logs), "2-node logs"),
            )
            summary["scaling"] = s.to_json()
            code = 0 if s.ok else 1
        except (UsageError, TypeError) as exc:
            summary["scaling"] = {"error": str(exc)}
            code = 1
    if args.kind == "health" and results:
        from jobs.health import judge

        summary["health"], code = judge.outcome(ml, built[0], results[0], code)
    if args.kind == "prepare-data" and results and args.wait:
        from jobs.prepare_data.job import verdict

        summary["prepare_data"] = verdict(built[0], results[0])
        if code == 0 and summary["prepare_data"]["problems"]:
            code = 1
    summary["exit_code"] = code
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        for o in results:
            line = f"{o.label}: {o.name or '-'} {o.status or 'not created'} (exit {o.exit_code})"
            if o.logs:
                line += f", logs {o.logs}"
            if o.error:
                line += f"; {o.error}"
            print(line)
            if o.failure:  # jobs/run/causes.py
                from jobs.run.causes import failure_lines

                for cause in failure_lines(o.failure):
                    print(f"  {cause}")
            if o.verify:
                print(
                    f"  verify: {'OK' if o.verify['ok'] else 'NOT OK'}, world size {o.verify['world_size']}, "
                    f"transport {o.verify['transport']}"
                )
                for p in o.verify["problems"]:
                    print(f"  problem: {p}")
        if "health" in summary:
            from jobs.health import judge

            print(judge.render_text(summary["health"]))
        if "prepare_data" in summary:
            d = summary["prepare_data"]
            if "tokens" in d:
                print(
                    f"prepare-data: {d['tokens']} tokens from {d['files']} files in {d['shards']} shard(s) "
                    f"of {d['dtype']} (vocabulary {d['vocab_size']}) and meta.json"
                )
            for problem in d["problems"]:
                print(f"  problem: {problem}")
            if code == 0:
                print(f"train on it: python -m jobs submit train ... --data {d['data']}")
        if "scaling" in summary:
            s = summary["scaling"]
            print(f"scaling: {s['error']}" if "error" in s else f"scaling: efficiency {s['efficiency']:.2f}")
            for problem in s.get("problems", []):
                print(f"  problem: {problem}")
    return code
