"""`python -m preflight init-config STACK [--force] [--json]`: write `policies/config/STACK.json` for a new
stack.

A stack without a policy config would be judged with the pack's defaults (no quota checked, secure-defaults
advisory), so the gate refuses it and prints this command. What is written comes from the stack file
(`stackconfig.load_stack_file`, the one reader) and the levels the existing stacks use:
- `secure-defaults`: mandatory for a stack whose `azml-gpu:environment` is `production`, advisory for
  `development` (what the stack is, never its name; a stack file without the setting is refused, naming it);
  `ssh_clusters` lists the clusters with SSH on and `public_workspaces` the workspace when its public network
  access is Enabled (both are deliberate settings of the stack file; the policy reports them otherwise);
- `cluster-replacement`: mandatory for production, else advisory, nothing acknowledged;
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
An existing file is never overwritten without `--force`. With `--force` it is merged, never silently dropped
(`merge`): what the stack file decides is written again (the two levels above, new regions, SSH clusters and
the public workspace), and everything entered by hand is kept: every quota value, every entry of an
acknowledgement or allow list, every other setting and policy entry. What was kept and what changed is
printed (and in `--json`). A file that cannot be merged (not JSON, not an object, the versioned form) is
refused with what would be lost.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_INVALID = 0, 2
# The entries the environment decides: `--force` writes their level again.
ENVIRONMENT_LEVELS = ("secure-defaults", "cluster-replacement", "cluster-cost-budget")


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


def policy_config_for(config: Any, table: Any = None) -> dict[str, Any]:
    """The policy config for a validated stackconfig.StackConfig `config` (module docstring); its
    `environment` must be set. `table`: the price file, for the cost budget."""
    prod = config.environment == "production"
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


def _show(value: Any) -> str:
    return json.dumps(value)


def merge(
    fresh: Mapping[str, Any], existing: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str], list[str]]:
    """`fresh` (from the stack file) merged with the `existing` file: (merged, kept, changed).

    Per policy entry (a level string is read as {"enforcementLevel": level}): lists are the union, fresh
    entries first; `quotas` keeps every existing region and value (a fresh region is added empty); any other
    setting keeps the existing value, except the enforcementLevel of ENVIRONMENT_LEVELS, which the
    environment decides. `kept` names each hand-entered value carried over, `changed` each existing value
    replaced."""
    merged: dict[str, Any] = {k: json.loads(json.dumps(v)) for k, v in fresh.items()}
    kept: list[str] = []
    changed: list[str] = []
    for name, raw in existing.items():
        entry = {"enforcementLevel": raw} if isinstance(raw, str) else raw
        if name not in merged or not isinstance(entry, Mapping):
            merged[name] = raw
            kept.append(f"{name}: {_show(raw)}")
            continue
        target = merged[name]
        for key, value in entry.items():
            where = f"{name}.{key}"
            if key not in target:
                target[key] = value
                kept.append(f"{where}: {_show(value)}")
            elif key == "enforcementLevel" and name in ENVIRONMENT_LEVELS:
                if value != target[key]:
                    changed.append(f"{where}: {_show(value)} -> {_show(target[key])} (azml-gpu:environment)")
            elif key == "quotas" and isinstance(value, Mapping) and isinstance(target[key], Mapping):
                quotas = target[key]
                for region, pools in value.items():
                    if region not in quotas or not isinstance(pools, Mapping):
                        quotas[region] = pools
                        kept.append(f"{where}.{region}: {_show(pools)}")
                        continue
                    for pool, number in pools.items():
                        quotas[region][pool] = number
                        kept.append(f"{where}.{region}.{pool}: {_show(number)}")
            elif isinstance(value, list) and isinstance(target[key], list):
                extra = [item for item in value if item not in target[key]]
                target[key] = target[key] + extra
                if extra:
                    kept.append(f"{where}: {', '.join(_show(item) for item in extra)}")
            elif value != target[key]:
                target[key] = value
                kept.append(f"{where}: {_show(value)}")
    return merged, kept, changed


def _existing(target: Path, root: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The existing policy config to merge, or the problem that makes `--force` refuse it."""
    shown = target.relative_to(root)
    lost = f"--force would lose what {shown} holds; fix it, or move it away to write a fresh one"
    try:
        document = json.loads(target.read_text(encoding="utf-8"))
    except OSError as e:
        return None, f"cannot read {shown}: {e.strerror or e}; {lost}"
    except UnicodeDecodeError:
        return None, f"{shown} is not UTF-8 text; {lost}"
    except json.JSONDecodeError as e:
        return None, f"{shown} is not valid JSON (line {e.lineno} column {e.colno}: {e.msg}); {lost}"
    if not isinstance(document, dict):
        return None, f"{shown} is not a JSON object keyed by policy name; {lost}"
    if "version" in document:
        return None, (
            f'{shown} is the versioned form ("version": {_show(document["version"])}), which init-config '
            f"does not merge; {lost}"
        )
    return document, None


def main(argv: list[str], root: Path) -> int:
    from stackconfig import ConfigError
    from stackconfig.cli import JsonErrorParser, prog_name
    from stackconfig.loader import load_stack_file

    def json_error(problem: str) -> dict:
        return {"stack": None, "errors": [problem], "summary": {"exit_code": EXIT_INVALID}}

    p = JsonErrorParser(
        json_error=json_error,
        prog=f"{prog_name(__package__)} init-config",
        description="Write policies/config/STACK.json for a new stack from Pulumi.STACK.yaml.",
    )
    p.add_argument("stack", metavar="STACK", help="stack name: reads Pulumi.STACK.yaml")
    p.add_argument(
        "--force",
        action="store_true",
        help="write an existing policies/config/STACK.json again from the stack file, keeping its "
        "hand-entered quotas, acknowledgements and settings",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    args = p.parse_args(argv)
    target = root / "policies" / "config" / f"{args.stack}.json"
    stack_file = root / f"Pulumi.{args.stack}.yaml"
    problems: list[str] = []
    existing: dict[str, Any] | None = None
    config = None
    if not stack_file.is_file():
        known = sorted(f.name[len("Pulumi.") : -len(".yaml")] for f in root.glob("Pulumi.*.yaml"))
        problems.append(
            f"STACK {args.stack!r}: no {stack_file.name} in {root}; use one of: "
            f"{', '.join(known) or '(none)'} (or run it in the program's folder)"
        )
    elif target.exists() and not args.force:
        problems.append(
            f"{target.relative_to(root)} exists; edit it, or pass --force to write it again from the "
            "stack file (hand-entered quotas and acknowledgements are kept)"
        )
    else:
        if target.exists():
            existing, problem = _existing(target, root)
            if problem:
                problems.append(problem)
        try:
            config = load_stack_file(stack_file)
        except ConfigError as e:
            problems.extend(e.problems)
        if config is not None and config.environment is None:
            problems.append(
                f"azml-gpu:environment: not set in {stack_file.name}; it decides the enforcement written "
                "(production: secure-defaults and cluster-replacement mandatory; development: advisory): "
                "add `azml-gpu:environment: production` or `azml-gpu:environment: development`"
            )
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
    written = policy_config_for(config, table)
    kept: list[str] = []
    changed: list[str] = []
    if existing is not None:
        written, kept, changed = merge(written, existing)
    target.parent.mkdir(parents=True, exist_ok=True)  # a team's new stack folder has no policies/config/ yet
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
        document = {
            "stack": args.stack,
            "environment": config.environment,
            "written": str(target),
            "config": written,
            "next": next_step,
        }
        if existing is not None:
            document |= {"kept": kept, "changed": changed}
        print(json.dumps(document))
    else:
        print(f"wrote {target.relative_to(root)} ({config.environment}); review it, and {next_step}")
        if existing is not None:
            print(f"kept from the existing file: {'; '.join(kept) or 'nothing entered by hand'}")
            if changed:
                print(f"changed: {'; '.join(changed)}")
    return EXIT_OK
