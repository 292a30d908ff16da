"""`python -m engine COMMAND` (docs/engine.md):

    build [--force] [--json]                 the Pulumi CLI from the Go module proxy, cached (make engine)
    preview STACK [--config-file F] [--policy-config F] [--json] [--keep]
                                             the real `pulumi preview --diff --policy-pack policies
                                             --policy-pack-config policies/config/STACK.json` of
                                             Pulumi.STACK.yaml; exits as the CLI does (make engine-preview)
    up STACK [--json] [--keep]               `pulumi up` against the local Azure ML control plane, then
                                             `jobs check-deploy` and the smoke job, then `pulumi destroy`
                                             (make engine-up)

Exit codes: preview and up give the CLI's own (0 ok, 255 when the update fails, a mandatory policy
violation included); up gives the first failing step's; 2 for a bad invocation or a workspace that could
not be set up.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from doubles.pulumicli import build
from preflight import events, run
from preflight.workspace import Workspace, WorkspaceError, say


def _parser() -> argparse.ArgumentParser:
    from stackconfig.cli import JsonErrorParser  # one --json error document on usage errors (jobs' shape)

    p = JsonErrorParser(prog="python -m engine", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build (or find cached) the Pulumi CLI")
    b.add_argument("--force", action="store_true")
    b.add_argument("--json", action="store_true")
    for name in ("preview", "up"):
        s = sub.add_parser(name)
        s.add_argument("stack")
        s.add_argument("--json", action="store_true", help="print one JSON verdict on stdout")
        s.add_argument("--keep", action="store_true", help="keep the scratch workspace (its path is printed)")
        s.add_argument("--work", type=Path, help="scratch folder (default: a new temporary one)")
        if name == "preview":
            s.add_argument(
                "--config-file", type=Path, help="use this stack file instead of Pulumi.STACK.yaml"
            )
            s.add_argument(
                "--policy-config", type=Path, help="policy config (default policies/config/STACK.json)"
            )
    return p


def _emit(as_json: bool, payload: dict) -> None:
    if as_json:
        print(json.dumps(payload, indent=2, default=list))


def preview(args: argparse.Namespace) -> int:
    ws = Workspace.create(args.stack, args.work)
    say(f"scratch workspace {ws.work}")
    try:
        if args.config_file:
            _merge_stack_file(ws, args.config_file)
        log = ws.work / "preview-events.jsonl"
        r = run.preview(ws, args.policy_config, events=log, capture=args.json)
        if args.json:
            sys.stderr.write(r.stdout + r.stderr)
        v = events.verdict(r.returncode, events.read(log))
        _emit(args.json, {"command": "preview", "stack": args.stack, **v.to_json(), "work": str(ws.work)})
        return r.returncode
    finally:
        if not args.keep:
            ws.cleanup()


def _merge_stack_file(ws: Workspace, stack_file: Path) -> None:
    """Replace the stack file's config with `stack_file`'s, keeping the `encryptionsalt` stack init wrote."""
    target = ws.project / f"Pulumi.{ws.stack}.yaml"
    salt = [line for line in target.read_text().splitlines() if line.startswith("encryptionsalt:")]
    body = stack_file.read_text()
    target.write_text("\n".join(salt) + ("\n" if salt else "") + body)


def up(args: argparse.Namespace) -> int:
    from doubles.localml.stackup import up_smoke_destroy

    return up_smoke_destroy(args.stack, args.work, args.keep, args.json)


def main(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        if args.command == "build":
            return build.main((["--json"] if args.json else []) + (["--force"] if args.force else []))
        return preview(args) if args.command == "preview" else up(args)
    except (WorkspaceError, build.BuildError) as e:
        _emit(getattr(args, "json", False), {"command": args.command, "ok": False, "error": str(e)})
        print(f"engine {args.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    from stackconfig.cli import run_main  # a closed stdout (`--json | head`) or Ctrl-C ends quietly

    run_main(lambda: main(sys.argv[1:]))
