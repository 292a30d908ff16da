"""`python -m preflight STACK [--json | --format markdown] [--date YYYY-MM-DD] [--state FILE]
[--export-state FILE] [--outputs-file F] [--existing F]`: the offline policy gate, in the two previews a stack
goes through (first deploy, and update against deployed state). `python -m preflight init-config STACK`
writes the policy config of a new stack (preflight.initconfig).

Exit 0: no mandatory violation; 1: mandatory violations; 2: invalid input (bad flag, invalid stack or policy
config, every problem listed) or a program error (message, no traceback). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import gc
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
        prog=prog_name("preflight"),
        description="Evaluate the stack program under Pulumi mocks and run the CrossGuard policy pack over "
        "its gRPC analyzer protocol, as `pulumi preview --policy-pack policies` would: once as the first "
        "preview of a new stack, once as an update preview against deployed state.",
    )
    p.add_argument(
        "stack", metavar="STACK", help="stack name: reads Pulumi.STACK.yaml and policies/config/STACK.json"
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON (schema: docs/preflight.md)")
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
    print(f"preflight: {message} ...", file=sys.stderr, flush=True)


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


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["init-config"]:
        from preflight.initconfig import main as init_config
        from preflight.program import REPO_ROOT

        return init_config(argv[1:], REPO_ROOT)
    args = parser().parse_args(argv)
    from preflight.gate import evaluate
    from stackconfig.loader import StackFileError, read_config_block

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
    if args.state is not None and not args.state.is_file():
        what = "is a directory" if args.state.is_dir() else "does not exist"
        problems.append(
            f"--state: {args.state} {what}; give the file that `pulumi stack export --show-secrets --file "
            "FILE` wrote"
        )
    config = None
    if args.config_file is not None:
        try:
            config = read_config_block(args.config_file)
        except StackFileError as e:  # one line naming the file and the fix
            problems.append(f"--config-file: {e}")
    policy_config = None
    if args.policy_config is not None:
        from preflight.policyconfig import PolicyConfigError, load_policy_config

        try:
            policy_config = load_policy_config(args.policy_config)
        except PolicyConfigError as e:
            problems.extend(f"--policy-config: {p}" for p in e.problems)
    existing = None
    if args.existing is not None:
        from preflight.mocks import ExistingFileError, read_existing

        try:
            existing = read_existing(args.existing)
        except ExistingFileError as e:
            problems.append(str(e))
    if problems:
        return _fail(args, problems)
    result = evaluate(
        args.stack,
        config=config,
        policy_config=policy_config,
        state_path=args.state,
        on=args.date,
        progress=_progress,
        existing=existing,
    )
    if result.errors:
        problems = result.resource_problems
        extra: dict[str, object] = {"resource_check": {"problems": problems}} if problems else {}
        if problems and result.violations:
            # Analyze still ran on the resources whose Check failed (the engine's order)
            extra["violations"] = [
                {**v.as_json(), "evaluations": result.evaluations_of(v)} for v in result.violations
            ]
            for v in result.violations:
                print(f"preflight: {v.enforcement} {v.policy} on {v.urn}: {v.message}", file=sys.stderr)
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
        from preflight.program import exported_state

        try:
            document = exported_state(result.evaluations[-1].program)
            args.export_state.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
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

        render(result, sys.stdout, rich_output=sys.stdout.isatty())
    return result.exit_code


def entry() -> None:
    """`python -m preflight` and the `azml-gpu-preflight` console script."""
    from preflight.gctuning import postponed_full_collections
    from stackconfig.cli import run_main  # a closed stdout (`--json | head`) or Ctrl-C ends quietly

    # A short-lived process whose heap only grows (imports, the program, the results): no full garbage
    # collection while it works (preflight/gctuning.py). At the end, gc.freeze(): at interpreter exit
    # CPython collects everything still alive, here the Pulumi runtime and every azure-native type module
    # the program loaded (0.5 s of the gate's wall time, measured); frozen objects are left to the
    # operating system instead. Nothing with an effect is skipped: stdout, stderr and --outputs-file are
    # written and flushed, and atexit handlers still run.
    def _main() -> int:
        with postponed_full_collections():
            status = main()
            sys.stdout.flush()
            sys.stderr.flush()
            gc.freeze()
        return status

    run_main(_main)


if __name__ == "__main__":
    entry()
