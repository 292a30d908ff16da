"""`python -m jobs quota --regions r1,r2 (--stack S | --outputs F) [--write FILE] [--json]`: live Azure ML
compute quota per VM family and region, against what the stack's clusters reserve.
Exit 0, 1 when a pool the stack uses is over its limit, 2 bad input, 4 the usage query failed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from jobs.errors import UsageError, error_detail, fail, guarded


def register(subparsers: argparse._SubParsersAction) -> None:
    from jobs.jobargs import add_outputs_args

    p = subparsers.add_parser(
        "quota",
        help="Azure ML quota usage and limits per family and region",
        description=__doc__,
        allow_abbrev=False,
    )
    p.add_argument("--regions", help="comma-separated regions (default: the regions of the stack's clusters)")
    add_outputs_args(p)
    p.add_argument(
        "--write",
        metavar="FILE",
        help="merge the limits into a policy config "
        "(policies/config/<stack>.json) under quota-reservation.quotas",
    )
    p.add_argument("--all", action="store_true", help="also list families with no quota and no use")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs import outputs
    from jobs.azure_client import NoCredentials, ml_client
    from jobs.quota import quotausage

    outs = outputs.load(args.stack, args.outputs)
    if args.regions is not None:
        regions = [r.strip() for r in args.regions.split(",") if r.strip()]
        if not regions:
            raise UsageError("--regions: empty; pass e.g. --regions eastus,westus3")
        from jobs.regions import check_region

        regions = list(dict.fromkeys(check_region(r, "--regions") for r in regions))
    else:
        regions = sorted({c.region for c in outs.clusters.values()}) or [outs.workspace_region]
    # Check the --write target before the live query: a folder, non-UTF-8 or unwritable file is exit 2.
    config = quotausage.read_policy_config(Path(args.write)) if args.write else None
    try:
        ml = ml_client(outs)
    except NoCredentials as exc:
        return fail(str(exc), 4, args.json, regions=regions, usages=[], over=[], written=None)
    from jobs.progress import stderr_console

    try:
        with stderr_console().status(f"reading Azure ML usage in {', '.join(regions)}"):
            rows = quotausage.fetch(ml, regions)
    except Exception as exc:
        return fail(
            f"usage query failed: {error_detail(exc)}",
            4,
            args.json,
            regions=regions,
            usages=[],
            over=[],
            written=None,
        )
    quotausage.attach_stack(rows, outs)
    if args.write:
        quotausage.write_policy_config(Path(args.write), rows, config)
    over = [r for r in rows if r.stack_vcpus is not None and r.stack_vcpus > r.limit]
    if args.json:
        print(
            json.dumps(
                {
                    "regions": regions,
                    "usages": quotausage.to_json(rows),
                    "over": [r.name for r in over],
                    "written": args.write,
                },
                indent=2,
            )
        )
    else:
        print(quotausage.render_text(rows, only_used=not args.all), end="")
        for r in over:
            print(
                f"over: {r.region} {r.name}: the stack reserves {r.stack_vcpus} vCPUs, the limit is {r.limit}"
            )
        if args.write:
            print(f"wrote quota-reservation.quotas into {args.write}")
    return 1 if over else 0
