"""`python -m jobs render KIND ... --out FILE.yml`: CLI v2 YAML for `az ml job create -f` / `load_job`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from jobs.errors import guarded


def register(subparsers: argparse._SubParsersAction) -> None:
    from jobs.jobargs import add_job_args

    p = subparsers.add_parser(
        "render", help="write a job as YAML for `az ml job create -f`", description=__doc__
    )
    add_job_args(p)
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE.yml",
        help="where to write; scaling writes FILE-1node.yml and FILE-2node.yml",
    )
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=run)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs import render
    from jobs.jobargs import build

    built = build(args)
    written = []
    for b, path in zip(built, render.out_paths(Path(args.out), built), strict=True):
        render.write(b, path)
        written.append(
            {
                "label": b.label,
                "file": str(path),
                "nodes": b.nodes,
                "processes_per_node": b.processes_per_node,
                "world_size": b.world_size,
                **b.extra,
            }
        )
    if args.json:
        print(json.dumps({"jobs": written}, indent=2))
    else:
        for w in written:
            print(
                f"{w['file']}: {w['label']}, {w['nodes']} node(s) x {w['processes_per_node']} process(es) "
                f"= world size {w['world_size']}"
            )
    return 0
