"""`python -m stackconfig STACK_OR_FILE [--json]`: validate a stack file; exit 0, or 2 with every problem.

Also the command-line conventions every CLI of the project shares (`JsonErrorParser`, `run_main`): standard
library only at import, so `python -m jobs` stays fast (the schema's modules load inside `main`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

EXIT_INVALID = 2
#: stdout closed before the report was written (`--json | head`): 128 + SIGPIPE, the status a shell reports
#: for a process SIGPIPE ended, so `set -o pipefail` sees the same as for any other Unix tool.
EXIT_CLOSED_PIPE = 141
#: Ctrl-C: 128 + SIGINT, as a shell reports it.
EXIT_INTERRUPTED = 130


def usage_error_document(problem: str) -> dict[str, Any]:
    """The JSON error document of a usage error when a CLI names no other (jobs, localml): the shape of
    `jobs.errors.fail`."""
    return {"ok": False, "error": problem, "exit_code": EXIT_INVALID}


def prog_name(module: str) -> str:
    """The program name usage texts show: the console script's (`azml-gpu-jobs`) when run as one,
    `python -m <module>` otherwise (argparse's default would be `__main__.py`)."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return name if name.startswith("azml-gpu-") else f"python -m {module}"


class JsonErrorParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors honour --json: with --json among the arguments, the error is
    printed to stdout as the CLI's JSON error document (`json_error(problem)`), still with exit 2; without it,
    argparse's usage text and message go to stderr as usual. The problem names the argument and the fix.

    Subparsers (`add_subparsers`) are of the same class and inherit the parent's document, so a usage error
    of `python -m jobs submit ... --json` gets it too."""

    def __init__(
        self, *args: Any, json_error: Callable[[str], dict[str, Any]] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._json_error = json_error or usage_error_document
        self._argv: list[str] = []

    def add_subparsers(self, **kwargs: Any) -> Any:
        action = super().add_subparsers(**kwargs)
        parent_document = self._json_error

        class _Child(JsonErrorParser):
            def __init__(self, *args: Any, **kw: Any) -> None:
                kw.setdefault("json_error", parent_document)
                super().__init__(*args, **kw)

        if "parser_class" not in kwargs:
            action._parser_class = _Child
        return action

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._argv = [str(a) for a in (sys.argv[1:] if args is None else args)]
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        if "--json" in self._argv:
            problem = f"{message}; see {self.prog} --help"
            print(json.dumps(self._json_error(problem), indent=2))
            print(f"{self.prog}: error: {problem}", file=sys.stderr)
            self.exit(EXIT_INVALID)
        super().error(message)


def run_main(main: Callable[[], int]) -> NoReturn:
    """`sys.exit(main())` for a `python -m` entry point, except that a reader closing stdout early
    (`--json | head`) ends the program quietly with EXIT_CLOSED_PIPE instead of a BrokenPipeError traceback,
    and Ctrl-C with EXIT_INTERRUPTED instead of a KeyboardInterrupt traceback.
    The recipe of Python's documentation (signal module, "Note on SIGPIPE"): stdout is pointed at devnull so
    the interpreter's final flush does not raise again."""
    try:
        try:
            code = main()
        except SystemExit as exc:  # argparse's usage error or --help: its text may still sit in the buffer
            code = exc.code
        sys.stdout.flush()  # a buffered stdout (no PYTHONUNBUFFERED) meets the closed pipe only here
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = EXIT_CLOSED_PIPE
    except KeyboardInterrupt:  # Ctrl-C where a command does not handle it itself: no traceback
        print("interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    sys.exit(code)


def _parser() -> argparse.ArgumentParser:
    parser = JsonErrorParser(
        json_error=lambda problem: {"ok": False, "file": None, "problems": [problem]},
        prog=prog_name(__package__),
        description="Validate the azml-gpu: config of a Pulumi stack file and report every problem at once.",
    )
    parser.add_argument(
        "stack", metavar="STACK_OR_FILE", help="stack name (dev -> ./Pulumi.dev.yaml) or a path"
    )
    parser.add_argument("--json", action="store_true", help="print a JSON object for CI")
    return parser


def _provider_problems(path: Path) -> list[str]:
    """The azure-native keys of the file that would pass here and fail at Azure: a subscription id that is
    not a GUID (README's `<your subscription id>` left in place). An unreadable file: load_stack_file's."""
    from stackconfig.loader import StackFileError, read_config_block
    from stackconfig.outputs import SUBSCRIPTION_KEY, subscription_problem

    try:
        block = read_config_block(path)
    except (StackFileError, OSError):
        return []
    if SUBSCRIPTION_KEY not in block:
        return []  # azure-native then uses the Azure CLI's current subscription
    problem = subscription_problem(block[SUBSCRIPTION_KEY])
    return [problem] if problem else []


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    from stackconfig.errors import ConfigError
    from stackconfig.loader import load_stack_file, stack_file

    args = _parser().parse_args(argv)
    path = stack_file(args.stack)
    problems: list[str] = []
    try:
        config = load_stack_file(path)
    except ConfigError as exc:
        problems = list(exc.problems)
    problems += _provider_problems(path)
    if problems:
        if args.json:
            print(json.dumps({"ok": False, "file": str(path), "problems": problems}, indent=2))
        else:
            print(f"{path}: {len(problems)} problem(s)", file=sys.stderr)
            for line in problems:
                print(f"  {line}", file=sys.stderr)
        return EXIT_INVALID
    clusters = ", ".join(f"{c.name} ({c.size}, {c.region}, max {c.max_instances})" for c in config.clusters)
    if args.json:
        print(json.dumps({"ok": True, "file": str(path), "config": config.model_dump(mode="json")}, indent=2))
    else:
        print(
            f"ok: {path}: workspace {config.workspace.name} ({config.workspace.region}); clusters: {clusters}"
        )
    return 0


def entry() -> None:
    """The `azml-gpu-stackconfig` console script: `python -m stackconfig`."""
    run_main(main)
