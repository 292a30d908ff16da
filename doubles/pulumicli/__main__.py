"""`python -m doubles.pulumicli COMMAND` (docs/engine.md): the Pulumi CLI for machines that have none.

    build [--force] [--json]   the CLI at the tested version, built from Pulumi's Go modules and cached
                               (`make engine`; about 3 to 10 minutes the first time on 2 cores, then instant)
    ensure [--json]            a CLI the gate accepts: the one `preflight.pulumicli.find` picks (PATH first),
                               else build one (`make preview` runs this before the gate)

Exit 0 with the CLI's path on stdout (`--json`: one object); 1 when the build fails; 2 for a bad invocation.
"""

from __future__ import annotations

import argparse
import json
import sys

from doubles.pulumicli import build


def _parser() -> argparse.ArgumentParser:
    from stackconfig.cli import JsonErrorParser  # one --json error document on usage errors

    p = JsonErrorParser(prog="python -m doubles.pulumicli", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build (or find cached) the Pulumi CLI at the tested version")
    b.add_argument("--force", action="store_true", help="build again even when a cached build exists")
    b.add_argument("--json", action="store_true")
    e = sub.add_parser("ensure", help="a CLI the gate accepts: the one on PATH, else build one")
    e.add_argument("--json", action="store_true")
    return p


def ensure(as_json: bool) -> int:
    from preflight import pulumicli

    try:
        cli = pulumicli.find()
    except pulumicli.CliMissing as e:
        print(f"pulumicli: {e}", file=sys.stderr)
        print("pulumicli: building one from Pulumi's Go modules (make engine)", file=sys.stderr)
        return build.main(["--json"] if as_json else [])
    for note in cli.notes:
        print(f"pulumicli: note: {note}", file=sys.stderr)
    if as_json:
        print(json.dumps({"ok": True, **cli.as_json()}))
    else:
        print(f"pulumi v{cli.version}: {cli.path} ({cli.source})")
    return 0


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.command == "ensure":
        return ensure(args.json)
    return build.main((["--json"] if args.json else []) + (["--force"] if args.force else []))


if __name__ == "__main__":
    from stackconfig.cli import run_main  # a closed stdout (`--json | head`) or Ctrl-C ends quietly

    run_main(lambda: main(sys.argv[1:]))
