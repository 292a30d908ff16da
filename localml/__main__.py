"""``python -m localml serve | smoke``.

serve: start Azurite and the control plane, print the environment to point azure-ai-ml at them
(``export`` lines), log each request, stop on Ctrl-C (or after ``--minutes``).
smoke: the offline smoke job end to end (``make smoke``), see localml/smoke.py.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import sys
import threading


def _positive_minutes(text: str) -> float:
    try:
        minutes = float(text)
    except ValueError:
        minutes = float("nan")
    if not minutes > 0 or minutes == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: use a positive number of minutes, e.g. 60")
    return minutes


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m localml", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run Azurite + the control plane until Ctrl-C")
    s.add_argument(
        "--minutes", type=_positive_minutes, default=24 * 60, help="stop after this long (default 24 h)"
    )
    s.add_argument("--quiet", action="store_true", help="do not log each request")
    sm = sub.add_parser("smoke", help="the smoke job end to end through azure-ai-ml, offline")
    sm.add_argument("--json", action="store_true", help="print the job summary and verdict as JSON on stdout")
    args = p.parse_args(argv)
    if args.command == "smoke":
        from localml.smoke import main as smoke

        logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
        return smoke(as_json=args.json)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(name)s: %(message)s")
    logging.getLogger("azure").setLevel(logging.WARNING)  # Azurite traffic of the control plane itself
    from localml.env import LocalAzureML

    with LocalAzureML() as local:
        print("# localml is serving; in another shell:", flush=True)
        for key, value in local.subprocess_env({}).items():
            print(f"export {key}={shlex.quote(value)}", flush=True)
        print(
            "# unset AZURE_CLIENT_ID AZURE_CLIENT_SECRET AZURE_TENANT_ID (they would win over the "
            "managed identity)",
            flush=True,
        )
        try:
            threading.Event().wait(args.minutes * 60)
        except KeyboardInterrupt:
            print("stopping", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
