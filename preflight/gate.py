"""The policy gate: the real `pulumi preview --policy-pack` of a stack, offline, in the two previews a stack
goes
through, and the gate's own checks of what the engine decided.

`evaluate(stack, ...)` runs the Pulumi CLI (`preflight.pulumicli.find`: the one on PATH, or the one `make
engine` built) on scratch workspaces (`preflight.workspace`) with a local file backend, the stack program
served from this process (`preflight.langhost`), the policy pack, and the gate's offline azure-native provider
(`preflight.provider`: azure-native's Check, Diff, forced replacements and preview outputs, and the REST-spec
check of every resource's inputs, without Azure credentials). Two evaluations:
- `first-deploy`: `pulumi preview` of a new stack (empty state): every resource is a create, and the values
  that come from other resources' outputs are unknown, as the engine sends them.
- `update`: `pulumi preview` against deployed state: the `--state` file (`pulumi stack export`) imported as
  `pulumi stack import` imports it, or the stack deployed as declared (`pulumi up` of the same program into
  the
  offline provider). It says what the change replaces and deletes.
The verdict is the worse of the two: 0 no mandatory violation, 1 mandatory violations, 2 invalid input or a
failed run. Everything in the report is read from the engine's events (`preflight.events`): steps,
violations, errors. The gate's own checks, which no policy can make because no policy sees the state, run on
the update's steps: an unacknowledged cluster replacement or delete (`preflight.replacements`), a loosened
managed network (`preflight.isolation`); and on its input: the stack config (stackconfig, every problem at
once), the policy config (`preflight.policyconfig`), duplicate URNs traced to config entries
(`preflight.duplicates`).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from preflight import duplicates, events, isolation, layout, permissions, replacements, resource_check
from preflight.events import BLOCKING, Run, Step, Violation
from preflight.policyconfig import PolicyConfigError, load_policy_config, pack_policies, resolve_config
from preflight.wire import UNKNOWN

EXIT_OK, EXIT_MANDATORY, EXIT_INVALID = 0, 1, 2
FIRST_DEPLOY, UPDATE = "first-deploy", "update"
COMPUTE = "azure-native:machinelearningservices:Compute"
ML_WORKSPACE = "azure-native:machinelearningservices:Workspace"
REPO_ROOT = Path(__file__).resolve().parent.parent
NAMESPACE = "azml-gpu"
INIT_CONFIG = "python -m preflight init-config {stack}"

Progress = Callable[[str], None]


@dataclass
class Evaluation:
    """One preview: the engine's run and what the gate found in it."""

    kind: str
    state: str  # "none (a new stack)" | "the stack deployed as declared ..." | the --state file
    run: Run
    violations: list[Violation] = field(default_factory=list)  # the engine's, then the gate's own
    replacements: list[dict[str, Any]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def resources(self) -> list[Step]:
        """What the program registered (every step but the deletes)."""
        return [s for s in self.run.steps if s.op not in events.DELETE_OPS]

    @property
    def exit_code(self) -> int:
        return EXIT_MANDATORY if any(v.blocking for v in self.violations) else EXIT_OK

    @property
    def unknown_inputs(self) -> int:
        """How many input values the engine sent to the pack as unknown."""
        return sum(_count_unknown(s.inputs) for s in self.resources)

    @property
    def steps(self) -> dict[str, int]:
        return self.run.ops

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
            "engine_exit_code": self.run.exit_code,
            "seconds": round(self.seconds, 2),
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
    """Everything the gate found. `errors` (exit 2) lists invalid input or the engine's errors."""

    stack: str
    root: Path = REPO_ROOT
    evaluations: list[Evaluation] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    clusters: list[dict[str, Any]] = field(default_factory=list)
    quota: list[dict[str, Any]] = field(default_factory=list)
    costs: dict[str, Any] = field(default_factory=dict)  # preflight.costs.cost_table
    outputs: dict[str, Any] = field(default_factory=dict)
    evaluation_date: str = ""
    policy_config: dict[str, dict[str, Any]] = field(default_factory=dict)
    policy_config_file: str | None = None
    notes: list[str] = field(default_factory=list)
    permissions: list[dict[str, str]] = field(default_factory=list)
    engine: dict[str, Any] = field(default_factory=dict)  # the CLI that ran: path, version, source
    # per (type, API version) what the REST spec check covered (preflight.resource_check); its failures
    resource_check: list[dict[str, Any]] = field(default_factory=list)
    resource_problems: list[dict[str, Any]] = field(default_factory=list)
    exported_state: dict[str, Any] | None = None  # `pulumi stack export --show-secrets` of the update's stack
    environment: str | None = None  # `azml-gpu:environment` of the stack file (None: not set)

    @property
    def resources(self) -> list[Step]:
        """The resources as the update evaluation saw them; the first deploy's when there is no update."""
        return self.evaluations[-1].resources if self.evaluations else []

    @property
    def violations(self) -> list[Violation]:
        """Every distinct violation of the evaluations, merged by policy, resource and message at the worst
        level either gave it, sorted by level, policy, resource and message."""
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
            "costs": self.costs,
            "errors": self.errors,
        }

    def as_json(self) -> dict[str, Any]:
        """The `--json` document (schema: docs/preflight.md)."""
        return {
            "stack": self.stack,
            "environment": self.environment,
            "engine": self.engine,
            "policy_config": {"file": self.policy_config_file, "notes": self.notes},
            "resources": [
                {
                    "urn": r.urn,
                    "type": r.type,
                    "name": r.name,
                    "parent": r.parent or None,
                    "op": r.op,
                    "inputs": r.inputs,
                    "options": r.options,
                }
                for r in sorted(self.resources, key=lambda r: r.urn)
            ],
            "evaluations": [e.as_json() for e in self.evaluations],
            "violations": [{**v.as_json(), "evaluations": self.evaluations_of(v)} for v in self.violations],
            "permissions": self.permissions,
            "resource_check": {"coverage": self.resource_check, "problems": self.resource_problems},
            "summary": self.summary(),
        }


# -- reading the input
# ----------------------------------------------------------------------------------------


def program_root(cwd: Path | None = None) -> Path:
    """The program the gate runs: the current folder when it holds a Pulumi.yaml (an installed gate, run in
    the team's stack folder), else this repository's own program (a checkout), never site-packages
    (`preflight.layout.program_folder`)."""
    return layout.program_folder(cwd)


def pack_dir(root: Path) -> Path:
    """The policy pack: `<root>/policies` when it is one (a checkout, or a folder with its own copy), else the
    pack installed with the gate."""
    local = root / "policies"
    if (local / "PulumiPolicy.yaml").is_file():
        return local
    return layout.pack_folder()


def known_stacks(root: Path) -> list[str]:
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in root.glob("Pulumi.*.yaml"))


def project_name(root: Path) -> str:
    """`name:` of the program's Pulumi.yaml (the project in every URN)."""
    import yaml

    try:
        data = yaml.safe_load((root / "Pulumi.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return NAMESPACE
    return str(data.get("name") or NAMESPACE) if isinstance(data, dict) else NAMESPACE


def _stack_config_problems(block: Mapping[str, Any]) -> list[str]:
    """The stack config's problems, as the program would raise them (stackconfig: every problem at once)."""
    from stackconfig import ConfigError, validate

    raw = {k.split(":", 1)[1]: v for k, v in block.items() if k.startswith(f"{NAMESPACE}:")}
    raw |= {k: v for k, v in block.items() if ":" not in k}
    try:
        validate(raw)
    except ConfigError as e:
        return list(e.problems)
    return []


# What `azml-gpu:environment: production` enforces: these entries of the policy config block (mandatory or
# remediate), whatever the stack is called (init-config writes them so; docs/config.md, "Adding a stack").
PRODUCTION_ENFORCED = ("secure-defaults", "cluster-replacement")


def stack_environment(block: Mapping[str, Any]) -> str | None:
    """`azml-gpu:environment` of a stack file's config block when it is a valid value, else None."""
    from stackconfig.models import ENVIRONMENTS

    value = block.get(f"{NAMESPACE}:environment")
    return value if value in ENVIRONMENTS else None


def environment_problems(
    environment: str | None, effective: Mapping[str, tuple[str, Mapping[str, Any]]], config_name: str
) -> list[str]:
    """A production stack whose policy config does not block on PRODUCTION_ENFORCED: each such entry, with
    both fixes."""
    if environment != "production":
        return []
    out = []
    for name in PRODUCTION_ENFORCED:
        level = effective.get(name, ("advisory", {}))[0]
        if level not in BLOCKING:
            out.append(
                f"{config_name}: {name} is {level}, but the stack's azml-gpu:environment is production, "
                f'which enforces it; set "{name}": {{"enforcementLevel": "mandatory", ...}}, or set '
                "azml-gpu:environment: development if the stack is not production"
            )
    return out


def _policy_config(
    stack: str, root: Path, path: Path | None, result: GateResult
) -> tuple[dict[str, Any], dict[str, tuple[str, dict[str, Any]]]] | None:
    """The --policy-pack-config object as given, and each policy's (level, properties) after the CLI's
    reconciliation; None (with `result.errors`) when it is missing or invalid. A stack without
    policies/config/<stack>.json would run with the pack's defaults (no quota, secure-defaults advisory): that
    is
    an error here, with the command that writes one."""
    default = root / "policies" / "config" / f"{stack}.json"
    chosen = path or default
    if path is None and not default.exists():
        result.errors.append(
            f"policies/config/{stack}.json: no policy config for stack '{stack}', so the pack would run with "
            "its defaults (no quota checked, secure-defaults advisory); create it with "
            f'`{INIT_CONFIG.format(stack=stack)}` and review it (docs/config.md, "Adding a stack")'
        )
        return None
    try:
        loaded = load_policy_config(chosen)
        effective = resolve_config(loaded, pack_policies(), replacements.GATE_CHECKS, result.notes)
    except PolicyConfigError as e:
        prefix = "--policy-config: " if path is not None else ""
        result.errors.extend(f"{prefix}{p}" for p in e.problems)
        return None
    result.policy_config_file = str(chosen)
    result.policy_config = {
        name: {"enforcementLevel": lvl, **props} for name, (lvl, props) in effective.items()
    }
    return loaded, effective


def _with_date(config: Mapping[str, Any], on: date | None) -> dict[str, Any]:
    """The policy config the CLI gets: as given, with `evaluation_date` for every policy that takes one."""
    sent = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in config.items()}
    if on is None:
        return sent
    for name, (_level, schema) in pack_policies().items():
        if "evaluation_date" in schema.get("properties", {}):
            entry = sent.get(name, {})
            entry = {"enforcementLevel": entry} if isinstance(entry, str) else dict(entry)
            entry["evaluation_date"] = on.isoformat()
            sent[name] = entry
    return sent


def state_names(path: Path) -> set[tuple[str, str]]:
    """Every (stack, project) the URNs of a `pulumi stack export` file name; ValueError naming what is
    wrong."""
    from stackconfig.loader import read_text

    try:
        document = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    deployment = document.get("deployment") if isinstance(document, dict) else None
    resources = deployment.get("resources", []) if isinstance(deployment, dict) else None
    if not isinstance(resources, list):
        raise ValueError(
            f"{path}: not a `pulumi stack export` document (no deployment.resources list); create it with "
            "`pulumi stack export --show-secrets --file FILE`"
        )
    names = set()
    for index, r in enumerate(resources):
        urn = r.get("urn") if isinstance(r, dict) else None
        if not isinstance(urn, str) or not isinstance(r.get("type"), str):
            raise ValueError(f"{path}: deployment.resources[{index}] has no urn and type")
        parts = urn[len("urn:pulumi:") :].split("::") if urn.startswith("urn:pulumi:") else []
        if len(parts) >= 4:
            names.add((parts[0], parts[1]))
    return names


def _state_problems(path: Path, stack: str, project: str) -> list[str]:
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        return [
            f"--state: {path} {what}; give the file that `pulumi stack export --show-secrets --file FILE` "
            "wrote"
        ]
    try:
        names = state_names(path)
    except (OSError, ValueError) as e:
        return [f"--state: {e}"]
    if not names or names == {(stack, project)}:
        return []
    shown = ", ".join(f"stack '{s}' of project '{p}'" for s, p in sorted(names))
    return [
        f"--state: {path} is the state of {shown}, not of stack '{stack}' of project '{project}'; export "
        f"this stack's state with `pulumi stack export --stack {stack} --show-secrets --file FILE` or "
        f"`python -m preflight {stack} --export-state FILE`"
    ]


# -- the gate's findings on the engine's steps
# --------------------------------------------------------------------


def _allow_list_problems(
    given: Mapping[str, Any], program: list[Step], state: list[Step], stack: str
) -> list[str]:
    """Allow-lists of the policy config (a property whose schema describes "Cluster names ..." or "Workspace
    names ...") that name no cluster or workspace of the stack: a typo there silently leaves the policy
    enforced, or an acknowledgement that acknowledges nothing. `cluster-replacement.acknowledged` may also
    name a cluster of the deployed state that the change deletes."""
    schemas = {name: schema.get("properties", {}) for name, (_lvl, schema) in pack_policies().items()}
    schemas |= {
        n: s.get("configSchema", {}).get("properties", {}) for n, s in replacements.GATE_CHECKS.items()
    }

    def names(steps: list[Step], typ: str, key: str) -> list[str]:
        return sorted({str(s.inputs.get(key) or s.name) for s in steps if s.type == typ})

    clusters = names(program, COMPUTE, "computeName")
    workspaces = names(program, ML_WORKSPACE, "workspaceName")
    in_state = names(state, COMPUTE, "computeName")
    problems = []
    for policy in sorted(given):
        entry = given[policy]
        if not isinstance(entry, Mapping):
            continue
        for key in sorted(entry):
            spec = schemas.get(policy, {}).get(key, {})
            description = str(spec.get("description", "")) if isinstance(spec, Mapping) else ""
            values = entry[key]
            keyed = isinstance(values, Mapping)  # keyed by name: cluster-cost-budget.clusters
            if keyed:
                values = list(values)
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
                where = f"{policy}.{key}.{value}" if keyed else f"{policy}.{key}[{i}]"
                problems.append(
                    f"{where}: {value!r} names no {what} of stack '{stack}' (its {what}s: "
                    f"{', '.join(known) or 'none'}), so it allows or acknowledges nothing; {fix}"
                )
    return problems


def _cluster_rows(steps: list[Step]) -> list[dict[str, Any]]:
    import vmsizes
    from policies.clusters import aml_cluster, parse_seconds

    rows = []
    found = (aml_cluster(s.type, s.inputs, s.name, s.urn) for s in steps)
    for c in sorted((c for c in found if c is not None), key=lambda c: (c.name, c.urn)):
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
                "idle_seconds": parse_seconds(c.idle),
                "ssh": c.remote_login or "NotSpecified",
            }
        )
    return rows


#: A pool at or above this share of its quota is shown as a warning ("near"): one more cluster, or another VM
#: of the family in the region, and the next scale-up waits for quota.
QUOTA_WARN_PERCENT = 90


def quota_status(reserved: int, quota: int | None) -> str:
    """`over` (more than the quota: quota-reservation's mandatory violation), `full` (exactly the quota: it
    fits, with no headroom), `near` (at least QUOTA_WARN_PERCENT), `ok`, or `unknown` (no quota given)."""
    if quota is None:
        return "unknown"
    if reserved > quota:
        return "over"
    if reserved == quota:
        return "full"
    return "near" if quota and 100 * reserved >= QUOTA_WARN_PERCENT * quota else "ok"


def _quota_rows(steps: list[Step], quotas: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pools the quota-reservation policy checks (its own reservation), each with its configured quota."""
    from policies.clusters import aml_cluster
    from policies.quota_reservation import configured_quota, reservation

    clusters = [c for c in (aml_cluster(s.type, s.inputs, s.name, s.urn) for s in steps) if c is not None]
    rows = []
    for pool in reservation(clusters)[0].pools:
        quota = configured_quota(quotas, pool)
        rows.append(
            {
                "region": pool.region,
                "kind": pool.kind,
                "family": pool.family,
                "label": pool.label,
                "reserved_vcpus": pool.vcpus,
                "quota": quota,
                "headroom_vcpus": None if quota is None else quota - pool.vcpus,
                "used_percent": None if not quota else round(100 * pool.vcpus / quota, 1),
                "status": quota_status(pool.vcpus, quota),
                "clusters": sorted(pool.clusters),
            }
        )
    order = {"family": 0, "regional-total": 1, "low-priority": 2}
    return sorted(rows, key=lambda q: (q["region"], order.get(q["kind"], 3), q["family"] or "", q["label"]))


def _engine_errors(kind: str, run: Run, flat_block: Mapping[str, Any], result: GateResult) -> list[str]:
    """The engine's errors, each once, with the gate's reading where it has one: a duplicate URN traced to
    the config entries behind it, a Check failure with the stack config key that set the value."""
    out: list[str] = []
    blocked = any(v.blocking for v in run.violations)
    # The engine's closing words for a run that failed for reasons it reported before, and the SDK's when the
    # engine stopped the program (pulumi/runtime/stack.py: the monitor went away).
    closing = ("preview failed", "update failed", "Resource monitor has terminated, shutting down")
    generic = [d for d in run.errors if not d.urn and d.message in closing]
    for d in run.errors:
        if d in generic and (blocked or len(generic) < len(run.errors)):
            continue
        if d.message.startswith("Duplicate resource URN"):
            urn = d.message.split("'")[1] if "'" in d.message else ""
            line = duplicates.problems([urn], flat_block)[0] if urn else d.message
        elif problem := resource_check.from_diagnostic(d.urn, d.message, flat_block):
            result.resource_problems.append(problem.as_json())
            line = f"{kind} preview: the Azure REST spec rejects {problem.message}"
        else:
            message = d.message.removeprefix("an unhandled error occurred: ")
            if message != d.message and any(message[:200] in seen for seen in out):
                continue  # the engine's echo of the program error just reported
            line = f"{kind} preview: {message}"
        if line not in out:
            out.append(line)
        if "keyvault:getVault" in d.message and "ResourceNotFound" in d.message:
            hint = (
                "offline, the gate knows a vault outside the stack only from --existing F: `az keyvault show "
                "--ids <vault id> > F`, then add `--existing F` (a file without that vault answers as "
                "Azure's 404)"
            )
            if hint not in out:
                out.append(hint)
    tail = " / ".join(run.stderr.strip().splitlines()[-6:]) or "no output"
    if not out and run.exit_code != 0 and not blocked:
        out.append(f"{kind} preview: the Pulumi CLI exited {run.exit_code} with no error event: {tail}")
    elif out and len(generic) == len(
        run.errors
    ):  # "preview failed" and nothing said why: the CLI's own words
        out.append(f"{kind} preview: the Pulumi CLI's last lines: {tail}")
    return out


# -- evaluate
# -------------------------------------------------------------------------------------------------


def evaluate(
    stack: str,
    *,
    root: Path | None = None,
    config_file: Path | None = None,
    policy_config_path: Path | None = None,
    state_path: Path | None = None,
    existing_path: Path | None = None,
    export_state: bool = False,
    on: date | None = None,
    progress: Progress | None = None,
    work: Path | None = None,
) -> GateResult:
    """Run the gate for `stack` of the program in `root` (default `program_root()`; module docstring).
    `config_file`: the stack file
    to use instead of `<root>/Pulumi.<stack>.yaml`; `policy_config_path`: the --policy-pack-config file
    (default `<root>/policies/config/<stack>.json`); `state_path`: a `pulumi stack export` file for the update
    evaluation (default: the stack deployed as declared); `existing_path`: resources outside the stack the
    program reads (`--existing`); `export_state`: keep the update's deployed state (`result.exported_state`);
    `on`: evaluate retirement on this day; `work`: the scratch folder (default: a temporary one, removed)."""
    say = progress or (lambda _msg: None)
    root = program_root() if root is None else Path(root).resolve()
    scratch = tempfile.TemporaryDirectory(prefix=f"azml-gate-{stack}-") if work is None else None
    folder = Path(scratch.name) if scratch is not None else Path(work)  # type: ignore[arg-type]
    folder.mkdir(parents=True, exist_ok=True)
    # The provider first: it imports the SDK and reads the specs while the input is checked.
    from preflight.provider.process import ProviderProcess

    provider = ProviderProcess(existing=existing_path, journal=folder / "invokes.jsonl").spawn()
    try:
        return _evaluate(
            stack,
            root,
            config_file,
            policy_config_path,
            state_path,
            existing_path,
            export_state,
            on,
            say,
            folder,
            provider,
        )
    finally:
        provider.close()
        if scratch is not None:
            scratch.cleanup()


def _evaluate(
    stack: str,
    root: Path,
    config_file: Path | None,
    policy_config_path: Path | None,
    state_path: Path | None,
    existing_path: Path | None,
    export_state: bool,
    on: date | None,
    say: Progress,
    folder: Path,
    provider: Any,
) -> GateResult:
    from stackconfig.loader import StackFileError, read_config_block

    result = GateResult(stack=stack, root=root, evaluation_date=(on or date.today()).isoformat())
    project = project_name(root)
    # While the input is checked: the CLI found (its version is a process), the scratch stack initialised (a
    # process), and the program's imports (a thread). Their failures count only if the input is good.
    from preflight import langhost, pulumicli
    from preflight.workspace import Workspace

    stack_file = config_file or root / f"Pulumi.{stack}.yaml"

    def prepare() -> tuple[pulumicli.Cli, Workspace, Workspace]:
        cli = pulumicli.find()
        stack_text = stack_file.read_text(encoding="utf-8")
        empty = Workspace.create(
            cli, folder / FIRST_DEPLOY, stack, root / "Pulumi.yaml", stack_text, provider.port
        )
        return cli, empty, empty.copy(folder / UPDATE)

    preparing = ThreadPoolExecutor(1)
    prepared = preparing.submit(prepare)
    preparing.shutdown(wait=False)
    warming = langhost.warm(root) if (root / "__main__.py").is_file() else None

    def refused() -> GateResult:
        """Bad input: the preparation still writes into `folder`, which the caller deletes once this
        returns, so wait for it; its own failures do not count."""
        with contextlib.suppress(Exception):  # the input's problems are the answer
            prepared.result()
        return result

    # 1. The input, every problem at once.
    block: dict[str, Any] = {}
    if config_file is None and not stack_file.is_file():
        result.errors.append(
            f"STACK {stack!r}: no Pulumi.{stack}.yaml in {root}; use one of: "
            f"{', '.join(known_stacks(root)) or '(none)'}"
        )
        return refused()
    try:
        block = read_config_block(stack_file)
    except StackFileError as e:
        result.errors.append(f"--config-file: {e}" if config_file is not None else str(e))
    else:
        if project == NAMESPACE:
            result.errors.extend(_stack_config_problems(block))
            result.environment = stack_environment(block)
    chosen = _policy_config(stack, root, policy_config_path, result)
    if chosen is not None:
        shown = "--policy-config" if policy_config_path is not None else f"policies/config/{stack}.json"
        result.errors.extend(environment_problems(result.environment, chosen[1], shown))
    from preflight import costs

    price_path, named_by = costs.price_file(result.policy_config, root)
    price_table, price_problems = costs.load(price_path, named_by)
    result.errors.extend(price_problems)
    if state_path is not None:
        result.errors.extend(_state_problems(state_path, stack, project))
    if existing_path is not None:
        from preflight.provider.invokes import ExistingFileError, read_existing

        try:
            read_existing(existing_path)
        except ExistingFileError as e:
            result.errors.append(str(e))
    if result.errors or chosen is None:
        return refused()
    given, _effective = chosen

    # 2. The CLI, the provider, the workspaces.
    from preflight.provider.process import ProviderError
    from preflight.workspace import WorkspaceError, write_pack_launcher

    try:
        cli, empty, stacked = prepared.result()
    except pulumicli.CliMissing as e:
        result.errors.append(str(e))
        return result
    except (WorkspaceError, ProviderError) as e:
        result.errors.append(str(e))
        return result
    result.engine = cli.as_json()
    result.notes.extend(cli.notes)
    journal = folder / "invokes.jsonl"
    say(
        f"Pulumi CLI {cli.version} ({cli.source}: {cli.path}); scratch workspace {folder} (pulumi stack init "
        f"{stack}, a local file backend)"
    )
    try:
        policy_file = folder / "policy-config.json"
        policy_file.write_text(json.dumps(costs.with_prices(_with_date(given, on), price_table), indent=2))
        pack = write_pack_launcher(folder, pack_dir(root))
        policy_args = ["--policy-pack", str(pack), "--policy-pack-config", str(policy_file)]

        def first_deploy() -> tuple[Run, float]:
            ws = empty
            say(f"{FIRST_DEPLOY}: pulumi preview of a new stack {stack!r} with the policy pack")
            return _preview(ws, host.address, policy_args, folder / "first-deploy.jsonl")

        def updated() -> tuple[str, Run | None, dict[str, Any] | None, tuple[Run, float] | None]:
            """The update's state (imported, or deployed by `pulumi up`), then its preview: (label, the
            failed `pulumi up`, the exported state, the preview)."""
            ws = stacked
            if state_path is not None:
                say(f"{UPDATE}: pulumi stack import --file {state_path}")
                ws.cli_checked("stack", "import", "--file", str(state_path.resolve()), "--stack", stack)
                label = str(state_path)
            else:
                say(f"{UPDATE}: pulumi up of the stack as declared, into the offline provider")
                started = time.monotonic()
                up = ws.run(
                    "up", "--yes", "--skip-preview", client=host.address, event_log=folder / "up.jsonl"
                )
                if up.returncode != 0:
                    return (
                        "",
                        events.parse(up.returncode, events.read(folder / "up.jsonl"), up.stderr),
                        None,
                        None,
                    )
                label = f"the stack deployed as declared (pulumi up, {time.monotonic() - started:.1f} s)"
            exported = None
            if export_state:
                exported = json.loads(ws.cli_checked("stack", "export", "--show-secrets", "--stack", stack))
            say(f"{UPDATE}: pulumi preview against {label}")
            return label, None, exported, _preview(ws, host.address, policy_args, folder / "update.jsonl")

        # The first deploy's preview and the update (its state, then its preview) are independent: both at
        # once (each CLI run waits on its plugins and the program a good part of the time). Without --state
        # the update's `pulumi up` is the longer path: its program runs first (langhost `up_first`).
        with (
            langhost.serve(root, warming, up_first=state_path is None) as host,
            ThreadPoolExecutor(2) as pool,
        ):
            first_future, update_future = pool.submit(first_deploy), pool.submit(updated)
            first, first_seconds = first_future.result()
            evaluation = Evaluation(FIRST_DEPLOY, "none (a new stack)", first, seconds=first_seconds)
            evaluation.violations = list(first.violations)
            result.evaluations.append(evaluation)
            label, failed_up, exported, previewed = update_future.result()
            errors = _engine_errors(FIRST_DEPLOY, first, block, result)
            if not errors and failed_up is not None:
                errors = _engine_errors("update (pulumi up)", failed_up, block, result)
            if errors:
                result.errors = errors
                return result
            assert previewed is not None
            if exported is not None:
                result.exported_state = exported
            second, second_seconds = previewed
        update = Evaluation(UPDATE, label, second, seconds=second_seconds)
        result.evaluations.append(update)
        errors = _engine_errors(UPDATE, second, block, result)
        if errors:
            result.errors = errors
            return result
        listed = _allow_list_problems(given, evaluation.resources, [], stack)
        state = [s for s in update.run.steps if s.old is not None]
        listed += [p for p in _allow_list_problems(given, update.resources, state, stack) if p not in listed]
        if listed:
            result.errors = [f"policy config: {p}" for p in listed]
            return result
        _findings(update, result)
        result.outputs = update.run.stack_outputs
        result.clusters = _cluster_rows(update.resources)
        quotas = result.policy_config.get("quota-reservation", {}).get("quotas", {})
        result.quota = _quota_rows(update.resources, quotas)
        result.costs = costs.cost_table(update.run.steps, price_table, state_path is not None)
        checked = resource_check.check(update.resources, block)
        result.resource_check = checked.coverage_rows()
        result.permissions = permissions.required(update.resources, _invokes(journal))
        return result
    except (WorkspaceError, ProviderError) as e:
        result.errors.append(str(e))
        return result


def _preview(ws: Any, client: str, policy_args: list[str], log: Path) -> tuple[Run, float]:
    started = time.monotonic()
    r = ws.run("preview", "--diff", *policy_args, client=client, event_log=log)
    return events.parse(r.returncode, events.read(log), r.stderr), time.monotonic() - started


def _findings(update: Evaluation, result: GateResult) -> None:
    """The gate's own checks of the update: replacements and deletes (cluster-replacement), a loosened
    managed network."""
    steps = update.run.steps
    update.replacements = replacements.replacement_rows(steps)
    update.deletes = sorted(
        s.urn
        for s in steps
        if s.op in events.DELETE_OPS and s.custom and not s.type.startswith("pulumi:providers:")
    )
    update.violations = list(update.run.violations)
    update.violations += replacements.findings(steps, result.policy_config.get(replacements.NAME, {}))
    update.violations += isolation.findings(steps)


def _invokes(journal: Path) -> list[tuple[str, dict[str, Any]]]:
    """The provider functions the program called (the provider's journal), each once."""
    if not journal.exists():
        return []
    seen: dict[str, tuple[str, dict[str, Any]]] = {}
    for line in journal.read_text().splitlines():
        entry = json.loads(line)
        seen.setdefault(json.dumps(entry, sort_keys=True), (entry["token"], entry["args"]))
    return list(seen.values())
