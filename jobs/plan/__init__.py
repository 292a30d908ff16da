"""`python -m jobs plan --tokens T --tokens-per-gpu-s R --gpus G [--size S --region R --tier T] [--model 8B]
[...] [--json]`: hours, nodes, quota, cost (the price from the price file, --prices or $AZML_GPU_PRICES), the
restart tax on low-priority or Spot, price per useful node-hour, checkpoint interval, and whether the model
fits a GPU under DDP and FSDP. Exit 0, or 2 on bad input."""

from __future__ import annotations

import argparse
import json
import math

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
    p.add_argument(
        "--tier",
        choices=("dedicated", "low-priority", "spot", "low_priority"),
        default="dedicated",
        help="dedicated (default), low-priority or spot: the quota pool and the price meter",
    )
    p.add_argument(
        "--prices", metavar="FILE", help="the price file (`jobs prices --refresh`; default $AZML_GPU_PRICES)"
    )
    p.add_argument(
        "--price-per-node-hour",
        type=float,
        metavar="P",
        help="price of one node-hour (instead of the file's)",
    )
    p.add_argument(
        "--preemptions-per-node-hour",
        type=float,
        metavar="R",
        help="low-priority/spot: your assumption of how often a node is taken back (the restart tax)",
    )
    p.add_argument(
        "--checkpoint-interval-minutes",
        type=float,
        metavar="I",
        help="minutes between checkpoints (default: the Young/Daly interval of --checkpoint-seconds)",
    )
    p.add_argument(
        "--restart-minutes", type=float, default=0.0, metavar="S", help="minutes a restart takes (default 0)"
    )
    p.add_argument("--checkpoint-seconds", type=float, metavar="C", help="seconds to write one checkpoint")
    p.add_argument("--mtbf-hours", type=float, metavar="M", help="mean hours between failures of the job")
    p.add_argument("--model", help="train.py's model preset whose memory to check: tiny, small, 1B, 3B, 8B")
    p.add_argument("--params", type=float, metavar="N", help="or the model's parameter count, e.g. 8.03e9")
    p.add_argument("--gpu-memory-gib", type=float, metavar="G", help="memory of one GPU (default: --size's)")
    p.add_argument("--seq-len", type=int, metavar="S", help="with --model: sequence length, adds activations")
    p.add_argument("--micro-batch", type=int, default=1, metavar="B", help="sequences per GPU per micro-step")
    p.add_argument("--activation-checkpointing", choices=("none", "selective", "full"), default="none")
    p.add_argument("--peak-tflops", type=float, metavar="T", help="peak per GPU for MFU (default H100 SXM)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs.errors import UsageError
    from jobs.payload.llamaconfig import PRESETS, param_count
    from jobs.plan.runplan import plan, render_text

    if args.model is not None and args.params is not None:
        raise UsageError("--model and --params both give the model's size; pass one")
    if args.model is not None and args.model not in PRESETS:
        raise UsageError(f"--model {args.model}: not a preset; choose one of {', '.join(PRESETS)}")
    if args.params is not None and not math.isfinite(args.params):
        raise UsageError(f"--params {args.params}: not a finite number; pass a count such as 8.03e9")
    from vmsizes import prices as price_file

    table = None
    where = price_file.locate(args.prices)
    if where is not None:
        try:
            table = price_file.load(where)
        except price_file.PriceFileError as exc:
            named = "--prices" if args.prices else price_file.ENV
            raise UsageError(f"{named}: {exc}") from None
    params = (
        param_count(PRESETS[args.model]) if args.model else None if args.params is None else int(args.params)
    )
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
        params=params,
        gpu_memory_gib=args.gpu_memory_gib,
        prices=table,
        preemptions_per_node_hour=args.preemptions_per_node_hour,
        checkpoint_interval_minutes=args.checkpoint_interval_minutes,
        restart_minutes=args.restart_minutes,
    )
    extra: list[str] = []
    out = p.to_json()
    if args.seq_len is not None:  # activations on top of the model states (jobs/plan/activations.py)
        from jobs.plan.activations import fit

        if args.model is None or p.memory is None:
            raise UsageError("--seq-len needs --model (its shape) and --size or --gpu-memory-gib")
        act, extra = fit(p.memory, PRESETS[args.model], args.model, args.seq_len, args.micro_batch,
                         args.activation_checkpointing, args.tokens_per_gpu_s, args.peak_tflops)  # fmt: skip
        out["activations"] = act.to_json()
    print(json.dumps(out, indent=2) if args.json else "\n".join([render_text(p), *extra]))
    return 0
