"""The flags shared by `render` and `submit`: which job, where it runs, and its shape."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jobs.builders import BuiltJob

KINDS = ("smoke", "train", "scaling", "health", "prepare-data")


class DeprecatedAlias(argparse.Action):
    """An old spelling of a flag: sets the same value as the new one and says, on stderr, to use the new one.
    Hidden from --help, so every command shows one name per concept."""

    def __init__(self, option_strings: list[str], dest: str, *, new: str, **kwargs: Any) -> None:
        self.new = new
        kwargs.setdefault("help", argparse.SUPPRESS)
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print(
            f"{parser.prog}: warning: {option_string} is deprecated and will be removed; use {self.new}",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_processes_per_node(p: argparse.ArgumentParser, *, default: int | None, help: str) -> None:
    """`--processes-per-node N`, the one name of Azure ML's process_count_per_instance in every command
    (render, submit, run, local); `--procs-per-node` is `jobs local`'s old spelling, kept as an alias."""
    p.add_argument("--processes-per-node", type=int, default=default, metavar="N", help=help)
    p.add_argument(
        "--procs-per-node",
        dest="processes_per_node",
        type=int,
        metavar="N",
        action=DeprecatedAlias,
        new="--processes-per-node",
        default=argparse.SUPPRESS,
    )


def add_outputs_args(p: argparse.ArgumentParser, required: bool = True) -> None:
    g = p.add_argument_group("stack outputs (one of)")
    g.add_argument("--stack", metavar="NAME", help="read `pulumi stack output --json --stack NAME`")
    g.add_argument("--outputs", metavar="FILE", help="read the same JSON from FILE")


def add_job_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "kind",
        choices=KINDS,
        help="smoke: NCCL smoke test; train: training run; scaling: the training benchmark at 1 and 2 nodes; "
        "health: per-node GPU and InfiniBand checks against the size's levels; prepare-data: text to token "
        "shards (jobs/payload/prepdata.py) on one node, written to data/RUN_NAME/ on workspaceblobstore",
    )
    add_outputs_args(p)
    w = p.add_argument_group("compute")
    w.add_argument("--cluster", metavar="NAME", help="a cluster from the stack outputs")
    w.add_argument("--serverless", action="store_true", help="serverless compute (needs --size)")
    w.add_argument(
        "--size", metavar="VM_SIZE", help="VM size for --serverless, e.g. Standard_ND96isr_H100_v5"
    )
    w.add_argument("--spot", action="store_true", help="serverless Spot tier (queue_settings job_tier Spot)")
    s = p.add_argument_group("shape")
    s.add_argument(
        "--nodes", type=int, help="instance_count (smoke: 2, capped by the cluster's max; train: 1)"
    )
    add_processes_per_node(
        s, default=None, help="process_count_per_instance (default: the size's GPUs per node)"
    )
    s.add_argument(
        "--allow-tcp",
        action="store_true",
        help="allow a multi-node job on a size without usable RDMA (NCCL over TCP)",
    )
    s.add_argument(
        "--environment", metavar="ENV", help="environment (default: the curated ACPT PyTorch GPU image)"
    )
    s.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a job setting (jobs/settings.py): timeout=SECONDS, shm_size=64g, env.NAME=VALUE",
    )
    h = p.add_argument_group("health").add_mutually_exclusive_group()
    h.add_argument(
        "--quick",
        dest="health_mode",
        action="store_const",
        const="quick",
        help="health: few iterations per measurement (default; about 2 min on 2 nodes)",
    )
    h.add_argument(
        "--full",
        dest="health_mode",
        action="store_const",
        const="full",
        help="health: nccl-tests' 5 warmup + 20 timed iterations, larger copies",
    )
    d = p.add_argument_group("prepare-data")
    d.add_argument(
        "--text", metavar="ASSET", help="the text (uri_folder): azureml:NAME@latest or a folder URI"
    )
    d.add_argument(
        "--tokenizer",
        metavar="ASSET",
        help="the model folder with tokenizer.json (uri_folder): azureml:NAME@latest or a folder URI",
    )
    t = p.add_argument_group("train / scaling")
    t.add_argument(
        "--run-name",
        metavar="NAME",
        help="train: checkpoint folder ckpt/NAME/ on workspaceblobstore; same name resumes; "
        "prepare-data: the output folder data/NAME/",
    )
    t.add_argument(
        "--data", metavar="ASSET", help="input data (uri_folder): azureml:NAME:VERSION or a folder URI"
    )
    t.add_argument("--steps", type=int)
    t.add_argument("--batch-size", type=int, help="per-GPU batch size (equal in both scaling jobs)")
    t.add_argument("--log-every", type=int)
    # Shown in the usage only: `jobs.cli.main` splits everything after `--` off before argparse runs.
    # default=[] keeps argparse from listing it as required when `kind` is missing.
    p.add_argument(
        "script_args",
        nargs="*",
        default=[],
        metavar="-- SCRIPT_ARGS",
        help="after `--`: more flags for the script (train.py model size such as --n-layer 20 "
        "--n-embd 2048; smoke.py --max-bytes 4G); see docs/job-scripts.md",
    )


def build(args: argparse.Namespace) -> list[BuiltJob]:
    """The job(s) the flags describe, validated, with their settings (jobs/settings.py); raises UsageError
    with the flag to fix. What the user should know about the shape (a smoke job smaller than asked) is in
    each job's `extra["notes"]`; `announce` prints it."""
    from jobs import builders, outputs
    from jobs.settings import attach

    outs = None
    if args.stack or args.outputs:
        outs = outputs.load(args.stack, args.outputs)
    target = builders.resolve_target(outs, args.cluster, args.serverless, args.size, args.spot)
    built = _build(args, target)
    for b in built:
        attach(b, getattr(args, "set", None) or ())
        b.extra["notes"] = shape_notes(args, target, b)
    return built


#: The smoke job's default node count (jobs/builders.py `smoke`: 2, capped by the cluster's max).
SMOKE_NODES = 2


def shape_notes(args: argparse.Namespace, target: Any, built: BuiltJob) -> list[str]:
    """Why a smoke job runs smaller than its default 2 nodes when --nodes was not given: the cluster's
    max_instances, or a size without usable RDMA and no --allow-tcp (the two caps in `builders.smoke`)."""
    if built.kind != "smoke" or args.nodes is not None or built.nodes >= SMOKE_NODES:
        return []
    where = f"cluster {target.compute}" if target.compute else f"serverless {target.size}"
    if target.max_instances is not None and target.max_instances < SMOKE_NODES:
        why = f"{where} allows {target.max_instances} node (max_instances)"
        fix = "raise the cluster's max_instances to 2 or smoke-test a larger cluster"
    else:
        why = f"{target.size} has no usable RDMA and a multi-node job over TCP needs --allow-tcp"
        fix = "add --allow-tcp to test 2 nodes over TCP"
    lost = "across nodes" if built.processes_per_node > 1 else "across nodes or between GPUs"
    return [
        f"smoke job capped to {built.nodes} node x {built.processes_per_node} "
        f"process{'es' if built.processes_per_node != 1 else ''} (default {SMOKE_NODES} nodes): {why}; "
        f"it checks that a job runs, not NCCL {lost}; to test that, {fix}"
    ]


def announce(built: list[BuiltJob]) -> None:
    """Print each job's notes (`shape_notes`) and warnings (a --file job's --no-checkpoint) on stderr,
    once, before anything is rendered or submitted."""
    for b in built:
        for note in b.extra.get("notes", ()):
            print(f"note: {note}", file=sys.stderr)
        for warning in b.extra.get("warnings", ()):
            print(f"warning: {warning}", file=sys.stderr)


def _build(args: argparse.Namespace, target: Any) -> list[BuiltJob]:
    from jobs import builders
    from jobs.errors import UsageError

    common = {
        "processes": args.processes_per_node,
        "environment": args.environment,
        "allow_tcp": args.allow_tcp,
        "script_args": tuple(args.script_args),
    }
    if args.kind != "health" and getattr(args, "health_mode", None):
        raise UsageError(f"--{args.health_mode} is for health jobs, not {args.kind}; drop it")
    if args.kind == "prepare-data":
        return [_prepare_data(args, target)]
    for flag, value in (("--text", args.text), ("--tokenizer", args.tokenizer)):
        if value is not None:
            raise UsageError(f"{flag} is for prepare-data jobs, not {args.kind}; drop it")
    if args.kind in ("smoke", "health"):
        for flag, value in (
            ("--run-name", args.run_name),
            ("--data", args.data),
            ("--steps", args.steps),
            ("--batch-size", args.batch_size),
            ("--log-every", args.log_every),
        ):
            if value is not None:
                raise UsageError(f"{flag} is for train/scaling jobs, not {args.kind}; drop it")
        if args.kind == "health":
            from jobs.health.build import health

            return [health(target, nodes=args.nodes, mode=args.health_mode or "quick", **common)]
        return [builders.smoke(target, nodes=args.nodes, **common)]
    train_args = {
        "data": args.data,
        "steps": args.steps,
        "batch_size": args.batch_size,
        "log_every": args.log_every,
        **common,
    }
    if args.kind == "train":
        if not args.run_name:
            raise UsageError(
                "train needs --run-name NAME: it fixes the checkpoint folder so a resubmit resumes"
            )
        return [
            builders.train(
                target, run_name=args.run_name, nodes=1 if args.nodes is None else args.nodes, **train_args
            )
        ]
    if args.nodes is not None:
        raise UsageError("--nodes: scaling always runs 1 and 2 nodes; drop --nodes")
    if args.run_name:
        raise UsageError(
            "--run-name: scaling jobs use job-scoped checkpoints so they never resume; drop --run-name"
        )
    return builders.scaling(target, **train_args)


def _prepare_data(args: argparse.Namespace, target: Any) -> BuiltJob:
    """One node, one process (jobs/prepare_data/job.py); train flags and a shape are refused, all at once."""
    from jobs.errors import UsageError
    from jobs.prepare_data import job as prepdatajob

    given = [
        flag
        for flag, value in (
            ("--data", args.data),
            ("--steps", args.steps),
            ("--batch-size", args.batch_size),
            ("--log-every", args.log_every),
            ("--nodes", args.nodes),
            ("--processes-per-node", args.processes_per_node),
        )
        if value is not None
    ]
    if args.allow_tcp:
        given.append("--allow-tcp")
    problems = (
        [
            f"{', '.join(given)}: not for prepare-data (one node, one process; --text is its input); drop "
            + ("it" if len(given) == 1 else "them")
        ]
        if given
        else []
    )
    try:
        built = prepdatajob.build(
            target,
            text=args.text,
            tokenizer=args.tokenizer,
            run_name=args.run_name,
            environment=args.environment,
            script_args=tuple(args.script_args),
        )
    except UsageError as exc:
        problems.append(str(exc))
    if problems:
        raise UsageError("; ".join(problems))
    return built


def add_follow_args(p: argparse.ArgumentParser, *, logs_help: str, json_help: str) -> None:
    """The flags of a command that follows a job to its end and verifies its logs (submit, run)."""
    p.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="stream rank 0's log while it runs (to stderr)",
    )
    p.add_argument("--logs", metavar="DIR", default="job-logs", help=logs_help)
    p.add_argument(
        "--allow-socket",
        action="store_true",
        help="verify: accept a socket transport or no NCCL lines (a CPU/gloo job) without failing",
    )
    p.add_argument("--poll-seconds", type=float, default=10.0, help="status poll interval (default 10)")
    p.add_argument("--json", action="store_true", help=json_help)
