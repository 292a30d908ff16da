"""`python -m preflight pack-path [--json]` (`azml-gpu-preflight pack-path` installed): the folder of the
policy pack that ships with this gate, for a team's own `pulumi preview --policy-pack "$(azml-gpu-preflight
pack-path)"` (docs/policies.md, "The installed pack"). Installed, that is site-packages/azml_gpu/policies, its
PulumiPolicy.yaml without a virtualenv: the Pulumi CLI runs it with `python` on PATH, which must be the
interpreter azml-gpu is installed in."""

from __future__ import annotations

import json
import sys

EXIT_OK, EXIT_INVALID = 0, 2


def main(argv: list[str]) -> int:
    from preflight import layout
    from stackconfig.cli import JsonErrorParser, prog_name

    def json_error(problem: str) -> dict:
        return {"path": None, "errors": [problem], "exit_code": EXIT_INVALID}

    p = JsonErrorParser(
        json_error=json_error,
        prog=f"{prog_name(__package__)} pack-path",
        description="Print the folder of the policy pack installed with this gate (for --policy-pack).",
    )
    p.add_argument("--json", action="store_true", help='print {"path", "manifest", "installed"} as JSON')
    args = p.parse_args(argv)
    folder = layout.pack_folder()
    manifest = folder / "PulumiPolicy.yaml"
    if not manifest.is_file():  # a broken install: say so rather than print a path the CLI refuses
        problem = f"no policy pack at {folder} (no PulumiPolicy.yaml); reinstall azml-gpu"
        if args.json:
            print(json.dumps(json_error(problem)))
        else:
            print(f"pack-path: {problem}", file=sys.stderr)
        return EXIT_INVALID
    if args.json:
        print(json.dumps({"path": str(folder), "manifest": str(manifest), "installed": bool(layout.PREFIX)}))
    else:
        print(folder)
    return EXIT_OK
