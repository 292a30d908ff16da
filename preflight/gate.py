"""The offline policy gate: the program under mocks, then the policy pack over its analyzer gRPC protocol.

`evaluate(stack, ...)` does what `pulumi preview --policy-pack policies --policy-pack-config
policies/config/<stack>.json` does with the pack, without a cloud or the CLI:
1. run `__main__.py` with the stack's config under Pulumi mocks (preflight.program.run_program);
2. start the pack exactly as the engine does (preflight.analyzer.PolicyPack), GetAnalyzerInfo, Configure with
   the stack's policy config (plus `evaluation_date` for --date), ConfigureStack;
3. Analyze each registered resource, then AnalyzeStack with all of them (parent, dependencies and property
   dependencies included);
4. build the plan (resources by type, clusters, quota pools via vmsizes.quota) and the exit code:
   0 no mandatory violation, 1 mandatory violations, 2 invalid config or a program error.
The pack process is started while the program runs; a caller may pass a running PolicyPack to reuse it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from policies._common import Cluster, aml_cluster, parse_seconds
from policies.quota_reservation import configured_quota, reservation
from preflight.analyzer import (
    PackError,
    PolicyConfigError,
    PolicyPack,
    Resource,
    Violation,
    load_policy_config,
)
from preflight.program import (
    PROJECT,
    REPO_ROOT,
    ProgramResult,
    flatten_config,
    read_stack_config,
    run_program,
)

EXIT_OK, EXIT_MANDATORY, EXIT_INVALID = 0, 1, 2

Progress = Callable[[str], None]


@dataclass
class GateResult:
    """Everything the gate found. `errors` (exit 2) lists invalid config or the program error."""

    stack: str
    resources: list[Resource] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    clusters: list[dict[str, Any]] = field(default_factory=list)
    quota: list[dict[str, Any]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    evaluation_date: str = ""
    policy_config: dict[str, dict[str, Any]] = field(default_factory=dict)
    engine_log: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.errors:
            return EXIT_INVALID
        return EXIT_MANDATORY if any(v.enforcement == "mandatory" for v in self.violations) else EXIT_OK

    def by_level(self, level: str) -> list[Violation]:
        return [v for v in self.violations if v.enforcement == level]

    def summary(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "evaluation_date": self.evaluation_date,
            "resources": len(self.resources),
            "resources_by_type": dict(sorted(Counter(r.type for r in self.resources).items())),
            "violations": {level: len(self.by_level(level)) for level in ("mandatory", "advisory")},
            "clusters": self.clusters,
            "quota": self.quota,
            "errors": self.errors,
        }

    def as_json(self) -> dict[str, Any]:
        """The `--json` document (schema: docs/preflight.md)."""
        return {
            "stack": self.stack,
            "resources": [
                {
                    "urn": r.urn,
                    "type": r.type,
                    "name": r.name,
                    "parent": r.parent or None,
                    "inputs": json.loads(json.dumps(dict(r.inputs), default=str)),
                    "options": dict(r.options),
                }
                for r in self.resources
            ],
            "violations": [v.as_json() for v in self.violations],
            "summary": self.summary(),
        }


def _resources(program: ProgramResult) -> list[Resource]:
    return [
        Resource(
            type=r.type,
            name=r.name,
            urn=r.urn,
            inputs=r.inputs,
            parent=r.parent or "",
            dependencies=list(r.dependencies),
            property_dependencies={k: list(v) for k, v in r.property_dependencies.items()},
            options=r.options,
        )
        for r in program.resources
    ]


def _clusters(resources: list[Resource]) -> list[Cluster]:
    """The AmlCompute clusters, read by the policies' own reader (policies._common.aml_cluster)."""
    found = (aml_cluster(r.type, r.inputs, r.name, r.urn) for r in resources)
    return [c for c in found if c is not None]


def _cluster_rows(clusters: list[Cluster]) -> list[dict[str, Any]]:
    import vmsizes

    rows = []
    for c in clusters:
        try:
            described = vmsizes.describe(c.size)  # type: ignore[arg-type]  # None, non-str: TypeError
            gpus, vcpus, family = described.gpus, described.vcpus, described.quota_family
        except (vmsizes.UnknownSize, TypeError):
            gpus = vcpus = family = None
        rows.append(
            {
                "name": c.name,
                "urn": c.urn,
                "size": c.size,
                "gpus_per_node": gpus,
                "vcpus_per_node": vcpus,
                "quota_family": family,
                "min_nodes": c.min_nodes or 0,
                "max_nodes": c.max_nodes or 0,
                "region": c.region,
                "tier": c.tier,
                "idle": c.idle,
                # None: shown as given; the idle-timer-parseable policy reports it
                "idle_seconds": parse_seconds(c.idle),
                "ssh": c.remote_login or "NotSpecified",
            }
        )
    return rows


def _quota_rows(clusters: list[Cluster], quotas: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pools the quota-reservation policy checks (its reservation), each with its configured quota."""
    rows = []
    for pool in reservation(clusters)[0].pools:
        quota = configured_quota(quotas, pool)
        status = "unknown" if quota is None else ("over" if pool.vcpus > quota else "ok")
        rows.append(
            {
                "region": pool.region,
                "kind": pool.kind,
                "family": pool.family,
                "label": pool.label,
                "reserved_vcpus": pool.vcpus,
                "quota": quota,
                "status": status,
                "clusters": list(pool.clusters),
            }
        )
    return rows


def evaluate(
    stack: str,
    *,
    root: Path = REPO_ROOT,
    config: Mapping[str, Any] | None = None,
    policy_config: Mapping[str, Any] | None = None,
    policy_config_path: Path | None = None,
    on: date | None = None,
    pack: PolicyPack | None = None,
    progress: Progress | None = None,
) -> GateResult:
    """Run the gate for `stack`. `config`: the stack config mapping (None: Pulumi.<stack>.yaml);
    `policy_config`: the --policy-pack-config object (None: read `policy_config_path`, default
    policies/config/<stack>.json); `on`: evaluate retirement on this day; `pack`: a started pack to reuse."""
    say = progress or (lambda _msg: None)
    result = GateResult(stack=stack, evaluation_date=(on or date.today()).isoformat())

    if config is None and not (root / f"Pulumi.{stack}.yaml").is_file():
        known = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in root.glob("Pulumi.*.yaml"))
        result.errors.append(
            f"STACK {stack!r}: no Pulumi.{stack}.yaml in {root}; use one of: {', '.join(known) or '(none)'}"
        )
    if policy_config is None:
        path = policy_config_path or root / "policies" / "config" / f"{stack}.json"
        try:
            policy_config = load_policy_config(path)
        except PolicyConfigError as e:
            result.errors.extend(e.problems)
    if result.errors:
        return result

    own_pack = None
    if pack is None:
        # PULUMI_CONFIG for the pack: the flat stack config, as the CLI passes it (unreadable: run_program
        # says).
        try:
            flat = flatten_config(config if config is not None else read_stack_config(stack, root))
        except (OSError, ValueError):
            flat = {}
        own_pack = PolicyPack(PROJECT, stack, stack_config=flat)
        say("starting the policy pack (policies/, its own virtualenv)")
        own_pack.spawn()
    try:
        say(f"evaluating __main__.py for stack {stack!r} under Pulumi mocks")
        try:
            program = run_program(stack, root, config)
        except Exception as e:  # noqa: BLE001 - a program bug: message, no traceback (exit 2)
            result.errors = [f"the program failed: {type(e).__name__}: {e}"]
            return result
        if program.problems:
            result.errors = list(program.problems)
            return result
        if program.error:
            result.errors = [f"the program failed: {program.error}"]
            return result
        result.outputs = program.outputs
        result.resources = _resources(program)

        if own_pack is not None:
            own_pack.connect()
            pack = own_pack
        assert pack is not None
        sent = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in policy_config.items()}
        if on is not None:
            for name, info in pack.policies().items():
                if "evaluation_date" in (info.configSchema.properties or {}):
                    entry = sent.get(name, {})
                    entry = {"enforcementLevel": entry} if isinstance(entry, str) else dict(entry)
                    entry["evaluation_date"] = on.isoformat()
                    sent[name] = entry
        try:
            result.policy_config = pack.configure(sent)
        except PolicyConfigError as e:
            result.errors = [f"policy config: {p}" for p in e.problems]
            return result

        say(f"analyzing {len(result.resources)} resources (Analyze each, then AnalyzeStack)")
        for r in result.resources:
            result.violations.extend(pack.analyze(r))
        result.violations.extend(pack.analyze_stack(result.resources))
        result.engine_log = [m for _, m, _ in pack.engine.messages]

        clusters = _clusters(result.resources)
        result.clusters = _cluster_rows(clusters)
        quotas = result.policy_config.get("quota-reservation", {}).get("quotas", {})
        result.quota = _quota_rows(clusters, quotas)
        return result
    except PackError as e:
        result.errors = [str(e)]
        return result
    finally:
        if own_pack is not None:
            own_pack.close()
