"""`python -m preflight STACK [--json | --format markdown] [--date YYYY-MM-DD] [--state FILE]
[--export-state FILE] [--outputs-file F] [--existing F]`: the offline policy gate, in the two previews a stack
goes through (first deploy, and update against deployed state). `python -m preflight init-config STACK`
writes the policy config of a new stack (preflight.initconfig); `python -m preflight pack-path` prints the
folder of the pack that ships with the gate (preflight.packpath).

Exit 0: no mandatory violation; 1: mandatory violations; 2: invalid input (bad flag, invalid stack or policy
config, every problem listed) or a program error (message, no traceback). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import date
from pathlib import Path

EXIT_INVALID = 2


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date; use YYYY-MM-DD, e.g. 2027-01-31") from None


def _json_error(problem: str) -> dict:
    return {"stack": None, "errors": [problem], "summary": {"exit_code": EXIT_INVALID}}


def parser() -> argparse.ArgumentParser:
    from stackconfig.cli import JsonErrorParser, prog_name

    p = JsonErrorParser(
        json_error=_json_error,
        prog=prog_name(__package__),
        description="The real `pulumi preview --policy-pack policies` of a stack, offline (a local backend "
        "and "
        "the gate's own azure-native provider): once as the first preview of a new stack, once as an update "
        "preview against deployed state; then the gate's own checks of what the engine decided.",
    )
    p.add_argument(
        "stack", metavar="STACK", help="stack name: reads Pulumi.STACK.yaml and policies/config/STACK.json"
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON (schema: docs/preflight.md)")
    p.add_argument(
        "--program",
        type=Path,
        metavar="DIR",
        help="the Pulumi program to run (a folder with Pulumi.yaml: any Python program, its own project "
        "name in the URNs; its stack files and policies/config/STACK.json are read from DIR); default: the "
        "current folder when it has a Pulumi.yaml, else this repository's program",
    )
    p.add_argument("--date", type=_date, metavar="YYYY-MM-DD", help="evaluate VM retirement on this day")
    p.add_argument(
        "--state",
        type=Path,
        metavar="FILE",
        help="`pulumi stack export --show-secrets --file FILE` of the deployed stack: the update evaluation "
        "diffs against it and lists what the change replaces (default: the stack deployed as declared)",
    )
    p.add_argument(
        "--export-state",
        type=Path,
        metavar="FILE",
        help="write the state of the stack deployed as declared, as `pulumi stack export` writes it, for "
        "offline --state use (not with --state)",
    )
    p.add_argument(
        "--format",
        choices=("text", "markdown"),
        default="text",
        help="text (default) or markdown (verdict first, each violation once: for a CI job summary)",
    )
    p.add_argument(
        "--permissions",
        action="store_true",
        help="list each Azure permission `pulumi up` and `pulumi destroy` need (default: the role that "
        "covers them, one line); --json always has them",
    )
    p.add_argument(
        "--outputs-file",
        type=Path,
        metavar="F",
        help="write the stack outputs the program exports (JSON) to F",
    )
    p.add_argument(
        "--config-file",
        type=Path,
        metavar="F",
        help="read the stack config from exactly F (any name) instead of the repository's Pulumi.STACK.yaml",
    )
    p.add_argument(
        "--existing",
        type=Path,
        metavar="F",
        help="JSON of resources outside the stack the program reads (the customer-managed key's vault): "
        "what `az keyvault show --ids ID` prints, one object or a list; default none, and such a read fails "
        "as Azure's 404 does",
    )
    p.add_argument(
        "--policy-config",
        type=Path,
        metavar="F",
        help="policy pack config JSON (default policies/config/STACK.json)",
    )
    return p


def _progress(message: str) -> None:
    # one write per line: the first deploy's and the update's threads report at once
    sys.stderr.write(f"preflight: {message} ...\n")
    sys.stderr.flush()


def _fail(args: argparse.Namespace, problems: list[str], extra: dict[str, object] | None = None) -> int:
    if args.json:
        document = {"stack": args.stack, "errors": problems, **(extra or {})}
        document["summary"] = {"exit_code": EXIT_INVALID}
        print(json.dumps(document, indent=2))
    elif getattr(args, "format", "text") == "markdown":
        # the job summary says why there is no verdict
        print(f"## Policy gate: cannot evaluate stack `{args.stack}` ({len(problems)} problem(s))\n")
        print("\n".join(f"- {p}" for p in problems))
    print(f"preflight: {args.stack}: cannot evaluate ({len(problems)} problem(s)):", file=sys.stderr)
    for problem in problems:
        print(f"  - {problem}", file=sys.stderr)
    return EXIT_INVALID


def _outputs_file_problems(path: Path) -> list[str]:
    """Checked before the (long) evaluation, so a bad --outputs-file fails at once."""
    parent = path.parent
    if path.is_dir():
        return [f"--outputs-file: {path} is a directory; give a file path, e.g. {path / 'outputs.json'}"]
    if not parent.is_dir():
        return [
            f"--outputs-file: the folder {parent} does not exist; create it or write to an existing folder"
        ]
    if not os.access(parent, os.W_OK | os.X_OK):
        return [f"--outputs-file: the folder {parent} is not writable; choose a folder you can write to"]
    return []


def _program_problems(program: Path) -> list[str]:
    """--program: a folder the Pulumi CLI can run as a Python program (Pulumi.yaml `runtime: python`)."""
    import yaml

    if not program.is_dir():
        what = "is a file" if program.exists() else "does not exist"
        return [f"--program: {program} {what}; give the folder that holds the program's Pulumi.yaml"]
    manifest = program / "Pulumi.yaml"
    if not manifest.is_file():
        return [
            f"--program: no Pulumi.yaml in {program}; give the folder that holds the program's Pulumi.yaml"
        ]
    try:
        data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        return [f"--program: {manifest} is not readable YAML ({e}); fix the file"]
    runtime = data.get("runtime") if isinstance(data, dict) else None
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if name != "python":
        return [
            f"--program: {manifest} has runtime {name!r}; the gate runs Python programs (runtime: python) "
            "with its own language host"
        ]
    return []


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["init-config"]:
        from preflight.gate import program_root
        from preflight.initconfig import main as init_config

        return init_config(argv[1:], program_root())
    if argv[:1] == ["pack-path"]:
        from preflight.packpath import main as pack_path

        return pack_path(argv[1:])
    args = parser().parse_args(argv)
    from preflight.gate import evaluate

    problems = _outputs_file_problems(args.outputs_file) if args.outputs_file is not None else []
    if args.export_state is not None:
        problems += [
            p.replace("--outputs-file", "--export-state") for p in _outputs_file_problems(args.export_state)
        ]
        if args.state is not None:
            problems.append(
                "--export-state: writes the stack deployed as declared, which --state replaces; drop one of "
                "them"
            )
    if args.program is not None:
        problems += _program_problems(args.program)
    for flag, path in (("--config-file", args.config_file), ("--policy-config", args.policy_config)):
        if path is not None and not path.is_file():
            what = "is a directory" if path.is_dir() else "does not exist"
            problems.append(f"{flag}: {path} {what}; give the file's path")
    if problems:
        return _fail(args, problems)
    result = evaluate(
        args.stack,
        root=args.program,
        config_file=args.config_file,
        policy_config_path=args.policy_config,
        state_path=args.state,
        existing_path=args.existing,
        export_state=args.export_state is not None,
        on=args.date,
        progress=_progress,
    )
    if result.errors:
        problems = result.resource_problems
        extra: dict[str, object] = {"engine": result.engine} if result.engine else {}
        if problems:
            extra["resource_check"] = {"problems": problems}
        return _fail(args, result.errors, extra or None)
    if args.outputs_file is not None:
        from stackconfig.outputs import StackOutputs

        try:
            outputs = StackOutputs.model_validate(result.outputs).model_dump(mode="json")
            args.outputs_file.write_text(json.dumps(outputs, indent=2) + "\n")
        except (OSError, ValueError) as e:
            return _fail(args, [f"--outputs-file: cannot write {args.outputs_file}: {e}"])
        print(f"preflight: wrote the stack outputs to {args.outputs_file}", file=sys.stderr)
    if args.export_state is not None:
        try:
            args.export_state.write_text(json.dumps(result.exported_state, indent=2, sort_keys=True) + "\n")
        except OSError as e:
            return _fail(args, [f"--export-state: cannot write {args.export_state}: {e}"])
        print(f"preflight: wrote the deployed-as-declared state to {args.export_state}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.as_json(), indent=2))
    elif args.format == "markdown":
        from preflight.report import markdown

        print(markdown(result))
    else:
        from preflight.report import render

        render(result, sys.stdout, rich_output=sys.stdout.isatty(), permissions_shown=args.permissions)
    return result.exit_code


def entry() -> None:
    """`python -m preflight` and the `azml-gpu-preflight` console script."""
    from stackconfig.cli import run_main  # a closed stdout (`--json | head`) or Ctrl-C ends quietly

    def _main() -> int:
        status = main()
        # Everything the gate writes is written: stdout and stderr flushed, --outputs-file and
        # --export-state closed, the scratch folder removed. What is left is the interpreter's own teardown:
        # collecting the Pulumi runtime and every SDK module the program loaded (0.3 to 0.5 s, measured), and
        # finalising a program run the engine stopped (a duplicate URN), which prints "Exception ignored in
        # <coroutine run_in_stack>". Neither has an effect worth waiting for.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)

    run_main(_main)


if __name__ == "__main__":
    entry()
