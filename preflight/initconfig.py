"""`python -m preflight init-config STACK [--force] [--json]`: write `policies/config/STACK.json` for a new
stack.

A stack without a policy config would be judged with the pack's defaults (no quota checked, secure-defaults
advisory), so the gate refuses it and prints this command. What is written comes from the stack file
(`stackconfig.load_stack_file`, the one reader) and the levels the existing stacks use:
- `secure-defaults`: mandatory for a stack whose name starts with `prod`, else advisory; `ssh_clusters` lists
  the clusters with SSH on and `public_workspaces` the workspace when its public network access is Enabled
  (both are deliberate settings of the stack file; the policy reports them otherwise);
- `cluster-replacement`: mandatory for `prod*`, else advisory, nothing acknowledged;
- `quota-reservation.quotas`: every region the clusters use, with no value: the quotas are the subscription's,
  and only Azure knows them. With credentials, `python -m jobs quota --stack STACK --write
  policies/config/STACK.json` fills them in; until then each pool is an advisory "no quota for this pool";
- `cluster-cost-budget`: mandatory for `prod*`, else advisory; `max_per_hour` is the stack's own cost per hour
  at max nodes (price x max_instances over its clusters, rounded up to a whole unit), from the price file
  ($AZML_GPU_PRICES, `python -m jobs prices --refresh`), so the budget holds what the stack file declares and
  a change that costs more is reported; without a price file, or with a cluster it gives no price for, no
  budget is written (never a total that counts a price as zero) and the next step says so;
- the other policies' settings as in `policies/config/prod.json` (`warn_days`, idle-timer bounds, empty
  allow-lists).
An existing file is never overwritten without `--force`.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_INVALID = 0, 2


def stack_budget(config: Any, table: Any) -> float | None:
    """The stack's cost per hour at max nodes, rounded up to a whole unit; None when a price is unknown."""
    if table is None:
        return None
    total = 0.0
    for c in config.clusters:
        price = table.price(c.size, c.region or config.workspace.region, c.tier)
        if price is None:
            return None
        total += price * c.max_instances
    return float(math.ceil(total))


def policy_config_for(stack: str, config: Any, table: Any = None) -> dict[str, Any]:
    """The policy config for a validated stackconfig.StackConfig `config` (module docstring)."""
    prod = stack.startswith("prod")
    level = "mandatory" if prod else "advisory"
    regions = sorted({c.region or config.workspace.region for c in config.clusters})
    ssh = sorted(c.name for c in config.clusters if c.ssh_enabled)
    public = [config.workspace.name] if config.workspace.public_network_access == "Enabled" else []
    return {
        "vm-series-retiring-soon": {"warn_days": 180},
        "quota-reservation": {"quotas": {region: {} for region in regions}},
        "min-nodes-zero": {"allow": []},
        "idle-timer-bounds": {"min_seconds": 120, "max_seconds": 900 if prod else 1800},
        "cross-region-compute": {"acknowledged": []},
        "secure-defaults": {"enforcementLevel": level, "public_workspaces": public, "ssh_clusters": ssh},
        "cluster-replacement": {"enforcementLevel": level, "acknowledged": []},
        "cluster-cost-budget": {"enforcementLevel": level}
        | ({"max_per_hour": budget} if (budget := stack_budget(config, table)) is not None else {}),
    }


def main(argv: list[str], root: Path) -> int:
    from stackconfig import ConfigError
    from stackconfig.cli import JsonErrorParser
    from stackconfig.loader import load_stack_file

    def json_error(problem: str) -> dict:
        return {"stack": None, "errors": [problem], "summary": {"exit_code": EXIT_INVALID}}

    p = JsonErrorParser(
        json_error=json_error,
        prog="python -m preflight init-config",
        description="Write policies/config/STACK.json for a new stack from Pulumi.STACK.yaml.",
    )
    p.add_argument("stack", metavar="STACK", help="stack name: reads Pulumi.STACK.yaml")
    p.add_argument("--force", action="store_true", help="overwrite an existing policies/config/STACK.json")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    args = p.parse_args(argv)
    target = root / "policies" / "config" / f"{args.stack}.json"
    stack_file = root / f"Pulumi.{args.stack}.yaml"
    problems: list[str] = []
    if not stack_file.is_file():
        known = sorted(f.name[len("Pulumi.") : -len(".yaml")] for f in root.glob("Pulumi.*.yaml"))
        problems.append(
            f"STACK {args.stack!r}: no {stack_file.name}; use one of: {', '.join(known) or '(none)'}"
        )
    elif target.exists() and not args.force:
        problems.append(
            f"{target.relative_to(root)} exists; edit it, or pass --force to write it again from the "
            "stack file"
        )
    else:
        try:
            config = load_stack_file(stack_file)
        except ConfigError as e:
            problems.extend(e.problems)
    from vmsizes import prices

    table, where = None, prices.locate()
    if where is not None:
        try:
            table = prices.load(where)
        except prices.PriceFileError as e:
            problems.append(f"{prices.ENV}: {e}")
    if problems:
        if args.json:
            print(
                json.dumps({"stack": args.stack, "errors": problems, "summary": {"exit_code": EXIT_INVALID}})
            )
        for line in problems:
            print(f"preflight init-config: {line}", file=sys.stderr)
        return EXIT_INVALID
    written = policy_config_for(args.stack, config, table)
    target.write_text(json.dumps(written, indent=2) + "\n")
    regions = ", ".join(written["quota-reservation"]["quotas"])
    next_step = (
        f"with Azure credentials, `python -m jobs quota --stack {args.stack} --write "
        f"{target.relative_to(root)}` writes the quotas of {regions}; then `python -m preflight {args.stack}`"
    )
    if "max_per_hour" not in written["cluster-cost-budget"]:
        next_step += (
            "; no cost budget written (no price for every cluster): `python -m jobs prices --refresh "
            f"--out FILE`, set {prices.ENV}=FILE and run this again with --force, or set "
            "cluster-cost-budget.max_per_hour"
        )
    if args.json:
        print(json.dumps({"stack": args.stack, "written": str(target), "config": written, "next": next_step}))
    else:
        print(f"wrote {target.relative_to(root)}; review it, and {next_step}")
    return EXIT_OK
