"""`python3 -m preflight.stacks [--github-output] [--smoke-cluster STACK]`: the stacks of this repository,
from its `Pulumi.<stack>.yaml` files, for the CI and deploy workflows (a new stack file is gated and deployed
without editing a workflow: docs/config.md, "Adding a stack").

- no flag: the JSON list of stacks on stdout;
- `--github-output`: also appends `stacks=<json>` (every stack) and `promoted=<json>` (every stack but the
  canary `dev`, deployed after it) to `$GITHUB_OUTPUT`;
- `--root DIR`: list another program's stacks (the reusable gate workflow, .github/workflows/gate.yml);
- `--smoke-cluster STACK`: the cluster the post-deploy smoke job runs on, the first of the stack file's
  `azml-gpu:clusters` (read by `stackconfig.loader`, so this one needs the project's virtualenv);
- `--smoke-plan STACK`: whether the post-deploy smoke job runs, on which runner and cluster, or why it is
  skipped (`stackconfig.deploy.smoke_plan`: a private workspace needs `azml-gpu:deploy.smoke_runner`, a
  self-hosted runner inside its network), as one JSON object; with `--github-output` also `smoke=`,
  `runner=`, `cluster=` and `reason=` for deploy-stack.yml. A stack file with problems exits 2 naming each.
The listing itself uses the standard library only: the workflows run it before any setup.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from preflight import layout

#: This repository's root in a checkout; installed, the current folder (never site-packages).
ROOT = layout.checkout() or Path(".")
CANARY = "dev"


def stacks(root: Path = ROOT) -> list[str]:
    """Every `Pulumi.<stack>.yaml` of `root`, sorted."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in root.glob("Pulumi.*.yaml"))


def promoted(root: Path = ROOT) -> list[str]:
    """The stacks deployed after the canary stack (`dev`) passed."""
    return [s for s in stacks(root) if s != CANARY]


def smoke_cluster(stack: str, root: Path = ROOT) -> str:
    from stackconfig.loader import read_config_block

    clusters = read_config_block(root / f"Pulumi.{stack}.yaml").get("azml-gpu:clusters") or []
    if not clusters or not isinstance(clusters[0], dict) or not clusters[0].get("name"):
        raise ValueError(f"Pulumi.{stack}.yaml: azml-gpu:clusters has no first cluster with a name")
    return str(clusters[0]["name"])


def smoke_plan(stack: str, root: Path = ROOT) -> dict:
    """`stackconfig.deploy.smoke_plan` of `Pulumi.<stack>.yaml` as JSON; ConfigError (every problem) when the
    stack file is not valid."""
    from stackconfig.deploy import smoke_plan as plan
    from stackconfig.loader import load_stack_file

    return plan(stack, load_stack_file(root / f"Pulumi.{stack}.yaml")).as_json()


def _github_output(lines: list[str]) -> int:
    target = os.environ.get("GITHUB_OUTPUT")
    if not target:
        print(
            "preflight.stacks: --github-output needs $GITHUB_OUTPUT (set by GitHub Actions)", file=sys.stderr
        )
        return 2
    with open(target, "a", encoding="utf-8") as out:
        out.write("".join(f"{line}\n" for line in lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m preflight.stacks", description=__doc__.split("\n")[0])
    p.add_argument(
        "--github-output", action="store_true", help="append stacks= and promoted= to $GITHUB_OUTPUT"
    )
    p.add_argument(
        "--smoke-cluster", metavar="STACK", help="print the cluster the smoke job of STACK runs on"
    )
    p.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        metavar="DIR",
        help="the program folder whose Pulumi.*.yaml are listed (default: this repository's; installed: the "
        "current folder)",
    )
    p.add_argument(
        "--smoke-plan",
        metavar="STACK",
        help="print (JSON) whether the smoke job of STACK runs, on which runner, or why it is skipped",
    )
    args = p.parse_args(argv)
    if not (args.root / "Pulumi.yaml").is_file():
        print(
            f"preflight.stacks: --root: no Pulumi.yaml in {args.root.resolve()}; give the program's folder",
            file=sys.stderr,
        )
        return 2
    if args.smoke_plan:
        from stackconfig import ConfigError

        try:
            plan = smoke_plan(args.smoke_plan, args.root)
        except ConfigError as e:
            for line in e.problems:
                print(f"preflight.stacks: Pulumi.{args.smoke_plan}.yaml: {line}", file=sys.stderr)
            return 2
        print(json.dumps(plan))
        if args.github_output:
            return _github_output(
                [
                    f"smoke={str(plan['smoke']).lower()}",
                    f"runner={plan['runner'] or ''}",
                    f"cluster={plan['cluster'] or ''}",
                    f"reason={plan['reason']}",
                ]
            )
        return 0
    if args.smoke_cluster:
        try:
            print(smoke_cluster(args.smoke_cluster, args.root))
        except (OSError, ValueError) as e:
            print(f"preflight.stacks: {e}", file=sys.stderr)
            return 2
        return 0
    listed = stacks(args.root)
    print(json.dumps(listed))
    if args.github_output:
        return _github_output([f"stacks={json.dumps(listed)}", f"promoted={json.dumps(promoted(args.root))}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
