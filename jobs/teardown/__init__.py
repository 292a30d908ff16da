"""`python -m jobs teardown (--stack S | --outputs F) --yes [--json]`: before `pulumi destroy` of a disposable
stack, permanently delete its Azure ML workspace and delete and purge its key vault, so `pulumi up` can create
both names again the same day. Refuses (exit 2, nothing deleted) without --yes, for a key vault with purge
protection (prod), and for outputs without the key vault facts. Exit 0 done, 2 refused or bad input, 4 no
credentials or an Azure call failed (the report says which steps were done; running it again continues)."""

from __future__ import annotations

import argparse
import json
import sys

from jobs.errors import UsageError, error_detail, fail, guarded


def register(subparsers: argparse._SubParsersAction) -> None:
    from jobs.jobargs import add_outputs_args

    p = subparsers.add_parser(
        "teardown",
        help="free a disposable stack's workspace and key vault names (run it before pulumi destroy)",
        description=__doc__,
        allow_abbrev=False,
    )
    add_outputs_args(p)
    p.add_argument(
        "--yes", action="store_true", help="confirm: the workspace and the key vault cannot be recovered"
    )
    p.add_argument("--json", action="store_true", help="one JSON object on stdout, also on failure")
    p.set_defaults(func=run)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs import outputs
    from jobs.azure_client import NoCredentials, arm_client, ml_client
    from jobs.teardown import purge

    outs = outputs.load(args.stack, args.outputs)
    origin = f"--stack {args.stack}" if args.stack else f"--outputs {args.outputs}"
    purge.refuse(outs, origin, args.yes)
    report = purge.new_report(outs, args.stack or "<stack>")

    def partial() -> dict[str, object]:
        body = report.to_json()
        return {k: body[k] for k in ("stack", "workspace", "key_vault")}

    def progress(line: str) -> None:
        print(f"teardown: {line}", file=sys.stderr, flush=True)

    try:
        ml = ml_client(outs)
    except NoCredentials as exc:
        return fail(str(exc), purge.EXIT_AZURE, args.json, **partial())
    try:
        purge.run(outs, report.stack, ml, arm_client(ml), progress, report)
    except UsageError:
        raise
    except Exception as exc:
        message = (
            f"{error_detail(exc)}; the report shows the steps done so far; run the same command "
            "again to continue"
        )
        return fail(message, purge.EXIT_AZURE, args.json, **partial())
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(purge.render_text(report))
    return purge.EXIT_OK
