"""``python -m doubles.localml serve [--deploy STACK] [--env-file F] | smoke``.

serve: start Azurite and the control plane, print the environment that points azure-ai-ml at them (``export``
lines, or one JSON object with ``--json``), log each request, stop on Ctrl-C, SIGTERM or SIGHUP (or after
``--minutes``), with Azurite and every job stopped first. ``--deploy STACK`` first deploys the stack into it
with the real ``pulumi up`` (doubles/localml/pulumiup.py) and writes its outputs (``pulumi stack output``)
where ``python -m jobs --stack STACK`` reads them (``AZML_GPU_OUTPUTS_DIR``, jobs/outputs.py); ``--env-file
F`` also writes the environment to F.
smoke: ``pulumi up`` of the dev stack, check-deploy, the smoke job, ``pulumi destroy`` (``make smoke``), see
doubles/localml/smoke.py.

Exit codes: serve: 0 stopped cleanly, 1 the deploy failed, 2 bad input, no Pulumi CLI or Azurite not
installed, 130 interrupted before serving began; smoke: the first failing step's exit code (2 without a
Pulumi CLI or Azurite); 141 stdout closed early.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import shlex
import signal
import sys
import threading
from pathlib import Path

from doubles.localml.azurite import AzuriteError
from doubles.localml.env import LocalAzureML
from jobs.outputs import OUTPUTS_DIR_ENV
from stackconfig.cli import JsonErrorParser, prog_name, run_main

EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130
#: Variables of a developer's shell that would win over the managed identity localml serves.
UNSET_HINT = (
    "unset AZURE_CLIENT_ID AZURE_CLIENT_SECRET AZURE_TENANT_ID (they would win over the managed identity)"
)


def _positive_minutes(text: str) -> float:
    try:
        minutes = float(text)
    except ValueError:
        minutes = float("nan")
    if not minutes > 0 or minutes == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: use a positive number of minutes, e.g. 60")
    return minutes


def parser() -> argparse.ArgumentParser:
    p = JsonErrorParser(prog=prog_name("localml"), description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run Azurite + the control plane until Ctrl-C or SIGTERM")
    s.add_argument(
        "--minutes", type=_positive_minutes, default=24 * 60, help="stop after this long (default 24 h)"
    )
    s.add_argument("--quiet", action="store_true", help="do not log each request")
    s.add_argument(
        "--deploy",
        metavar="STACK",
        help="deploy the stack with `pulumi up` first and serve its outputs to `jobs --stack STACK`",
    )
    s.add_argument("--env-file", type=Path, metavar="F", help="also write the environment to F (KEY=value)")
    s.add_argument("--json", action="store_true", help="print the environment as one JSON object")
    sm = sub.add_parser(
        "smoke", help="pulumi up of dev, check-deploy, the smoke job, pulumi destroy, offline"
    )
    sm.add_argument("--json", action="store_true", help="print one document with each step on stdout")
    sm.add_argument(
        "--work", type=Path, metavar="DIR", help="work folder (default: a temporary one, removed)"
    )
    sm.add_argument("--keep", action="store_true", help="keep the temporary work folder")
    return p


def env_file_text(env: dict[str, str]) -> str:
    """`KEY=value` lines, each value shell-quoted: `set -a; . F; set +a` in sh, or an env file for tools that
    read one (docker --env-file takes the values literally, so localml's values carry no quotes)."""
    lines = [
        f"# python -m doubles.localml serve: point azure-ai-ml at the local control plane. {UNSET_HINT}."
    ]
    lines += [f"{key}={shlex.quote(value)}" for key, value in env.items()]
    return "\n".join(lines) + "\n"


def _fail(message: str, code: int, as_json: bool) -> int:
    print(f"python -m doubles.localml: error: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"ok": False, "error": message, "exit_code": code}, indent=2))
    return code


def serve(args: argparse.Namespace) -> int:

    if args.env_file is not None and (args.env_file.is_dir() or not args.env_file.parent.is_dir()):
        return _fail(f"--env-file {args.env_file}: give a file in an existing folder", EXIT_USAGE, args.json)
    if args.deploy is not None:
        from stackconfig.loader import stack_file

        if not stack_file(args.deploy).is_file():
            known = ", ".join(
                sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in Path().glob("Pulumi.*.yaml"))
            )
            return _fail(
                f"--deploy {args.deploy}: no stack file {stack_file(args.deploy)}; name a stack of this "
                f"project ({known or 'none here: run from the project folder'})",
                EXIT_USAGE,
                args.json,
            )
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    # A plain SIGTERM (systemd, docker stop, kill) or a closed terminal (SIGHUP) stops like Ctrl-C: the with
    # block below exits and stops the jobs, the control plane and Azurite's node process.
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        with LocalAzureML(implicit_workspaces=args.deploy is None) as local:
            env = dict(local.environ)
            deployed = None
            if args.deploy is not None:
                try:
                    outputs_file = _deploy(args.deploy, local)
                except RuntimeError as exc:
                    return _fail(f"--deploy {args.deploy}: {exc}", EXIT_FAILED, args.json)
                env[OUTPUTS_DIR_ENV] = str(outputs_file.parent)
                deployed = {"stack": args.deploy, "outputs": str(outputs_file)}
            if args.env_file is not None:
                args.env_file.write_text(env_file_text(env))
            if args.json:
                document = {"ok": True, "env": env, "env_file": args.env_file and str(args.env_file)}
                print(json.dumps({**document, "deployed": deployed}, indent=2), flush=True)
            else:
                print("# localml is serving; in another shell:", flush=True)
                for key, value in env.items():
                    print(f"export {key}={shlex.quote(value)}", flush=True)
                print(f"# {UNSET_HINT}", flush=True)
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C while serving: the normal way to stop
                stop.wait(args.minutes * 60)
            print("localml: stopping", file=sys.stderr, flush=True)
    except AzuriteError as exc:
        return _fail(str(exc), EXIT_USAGE, args.json)
    except KeyboardInterrupt:  # before serving began; everything started is stopped by now
        print("localml: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    return 0


def _deploy(stack: str, local: LocalAzureML) -> Path:
    """`pulumi up` of `stack` into `local` (its state kept in `<localml root>/deploy`), and its outputs
    written as `<localml root>/outputs/<stack>.json`; RuntimeError naming what failed."""
    from doubles.localml.pulumiup import StackDeployment
    from preflight.pulumicli import CliMissing

    def say(msg: str) -> None:
        print(f"[localml serve] {msg}", file=sys.stderr, flush=True)

    folder = local.root / "outputs"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with StackDeployment(stack, local.root / "deploy", local.subprocess_env()) as d:
            say(f"$ pulumi up --yes --stack {stack} --policy-pack policies (state in {d.backend})")
            up = d.up()
            if not up.ok:
                raise RuntimeError(f"pulumi up exited {up.exit_code}: {up.tail()}")
            say(f"pulumi up: {up.run.ops if up.run else {}} ({up.seconds:.1f} s)")
            code, outputs, err = d.outputs()
            if code != 0:
                raise RuntimeError(f"pulumi stack output exited {code}: {err.strip()[-2000:]}")
    except CliMissing as exc:
        raise RuntimeError(str(exc)) from None
    outputs_file = folder / f"{stack}.json"
    outputs_file.write_text(json.dumps(outputs, indent=2) + "\n")
    return outputs_file


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "smoke":
        from doubles.localml.smoke import main as smoke

        logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
        try:
            return smoke(as_json=args.json, work=args.work, keep=args.keep)
        except AzuriteError as exc:
            return _fail(str(exc), EXIT_USAGE, args.json)
    level = logging.WARNING if args.quiet or args.json else logging.INFO
    logging.basicConfig(level=level, format="%(name)s: %(message)s")
    logging.getLogger("azure").setLevel(logging.WARNING)  # Azurite traffic of the control plane itself
    return serve(args)


def entry() -> None:
    """The `azml-gpu-localml` console script: `python -m doubles.localml`."""
    run_main(main)


if __name__ == "__main__":
    entry()
