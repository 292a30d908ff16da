"""`python -m jobs`: the command line. Commands live in `jobs/commands/`, one module each."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import jobs.commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m jobs",
        description="Build, render, submit and verify Azure ML GPU jobs from the stack outputs.",
        allow_abbrev=False,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(jobs.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"jobs.commands.{info.name}")
        module.register(sub)
    # No abbreviated flags: `submit --out x.yml` must not be read as `--outputs x.yml`. Each command's
    # add_parser says so too; this covers any command that does not.
    for command_parser in sub.choices.values():
        command_parser.allow_abbrev = False
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after the first `--` belongs to the job's script. argparse cannot give a trailing
    # positional list to a command that also has a leading positional (`submit train ... -- --n-layer 20`),
    # so it is split off here and handed to the commands that declare `script_args`.
    tail: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, tail = argv[:cut], argv[cut + 1 :]
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "script_args", None):  # positionals before `--` that argparse put there
        parser.error(
            f"{args.command}: unexpected argument(s) {' '.join(args.script_args)}; "
            "script arguments go after `--`"
        )
    if tail:
        if not hasattr(args, "script_args"):
            parser.error(f"{args.command} takes no script arguments after `--` (got {' '.join(tail)})")
        args.script_args = tail
    return int(args.func(args) or 0)
