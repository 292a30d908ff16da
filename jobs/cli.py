"""`python -m jobs`: the command line. `COMMANDS` below is the list of commands; each lives in `jobs/` under
its own name (`check-deploy` -> `jobs/check_deploy/`, its `__init__.py` parses the flags and prints, its logic
beside it; a small command is one module, `jobs/export_hf.py`) (docs/jobs.md, "Layout")."""

from __future__ import annotations

import argparse
import importlib
import sys

from stackconfig.cli import JsonErrorParser, prog_name

#: Every `python -m jobs` command, in `--help` order: its name -> its module, `jobs.<name with underscores>`,
#: which defines `register(subparsers)` adding that one command. A new command is one line here.
COMMANDS: dict[str, str] = {
    "audit": "jobs.audit",
    "check-deploy": "jobs.check_deploy",
    "export-hf": "jobs.export_hf",
    "local": "jobs.local",
    "plan": "jobs.plan",
    "prepare-data": "jobs.prepare_data",
    "prices": "jobs.prices",
    "quota": "jobs.quota",
    "render": "jobs.render",
    "run": "jobs.run",
    "scaling": "jobs.scaling",
    "submit": "jobs.submit",
    "teardown": "jobs.teardown",
    "verify": "jobs.verify",
}


def _installed(module: str) -> str:
    """A COMMANDS module under this package's own name: `jobs.plan` in the repository,
    `azml_gpu.jobs.plan` installed (packaging/azml_gpu_build.py)."""
    return __package__ + module.removeprefix("jobs")


def build_parser() -> argparse.ArgumentParser:
    # A usage error under --json prints `{"ok": false, "error", "exit_code": 2}` on stdout too, at every level
    # (`python -m jobs submit smoke --json --bogus`), as `jobs.errors.fail` does for the commands' own errors.
    parser: argparse.ArgumentParser = JsonErrorParser(
        prog=prog_name(__package__),
        description="Build, render, submit and verify Azure ML GPU jobs from the stack outputs.",
        allow_abbrev=False,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        importlib.import_module(_installed(module)).register(sub)
        if name not in sub.choices:  # a programming error: the table and the module disagree
            raise RuntimeError(f"{module}.register did not add {name!r}, the command COMMANDS names")
    # No abbreviated flags: `submit --out x.yml` must not be read as `--outputs x.yml`. Each command's
    # add_parser says so too; this covers any command that does not.
    for command_parser in sub.choices.values():
        command_parser.allow_abbrev = False
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code (README.md, "Exit codes")."""
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


def entry() -> None:
    """The `azml-gpu-jobs` console script: `python -m jobs` (a closed stdout ends quietly, exit 141)."""
    from stackconfig.cli import run_main

    run_main(main)
