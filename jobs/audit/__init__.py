"""`python -m jobs audit (--stack S | --outputs F) [--days 30] [--prices FILE] [--json]`: quota each
cluster holds while idle, its last job, and with a price file (--prices, $AZML_GPU_PRICES) what its idle
timer costs per job; flags clusters unused for --days (never one created less than --days ago). Exit 0, 1
when a cluster is flagged, 2 bad input, 4 the job or compute list query failed."""

from __future__ import annotations

import argparse
import datetime as dt
import json

from jobs.errors import UsageError, error_detail, fail, guarded


def register(subparsers: argparse._SubParsersAction) -> None:
    from jobs.jobargs import add_outputs_args

    p = subparsers.add_parser(
        "audit",
        help="clusters' idle quota and last job; flags unused ones",
        description=__doc__,
        allow_abbrev=False,
    )
    add_outputs_args(p)
    p.add_argument("--days", type=int, default=30, help="flag clusters with no job for this many days")
    p.add_argument(
        "--prices", metavar="FILE", help="price the clusters from this file (default $AZML_GPU_PRICES)"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs import outputs
    from jobs.audit import idleclusters
    from jobs.azure_client import NoCredentials, ml_client
    from vmsizes import prices

    problems = [f"--days {args.days}: use 1 or more"] if args.days < 1 else []
    table, where = None, prices.locate(args.prices)
    if where is not None:
        try:
            table = prices.load(where)
        except prices.PriceFileError as exc:
            problems.append(f"{'--prices' if args.prices else prices.ENV}: {exc}")
    if problems:
        raise UsageError("; ".join(problems))
    outs = outputs.load(args.stack, args.outputs)
    from jobs.progress import stderr_console

    try:
        ml = ml_client(outs)
    except NoCredentials as exc:
        return fail(str(exc), 4, args.json, clusters=[], unused=[], days=args.days)
    try:
        with stderr_console().status(f"listing jobs and clusters in workspace {outs.workspace_name}"):
            what = "job list"
            jobs = idleclusters.fetch_jobs(ml)
            what = "compute list"
            computes = idleclusters.fetch_computes(ml)
    except Exception as exc:
        return fail(
            f"{what} query failed: {error_detail(exc)}",
            4,
            args.json,
            clusters=[],
            unused=[],
            days=args.days,
        )
    created = idleclusters.created_times(computes)
    rows = idleclusters.audit(outs, jobs, dt.datetime.now(dt.UTC), args.days, created, table)
    if args.json:
        print(
            json.dumps(
                {
                    "clusters": idleclusters.to_json(rows),
                    "unused": [r.cluster for r in rows if r.unused],
                    "days": args.days,
                    "prices": table.describe() if table is not None else None,
                },
                indent=2,
            )
        )
    else:
        print(idleclusters.render_text(rows))
        print(table.describe() if table is not None else "prices: none (--prices FILE or AZML_GPU_PRICES)")
    return 1 if any(r.unused for r in rows) else 0
