"""`python -m jobs run KIND ...`: a managed run. Submits the job, follows it, and when it ends from an
infrastructure cause (preemption, a lost node, an NCCL timeout, a lost heartbeat, a SIGTERM) resubmits it
with the same flags, so a train job resumes from its newest complete checkpoint; a failure of the user's
code stops at once. Before the first job: the quota check. Every attempt goes to a ledger, printed under
--json and written to LOGS/run-<run name or kind>.ledger.json.

Exit codes: 0 completed and verified; 1 failed (user code, not verified, restarts or --max-hours used up);
2 bad input; 3 the job's nodes do not fit the quota (numbers in the message) or create failed;
4 status query failed; 5 canceled or paused.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from jobs.errors import UsageError, fail, guarded

# Its logic, beside it: `causes` says why an attempt ended, `ledger` records attempts, `precheck` reads quota
# and the cluster's allocation before a job is created (`clustercheck`: is the cluster there at all), `loop`
# ties them to `jobs.submit.lifecycle.submit`.

EXIT_QUOTA = 3


def register(subparsers: argparse._SubParsersAction) -> None:
    from jobs.jobargs import add_follow_args, add_job_args
    from jobs.userjob import add_file_args

    p = subparsers.add_parser(
        "run",
        help="submit a job and resubmit it after infrastructure failures until it completes",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    add_job_args(p)
    add_file_args(p)
    r = p.add_argument_group("managed run")
    r.add_argument(
        "--max-restarts",
        type=int,
        default=10,
        metavar="N",
        help="resubmit at most N times after infrastructure failures (default 10)",
    )
    r.add_argument(
        "--max-hours", type=float, metavar="H", help="give up once H hours have passed (waits included)"
    )
    r.add_argument(
        "--backoff-seconds",
        type=float,
        default=30.0,
        metavar="S",
        help="wait S seconds before the first resubmit, doubling each time up to 600 (default 30)",
    )
    r.add_argument(
        "--no-quota-check",
        action="store_true",
        help="skip reading quota before the first job (the check needs compute usage read rights)",
    )
    add_follow_args(
        p,
        logs_help="logs of each job in DIR/<job name>, the ledger in DIR (default ./job-logs)",
        json_help="print the ledger as JSON on stdout",
    )
    p.set_defaults(func=run)


def _check_flags(args: argparse.Namespace) -> None:
    if not (args.stack or args.outputs):
        raise UsageError("run needs the workspace: pass --stack NAME or --outputs FILE")
    if args.kind == "health":  # resubmitting would hide the failing node the check exists to report
        raise UsageError("run health: a health check is not resubmitted; use `python -m jobs submit health`")
    if args.kind == "prepare-data":  # a rerun over a partial output would find shards there and refuse
        raise UsageError(
            "run prepare-data: data preparation is not resubmitted; use `python -m jobs submit prepare-data`"
        )
    if args.max_restarts < 0:
        raise UsageError(f"--max-restarts {args.max_restarts}: must be 0 or more, e.g. 10")
    if args.max_hours is not None and not (math.isfinite(args.max_hours) and args.max_hours > 0):
        raise UsageError(f"--max-hours {args.max_hours}: must be a number above 0, e.g. 24")
    if not (math.isfinite(args.backoff_seconds) and args.backoff_seconds >= 0):
        raise UsageError(f"--backoff-seconds {args.backoff_seconds}: 0 or more, e.g. 30")
    if not (math.isfinite(args.poll_seconds) and args.poll_seconds > 0):
        raise UsageError(f"--poll-seconds {args.poll_seconds}: must be a finite number above 0, e.g. 10")


def _where(args: argparse.Namespace, outs) -> tuple[str, str, str | None]:
    """(region, tier, cluster) of the job the flags describe."""
    if args.cluster:
        c = outs.clusters.get(args.cluster)
        if c is not None:
            return c.region, c.tier, c.name
    return outs.workspace_region, "spot" if args.spot else "dedicated", None


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs import outputs
    from jobs.azure_client import NoCredentials, ml_client
    from jobs.jobargs import announce
    from jobs.paths import check_out_dir
    from jobs.progress import stderr_console
    from jobs.run import clustercheck, precheck
    from jobs.run.ledger import Ledger
    from jobs.run.loop import Policy, managed
    from jobs.userjob import build_any as build

    _check_flags(args)
    logs = Path(args.logs)
    check_out_dir(logs, "--logs")
    built = build(args)  # validates every flag before anything is read or created
    announce(built)
    outs = outputs.load(args.stack, args.outputs)
    try:
        ml = ml_client(outs)
    except NoCredentials as exc:  # nothing was created: exit 3, as submit's create failed
        return fail(str(exc), EXIT_QUOTA, args.json, ledger=None)
    console = stderr_console()
    region, tier, cluster = _where(args, outs)
    if missing := clustercheck.absent(ml, outs, cluster):  # before the quota check and any upload
        return fail(missing, EXIT_QUOTA, args.json, ledger=None)
    quota = None
    if not args.no_quota_check:
        with console.status(f"reading Azure ML quota in {region}"):
            # the largest of the jobs (scaling: its 2-node job) must fit
            check = precheck.check_quota(ml, max(built, key=lambda b: b.nodes), region, tier, cluster)
        quota = check.to_json()
        if not check.checked:
            console.log(f"warning: quota not checked ({check.error}); submitting anyway", markup=False)
        elif not check.fits:
            return fail(
                f"the job's nodes do not fit the quota: {check.message()}; free quota (delete idle "
                "clusters, lower max_instances elsewhere) or request more (`python -m jobs quota`)",
                EXIT_QUOTA,
                args.json,
                quota=quota,
                ledger=None,
            )
    if line := precheck.allocation(ml, cluster):
        console.log(line, markup=False)
    name = args.run_name or args.kind
    policy = Policy(args.max_restarts, args.max_hours, args.backoff_seconds)
    submit_kwargs = {
        "wait": True,
        "stream": args.stream,
        "logs_root": logs,
        "poll_s": args.poll_seconds,
        "allow_socket": args.allow_socket,
        "waiting_note": (lambda: precheck.allocation(ml, cluster)) if cluster else None,
    }
    ledgers, code = [], 0
    for i, first in enumerate(built):
        label = first.label
        ledger = Ledger(
            run=name if len(built) == 1 else f"{name}-{label}",
            kind=args.kind,
            max_restarts=args.max_restarts,
            max_hours=args.max_hours,
        )
        path = logs / f"run-{ledger.run}.ledger.json"
        code = managed(
            ml, lambda i=i: build(args)[i], ledger, path, policy, console=console, submit_kwargs=submit_kwargs
        )
        ledgers.append(ledger)
        if code:
            break
    if args.json:
        print(
            json.dumps(
                {
                    "ok": code == 0,
                    "exit_code": code,
                    "quota": quota,
                    "ledgers": [lg.to_json() for lg in ledgers],
                },
                indent=2,
            )
        )
    else:
        for lg in ledgers:
            data = lg.to_json()
            print(
                f"{lg.run}: {lg.outcome} after {len(lg.attempts)} attempt(s), {data['restarts']} "
                f"restart(s), {data['time_lost_s']:.0f} s lost; ledger {lg.path}"
            )
            for a in data["attempts"]:
                print(
                    f"  {a['attempt']}. {a['job']} {a['status']}: {a['cause']}, steps {a['start_step']}->"
                    f"{a['last_step']}, {a['time_lost_s']:.0f} s lost"
                )
                if a.get("failure"):  # jobs/run/causes.py
                    from jobs.run.causes import failure_lines

                    for cause in failure_lines(a["failure"]):
                        print(f"     {cause}")
    return code
