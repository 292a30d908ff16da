"""`python -m jobs`: the command line. Commands live in `jobs/commands/`, one module each."""

from __future__ import annotations

import argparse
import importlib
import pkgutil

import jobs.commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m jobs",
        description="Build, render, submit and verify Azure ML GPU jobs from the stack outputs.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(jobs.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"jobs.commands.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)
