"""`python -m jobs plan --tokens T --tokens-per-gpu-s R --gpus G [...] [--json]`: hours, nodes, quota, cost,
checkpoint interval. Exit 0, or 2 on bad input."""

from __future__ import annotations

import argparse
import json

from jobs.errors import guarded


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "plan",
        help="hours, nodes, quota, cost and checkpoint interval of a run",
        description=__doc__,
        allow_abbrev=False,
    )
    p.add_argument("--tokens", type=float, required=True, help="tokens to train on, e.g. 2.0e9")
    p.add_argument("--tokens-per-gpu-s", type=float, required=True, help="measured tokens/s per GPU")
    p.add_argument("--gpus", type=int, required=True)
    p.add_argument("--goodput", type=float, default=0.85, help="useful fraction of wall time (default 0.85)")
    p.add_argument("--size", metavar="VM_SIZE", help="VM size: nodes and the quota family")
    p.add_argument("--region", help="Azure region of the quota pools")
    p.add_argument("--tier", choices=("dedicated", "low_priority"), default="dedicated")
    p.add_argument("--price-per-node-hour", type=float, metavar="P", help="price of one node-hour")
    p.add_argument("--checkpoint-seconds", type=float, metavar="C", help="seconds to write one checkpoint")
    p.add_argument("--mtbf-hours", type=float, metavar="M", help="mean hours between failures of the job")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs.runplan import plan, render_text

    p = plan(
        args.tokens,
        args.tokens_per_gpu_s,
        args.gpus,
        args.goodput,
        size=args.size,
        price_per_node_hour=args.price_per_node_hour,
        checkpoint_seconds=args.checkpoint_seconds,
        mtbf_hours=args.mtbf_hours,
        region=args.region,
        tier=args.tier,
    )
    print(json.dumps(p.to_json(), indent=2) if args.json else render_text(p))
    return 0
