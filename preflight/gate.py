"""The offline policy gate: the program under mocks, then the policy pack over its analyzer gRPC protocol,
in the two previews a stack goes through.

`evaluate(stack, ...)` does what `pulumi preview --policy-pack policies --policy-pack-config
policies/config/<stack>.json` does with the pack, without a cloud or the CLI, twice:
- `first-deploy`: the first preview of a new stack. Every resource is a create, so the values that come from
  other resources' outputs (a Compute's workspaceName and resourceGroupName, a lock's scope, every id) are
  unknown, and AnalyzeStack gets azure-native's preview outputs (preflight.engine, preflight.azure_native).
- `update`: a preview against deployed state: a `pulumi stack export` file (`state_path`), or the synthetic
  state of the stack deployed as declared. With a state file it also lists what the change replaces, and
  cluster replacements are the gate's own check (preflight.replacements).
For each: run `__main__.py` under Pulumi mocks answering as the engine would (preflight.program.run_program),
Configure the pack with the stack's policy config (plus `evaluation_date` for --date), ConfigureStack, Analyze
every resource (the stack, components, the default azure-native provider and every custom resource, with
their checked inputs), then AnalyzeStack with every resource's outputs, parent, dependencies and property
dependencies. The verdict is the worse of the two: 0 no mandatory violation, 1 mandatory violations, 2 invalid
config or a program error. The pack process is started while the first program runs; a caller may pass a
running PolicyPack to reuse it.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from importlib import metadata
from pathlib import Path
from typing import Any

from policies.clusters import Cluster, aml_cluster, parse_seconds
from policies.quota_reservation import configured_quota, reservation
from preflight import duplicates, isolation, permissions, replacements, resource_check
from preflight.analyzer import PackError, PolicyPack, Violation
from preflight.engine import (
    FIRST_DEPLOY,
    UPDATE,
    Deployment,
    Kind,
    StateFile,
    StateFileError,
    read_state_file,
)
from preflight.policyconfig import PolicyConfigError, load_policy_config
from preflight.program import (
    LOCATION_KEY,
    PROJECT,
    REPO_ROOT,
    ProgramResult,
    flatten_config,
    read_stack_config,
    run_program,
)
from preflight.provider.model import UNKNOWN
from preflight.resource import Provider, Resource

EXIT_OK, EXIT_MANDATORY, EXIT_INVALID = 0, 1, 2
COMPUTE = "azure-native:machinelearningservices:Compute"
# A `remediate` violation is a mandatory one to the engine (pulumi/pulumi v3.274.1 pkg/resource/deploy/
# step_generator.go AnalyzeResources: "Stack policies cannot be remediated, so treat the level as mandatory";
# analyze_snapshot.go: a remediation still violating is "downgraded" from remediate to mandatory).
BLOCKING = ("mandatory", "remediate")


def _as_engine_reports(found: list[Violation]) -> list[Violation]:
    """The violations as the engine reports them: `remediate` becomes `mandatory`."""
    return [replace(v, enforcement="mandatory") if v.enforcement == "remediate" else v for v in found]


INIT_CONFIG = "python -m preflight init-config {stack}"

Progress = Callable[[str], None]


@dataclass
class Evaluation:
    """One preview: what the engine sent and what the pack answered."""

    kind: Kind
    state: str  # "none (new stack)" | "synthetic: ..." | the --state file
    program: ProgramResult
    resources: list[Resource] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    replacements: list[dict[str, Any]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_MANDATORY if any(v.enforcement in BLOCKING for v in self.violations) else EXIT_OK

    @property
    def unknown_inputs(self) -> int:
        """How many input values sent to Analyze are unknown (the engine's sentinel)."""
        return sum(_count_unknown(r.inputs) for r in self.resources)

    @property
    def steps(self) -> dict[str, int]:
        return dict(sorted(Counter(r.op for r in self.program.resources).items()))

    @property
    def title(self) -> str:
        if self.kind == FIRST_DEPLOY:
            return "first deploy: every resource created"
        return f"update against {self.state}"

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "state": self.state,
            "exit_code": self.exit_code,
            "steps": self.steps,
            "unknown_inputs": self.unknown_inputs,
            "violations": [v.as_json() for v in self.violations],
            "replacements": self.replacements,
            "deletes": self.deletes,
        }


def _count_unknown(value: Any) -> int:
    if isinstance(value, str):
        return int(value == UNKNOWN)
    if isinstance(value, Mapping):
        return sum(_count_unknown(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_unknown(v) for v in value)
    return 0


@dataclass
class GateResult:
    """Everything the gate found. `errors` (exit 2) lists invalid config or the program error."""

    stack: str
    evaluations: list[Evaluation] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    clusters: list[dict[str, Any]] = field(default_factory=list)
    quota: list[dict[str, Any]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    evaluation_date: str = ""
    policy_config: dict[str, dict[str, Any]] = field(default_factory=dict)
    policy_config_file: str | None = None
    notes: list[str] = field(default_factory=list)
    permissions: list[dict[str, str]] = field(default_factory=list)
    engine_log: list[str] = field(default_factory=list)
    # preflight.resource_check: per (type, API version) what the REST spec check covered; its failures
    resource_check: list[dict[str, Any]] = field(default_factory=list)
    resource_problems: list[dict[str, Any]] = field(default_factory=list)

    @property
    def resources(self) -> list[Resource]:
        """The resources as the update evaluation sent them (every value known, unless --state changes
        them); the first-deploy evaluation's when there is no update."""
        return self.evaluations[-1].resources if self.evaluations else []

    @property
    def violations(self) -> list[Violation]:
        """Every distinct violation of the evaluations, merged by policy, resource and subject (the message)
        at the worst level either gave it, sorted by level, policy, resource and message."""
        rank = {"remediate": 0, "mandatory": 0, "advisory": 1, "disabled": 2}
        seen: dict[tuple[str, str, str], Violation] = {}
        for evaluation in self.evaluations:
            for v in evaluation.violations:
                key = (v.policy, v.urn, v.message)
                if key not in seen or rank.get(v.enforcement, 3) < rank.get(seen[key].enforcement, 3):
                    seen[key] = v
        return sorted(seen.values(), key=lambda v: (rank.get(v.enforcement, 3), v.policy, v.urn, v.message))

    def evaluations_of(self, violation: Violation) -> list[str]:
        key = (violation.policy, violation.urn, violation.message)
        return [
            e.kind for e in self.evaluations if any((v.policy, v.urn, v.message) == key for v in e.violations)
        ]

    @property
    def exit_code(self) -> int:
        if self.errors:
            return EXIT_INVALID
        return max((e.exit_code for e in self.evaluations), default=EXIT_OK)

    def by_level(self, level: str) -> list[Violation]:
        """`mandatory` includes `remediate` (it blocks the same way)."""
        levels = BLOCKING if level == "mandatory" else (level,)
        return [v for v in self.violations if v.enforcement in levels]

    def summary(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "evaluation_date": self.evaluation_date,
            "evaluations": {e.kind: e.exit_code for e in self.evaluations},
            "resources": len(self.resources),
            "resources_by_type": dict(sorted(Counter(r.type for r in self.resources).items())),
            "violations": {level: len(self.by_level(level)) for level in ("mandatory", "advisory")},
            "clusters": self.clusters,
            "quota": self.quota,
            "errors": self.errors,
        }

    def as_json(self) -> dict[str, Any]:
        """The `--json` document (schema: docs/preflight.md)."""
        program = {r.urn: r for e in self.evaluations[-1:] for r in e.program.resources}
        return {
            "stack": self.stack,
            "policy_config": {"file": self.policy_config_file, "notes": self.notes},
            "resources": [
                {
                    "urn": r.urn,
                    "type": r.type,
                    "name": r.name,
                    "parent": r.parent or None,
                    "op": program[r.urn].op if r.urn in program else "same",
                    "inputs": json.loads(json.dumps(dict(r.inputs), default=str)),
                    "options": dict(r.options),
                }
                for r in sorted(self.resources, key=lambda r: r.urn)
            ],
            "evaluations": [e.as_json() for e in self.evaluations],
            "violations": [{**v.as_json(), "evaluations": self.evaluations_of(v)} for v in self.violations],
            "permissions": self.permissions,
            "resource_check": {"coverage": self.resource_check, "problems": self.resource_problems},
            "summary": self.summary(),
        }


def default_provider(stack: str, project: str, flat: Mapping[str, str]) -> Provider:
    """The provider the engine creates for resources that name none (pkg/resource/deploy/default_providers.go:
    `pulumi:providers:azure-native::default_<version>`, no parent; its inputs are the stack config of the
    package plus `version`)."""
    version = metadata.version("pulumi-azure-native")
    name = f"default_{version.replace('.', '_')}"
    inputs: dict[str, Any] = {k.split(":", 1)[1]: v for k, v in flat.items() if k.startswith("azure-native:")}
    inputs["version"] = version
    return Provider(
        "pulumi:providers:azure-native",
        name,
        f"urn:pulumi:{stack}::{project}::pulumi:providers:azure-native::{name}",
        inputs,
    )


def _resources(program: ProgramResult, provider: Provider) -> list[Resource]:
    """What the engine sends for each resource of this run: the stack, the default provider, components
    and custom resources (custom azure-native resources carry the provider)."""

    converted = [
        replace(r, provider=provider) if r.custom and r.type.startswith("azure-native:") else r
        for r in program.resources
    ]
    provider_resource = Resource(
        provider.type, provider.name, provider.urn, provider.inputs, outputs=provider.inputs
    )
    return converted[:1] + [provider_resource] + converted[1:]


def _clusters(resources: list[Resource]) -> list[Cluster]:
    """The AmlCompute clusters, read by the policies' own reader (policies.clusters.aml_cluster)."""
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
                "clusters": sorted(pool.clusters),
            }
        )
    order = {"family": 0, "regional-total": 1, "low-priority": 2}
    return sorted(rows, key=lambda q: (q["region"], order.get(q["kind"], 3), q["family"] or "", q["label"]))


def _policy_config(
    stack: str, root: Path, policy_config: Mapping[str, Any] | None, path: Path | None, result: GateResult
) -> Mapping[str, Any] | None:
    """The --policy-pack-config object: given, read from `path`, or from policies/config/<stack>.json; a
    stack without that file runs with the pack's defaults, as `pulumi preview --policy-pack policies`
    without --policy-pack-config does (the engine still configures every policy: pkg/engine/update.go)."""
    if policy_config is not None:
        return policy_config
    default = root / "policies" / "config" / f"{stack}.json"
    chosen = path or default
    if path is None and not default.exists():
        # `pulumi preview --policy-pack policies` alone would run with the pack's defaults: secure-defaults
        # advisory, no quota to check. A new stack must say what it enforces, so that is an error here.
        result.errors.append(
            f"{default.relative_to(root)}: no policy config for stack '{stack}', so the pack would run with "
            "its defaults (no quota checked, secure-defaults advisory); create it with "
            f'`{INIT_CONFIG.format(stack=stack)}` and review it (docs/config.md, "Adding a stack")'
        )
        return None
    try:
        loaded = load_policy_config(chosen)
    except PolicyConfigError as e:
        result.errors.extend(e.problems)
        return None
    result.policy_config_file = str(chosen)
    return loaded


ML_WORKSPACE = "azure-native:machinelearningservices:Workspace"


def _allow_list_problems(
    config: Mapping[str, Any],
    pack: PolicyPack,
    gate_checks: Mapping[str, Mapping[str, Any]],
    program: ProgramResult,
    state: StateFile | None,
    stack: str,
) -> list[str]:
    """Allow-lists of the policy config (a property whose schema describes "Cluster names ..." or "Workspace
    names ...") that name no cluster or workspace of the stack: a typo there silently leaves the policy
    enforced, or an acknowledgement that acknowledges nothing. `cluster-replacement.acknowledged` may also
    name a cluster of the state that the change deletes."""
    schemas = {
        name: dict(spec.get("configSchema", {}).get("properties", {})) for name, spec in gate_checks.items()
    }
    for name, info in pack.policies().items():
        if info.HasField("configSchema"):
            from google.protobuf import json_format

            schemas[name] = dict(json_format.MessageToDict(info.configSchema).get("properties", {}))
    clusters = sorted(
        {str(r.program_inputs.get("computeName") or r.name) for r in program.resources if r.type == COMPUTE}
    )
    workspaces = sorted(
        {
            str(r.program_inputs.get("workspaceName") or r.name)
            for r in program.resources
            if r.type == ML_WORKSPACE
        }
    )
    in_state = sorted(
        {
            str(s.inputs.get("computeName") or s.urn.split("::")[-1])
            for s in (state.resources.values() if state else [])
            if s.type == COMPUTE
        }
    )
    problems = []
    for policy in sorted(config):
        entry = config[policy]
        if not isinstance(entry, Mapping):
            continue
        for key in sorted(entry):
            spec = schemas.get(policy, {}).get(key, {})
            description = str(spec.get("description", "")) if isinstance(spec, Mapping) else ""
            values = entry[key]
            if not isinstance(values, list):
                continue
            if description.startswith("Cluster names"):
                known = sorted(set(clusters) | (set(in_state) if policy == replacements.NAME else set()))
                what = "cluster"
            elif description.startswith("Workspace names"):
                known, what = workspaces, "workspace"
            else:
                continue
            for i, value in enumerate(values):
                if not isinstance(value, str) or value in known:
                    continue
                close = difflib.get_close_matches(value, known, n=1, cutoff=0.6)
                fix = f"did you mean {close[0]}?" if close else "fix the name or remove it"
                problems.append(
                    f"{policy}.{key}[{i}]: {value!r} names no {what} of stack '{stack}' (its {what}s: "
                    f"{', '.join(known) or 'none'}), so it allows or acknowledges nothing; {fix}"
                )
    return problems


def _state_owner_problems(state: StateFile, path: Path, stack: str, project: str) -> list[str]:
    """A --state file must be this stack's: its URNs name `urn:pulumi:<stack>::<project>::...`."""
    from preflight.engine import state_names

    names = state_names(path)
    if not names or names == {(stack, project)}:
        return []
    shown = ", ".join(f"stack '{s}' of project '{p}'" for s, p in sorted(names))
    return [
        f"--state: {path} is the state of {shown}, not of stack '{stack}' of project '{project}'; export "
        f"this stack's state with `pulumi stack export --stack {stack} --show-secrets --file FILE` or "
        f"`python -m preflight {stack} --export-state FILE`"
    ]


def _with_date(config: Mapping[str, Any], pack: PolicyPack, on: date | None) -> dict[str, Any]:
    sent = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in config.items()}
    if on is not None:
        for name, info in pack.policies().items():
            if "evaluation_date" in (info.configSchema.properties or {}):
                entry = sent.get(name, {})
                entry = {"enforcementLevel": entry} if isinstance(entry, str) else dict(entry)
                entry["evaluation_date"] = on.isoformat()
                sent[name] = entry
    return sent


def _run(
    stack: str,
    root: Path,
    config: Mapping[str, Any] | None,
    deployment: Deployment,
    result: GateResult,
    existing: Mapping[str, Mapping[str, Any]] | None = None,
) -> ProgramResult | None:
    try:
        program = run_program(stack, root, config, deployment=deployment, existing=existing)
    except Exception as e:  # noqa: BLE001 - a program bug: message, no traceback (exit 2)
        result.errors = [f"the program failed: {type(e).__name__}: {e}"]
        return None
    if program.problems:
        result.errors = list(program.problems)
        return None
    if program.error:
        result.errors = [f"the program failed: {program.error}"]
        if "keyvault:getVault" in program.error and "ResourceNotFound" in program.error:
            # Offline, a vault outside the stack is known only from --existing (preflight.mocks).
            result.errors.append(
                "offline, the gate knows a vault outside the stack only from --existing F: "
                + (
                    "F has no vault of that id; add what `az keyvault show --ids <vault id>` prints to F"
                    if existing
                    else "`az keyvault show --ids <vault id> > F`, then "
                    f"`python -m preflight {stack} --existing F`"
                )
            )
        return None
    return program


def evaluate(
    stack: str,
    *,
    root: Path = REPO_ROOT,
    config: Mapping[str, Any] | None = None,
    policy_config: Mapping[str, Any] | None = None,
    policy_config_path: Path | None = None,
    state_path: Path | None = None,
    on: date | None = None,
    pack: PolicyPack | None = None,
    progress: Progress | None = None,
    existing: Mapping[str, Mapping[str, Any]] | None = None,
) -> GateResult:
    """Run the gate for `stack`: both evaluations. `config`: the stack config mapping (None:
    Pulumi.<stack>.yaml); `policy_config`: the --policy-pack-config object (None: read `policy_config_path`,
    default policies/config/<stack>.json, the pack's defaults when that does not exist); `state_path`: a
    `pulumi stack export` file for the update evaluation (None: synthetic state); `on`: evaluate retirement
    on this day; `pack`: a started pack to reuse; `existing`: resources outside the stack the program reads
    (`preflight.mocks.read_existing`)."""
    say = progress or (lambda _msg: None)
    result = GateResult(stack=stack, evaluation_date=(on or date.today()).isoformat())

    if config is None and not (root / f"Pulumi.{stack}.yaml").is_file():
        known = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in root.glob("Pulumi.*.yaml"))
        result.errors.append(
            f"STACK {stack!r}: no Pulumi.{stack}.yaml in {root}; use one of: {', '.join(known) or '(none)'}"
        )
    # (no policy config error for a stack that does not exist: the first error says which ones do)
    chosen_config = (
        _policy_config(stack, root, policy_config, policy_config_path, result) if not result.errors else None
    )
    state: StateFile | None = None
    if state_path is not None:
        try:
            state = read_state_file(state_path)
        except (OSError, StateFileError, ValueError) as e:
            result.errors.append(f"--state: {e}")
        else:
            result.errors.extend(_state_owner_problems(state, state_path, stack, PROJECT))
    if result.errors or chosen_config is None:
        return result

    try:
        flat = flatten_config(config if config is not None else read_stack_config(stack, root))
    except (OSError, ValueError):
        flat = {}  # unreadable: run_program says why
    own_pack = None
    if pack is None:
        # PULUMI_CONFIG for the pack: the flat stack config, as the CLI passes it.
        own_pack = PolicyPack(PROJECT, stack, stack_config=flat)
        say("starting the policy pack (policies/, its own virtualenv)")
        own_pack.spawn()
    provider = default_provider(stack, PROJECT, flat)
    location = flat.get(LOCATION_KEY)
    plans = [
        (Deployment(FIRST_DEPLOY, provider_location=location), "none (a new stack)"),
        (
            Deployment(
                UPDATE,
                provider_location=location,
                state=state.resources if state is not None else None,
                pending_deletes=state.pending_deletes if state is not None else (),
            ),
            str(state_path) if state_path is not None else "the stack deployed as declared (synthetic state)",
        ),
    ]
    try:
        for deployment, state_label in plans:
            say(f"evaluating __main__.py for stack {stack!r} under Pulumi mocks: {deployment.kind} preview")
            program = _run(stack, root, config, deployment, result, existing)
            if program is None:
                return result
            if deployment.duplicates:
                block = config if config is not None else read_stack_config(stack, root)
                result.errors = duplicates.problems(deployment.duplicates, block)
                return result
            # The provider's Check runs before Analyze; its failures fail the preview (exit 2).
            checked = resource_check.check(program.resources, flat)
            result.resource_check = checked.coverage_rows()
            if own_pack is not None and pack is None:
                own_pack.connect()
                pack = own_pack
            assert pack is not None
            if checked.problems:
                # The engine reports a Check failure as an error of the resource (step_generator.go
                # continueStepsFromImport -> issueCheckErrors: "<type> resource '<name>': property <p> value
                # <v> has a problem: <reason>"), still runs Analyze on it, then stops the deployment
                # ("resource <urn> is invalid"): no AnalyzeStack, `pulumi preview` fails. The gate gives
                # exit 2 (the input is invalid, not a policy verdict) and reports what Analyze said of them.
                result.resource_problems = [p.as_json() for p in checked.problems]
                say_kind = f"{deployment.kind} preview: the Azure REST spec rejects"
                result.errors = [f"{say_kind} {p.message}" for p in checked.problems]
                invalid = {p.urn for p in checked.problems}
                try:
                    result.policy_config = pack.configure(
                        _with_date(chosen_config, pack, on), replacements.GATE_CHECKS
                    )
                except PolicyConfigError as e:
                    result.errors += [f"policy config: {p}" for p in e.problems]
                    return result
                evaluation = Evaluation(deployment.kind, state_label, program)
                evaluation.resources = [r for r in _resources(program, provider) if r.urn in invalid]
                for r in evaluation.resources:
                    evaluation.violations.extend(_as_engine_reports(pack.analyze(r)))
                result.evaluations.append(evaluation)
                return result
            said: list[str] = []
            try:
                result.policy_config = pack.configure(
                    _with_date(chosen_config, pack, on), replacements.GATE_CHECKS, said
                )
                result.notes.extend(n for n in said if n not in result.notes)
                listed = _allow_list_problems(
                    chosen_config, pack, replacements.GATE_CHECKS, program, state, stack
                )
                if listed:
                    result.errors = [f"policy config: {p}" for p in listed]
                    return result
            except PolicyConfigError as e:
                result.notes.extend(n for n in said if n not in result.notes)
                result.errors = [f"policy config: {p}" for p in e.problems]
                return result
            evaluation = Evaluation(deployment.kind, state_label, program)
            evaluation.resources = _resources(program, provider)
            say(
                f"{deployment.kind}: analyzing {len(evaluation.resources)} resources (Analyze each, then "
                "AnalyzeStack)"
            )
            for r in evaluation.resources:
                evaluation.violations.extend(_as_engine_reports(pack.analyze(r)))
            evaluation.violations.extend(_as_engine_reports(pack.analyze_stack(evaluation.resources)))
            if deployment.kind == UPDATE:
                evaluation.replacements = replacements.replacement_rows(program.resources)
                # Providers are the engine's (default providers are created and retired by it), not the
                # program's: a state's provider entries are not deletes of the stack's resources. External
                # (read) resources are dropped from the state, not deleted.
                registered = {r.urn for r in program.resources}
                live = list(state.resources.values()) if state is not None else []
                pending = list(state.pending_deletes) if state is not None else []
                evaluation.deletes = sorted(
                    {
                        s.urn
                        for s in live + pending
                        if (s.delete or s.urn not in registered)
                        and not s.type.startswith("pulumi:providers:")
                        and not s.external
                    }
                )
                evaluation.violations.extend(
                    replacements.findings(
                        program.resources,
                        result.policy_config.get(replacements.NAME, {}),
                        replacements.deleted_clusters(live + pending, registered),
                        live + [r for r in program.resources if r.custom],
                    )
                )
                evaluation.violations.extend(isolation.findings(program.resources, live))
                result.outputs = program.outputs
                result.permissions = permissions.required(program.resources, program.invokes)
            result.evaluations.append(evaluation)
        result.engine_log = [m for _, m, _ in pack.engine.messages]

        known = result.evaluations[-1].resources
        clusters = sorted(_clusters(known), key=lambda c: (c.name, c.urn))
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
