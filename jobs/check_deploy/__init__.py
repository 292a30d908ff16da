"""`python -m jobs check-deploy (--stack S | --outputs F) [--json]`: are the deployed clusters what the stack
says? Reads each cluster live (azure-ai-ml `compute.get`) and compares size, priority, SSH, subnet, node
public IP, region and scale settings with the stack outputs; a live cluster the stack does not declare is a
note, and so is a cluster whose size Azure ML no longer lists in its region (`az ml compute list-sizes`).
Exit 0 all match, 1 a cluster differs, is missing or is not settled, 2 bad input, 4 no credentials or a
query failed."""

from __future__ import annotations

import argparse
import json
import sys

from jobs.errors import UsageError, error_detail, fail, guarded

EXIT_QUERY = 4


def register(subparsers: argparse._SubParsersAction) -> None:
    from jobs.jobargs import add_outputs_args

    p = subparsers.add_parser(
        "check-deploy",
        help="compare the live clusters with the stack outputs (run it after pulumi up)",
        description=__doc__,
        allow_abbrev=False,
    )
    add_outputs_args(p)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout, also on failure")
    p.set_defaults(func=run)


def _empty(**more: object) -> dict[str, object]:
    return {"clusters": [], "mismatches": [], "extra_clusters": [], **more}


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs import outputs
    from jobs.azure_client import NoCredentials, ml_client
    from jobs.check_deploy import drift

    outs = outputs.load(args.stack, args.outputs)
    origin = f"--stack {args.stack}" if args.stack else f"--outputs {args.outputs}"
    stale = sorted(name for name, c in outs.clusters.items() if not c.network_fields_exported())
    if stale:
        raise UsageError(
            f"{origin}: the outputs of cluster(s) {', '.join(stale)} carry no subnet_id/node_public_ip "
            "(exported by an older version of the stack program); run `pulumi up` once to export them, "
            "then `pulumi stack output --json` again"
        )
    where = drift.Where(args.stack or "<stack>", outs.resource_group, outs.workspace_name)
    try:
        ml = ml_client(outs)
    except NoCredentials as exc:
        return fail(str(exc), EXIT_QUERY, args.json, **_empty())
    from azure.core.exceptions import ResourceNotFoundError

    def get(name: str) -> object | None:
        try:
            return ml.compute.get(name)
        except ResourceNotFoundError:
            return None

    def progress(line: str) -> None:
        print(f"check-deploy: {line}", file=sys.stderr, flush=True)

    def list_sizes(region: str) -> list[str]:
        return [s.name for s in ml.compute.list_sizes(location=region, compute_type="amlcompute")]

    try:
        report = drift.check(outs, get, ml.compute.list, where, progress, list_sizes)
    except Exception as exc:
        return fail(f"compute query failed: {error_detail(exc)}", EXIT_QUERY, args.json, **_empty())
    if args.json:
        print(json.dumps(drift.to_json(report), indent=2))
    else:
        print(drift.render_text(report, where))
    return report.exit_code
