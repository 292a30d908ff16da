"""`python -m jobs render KIND ... --out FILE.yml`: CLI v2 YAML for `az ml job create -f` / `load_job`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jobs.errors import guarded


def register(subparsers: argparse._SubParsersAction) -> None:
    from jobs.jobargs import add_job_args
    from jobs.userjob import add_file_args

    p = subparsers.add_parser(
        "render",
        help="write a job as YAML for `az ml job create -f`",
        description=__doc__,
        allow_abbrev=False,
    )
    add_job_args(p)
    add_file_args(p)
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE.yml",
        help="where to write (missing parent folders are created); "
        "scaling writes FILE-1node.yml and FILE-2node.yml",
    )
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=run)


@guarded
def run(args: argparse.Namespace) -> int:
    from jobs.jobargs import announce
    from jobs.paths import check_out_file
    from jobs.render import jobyaml
    from jobs.userjob import build_any as build

    out = Path(args.out)
    check_out_file(out, "--out")  # a folder, or a path below a file: refused before building anything
    built = build(args)
    announce(built)
    paths = jobyaml.out_paths(out, built)
    created: list[Path] = []
    for path in paths:
        created += [d for d in check_out_file(path, "--out") if d not in created]
    written = []
    for b, path in zip(built, paths, strict=True):
        jobyaml.write(b, path)
        written.append(
            {
                "label": b.label,
                "file": str(path),
                "nodes": b.nodes,
                "processes_per_node": b.processes_per_node,
                "world_size": b.world_size,
                "environment": jobyaml.environment_of(b),
                **b.extra,
            }
        )
    for d in created:
        print(f"note: created folder {d}", file=sys.stderr)
    if args.json:
        print(json.dumps({"jobs": written, "created_folders": [str(d) for d in created]}, indent=2))
    else:
        for w in written:
            print(
                f"{w['file']}: {w['label']}, {w['nodes']} node(s) x {w['processes_per_node']} process(es) "
                f"= world size {w['world_size']}, environment {w['environment']}"
            )
            if s := w.get("settings"):  # jobs/settings.py
                env = " ".join(f"{k}={v}" for k, v in s["environment_variables"].items())
                timeout = f"{s['timeout_s']} s" if s["timeout_s"] else "none"
                print(f"  settings: timeout {timeout}, shm_size {s['shm_size']}, env {env}")
            for item in w.get("platform", ()):  # a --file job (jobs/userjob.py)
                print(f"  set by the platform: {item}")
            for key in w.get("kept", ()):
                print(f"  the user's (from the file): {key}")
    return 0
